//! The text report: a header naming the run and its storage, then per phase one line per
//! worker (as seed 003 prints them, but complete), every aggregate with its formula, latency
//! percentiles, iobm's own CPU cost, the cache evidence and the warnings.

use crate::table::Table;
use iobm_results::{
    Environment, PhaseResult, RunResult, RunStatus, SteadyResult, SteadyUnit, Verdict,
};
use iobm_stats::names::OpName;
use iobm_stats::{format_bytes, format_duration, Rate};
use std::fmt::Write;
use std::time::Duration;

mod cache;
mod header;
pub(crate) mod pace;
mod repeats;

pub use header::render_header;
pub use repeats::render_repeats;

fn status_word(status: RunStatus) -> &'static str {
    match status {
        RunStatus::Complete => "complete",
        RunStatus::Interrupted => "INTERRUPTED",
        RunStatus::Failed => "FAILED",
        RunStatus::Running => "UNFINISHED (still running, or killed before its end)",
    }
}

fn ns(value: Option<u64>) -> String {
    value.map_or("-".into(), |v| format_duration(Duration::from_nanos(v)))
}

/// A latency's count and percentiles: "(N ops): mean .. p50 .. p90 .. p99 .. p99.9 .. max ..".
fn percentiles(l: &iobm_results::Latency) -> String {
    format!(
        "({} ops): mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        l.histogram.count,
        ns(l.mean_ns.map(|m| m as u64)),
        ns(l.p50_ns),
        ns(l.p90_ns),
        ns(l.p99_ns),
        ns(l.p999_ns),
        ns(l.max_ns)
    )
}

/// The whole run: header, each phase, footer.
pub fn render_run(run: &RunResult) -> String {
    let mut out = render_header(run);
    for phase in &run.phases {
        out.push('\n');
        out.push_str(&render_phase(phase, &run.environment));
    }
    if run.bonnie.is_some() {
        out.push('\n');
        out.push_str(&crate::bonnie::render_tables(run));
    }
    if run.io500.is_some() {
        out.push('\n');
        out.push_str(&crate::io500::render_scores(run));
    }
    if run.repeats.is_some() {
        out.push('\n');
        out.push_str(&render_repeats(run));
    }
    out.push('\n');
    out.push_str(&render_footer(run));
    out
}

