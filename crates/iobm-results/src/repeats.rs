//! Repeated runs (`--repeat N`): each aggregate of each phase over the repetitions, with its
//! median, range, coefficient of variation and a 95% confidence interval (Student's t over the
//! logarithms, so that an interval of rates never reaches below zero), so a reader sees the
//! noise and `compare` can tell a difference from it. Too few values for an interval give none,
//! with the reason.

mod trend;

pub use trend::Trend;

use crate::RunResult;
use iobm_stats::AggregateKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a repeated run measured each time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Repeats {
    /// The run id of each repetition, in order (each on fresh data); the document's phases are
    /// the last repetition's.
    pub run_ids: Vec<String>,
    /// Each phase's aggregates over the repetitions that ran it to its end, by phase name (one
    /// interrupted or failed is in no spread).
    pub phases: Vec<PhaseSpread>,
    /// What the repetitions' makespan rates show against taking one figure of them: a trend
    /// (the first faster than the rest, a drift) or a spread too wide ([`Repeats::findings`]).
    /// Empty in documents from before.
    #[serde(default)]
    pub warnings: Vec<String>,
}

/// One phase's aggregates over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseSpread {
    /// The phase's name.
    pub name: String,
    /// Each aggregate the phase had in any repetition.
    pub aggregates: Vec<AggregateSpread>,
}

/// One aggregate over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AggregateSpread {
    /// Which aggregate.
    pub kind: AggregateKind,
    /// Bytes per second.
    pub bytes_per_s: Spread,
    /// Operations per second.
    pub ops_per_s: Spread,
}

/// Values of one quantity over the repetitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Spread {
    /// Each repetition's value, in order.
    pub values: Vec<f64>,
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// The arithmetic mean.
    pub mean: f64,
    /// The coefficient of variation: the sample standard deviation over the mean; null with
    /// one value or a mean of 0.
    #[serde(default)]
    pub cv: Option<f64>,
    /// The 95% confidence interval of the geometric mean, from the values' logarithms (rates
    /// are positive and their noise multiplicative): exp(m -/+ t(0.975, n-1) * s / sqrt(n)),
    /// with m and s the mean and sample standard deviation of ln(value), so it never reaches
    /// below zero. Null with fewer than 3 values or a value of 0 or less (`no_interval` says
    /// which).
    pub ci95: Option<[f64; 2]>,
    /// Why `ci95` is null, in words for the report; null when there is an interval.
    #[serde(default)]
    pub no_interval: Option<String>,
}

/// The fewest values that give an interval: with 2, t(0.975, 1) = 12.7 makes any interval
/// meaningless.
pub const MIN_VALUES_FOR_INTERVAL: usize = 3;

/// Student's t at 0.975 for 1 to 30 degrees of freedom; above, the normal 1.96.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

impl Spread {
    pub fn of(values: Vec<f64>) -> Spread {
        let n = values.len();
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let median = match n {
            0 => 0.0,
            _ if n % 2 == 1 => sorted[n / 2],
            _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
        };
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let sd = |xs: &[f64], m: f64| {
            (xs.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64).sqrt()
        };
        let cv = (n > 1 && mean != 0.0).then(|| sd(&values, mean) / mean);
        let (ci95, no_interval) = if n < MIN_VALUES_FOR_INTERVAL {
            let found = if n == 1 { "1 value" } else { "2 values" };
            let why =
                format!("{found}: too few for an interval ({MIN_VALUES_FOR_INTERVAL} or more)");
            (None, Some(if n == 0 { "no values".into() } else { why }))
        } else if sorted[0] <= 0.0 {
            let why = format!("a value of {}: no interval of a rate through 0", sorted[0]);
            (None, Some(why))
        } else {
            let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
            let m = logs.iter().sum::<f64>() / n as f64;
            let t = T975.get(n - 2).copied().unwrap_or(1.96);
            let half = t * sd(&logs, m) / (n as f64).sqrt();
            (Some([(m - half).exp(), (m + half).exp()]), None)
        };
        Spread {
            median,
            min: sorted.first().copied().unwrap_or(0.0),
            max: sorted.last().copied().unwrap_or(0.0),
            mean,
            cv,
            ci95,
            no_interval,
            values,
        }
    }
}

/// A phase whose makespan varied more than this (its coefficient of variation over the
/// repetitions) is unstable: no one figure stands for it.
pub const UNSTABLE_CV: f64 = 0.05;

impl PhaseSpread {
    /// The coefficient of variation of the phase's makespan, in bytes/s (or operations/s for a
    /// phase that moves no data), when it is above [`UNSTABLE_CV`].
    pub fn unstable(&self, moves_data: bool) -> Option<f64> {
        self.makespan(moves_data)?.cv.filter(|&cv| cv > UNSTABLE_CV)
    }

    /// The order of the phase's makespan rates over the repetitions, when independent
    /// repetitions would not show it ([`Trend::of`]).
    pub fn trend(&self, moves_data: bool) -> Option<Trend> {
        Trend::of(&self.makespan(moves_data)?.values)
    }

