//! IO500's scores of a run of kind "io500", derived from its phases: each scored phase's
//! figure (the ior phases in GiB/s, mdtest's and find in kIOPS), the bandwidth and metadata
//! scores (geometric means), the total (the square root of their product), each with its
//! formula, and whether the run is a valid IO500 submission and why not.

mod invalid;

pub use invalid::Invalid;

use crate::{PhaseResult, RunResult, RunStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The phases of the IO500 rules, in the order they run.
pub const PHASES: [&str; 12] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
    "find",
    "ior-easy-read",
    "mdtest-easy-stat",
    "ior-hard-read",
    "mdtest-hard-stat",
    "mdtest-easy-delete",
    "mdtest-hard-read",
    "mdtest-hard-delete",
];

/// The find phase: its operations are the files it examined (pfind's `total_files`), its
/// figure those over the phase's first start to last end (pfind's over its longest runtime).
pub const FIND: &str = PHASES[4];

/// The write phases, each stonewalled.
pub const WRITES: [&str; 4] = [
    "ior-easy-write",
    "mdtest-easy-write",
    "ior-hard-write",
    "mdtest-hard-write",
];

/// The stonewall of the rules, in seconds: a write phase must run at least this long.
pub const RULES_STONEWALL_S: f64 = 300.0;

/// Whether a phase counts towards the bandwidth score (the ior phases) rather than the
/// metadata score (mdtest's and find).
pub fn is_bandwidth(phase: &str) -> bool {
    phase.starts_with("ior-")
}

/// The IO500 scores of a run ([`summarize`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Io500Summary {
    /// Each scored phase that ran, in the rules' order.
    pub phases: Vec<Io500Phase>,
    /// The bandwidth score in GiB/s: the geometric mean of the ior phases' figures. Null
    /// unless every phase of the rules ran to its end (an interrupted or failed run has no
    /// score; its phases' figures stand).
    pub bw_gib_s: Option<f64>,
    /// The metadata score in kIOPS: the geometric mean of mdtest's and find's figures; null
    /// as `bw_gib_s`.
    pub md_kiops: Option<f64>,
    /// The total score: the square root of the bandwidth score times the metadata score; null
    /// as `bw_gib_s`.
    pub score: Option<f64>,
    /// Files the find phase matched (IO500's `-newer ... -size 3901c -name *01*`: mdtest-hard's
    /// files whose names hold "01"). Null: no find phase ran.
    #[serde(default)]
    pub find_matched: Option<u64>,
    /// Each score's formula, with the figures put in.
    pub formulas: Io500Formulas,
    /// The write phases' stonewall in seconds (300 by the rules).
    pub stonewall_s: f64,
    /// Whether the run is a valid IO500 submission by what the document shows: every phase
    /// ran and completed, with the rules' 300 s stonewall, each write phase running at least
    /// that long, no phase at 0, a find that matched files, and every scored phase's cache
    /// verdict "uncached". iobm's own run of the phases is never an official submission.
    pub valid: bool,
    /// Why it is not valid (empty when it is).
    pub invalid_because: Vec<String>,
}

/// One scored phase's figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Io500Phase {
    /// The phase's name, as in `phases`.
    pub name: String,
    /// The figure, in `unit`.
    pub value: f64,
    /// "GiB/s" (ior phases) or "kIOPS" (the others).
    pub unit: String,
    /// How it was computed from the phase, with its numbers.
    pub formula: String,
    /// The phase's time from the first worker's start to the last one's end, in seconds.
    pub seconds: f64,
}

/// The formulas of the three scores, with the figures put in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Io500Formulas {
    /// The bandwidth score's: the geometric mean of the ior phases' GiB/s.
    pub bw: String,
    /// The metadata score's: the geometric mean of mdtest's and find's kIOPS.
    pub md: String,
    /// The total score's: the square root of the two scores' product.
    pub score: String,
}

