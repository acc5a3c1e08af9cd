//! A paced phase's lines in the text report (`--rate`): the target and achieved rates with the
//! backlog, and response time beside the service time of the latency line.

use iobm_results::pace::trim;
use iobm_results::PhaseResult;
use iobm_stats::format_duration;
use std::fmt::Write;
use std::time::Duration;

fn ns(value: Option<u64>) -> String {
    value.map_or("-".into(), |v| format_duration(Duration::from_nanos(v)))
}

/// The `rate:` and `response:` lines of a paced phase; nothing for a closed-loop one.
pub(super) fn render(out: &mut String, phase: &PhaseResult) {
    let Some(p) = &phase.pace else { return };
    let behind = match p.fell_behind_s {
        Some(s) => format!(
            "fell behind at {s:.2}s: {} operations behind schedule at most (over {} is behind)",
            p.most_behind(),
            p.behind_threshold_ops
        ),
        None => format!(
            "kept its schedule: {} operations behind at most (over {} is behind)",
            p.most_behind(),
            p.behind_threshold_ops
        ),
    };
    let _ = writeln!(
        out,
        "  rate: target {} ops/s ({} arrivals), achieved {:.1} ops/s ({:.0}%); {behind}",
        trim(p.target_ops_per_s),
        p.arrivals,
        p.achieved_ops_per_s,
        100.0 * p.achieved_ops_per_s / p.target_ops_per_s,
    );
    let r = &p.response;
    let _ = writeln!(
        out,
        "  response time from the intended start ({} ops): mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {} (the latency above is service time, from the actual start)",
        r.histogram.count,
        ns(r.mean_ns.map(|m| m as u64)),
        ns(r.p50_ns),
        ns(r.p90_ns),
        ns(r.p99_ns),
        ns(r.p999_ns),
        ns(r.max_ns)
    );
}
