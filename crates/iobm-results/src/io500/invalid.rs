//! Why a run is not a valid IO500 submission, one reason per variant, as IO500's own checks
//! decide (its `main.c` and `phase_find.c`) and where iobm's evidence says the score is not the
//! storage's: a phase that did not run or complete, a stonewall other than the rules', a write
//! that ended before its stonewall, a phase with failed operations (a verified read that found
//! other bytes than were written among them), a phase that scored 0, a find that matched
//! nothing, a phase whose bytes or lookups a cache (or memory) served.

use super::{Io500Phase, PHASES, RULES_STONEWALL_S, WRITES};
use crate::{RunResult, RunStatus, Verdict};
use std::fmt;

/// One reason a run is not valid.
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    /// The run ended otherwise than complete.
    RunNotComplete(RunStatus),
    /// A phase of the rules is not in the run.
    DidNotRun(&'static str),
    /// A phase of the rules ran but did not complete.
    DidNotComplete(&'static str),
    /// `--stonewall` other than the rules' 300 s.
    Stonewall(f64),
    /// A write ended before its stonewall.
    EndedEarly {
        name: String,
        seconds: f64,
        wall: f64,
    },
    /// Operations of a phase failed (its errors by kind, "count kind" each); a read's bytes
    /// that were not what was written are among them (IO500: errors invalidate the run).
    Errors { name: String, kinds: Vec<String> },
    /// A phase's figure is 0: IO500 calls it invalid and leaves it out of its mean.
    ScoredZero(String),
    /// The find phase matched no file (IO500: "Find didn't find anything").
    FoundNothing,
    /// These phases' cache verdict is `verdict`, not "uncached": their figures may be a
    /// cache's (or memory's).
    NotUncached {
        verdict: Verdict,
        names: Vec<String>,
    },
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Invalid::RunNotComplete(status) => {
                let status = format!("{status:?}").to_lowercase();
                write!(f, "the run did not complete ({status})")
            }
            Invalid::DidNotRun(name) => write!(f, "{name} did not run"),
            Invalid::DidNotComplete(name) => write!(f, "{name} did not complete"),
            Invalid::Stonewall(wall) => write!(
                f,
                "the write phases' stonewall was {wall} s, not the rules' {RULES_STONEWALL_S} s (--stonewall)"
            ),
            Invalid::EndedEarly { name, seconds, wall } => write!(
                f,
                "{name} ended after {seconds:.1} s, before its {wall} s stonewall (more work per worker is needed)"
            ),
            Invalid::Errors { name, kinds } => write!(
                f,
                "{name} had failed operations ({}): IO500 calls a run with errors invalid",
                kinds.join(", ")
            ),
            Invalid::ScoredZero(name) => write!(
                f,
                "{name} scored 0 (IO500 calls such a run invalid and leaves the phase out of its score, as here)"
            ),
            Invalid::FoundNothing => write!(f, "find matched no file (IO500: \"Find didn't find anything\")"),
            Invalid::NotUncached { verdict, names } => write!(
                f,
                "{} {} {}, not uncached: a cache's speed may be in the score (see each verdict)",
                names.join(", "),
                if names.len() == 1 { "is" } else { "are" },
                verdict.as_str()
            ),
        }
    }
}

/// Every reason `run`, whose scored phases gave `figures`, is not valid, in the rules' order.
pub fn reasons(run: &RunResult, figures: &[Io500Phase], stonewall_s: f64) -> Vec<Invalid> {
    let mut why = Vec::new();
    if run.status != RunStatus::Complete {
        why.push(Invalid::RunNotComplete(run.status));
    }
    let of = |name: &str| run.phases.iter().find(|p| p.name == name);
    for name in PHASES {
        match of(name) {
            None => why.push(Invalid::DidNotRun(name)),
            Some(p) if p.status != RunStatus::Complete => why.push(Invalid::DidNotComplete(name)),
            Some(_) => {}
        }
    }
    for p in PHASES.iter().filter_map(|name| of(name)) {
        if !p.errors.is_empty() {
            let kinds = p.errors.iter().map(|e| format!("{} {}", e.count, e.kind));
            let (name, kinds) = (p.name.clone(), kinds.collect());
            why.push(Invalid::Errors { name, kinds });
        }
    }
    if stonewall_s != RULES_STONEWALL_S {
        why.push(Invalid::Stonewall(stonewall_s));
    }
    // A phase cut short by Ctrl-C or an error is named above, not again here.
    let completed = |name: &str| of(name).is_some_and(|p| p.status == RunStatus::Complete);
    for f in figures.iter().filter(|f| completed(&f.name)) {
        if WRITES.contains(&f.name.as_str()) && f.seconds < stonewall_s {
            let (name, seconds, wall) = (f.name.clone(), f.seconds, stonewall_s);
            why.push(Invalid::EndedEarly {
                name,
                seconds,
                wall,
            });
        }
        if f.value <= 0.0 {
            why.push(Invalid::ScoredZero(f.name.clone()));
        }
    }
    if of("find").is_some_and(|p| p.operations.iter().map(|o| o.keys).sum::<u64>() == 0) {
        why.push(Invalid::FoundNothing);
    }
    why.extend(not_uncached(run, figures));
    why
}

