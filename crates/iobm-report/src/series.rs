//! The time series of a run as tidy CSV (`--csv FILE`): one row per phase, worker and interval
//! (and, for object phases, per kind of operation over all workers) with bytes, operations,
//! errors and latency percentiles, ready for a spreadsheet, pandas or gnuplot.

use iobm_results::{RunResult, Series};
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
    let seconds = series.interval_ns as f64 / 1e9;
    let intervals = series.bytes.len().max(series.errors.len());
    for k in 0..intervals {
        let at = |v: &[u64]| v.get(k).copied().unwrap_or(0);
        let (bytes, ops) = (at(&series.bytes), at(&series.ops));
        let latency = series.latency.get(k).filter(|h| h.count > 0);
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
            at(&series.errors),
            us(p50),
            us(p99),
            us(max),
        );
    }
}

/// Every worker's series of every phase, then each kind of operation's over all workers
/// (worker `all`), as CSV with [`HEADER`].
pub fn csv(run: &RunResult) -> String {
    let mut out = format!("{HEADER}\n");
    for phase in &run.phases {
        let (id, name) = (quoted(&run.run_id), quoted(&phase.name));
        let phase_s = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
        for w in &phase.workers {
            let prefix = format!(
                "{id},{name},{},{},{},{},{}",
                quoted(phase.op.as_str()),
                w.rank,
                w.worker,
                quoted(&w.host),
                quoted(w.endpoint.as_deref().unwrap_or(""))
            );
            rows(&mut out, &prefix, &w.series, phase_s);
        }
        for o in &phase.operations {
            if let Some(series) = &o.series {
                let prefix = format!("{id},{name},{},all,all,,", quoted(o.op.as_str()));
                rows(&mut out, &prefix, series, phase_s);
            }
        }
    }
    out
}
