//! IO500's score lines of an io500 run: each scored phase's figure with its formula, the
//! bandwidth, metadata and total scores with theirs, and whether it is a valid submission.

use iobm_results::RunResult;
use std::fmt::Write;

/// The score lines, or nothing for a run without IO500 scores.
pub fn render_scores(run: &RunResult) -> String {
    let Some(s) = &run.io500 else {
        return String::new();
    };
    let mut out = String::from("IO500 scores\n");
    for p in &s.phases {
        let _ = writeln!(
            out,
            "  [RESULT] {:<20} {:>12.6} {:<5}  {}",
            p.name, p.value, p.unit, p.formula
        );
    }
    if let (Some(find), Some(matched)) =
        (run.phases.iter().find(|p| p.name == "find"), s.find_matched)
    {
        let examined: u64 = find.workers.iter().map(|w| w.span.ops).sum();
        let _ = writeln!(
            out,
            "  find: {examined} entries examined, {matched} files matched"
        );
    }
    match (s.bw_gib_s, s.md_kiops, s.score) {
        (Some(bw), Some(md), Some(score)) => {
            let _ = writeln!(out, "  [SCORE] bandwidth {bw:.6} GiB/s = {}", s.formulas.bw);
            let _ = writeln!(out, "  [SCORE] metadata  {md:.6} kIOPS = {}", s.formulas.md);
            let _ = writeln!(out, "  [SCORE] total     {score:.6} = {}", s.formulas.score);
            let judged = |p: &&iobm_results::PhaseResult| {
                let verdict = p.cache.verdict.as_ref().map(|v| &v.verdict);
                s.phases.iter().any(|f| f.name == p.name)
                    && verdict != Some(&iobm_results::Verdict::Uncached)
            };
            let unsure: Vec<&str> = run.phases.iter().filter(judged).map(|p| p.name.as_str()).collect();
            if !unsure.is_empty() {
                let _ = writeln!(
                    out,
                    "  [SCORE] of which {} of {} phases not judged uncached (a cache's speed may be in the score): {}",
                    unsure.len(),
                    s.phases.len(),
                    unsure.join(", ")
                );
            }
        }
        _ => out.push_str(
            "  [SCORE] none: not every phase of the rules ran to its end (the figures above are of those that did)\n",
        ),
    }
    if s.valid {
        let _ = writeln!(
            out,
            "  a valid IO500 run by the rules' stonewall ({} s) and phases",
            s.stonewall_s
        );
    } else {
        out.push_str("  NOT a valid IO500 submission:\n");
        for why in &s.invalid_because {
            let _ = writeln!(out, "    - {why}");
        }
    }
    out
}
