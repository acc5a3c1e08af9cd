//! A phase's `until stable:` line in the text report (`--until-stable`): the window over which
//! its rate held, which ended it, or that it never held.

use iobm_results::PhaseResult;
use iobm_stats::Rate;
use std::fmt::Write;

/// The line of a phase watched for a steady rate; nothing for another.
pub(super) fn render(out: &mut String, phase: &PhaseResult) {
    let Some(s) = &phase.stable else { return };
    let within = format!("within {}% over {}s", s.tolerance_pct, s.window_s);
    let _ = match &s.held {
        Some(w) => {
            let mean = if s.unit == "bytes" {
                let rate = Rate::from_bytes_secs(w.mean_per_s.round() as u64, 1.0);
                format!("{:.2} MiB/s", rate.mib_s())
            } else {
                format!("{:.0} ops/s", w.mean_per_s)
            };
            writeln!(
                out,
                "  until stable: its rate held {within} of {mean} from {:.2}s to {:.2}s, which ended the phase",
                w.start_s, w.end_s
            )
        }
        None => writeln!(
            out,
            "  until stable: its rate did not hold {within} before the phase ended"
        ),
    };
}