    /// The makespan's spread, in bytes/s (or operations/s for a phase that moves no data).
    fn makespan(&self, moves_data: bool) -> Option<&Spread> {
        let makespan = self
            .aggregates
            .iter()
            .find(|a| a.kind == AggregateKind::Makespan)?;
        Some(if moves_data {
            &makespan.bytes_per_s
        } else {
            &makespan.ops_per_s
        })
    }
}

/// The unit of a phase's rates, and the scale from bytes/s or operations/s to it: MiB/s for a
/// phase that moves data, else operations per second.
pub fn rate_unit(moves_data: bool) -> (&'static str, f64) {
    if moves_data {
        ("MiB/s", 1.0 / (1 << 20) as f64)
    } else {
        ("ops/s", 1.0)
    }
}

/// Whether two confidence intervals overlap: a difference within the noise.
pub fn overlap([a, b]: [f64; 2], [c, d]: [f64; 2]) -> bool {
    a <= d && c <= b
}

impl Repeats {
    /// The spread of every phase's aggregates over `runs`, the repetitions in order.
    pub fn of(runs: &[RunResult]) -> Repeats {
        let mut phases: Vec<PhaseSpread> = Vec::new();
        let mut names: Vec<&str> = Vec::new();
        for run in runs {
            for p in &run.phases {
                if !names.contains(&p.name.as_str()) {
                    names.push(&p.name);
                }
            }
        }
        for name in names {
            // A phase cut short (Ctrl-C, a fault) is no repetition of the workload.
            let runs_of = runs.iter().filter_map(|r| {
                (r.phases.iter()).find(|p| p.name == name && p.status == crate::RunStatus::Complete)
            });
            let mut aggregates = Vec::new();
            for kind in AggregateKind::ALL {
                let found: Vec<_> = runs_of.clone().filter_map(|p| p.aggregate(kind)).collect();
                if found.is_empty() {
                    continue;
                }
                aggregates.push(AggregateSpread {
                    kind,
                    bytes_per_s: Spread::of(found.iter().map(|a| a.bytes_per_s).collect()),
                    ops_per_s: Spread::of(found.iter().map(|a| a.ops_per_s).collect()),
                });
            }
            phases.push(PhaseSpread {
                name: name.to_string(),
                aggregates,
            });
        }
        let mut repeats = Repeats {
            run_ids: runs.iter().map(|r| r.run_id.clone()).collect(),
            phases,
            warnings: Vec::new(),
        };
        if let Some(last) = runs.last() {
            repeats.warnings = repeats.findings(last);
        }
        repeats
    }

    /// The trends and unstable makespans of the phases over the repetitions, one line each,
    /// with rates in the unit of `run`'s phase ([`rate_unit`]).
    pub fn findings(&self, run: &RunResult) -> Vec<String> {
        let mut out = Vec::new();
        for phase in &self.phases {
            let moves_data = (run.phases.iter())
                .find(|p| p.name == phase.name)
                .is_none_or(|p| p.moves_data());
            let (unit, scale) = rate_unit(moves_data);
            if let Some(trend) = phase.trend(moves_data) {
                out.push(trend.warning(&phase.name, &|x| format!("{:.2} {unit}", x * scale)));
            }
            if let Some(cv) = phase.unstable(moves_data) {
                out.push(format!(
                    "unstable: {}'s makespan varied by {:.1}% (CV) over the repetitions, above {:.0}%: no one figure stands for it (more repetitions, or longer phases)",
                    phase.name,
                    100.0 * cv,
                    100.0 * UNSTABLE_CV
                ));
            }
        }
        out
    }

