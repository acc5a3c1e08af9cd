//! The time series of a run as tidy CSV (`--csv FILE`): one row per phase, worker and interval
//! (and, for object phases, per kind of operation over all workers) with bytes, operations,
//! errors and latency percentiles, ready for a spreadsheet, pandas or gnuplot.

use iobm_results::{RunResult, Series};
use iobm_stats::Interval;
use std::fmt::Write;

/// The header of [`csv`].
pub const HEADER: &str =
    "run_id,phase,op,rank,worker,host,endpoint,interval,start_s,end_s,bytes,ops,mib_per_s,ops_per_s,errors,p50_us,p99_us,max_us";

fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Rows of one series: interval k covers operations that ended in [k, k+1) intervals after
/// the phase's start, and the last ends with the phase (`phase_s` long), so its rates are over
/// the time it covers. Latency columns are empty where the interval has none (or the document
/// is from before per-interval latency).
fn rows(out: &mut String, prefix: &str, series: &Series, phase_s: f64) {
    let intervals = series.bytes.len().max(series.errors.len());
    for k in 0..intervals {
        row(
            out,
            prefix,
            series.interval_ns,
            k,
            &series.interval(k),
            phase_s,
        );
    }
}

/// The row of interval `k` (of `interval_ns`) of a phase `phase_s` long (`f64::INFINITY`
/// while it runs) after `prefix`, the columns before `interval`: what `--csv` writes as the
/// phase goes and again, from the result, at its end.
pub fn row(
    out: &mut String,
    prefix: &str,
    interval_ns: u64,
    k: usize,
    amounts: &Interval,
    phase_s: f64,
) {
    let seconds = interval_ns as f64 / 1e9;
    let (bytes, ops) = (amounts.bytes, amounts.ops);
    let latency = Some(&amounts.latency).filter(|h| h.count > 0);
    let us = |v: Option<u64>| v.map_or(String::new(), |ns| format!("{:.1}", ns as f64 / 1e3));
    let (p50, p99, max) = latency.map_or((None, None, None), |h| {
        (h.percentile(50.0), h.percentile(99.0), Some(h.max_ns))
    });
    let (start, end) = (k as f64 * seconds, ((k + 1) as f64 * seconds).min(phase_s));
    let length = (end - start).max(1e-9);
    let _ = writeln!(
        out,
        "{prefix},{k},{start:.3},{end:.3},{bytes},{ops},{:.3},{:.3},{},{},{},{}",
        bytes as f64 / length / (1 << 20) as f64,
        ops as f64 / length,
        amounts.errors,
        us(p50),
        us(p99),
        us(max),
    );
}

/// The columns before `interval` of a worker's rows.
pub fn worker_prefix(
    run_id: &str,
    phase: &str,
    op: &str,
    (rank, worker): (u32, u32),
    host: &str,
    endpoint: Option<&str>,
) -> String {
    format!(
        "{},{},{},{rank},{worker},{},{}",
        quoted(run_id),
        quoted(phase),
        quoted(op),
        quoted(host),
        quoted(endpoint.unwrap_or(""))
    )
}

/// The columns before `interval` of a kind of operation's rows over all workers.
pub fn kind_prefix(run_id: &str, phase: &str, op: &str) -> String {
    format!(
        "{},{},{},all,all,,",
        quoted(run_id),
        quoted(phase),
        quoted(op)
    )
}

/// Every worker's series of every phase, then each kind of operation's over all workers
/// (worker `all`), as CSV with [`HEADER`].
pub fn csv(run: &RunResult) -> String {
    let mut out = format!("{HEADER}\n");
    for phase in &run.phases {
        let phase_s = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
        for w in &phase.workers {
            let prefix = worker_prefix(
                &run.run_id,
                &phase.name,
                phase.op.as_str(),
                (w.rank, w.worker),
                &w.host,
                w.endpoint.as_deref(),
            );
            rows(&mut out, &prefix, &w.series, phase_s);
        }
        for o in &phase.operations {
            if let Some(series) = &o.series {
                let prefix = kind_prefix(&run.run_id, &phase.name, o.op.as_str());
                rows(&mut out, &prefix, series, phase_s);
            }
        }
    }
    out
}