/// The geometric mean of `values` (0 when there are none, or one is 0).
pub fn geometric_mean(values: &[f64]) -> f64 {
    if values.is_empty() || values.iter().any(|v| *v <= 0.0) {
        return 0.0;
    }
    (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp()
}

/// The time from the first worker's start to the last one's end, in seconds (the makespan's).
fn makespan_s(phase: &PhaseResult) -> f64 {
    let start = phase.workers.iter().map(|w| w.span.start_ns).min();
    let end = phase.workers.iter().map(|w| w.span.end_ns).max();
    start
        .zip(end)
        .map_or(0.0, |(s, e)| e.saturating_sub(s) as f64 / 1e9)
}

fn phase_figure(phase: &PhaseResult) -> Io500Phase {
    let seconds = makespan_s(phase);
    let per_s = |amount: u64| match seconds > 0.0 {
        true => amount as f64 / seconds,
        false => 0.0,
    };
    let name = phase.name.clone();
    if is_bandwidth(&phase.name) {
        let bytes = phase.bytes();
        Io500Phase {
            name,
            value: per_s(bytes) / (1u64 << 30) as f64,
            unit: "GiB/s".into(),
            formula: format!(
                "bytes of every worker / (last end - first start) / 2^30 = {bytes} / {seconds:.6} s / 2^30"
            ),
            seconds,
        }
    } else {
        let ops: u64 = phase.workers.iter().map(|w| w.span.ops).sum();
        let counted = match phase.name == FIND {
            true => "files examined by every worker",
            false => "operations of every worker",
        };
        Io500Phase {
            name,
            value: per_s(ops) / 1000.0,
            unit: "kIOPS".into(),
            formula: format!(
                "{counted} / (last end - first start) / 1000 = {ops} / {seconds:.6} s / 1000"
            ),
            seconds,
        }
    }
}

/// "(a × b × c)^(1/3)" of the figures above 0: as IO500's `calc_score`, a phase at 0 is left
/// out of the mean (and makes the run invalid, [`invalid::Invalid::ScoredZero`]).
fn mean_formula(what: &str, figures: &[&Io500Phase]) -> (f64, String) {
    let figures: Vec<&Io500Phase> = figures.iter().copied().filter(|f| f.value > 0.0).collect();
    let values: Vec<f64> = figures.iter().map(|f| f.value).collect();
    let mean = geometric_mean(&values);
    let product = values
        .iter()
        .map(|v| format!("{v:.6}"))
        .collect::<Vec<_>>()
        .join(" × ");
    let names = figures
        .iter()
        .map(|f| f.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let n = values.len();
    (
        mean,
        format!("geometric mean of the {n} {what} phases ({names}) = ({product})^(1/{n})"),
    )
}

/// The scores of `run`'s phases, with a write phases' stonewall of `stonewall_s`.
pub fn summarize(run: &RunResult, stonewall_s: f64) -> Io500Summary {
    let figures: Vec<Io500Phase> = PHASES
        .iter()
        .filter_map(|name| run.phases.iter().find(|p| p.name == *name))
        .map(phase_figure)
        .collect();
    let bw: Vec<&Io500Phase> = figures.iter().filter(|f| is_bandwidth(&f.name)).collect();
    let md: Vec<&Io500Phase> = figures.iter().filter(|f| !is_bandwidth(&f.name)).collect();
    let (bw_gib_s, bw_formula) = mean_formula("ior", &bw);
    let (md_kiops, md_formula) = mean_formula("mdtest and find", &md);
    let score = (bw_gib_s * md_kiops).sqrt();
    let every_phase_ended = PHASES.iter().all(|name| {
        run.phases
            .iter()
            .any(|p| p.name == *name && p.status == RunStatus::Complete)
    });
    let why: Vec<String> = invalid::reasons(run, &figures, stonewall_s)
        .iter()
        .map(ToString::to_string)
        .collect();
    Io500Summary {
        formulas: Io500Formulas {
            bw: bw_formula,
            md: md_formula,
            score: format!(
                "sqrt(bandwidth score × metadata score) = sqrt({bw_gib_s:.6} × {md_kiops:.6})"
            ),
        },
        phases: figures,
        bw_gib_s: every_phase_ended.then_some(bw_gib_s),
        md_kiops: every_phase_ended.then_some(md_kiops),
        score: every_phase_ended.then_some(score),
        find_matched: run
            .phases
            .iter()
            .find(|p| p.name == FIND)
            .map(|find| find.operations.iter().map(|o| o.keys).sum()),
        stonewall_s,
        valid: why.is_empty(),
        invalid_because: why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_geometric_mean_is_the_nth_root_of_the_product() {
        let m = geometric_mean(&[2.0, 8.0]);
        assert!((m - 4.0).abs() < 1e-12, "{m}");
        let m = geometric_mean(&[1.0, 10.0, 100.0]);
        assert!((m - 10.0).abs() < 1e-9, "{m}");
        assert_eq!(geometric_mean(&[3.0, 0.0]), 0.0);
        assert_eq!(geometric_mean(&[]), 0.0);
    }

    #[test]
    fn the_bandwidth_phases_are_iors() {
        let bw: Vec<&str> = PHASES.into_iter().filter(|p| is_bandwidth(p)).collect();
        assert_eq!(
            bw,
            [
                "ior-easy-write",
                "ior-hard-write",
                "ior-easy-read",
                "ior-hard-read"
            ]
        );
        assert!(WRITES.iter().all(|w| PHASES.contains(w)));
        assert_eq!(FIND, "find");
    }
}