    /// The spread of `kind` in phase `name`.
    pub fn of_phase(&self, name: &str, kind: AggregateKind) -> Option<&AggregateSpread> {
        let phase = self.phases.iter().find(|p| p.name == name)?;
        phase.aggregates.iter().find(|a| a.kind == kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_known_values() {
        let s = Spread::of(vec![10.0, 12.0, 11.0, 13.0, 9.0]);
        assert_eq!((s.median, s.min, s.max, s.mean), (11.0, 9.0, 13.0, 11.0));
        // sd = sqrt(2.5) = 1.5811: cv 0.14374.
        assert!((s.cv.unwrap() - 0.143_74).abs() < 1e-5, "{:?}", s.cv);
        // ln of the values: mean 2.389_51, sd 0.145_33; t(0.975, 4) = 2.776: half-width
        // 2.776 * 0.145_33 / sqrt(5) = 0.180_42, so exp(2.389_51 -/+ 0.180_42).
        let [low, high] = s.ci95.unwrap();
        assert!(
            (low - 9.1075).abs() < 0.001 && (high - 13.0649).abs() < 0.001,
            "{low} {high}"
        );
        assert_eq!(s.no_interval, None);
        assert_eq!(Spread::of(vec![4.0, 2.0]).median, 3.0);
        let apart = Spread::of(vec![20.0, 21.0, 19.0]);
        let near = Spread::of(vec![12.0, 12.5, 13.5]);
        assert!(!overlap(s.ci95.unwrap(), apart.ci95.unwrap()));
        assert!(overlap(s.ci95.unwrap(), near.ci95.unwrap()));
    }

    #[test]
    fn too_few_values_or_a_zero_give_no_interval_and_say_why() {
        let one = Spread::of(vec![5.0]);
        assert_eq!((one.ci95, one.cv), (None, None));
        assert_eq!(
            one.no_interval.as_deref(),
            Some("1 value: too few for an interval (3 or more)")
        );
        // The case of a warp window found in 2 of 3 runs: t = 12.7 would give -1045 .. 2985.
        let two = Spread::of(vec![100.0, 1840.0]);
        assert_eq!(two.ci95, None);
        assert_eq!(
            two.no_interval.as_deref(),
            Some("2 values: too few for an interval (3 or more)")
        );
        assert!((two.cv.unwrap() - 1.2684).abs() < 1e-4, "{:?}", two.cv);
        let zero = Spread::of(vec![0.0, 10.0, 20.0]);
        assert_eq!(zero.ci95, None);
        assert_eq!(
            zero.no_interval.as_deref(),
            Some("a value of 0: no interval of a rate through 0")
        );
    }

    #[test]
    fn a_noisy_rate_never_gets_an_interval_below_zero() {
        // A mean -/+ t * s / sqrt(n) interval of these goes to -104: the logarithms' does not.
        let s = Spread::of(vec![1.0, 100.0, 5.0]);
        let [low, high] = s.ci95.unwrap();
        assert!(low > 0.0 && low < 1.0 && high > 100.0, "{low} {high}");
        // The geometric mean (7.94) lies in it.
        let geometric = (1.0f64 * 100.0 * 5.0).cbrt();
        assert!(low < geometric && geometric < high);
    }

    /// `run` with every aggregate's bytes/s times `bytes` and its operations/s times `ops`.
    fn scaled(run: &RunResult, bytes: f64, ops: f64) -> RunResult {
        let mut run = run.clone();
        for a in run.phases.iter_mut().flat_map(|p| p.aggregates.iter_mut()) {
            a.bytes_per_s *= bytes;
            a.ops_per_s *= ops;
        }
        run
    }

    #[test]
    fn a_makespan_that_varies_past_five_percent_is_unstable() {
        let whole: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        let scaled = |by: f64| scaled(&whole, by, 2.0 - by);
        // Bytes/s 0.9, 1.0, 1.1 of the run: a CV of 10%; ops/s 1.1, 1.0, 0.9 likewise.
        let repeats = Repeats::of(&[scaled(0.9), scaled(1.0), scaled(1.1)]);
        let write = &repeats.phases[0];
        let cv = write.unstable(true).expect("a CV of 10% is unstable");
        assert!((cv - 0.1).abs() < 1e-9, "{cv}");
        // Within 5%: 0.98, 1.0, 1.02 (a CV of 2%).
        let steady = Repeats::of(&[scaled(0.98), scaled(1.0), scaled(1.02)]);
        assert_eq!(steady.phases[0].unstable(true), None);
        assert_eq!(steady.phases[0].unstable(false), None);
        // Just past the line: a CV of 5.1%.
        let past = Repeats::of(&[scaled(0.949), scaled(1.0), scaled(1.051)]);
        assert!(past.phases[0].unstable(true).is_some());
        assert!(past.phases[0].unstable(false).is_some());
    }

    #[test]
    fn the_document_keeps_the_trend_and_the_spread_found_over_the_repetitions() {
        let whole: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        let scaled = |by: f64| scaled(&whole, by, 1.0);
        // The first 1.5x the rest: a trend, and a CV well above 5%, for each of both phases.
        let repeats = Repeats::of(&[scaled(1.5), scaled(1.0), scaled(1.0)]);
        let write = &whole.phases[0].name;
        assert_eq!(repeats.warnings.len(), 4, "{:#?}", repeats.warnings);
        assert!(repeats.warnings[0].starts_with(&format!(
            "trend: {write}: the first of the repetitions ran at "
        )));
        assert!(repeats.warnings[0].contains(" MiB/s, faster than every later one"));
        assert!(repeats.warnings[1].starts_with(&format!("unstable: {write}'s makespan varied by")));
        assert_eq!(repeats.warnings, repeats.findings(&whole));
        let back = serde_json::to_value(&repeats).unwrap();
        assert_eq!(back["warnings"][0], repeats.warnings[0].as_str());
        // Repetitions alike: nothing to say.
        assert!(Repeats::of(&[scaled(1.0), scaled(1.0), scaled(1.0)])
            .warnings
            .is_empty());
    }

    #[test]
    fn a_phase_cut_short_is_in_no_spread() {
        let whole: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        let mut cut = whole.clone();
        cut.run_id = "cut".into();
        cut.phases[1].status = crate::RunStatus::Interrupted;
        let repeats = Repeats::of(&[whole.clone(), cut]);
        assert_eq!(repeats.run_ids.len(), 2);
        let values = |phase: &str| {
            let spread = repeats.of_phase(phase, AggregateKind::Makespan).unwrap();
            spread.bytes_per_s.values.len()
        };
        assert_eq!(values(&whole.phases[0].name), 2);
        assert_eq!(
            values(&whole.phases[1].name),
            1,
            "the interrupted read is left out"
        );
    }
}