/// The scored phases not judged uncached, one reason per verdict, in the rules' order.
fn not_uncached(run: &RunResult, figures: &[Io500Phase]) -> Vec<Invalid> {
    let mut by_verdict: Vec<(Verdict, Vec<String>)> = Vec::new();
    let phases = figures
        .iter()
        .filter_map(|f| run.phases.iter().find(|p| p.name == f.name));
    for p in phases.filter(|p| p.status == RunStatus::Complete) {
        let judged = p.cache.verdict.as_ref();
        let verdict = judged.map_or(Verdict::Unknown, |v| v.verdict.clone());
        if verdict == Verdict::Uncached {
            continue;
        }
        match by_verdict.iter_mut().find(|(v, _)| *v == verdict) {
            Some((_, names)) => names.push(p.name.clone()),
            None => by_verdict.push((verdict, vec![p.name.clone()])),
        }
    }
    let reason = |(verdict, names)| Invalid::NotUncached { verdict, names };
    by_verdict.into_iter().map(reason).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io500::summarize;

    /// A run of every phase of the rules with a 5 s stonewall, from the report tests.
    fn run() -> RunResult {
        let text = include_str!("../../../iobm/tests/fixtures/io500.json");
        serde_json::from_str(text).unwrap()
    }

    fn phase<'a>(run: &'a mut RunResult, name: &str) -> &'a mut crate::PhaseResult {
        run.phases.iter_mut().find(|p| p.name == name).unwrap()
    }

    fn not_uncached(why: &[Invalid]) -> Vec<String> {
        let named = why.iter().filter_map(|w| match w {
            Invalid::NotUncached { names, .. } => Some(names.clone()),
            _ => None,
        });
        named.flatten().collect()
    }

    #[test]
    fn a_phase_not_judged_uncached_marks_the_score() {
        let run = run();
        let s = summarize(&run, 5.0);
        let why = reasons(&run, &s.phases, 5.0);
        let marked = not_uncached(&why);
        // The ior writes were uncached; the reads were cached; mdtest's are unknown.
        assert!(
            !marked.contains(&"ior-easy-write".to_string()),
            "{marked:?}"
        );
        assert!(marked.contains(&"ior-easy-read".to_string()), "{marked:?}");
        assert!(
            marked.contains(&"mdtest-easy-stat".to_string()),
            "{marked:?}"
        );
        assert_eq!(marked.len(), 10, "{marked:?}");
        let text = s.invalid_because.join("\n");
        let cached = "ior-easy-read, ior-hard-read are cached, not uncached";
        assert!(text.contains(cached), "{text}");
        assert!(!s.valid);
    }

    #[test]
    fn a_find_that_matched_nothing_is_invalid() {
        let mut run = run();
        assert!(!reasons(&run, &[], 5.0).contains(&Invalid::FoundNothing));
        for op in &mut phase(&mut run, "find").operations {
            op.keys = 0;
        }
        assert!(reasons(&run, &[], 5.0).contains(&Invalid::FoundNothing));
    }

    #[test]
    fn a_phase_at_0_is_invalid_and_left_out_of_the_mean() {
        let mut run = run();
        let before = summarize(&run, 5.0);
        for w in &mut phase(&mut run, "ior-hard-read").workers {
            w.span.bytes = 0;
        }
        let s = summarize(&run, 5.0);
        let zero = Invalid::ScoredZero("ior-hard-read".into());
        assert!(reasons(&run, &s.phases, 5.0).contains(&zero));
        // The mean of the three others, as IO500's calc_score, not 0.
        let others: Vec<f64> = (before.phases.iter())
            .filter(|f| super::super::is_bandwidth(&f.name) && f.name != "ior-hard-read")
            .map(|f| f.value)
            .collect();
        let product: f64 = others.iter().product();
        let expected = product.powf(1.0 / 3.0);
        let bw = s.bw_gib_s.unwrap();
        assert!(
            (bw - expected).abs() < 1e-9 * expected,
            "{bw} against {expected}"
        );
        assert!(
            s.formulas.bw.contains("the 3 ior phases"),
            "{}",
            s.formulas.bw
        );
    }

    #[test]
    fn a_phase_with_failed_operations_is_invalid() {
        let mut run = run();
        let s = summarize(&run, 5.0);
        assert!(!reasons(&run, &s.phases, 5.0)
            .iter()
            .any(|w| matches!(w, Invalid::Errors { .. })));
        phase(&mut run, "mdtest-hard-read")
            .errors
            .push(crate::ErrorCount {
                kind: "bad data".into(),
                count: 3,
                first: "read mdtest-hard/f: the 4 KiB at offset 0 are not what was written".into(),
            });
        let why = reasons(&run, &s.phases, 5.0);
        let errors = Invalid::Errors {
            name: "mdtest-hard-read".into(),
            kinds: vec!["3 bad data".into()],
        };
        assert!(why.contains(&errors), "{why:?}");
        assert!(errors.to_string().contains("(3 bad data)"), "{errors}");
    }
}