/// How the run ended and its run-wide warnings: printed after the last phase.
pub fn render_footer(run: &RunResult) -> String {
    let mut out = pace::render_sweep(run);
    let _ = writeln!(out, "run {}: {}", run.run_id, status_word(run.status));
    for w in &run.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// One line per rank: its workers' bytes over its own span (first start to last end).
fn rank_table(phase: &PhaseResult) -> String {
    // A phase that moves no bytes, in operations as its workers' rows.
    let by_ops = phase.bytes() == 0;
    let columns = if by_ops {
        ["  rank", "host", "workers", "time", "ops", "ops/s", ""]
    } else {
        [
            "  rank", "host", "workers", "time", "bytes", "MiB/s", "MB/s",
        ]
    };
    let mut table = Table::new(columns).left(1);
    let mut ranks: Vec<u32> = phase.workers.iter().map(|w| w.rank).collect();
    ranks.dedup();
    for rank in ranks {
        let mine: Vec<_> = phase.workers.iter().filter(|w| w.rank == rank).collect();
        let start = mine.iter().map(|w| w.span.start_ns).min().unwrap_or(0);
        let end = mine.iter().map(|w| w.span.end_ns).max().unwrap_or(0);
        let seconds = end.saturating_sub(start) as f64 / 1e9;
        let bytes: u64 = mine.iter().map(|w| w.span.bytes).sum();
        let ops: u64 = mine.iter().map(|w| w.span.ops).sum();
        let rate = Rate::from_bytes_secs(bytes, seconds);
        let (amount, first, second) = if by_ops {
            let per_s = if seconds > 0.0 {
                ops as f64 / seconds
            } else {
                0.0
            };
            (ops.to_string(), format!("{per_s:.0}"), String::new())
        } else {
            (
                format_bytes(bytes),
                format!("{:.2}", rate.mib_s()),
                format!("{:.2}", rate.mb_s()),
            )
        };
        table.row([
            format!("  {rank}"),
            mine[0].host.clone(),
            mine.len().to_string(),
            format_duration(Duration::from_nanos(end.saturating_sub(start))),
            amount,
            first,
            second,
        ]);
    }
    table.render("")
}

/// Object phases: each kind of operation, and each endpoint's share when there are several.
fn operations_table(phase: &PhaseResult) -> String {
    let mut table = Table::new([
        "  operation",
        "ops",
        "ops/s",
        "MiB/s",
        "MB/s",
        "p50",
        "p99",
        "max",
        "TTFB p50",
        "TTFB p99",
        "errors",
        "retried",
    ])
    .left(1);
    for o in &phase.operations {
        let rate = Rate(o.bytes_per_s);
        let ttfb = |f: fn(&iobm_results::Latency) -> Option<u64>| ns(o.ttfb.as_ref().and_then(f));
        table.row([
            format!("  {}", o.op),
            o.ops.to_string(),
            format!("{:.1}", o.ops_per_s),
            format!("{:.2}", rate.mib_s()),
            format!("{:.2}", rate.mb_s()),
            ns(o.latency.p50_ns),
            ns(o.latency.p99_ns),
            ns(o.latency.max_ns),
            ttfb(|l| l.p50_ns),
            ttfb(|l| l.p99_ns),
            o.errors.to_string(),
            o.retried.to_string(),
        ]);
    }
    let mut out = table.render("");
    out.push_str(&keys_lines(phase));
    // Only object operations have requests and answers.
    out.push_str(if phase.op == OpName::Readwrite || phase.op == OpName::Find {
        "  (ops/s and MiB/s per operation: its ops or bytes / the phase's wall time)\n"
    } else {
        "  (ops/s and MiB/s per operation: its ops or bytes / the phase's wall time; latency: request sent to answer received; TTFB: to the answer's head)\n"
    });
    out.push_str(&endpoint_shares(phase));
    out
}

/// A line per operation that returned, deleted or matched keys, with their rate.
fn keys_lines(phase: &PhaseResult) -> String {
    let mut out = String::new();
    let wall_s = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
    for o in phase.operations.iter().filter(|o| o.keys > 0) {
        if o.op == OpName::Find {
            let _ = writeln!(out, "  find: {} files matched", o.keys);
            continue;
        }
        let _ = writeln!(
            out,
            "  {}: {} keys {}, {:.0} keys/s",
            o.op,
            if o.op == OpName::Delete {
                "deleted"
            } else {
                "returned"
            },
            o.keys,
            o.keys as f64 / wall_s.max(1e-9)
        );
    }
    out
}

/// Each endpoint's workers and share of the bytes and operations; nothing for one endpoint.
fn endpoint_shares(phase: &PhaseResult) -> String {
    let mut endpoints: Vec<&str> = phase
        .workers
        .iter()
        .filter_map(|w| w.endpoint.as_deref())
        .collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    if endpoints.len() <= 1 {
        return String::new();
    }
    let total = phase.bytes().max(1) as f64;
    let ops_total = phase.workers.iter().map(|w| w.span.ops).sum::<u64>().max(1) as f64;
    let mut shares = Table::new([
        "  endpoint",
        "workers",
        "bytes",
        "share of bytes",
        "ops",
        "share of ops",
    ])
    .left(1);
    for e in endpoints {
        let mine: Vec<_> = phase
            .workers
            .iter()
            .filter(|w| w.endpoint.as_deref() == Some(e))
            .collect();
        let bytes: u64 = mine.iter().map(|w| w.span.bytes).sum();
        let ops: u64 = mine.iter().map(|w| w.span.ops).sum();
        shares.row([
            format!("  {e}"),
            mine.len().to_string(),
            format_bytes(bytes),
            format!("{:.1}%", bytes as f64 * 100.0 / total),
            ops.to_string(),
            format!("{:.1}%", ops as f64 * 100.0 / ops_total),
        ]);
    }
    shares.render("")
}

/// The rest of a phase that moved no bytes, after its first line: each worker's operations
/// and rate, the aggregates' operation rates with their formulas (over operations), then the
/// latency, CPU, cache evidence, errors and warnings as for any phase.
fn operations_phase(mut out: String, phase: &PhaseResult, env: &Environment) -> String {
    let several_ranks = phase.workers.iter().any(|w| w.rank > 0);
    let mut workers = Table::new(["  worker", "host", "time", "ops", "ops/s"]).left(1);
    for w in &phase.workers {
        let time = w.span.end_ns - w.span.start_ns;
        workers.row([
            worker_label(w, several_ranks),
            w.host.clone(),
            format_duration(Duration::from_nanos(time)),
            w.span.ops.to_string(),
            format!("{:.0}", w.span.ops as f64 * 1e9 / time.max(1) as f64),
        ]);
    }
    out.push_str(&workers.render(""));
    if several_ranks {
        out.push_str(&rank_table(phase));
    }
    let mut aggs = Table::new(["  aggregate", "ops/s", "formula"]).left(2);
    for a in &phase.aggregates {
        let window = a
            .seconds
            .map_or(String::new(), |s| format!(" = {} ops / {:.3}s", a.ops, s));
        aggs.row([
            format!("  {}", a.kind.label()),
            format!("{:.0}", a.ops_per_s),
            format!("{}{window}", a.formula.replace("bytes_w", "ops_w")),
        ]);
    }
    out.push_str(&aggs.render(""));
    phase_tail(&mut out, phase, env);
    out
}

/// A worker's row name: its id, after its rank's when several ranks ran.
fn worker_label(w: &iobm_results::WorkerResult, several_ranks: bool) -> String {
    if several_ranks {
        format!("  {}.{}", w.rank, w.worker)
    } else {
        format!("  {}", w.worker)
    }
}

/// One phase: workers, aggregates, latency, CPU, cache evidence, errors and warnings.
pub fn render_phase(phase: &PhaseResult, env: &Environment) -> String {
    let mut out = String::new();
    let wall = phase.end_ns.saturating_sub(phase.start_ns);
    let ops: u64 = phase.workers.iter().map(|w| w.span.ops).sum();
    // A phase that moves no bytes (a stat, a removal) is counted in operations alone.
    let by_ops = phase.bytes() == 0 && ops > 0;
    let _ = writeln!(
        out,
        "{}: {} {} in {}",
        phase.name,
        status_word(phase.status),
        if by_ops {
            format!("{ops} ops")
        } else {
            format_bytes(phase.bytes())
        },
        format_duration(Duration::from_nanos(wall))
    );
    if by_ops {
        return operations_phase(out, phase, env);
    }
    let several_ranks = phase.workers.iter().any(|w| w.rank > 0);
    let mut workers = Table::new(["  worker", "host", "time", "bytes", "MiB/s", "MB/s"]).left(1);
    for w in &phase.workers {
        let rate = Rate(w.span.bytes_per_s());
        workers.row([
            worker_label(w, several_ranks),
            w.host.clone(),
            format_duration(Duration::from_nanos(w.span.end_ns - w.span.start_ns)),
            format_bytes(w.span.bytes),
            format!("{:.2}", rate.mib_s()),
            format!("{:.2}", rate.mb_s()),
        ]);
    }
    out.push_str(&workers.render(""));
    if several_ranks {
        out.push_str(&rank_table(phase));
    }

    let mut aggs = Table::new(["  aggregate", "MiB/s", "MB/s", "ops/s", "formula"]).left(4);
    for a in &phase.aggregates {
        let rate = Rate(a.bytes_per_s);
        let window = a.seconds.map_or(String::new(), |s| {
            format!(" = {} / {:.3}s", format_bytes(a.bytes), s)
        });
        aggs.row([
            format!("  {}", a.kind.label()),
            format!("{:.2}", rate.mib_s()),
            format!("{:.2}", rate.mb_s()),
            format!("{:.0}", a.ops_per_s),
            format!("{}{window}", a.formula),
        ]);
    }
    out.push_str(&aggs.render(""));

    phase_tail(&mut out, phase, env);
    out
}

/// `--until-stable`'s line: the rule, and when the phase was found steady, or how far from it
/// its last window was, or that it ended before a window was full.
pub(crate) fn steady_line(steady: &SteadyResult, status: RunStatus) -> String {
    let rate = |r: f64| match steady.unit {
        SteadyUnit::OpsPerS => format!("{r:.0} ops/s"),
        SteadyUnit::BytesPerS => format!("{:.2} MiB/s", Rate(r).mib_s()),
    };
    let rule = format!(
        "  until stable ({}% over {}s, sampled every {}s)",
        steady.tolerance_pct, steady.window_s, steady.tick_s
    );
    let n = steady.rates.len();
    let full = (steady.window_s / steady.tick_s).round() as usize;
    // "within 3.1% of their mean ..." when steady, "up to 12.0% from their mean ..." when not.
    let spread = |near: &str, of: &str| match steady.most_off_pct() {
        Some(off) => format!("{near} {off:.1}% {of} their mean {}", rate(steady.mean())),
        None => "all zero".to_string(),
    };
    let ended = match status {
        RunStatus::Interrupted => "interrupted",
        RunStatus::Failed => "failed",
        _ => "ended",
    };
    match steady.stable_at_s {
        Some(at) => format!(
            "{rule}: steady at {at:.3}s, where the phase ended: the last window's {n} rates {}\n",
            spread("within", "of")
        ),
        None if n < full => format!(
            "{rule}: the phase {ended} after {n} of a window's {full} rates, too few to judge\n"
        ),
        None => format!(
            "{rule}: not steady before the phase {ended}: its last window's {n} rates {}\n",
            spread("up to", "from")
        ),
    }
}

/// What every phase ends with: its operations (object phases), latency, CPU, stonewall,
/// verification, cache evidence, errors and warnings.
fn phase_tail(out: &mut String, phase: &PhaseResult, env: &Environment) {
    if !phase.operations.is_empty() {
        out.push_str(&operations_table(phase));
    }
    out.push_str(&latency_line(phase));
    pace::render(out, phase);
    out.push_str(&cost_lines(phase));
    out.push_str(&stonewall_line(phase));
    if let Some(steady) = &phase.until_stable {
        out.push_str(&steady_line(steady, phase.status));
    }
    cache::render(out, phase, env);
    if let Some(a) = &phase.settings.access {
        let _ = writeln!(
            out,
            "  access: {} over {} {}: {:.1}% of the operations on the hottest 1%, {:.1}% on the hottest 10%",
            a.dist.describe(),
            a.picked_among,
            if phase.op.on_objects() { "objects" } else { "blocks per job" },
            100.0 * a.hottest_1pct,
            100.0 * a.hottest_10pct
        );
    }
    if let Some(v) = &phase.cache.verdict {
        let _ = writeln!(out, "  verdict: {}: {}", v.verdict, v.evidence);
    }
    for e in &phase.errors {
        let _ = writeln!(
            out,
            "  errors: {} x {} (first: {})",
            e.count, e.kind, e.first
        );
    }
    for w in &phase.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
}

/// The latency of one operation (object phases may mix operations and sizes: their line
/// covers all of them).
fn latency_line(phase: &PhaseResult) -> String {
    let l = &phase.latency;
    let what = match phase.operations.len() {
        0 if phase.bytes() == 0 => format!("one {}", phase.op),
        0 => format!(
            "one {} {}",
            format_bytes(phase.settings.block_bytes),
            phase.op
        ),
        1 => format!("one {}", phase.op),
        _ => "any operation of the mix".to_string(),
    };
    format!("  latency of {what} {}\n", percentiles(l))
}

/// What the phase cost iobm beside the storage: its CPU, the ranks' gather, the data offered's
/// sample and the verification.
fn cost_lines(phase: &PhaseResult) -> String {
    let mut out = String::new();
    let cpu = &phase.cpu;
    let _ = writeln!(
        out,
        "  iobm CPU: {:.2}s user + {:.2}s system{}{}",
        cpu.user_s,
        cpu.system_s,
        cpu.cpu_s_per_gib
            .map_or(String::new(), |c| format!(" = {c:.3} CPU-s per GiB moved")),
        cpu.gateway_s.map_or(String::new(), |g| format!(
            "; the built-in gateway used {g:.2}s more, not counted here"
        ))
    );
    if let Some(g) = phase.gather_s {
        let _ = writeln!(
            out,
            "  gather: rank 0 gathered and merged the ranks' records in {} (after the phase, in none of its figures)",
            format_duration(Duration::from_secs_f64(g))
        );
    }
    if let Some(o) = &phase.offered {
        let _ = writeln!(
            out,
            "  data offered: zstd -3 ratio {:.2}, {:.1}% of 4 KiB blocks duplicate (a {} sample, measured after the phase)",
            o.zstd3_ratio,
            100.0 * o.duplicate_4k_share,
            format_bytes(o.sample_bytes)
        );
    }
    let verify_ns: u64 = phase.workers.iter().map(|w| w.verify_ns).sum();
    if phase.settings.verify && verify_ns > 0 {
        let _ = writeln!(
            out,
            "  verify: every byte read was checked, {} over all workers (in the phase's time and rates, not in the latencies)",
            format_duration(Duration::from_nanos(verify_ns))
        );
    }
    if let Some(copy) = &phase.device_copy {
        let _ = writeln!(
            out,
            "  gpu copies: {:.1}% of the operations' time ({} of {} over all workers), between the GPU buffers and their host bounce buffer, inside each operation (gdsio -x 2)",
            copy.share_pct,
            format_duration(Duration::from_nanos(copy.copy_ns)),
            format_duration(Duration::from_nanos(copy.op_ns))
        );
    }
    if let Some(path) = phase.gds.as_ref().and_then(|g| g.path.as_ref()) {
        let _ = writeln!(
            out,
            "  gds path: {}: {} (cuFile, gdsio -x 0)",
            path.verdict, path.evidence
        );
    }
    out
}

/// Where the stonewall stopped the workers, for a stonewalled phase.
fn stonewall_line(phase: &PhaseResult) -> String {
    let (Some(wall), Some(s)) = (&phase.stonewall, phase.settings.stonewall_s) else {
        return String::new();
    };
    let items = wall.wear_out_items.map_or("-".into(), |n| n.to_string());
    match wall.fewest_at_wall {
        Some(fewest) => format!(
            "  stonewall: {s}s: it stopped {} worker(s), the slowest at {fewest} items; each went on to {items} items (wear-out), which the later phases work on\n",
            wall.stopped_workers,
        ),
        None => format!("  stonewall: {s}s, not reached: every worker did its {items} items\n"),
    }
}

/// Each phase's cache verdict, one line per distinct verdict and evidence with the phases it
/// applies to (the bonnie and quick summaries, whose per-phase lines are short).
pub fn render_verdicts(phases: &[PhaseResult]) -> String {
    let mut groups: Vec<(&Verdict, &str, Vec<&str>)> = Vec::new();
    for p in phases {
        let Some(v) = &p.cache.verdict else { continue };
        match groups
            .iter_mut()
            .find(|(verdict, evidence, _)| **verdict == v.verdict && *evidence == v.evidence)
        {
            Some((_, _, names)) => names.push(&p.name),
            None => groups.push((&v.verdict, &v.evidence, vec![&p.name])),
        }
    }
    let mut out = String::new();
    if !groups.is_empty() {
        out.push_str("cache verdicts:\n");
    }
    for (verdict, evidence, names) in groups {
        let _ = writeln!(out, "  {}: {verdict}: {evidence}", names.join(", "));
    }
    out
}

/// Each phase's `--until-stable` line, by phase name (a summary's, as quick's).
pub fn render_steady(phases: &[PhaseResult]) -> String {
    phases
        .iter()
        .filter_map(|p| {
            let steady = p.until_stable.as_ref()?;
            Some(format!(
                "  {}: {}",
                p.name,
                steady_line(steady, p.status).trim_start()
            ))
        })
        .collect()
}
