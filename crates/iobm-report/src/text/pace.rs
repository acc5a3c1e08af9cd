//! A paced phase's lines in the text report (`--rate`): the target and achieved rates with the
//! backlog and whether the client was late, response time beside the service time of the
//! latency line, and the client's own lag; a rate sweep's table of achieved rate against
//! response time, and its knee.

use crate::table::Table;
use iobm_results::pace::{knee, sweep_points, trim};
use iobm_results::{PhaseResult, RunResult};
use iobm_stats::format_duration;
use std::fmt::Write;
use std::time::Duration;

fn ns(value: Option<u64>) -> String {
    value.map_or("-".into(), |v| format_duration(Duration::from_nanos(v)))
}

/// The `rate:`, `response:` and lag lines of a paced phase; nothing for a closed-loop one.
pub(super) fn render(out: &mut String, phase: &PhaseResult) {
    let Some(p) = &phase.pace else { return };
    let late = p.client_late(&phase.latency);
    let (most, threshold) = (p.most_behind(), p.behind_threshold_ops);
    // A schedule the client itself did not keep is not "kept".
    let behind = match (p.fell_behind_s, &late) {
        (Some(s), _) => format!(
            "fell behind at {s:.2}s: {most} operations behind schedule at most (over {threshold} is behind)"
        ),
        (None, Some(_)) => {
            format!("{most} operations behind schedule at most (over {threshold} is behind)")
        }
        (None, None) => format!(
            "kept its schedule: {most} operations behind at most (over {threshold} is behind)"
        ),
    };
    let late = late.map_or(String::new(), |l| format!("; {l}"));
    let _ = writeln!(
        out,
        "  rate: target {} ops/s ({} arrivals), achieved {:.1} ops/s ({:.0}%); {behind}{late}",
        trim(p.target_ops_per_s),
        p.arrivals,
        p.achieved_ops_per_s,
        100.0 * p.achieved_ops_per_s / p.target_ops_per_s,
    );
    let _ = writeln!(
        out,
        "  response time from the intended start {} (the latency above is service time, from the actual start)",
        super::percentiles(&p.response)
    );
    if let Some(l) = &p.lag {
        let _ = writeln!(
            out,
            "  the client's lag in starting them {} (apart from the storage's queueing)",
            super::percentiles(l)
        );
    }
}

/// A `--rate-sweep` run's table (every step's target and achieved rates, p50, p99 and p99.9
/// response time) and its knee under `--slo`; nothing for another run.
pub fn render_sweep(run: &RunResult) -> String {
    let Some(rate) = run.config.rate.as_ref().filter(|r| r.sweep_steps.is_some()) else {
        return String::new();
    };
    let points = sweep_points(&run.phases);
    let mut table = Table::new([
        "  target ops/s",
        "achieved ops/s",
        "p50 response",
        "p99 response",
        "p99.9 response",
    ]);
    for p in &points {
        table.row([
            format!("  {}", trim(p.target_ops_per_s)),
            format!("{:.1}", p.achieved_ops_per_s),
            ns(p.p50_ns),
            ns(p.p99_ns),
            ns(p.p999_ns),
        ]);
    }
    let mut out = format!(
        "rate sweep ({} arrivals; response time from each operation's intended start):\n{}",
        rate.arrivals,
        table.render("")
    );
    if let Some(slo) = rate.slo_ns {
        let slo_text = ns(Some(slo));
        let _ = match knee(&points, slo) {
            Some(k) => writeln!(
                out,
                "  knee: {} ops/s targeted ({:.1} achieved), the highest rate up to which p99 response time stayed under the SLO of {slo_text} (p99 {})",
                trim(k.target_ops_per_s),
                k.achieved_ops_per_s,
                ns(k.p99_ns)
            ),
            None => writeln!(
                out,
                "  knee: none: p99 response time was over the SLO of {slo_text} from the first rate"
            ),
        };
    }
    out.push('\n');
    out
}
