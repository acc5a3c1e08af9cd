//! A paced phase's open-loop figures (`--rate`): the target and achieved rates, response time
//! (from each operation's intended start) beside the service time of the phase's `latency`,
//! the client's own lag in starting operations, the backlog over time and when the phase fell
//! behind; what they say of it is in [`schedule`].

pub mod schedule;

pub use schedule::held;

use crate::phase::Latency;
use iobm_stats::names::Arrivals;
use iobm_stats::Series;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A phase whose operations were started at a target rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PaceResult {
    /// How the intended starts were spaced: "uniform" or "poisson".
    #[schemars(with = "String")]
    pub arrivals: Arrivals,
    /// Operations per second the phase was to start, over every worker of every rank.
    pub target_ops_per_s: f64,
    /// Operations completed per second: the phase's operations over its wall time.
    pub achieved_ops_per_s: f64,
    /// Response time: from each operation's intended start to its end, which includes the time
    /// it waited behind earlier ones (the phase's `latency` is service time, from its actual
    /// start).
    pub response: Latency,
    /// Response time per interval (operations, their bytes and a latency histogram by the
    /// interval they ended in).
    pub series: Series,
    /// The client's own lag in starting each operation: from when it could have started (its
    /// intended start, or later while the storage was still busy with the operations before it)
    /// to when iobm's worker started it. The rest of an operation's lateness is the storage's
    /// queueing. Absent in documents from before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag: Option<Latency>,
    /// Operations behind schedule per interval of the phase's series: each worker's most at an
    /// operation's start in that interval, added over the workers; it ends at the last interval
    /// with any (shorter than the series when the phase ended on schedule).
    pub backlog: Vec<u64>,
    /// A backlog above this many operations (the target's operations of 100 ms, at least 1) is
    /// falling behind.
    pub behind_threshold_ops: u64,
    /// The start of the first interval whose backlog passed `behind_threshold_ops`, seconds
    /// into the phase. Absent: it kept its schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fell_behind_s: Option<f64>,
}

/// Below this share of its target the phase did not keep its rate.
pub const KEPT_SHARE: f64 = 0.9;

/// The backlog at which a phase at `target_ops_per_s` is falling behind: its operations of
/// 100 ms, at least one.
pub fn behind_threshold(target_ops_per_s: f64) -> u64 {
    ((target_ops_per_s * 0.1).ceil() as u64).max(1)
}

impl PaceResult {
    /// The achieved rate of `ops` over `wall_ns`, and when the backlog passed the threshold.
    pub fn assess(&mut self, ops: u64, wall_ns: u64) {
        self.achieved_ops_per_s = if wall_ns > 0 {
            ops as f64 * 1e9 / wall_ns as f64
        } else {
            0.0
        };
        self.behind_threshold_ops = behind_threshold(self.target_ops_per_s);
        let interval_s = self.series.interval_ns as f64 / 1e9;
        self.fell_behind_s = self
            .backlog
            .iter()
            .position(|&b| b > self.behind_threshold_ops)
            .map(|k| k as f64 * interval_s);
    }

    /// The largest backlog of any interval.
    pub fn most_behind(&self) -> u64 {
        self.backlog.iter().copied().max().unwrap_or(0)
    }

    /// Adds another rank's part: its backlog interval by interval and its series (the
    /// response summary and the assessment are remade by the caller).
    pub fn merge_counts(&mut self, other: &PaceResult) {
        self.series.merge(&other.series);
        if self.backlog.len() < other.backlog.len() {
            self.backlog.resize(other.backlog.len(), 0);
        }
        for (a, b) in self.backlog.iter_mut().zip(&other.backlog) {
            *a += b;
        }
    }
}

/// One step of a rate sweep: a paced phase's target and achieved rates and response times.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPoint {
    pub phase: String,
    pub target_ops_per_s: f64,
    pub achieved_ops_per_s: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
}

/// The steps of a sweep: every paced phase, by target rate.
pub fn sweep_points(phases: &[crate::PhaseResult]) -> Vec<SweepPoint> {
    let mut points: Vec<SweepPoint> = phases
        .iter()
        .filter_map(|p| {
            let pace = p.pace.as_ref()?;
            Some(SweepPoint {
                phase: p.name.clone(),
                target_ops_per_s: pace.target_ops_per_s,
                achieved_ops_per_s: pace.achieved_ops_per_s,
                p50_ns: pace.response.p50_ns,
                p99_ns: pace.response.p99_ns,
                p999_ns: pace.response.p999_ns,
            })
        })
        .collect();
    points.sort_by(|a, b| a.target_ops_per_s.total_cmp(&b.target_ops_per_s));
    points
}

/// The knee of a sweep: the highest rate up to which every step's p99 response time stayed
/// under `slo_ns` (None when the first step's did not).
pub fn knee(points: &[SweepPoint], slo_ns: u64) -> Option<&SweepPoint> {
    points
        .iter()
        .take_while(|p| p.p99_ns.is_some_and(|p99| p99 < slo_ns))
        .last()
}

/// A rate as people write it: 200, 12.5.
pub fn trim(rate: f64) -> String {
    let text = format!("{rate:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use iobm_stats::HistogramData;

    pub(crate) fn paced(target: f64, backlog: Vec<u64>) -> PaceResult {
        PaceResult {
            arrivals: Arrivals::Uniform,
            target_ops_per_s: target,
            achieved_ops_per_s: 0.0,
            response: Latency {
                measures: String::new(),
                mean_ns: None,
                p50_ns: None,
                p90_ns: None,
                p99_ns: None,
                p999_ns: None,
                max_ns: None,
                histogram: HistogramData::empty(4),
            },
            series: Series::new(std::time::Duration::from_millis(500)),
            lag: None,
            backlog,
            behind_threshold_ops: 0,
            fell_behind_s: None,
        }
    }

    fn point(target: f64, p99_ms: u64) -> SweepPoint {
        SweepPoint {
            phase: format!("read at {target} ops/s"),
            target_ops_per_s: target,
            achieved_ops_per_s: target,
            p50_ns: None,
            p99_ns: Some(p99_ms * 1_000_000),
            p999_ns: None,
        }
    }

    #[test]
    fn the_knee_is_the_highest_rate_up_to_which_p99_stays_under_the_slo() {
        // A synthetic hockey stick: flat, then queueing past 400/s; a lucky step at 600/s.
        let curve: Vec<SweepPoint> = [
            (100.0, 1),
            (200.0, 1),
            (300.0, 2),
            (400.0, 4),
            (500.0, 40),
            (600.0, 3),
        ]
        .into_iter()
        .map(|(r, p)| point(r, p))
        .collect();
        assert_eq!(
            knee(&curve, 5_000_000).map(|p| p.target_ops_per_s),
            Some(400.0)
        );
        assert_eq!(
            knee(&curve, 3_000_000).map(|p| p.target_ops_per_s),
            Some(300.0)
        );
        assert_eq!(
            knee(&curve, 1_000_000),
            None,
            "none under a SLO the first step misses"
        );
        assert_eq!(
            knee(&curve, 100_000_000).map(|p| p.target_ops_per_s),
            Some(600.0)
        );
    }

    #[test]
    fn ranks_backlogs_add_interval_by_interval() {
        let mut a = paced(100.0, vec![1, 2]);
        a.merge_counts(&paced(100.0, vec![0, 1, 7]));
        assert_eq!(a.backlog, [1, 3, 7]);
    }
}
