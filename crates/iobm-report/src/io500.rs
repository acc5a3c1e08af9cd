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
    if let Some(find) = run.phases.iter().find(|p| p.name == "find") {
        let examined: u64 = find.workers.iter().map(|w| w.span.ops).sum();
        let matched: u64 = find.operations.iter().map(|o| o.keys).sum();
        let _ = writeln!(
            out,
            "  find: {examined} entries examined, {matched} files matched"
        );
    }
    let _ = writeln!(
        out,
        "  [SCORE] bandwidth {:.6} GiB/s = {}",
        s.bw_gib_s, s.formulas.bw
    );
    let _ = writeln!(
        out,
        "  [SCORE] metadata  {:.6} kIOPS = {}",
        s.md_kiops, s.formulas.md
    );
    let _ = writeln!(
        out,
        "  [SCORE] total     {:.6} = {}",
        s.score, s.formulas.score
    );
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
