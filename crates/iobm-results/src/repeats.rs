//! Repeated runs (`--repeat N`): each aggregate of each phase over the repetitions, with its
//! median, range and a 95% confidence interval of its mean (Student's t), so a reader sees the
//! noise and `compare` can tell a difference from it.

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
    /// Each phase's aggregates over the repetitions that ran it, by phase name.
    pub phases: Vec<PhaseSpread>,
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
    /// The 95% confidence interval of the mean: mean -/+ t(0.975, n-1) * s / sqrt(n), with s
    /// the sample standard deviation; null with one value.
    pub ci95: Option<[f64; 2]>,
}

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
        let ci95 = (n > 1).then(|| {
            let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let t = T975.get(n - 2).copied().unwrap_or(1.96);
            let half = t * variance.sqrt() / (n as f64).sqrt();
            [mean - half, mean + half]
        });
        Spread {
            median,
            min: sorted.first().copied().unwrap_or(0.0),
            max: sorted.last().copied().unwrap_or(0.0),
            mean,
            ci95,
            values,
        }
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
            let runs_of = runs
                .iter()
                .filter_map(|r| r.phases.iter().find(|p| p.name == name));
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
        Repeats {
            run_ids: runs.iter().map(|r| r.run_id.clone()).collect(),
            phases,
        }
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
        // s = sqrt(2.5), t(0.975, 4) = 2.776: half-width 2.776 * 1.5811 / 2.2361 = 1.963.
        let [low, high] = s.ci95.unwrap();
        assert!(
            (low - 9.037).abs() < 0.001 && (high - 12.963).abs() < 0.001,
            "{low} {high}"
        );
        assert_eq!(Spread::of(vec![4.0, 2.0]).median, 3.0);
        assert_eq!(Spread::of(vec![5.0]).ci95, None);
        let apart = Spread::of(vec![20.0, 21.0, 19.0]);
        let near = Spread::of(vec![12.0, 12.5, 13.5]);
        assert!(!overlap(s.ci95.unwrap(), apart.ci95.unwrap()));
        assert!(overlap(s.ci95.unwrap(), near.ci95.unwrap()));
    }
}
