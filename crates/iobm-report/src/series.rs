//! The time series of a run as tidy CSV (`--csv FILE`): one row per phase, worker and interval
//! (and, for object phases, per kind of operation over all workers), ready for a spreadsheet,
//! pandas or gnuplot.

use iobm_results::{RunResult, Series};
use std::fmt::Write;

/// The header of [`csv`].
pub const HEADER: &str =
    "run_id,phase,op,rank,worker,host,endpoint,interval,start_s,end_s,bytes,ops,mib_per_s,ops_per_s";

fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Rows of one series: interval k covers operations that ended in [k, k+1) intervals after
/// the phase's start.
fn rows(out: &mut String, prefix: &str, series: &Series) {
    let seconds = series.interval_ns as f64 / 1e9;
    for (k, (&bytes, &ops)) in series.bytes.iter().zip(&series.ops).enumerate() {
        let _ = writeln!(
            out,
            "{prefix},{k},{:.3},{:.3},{bytes},{ops},{:.3},{:.3}",
            k as f64 * seconds,
            (k + 1) as f64 * seconds,
            bytes as f64 / seconds / (1 << 20) as f64,
            ops as f64 / seconds
        );
    }
}

/// Every worker's series of every phase, then each kind of operation's over all workers
/// (worker `all`), as CSV with [`HEADER`].
pub fn csv(run: &RunResult) -> String {
    let mut out = format!("{HEADER}\n");
    for phase in &run.phases {
        let (id, name) = (quoted(&run.run_id), quoted(&phase.name));
        for w in &phase.workers {
            let prefix = format!(
                "{id},{name},{},{},{},{},{}",
                quoted(&phase.op),
                w.rank,
                w.worker,
                quoted(&w.host),
                quoted(w.endpoint.as_deref().unwrap_or(""))
            );
            rows(&mut out, &prefix, &w.series);
        }
        for o in &phase.operations {
            if let Some(series) = &o.series {
                let prefix = format!("{id},{name},{},all,all,,", quoted(&o.op));
                rows(&mut out, &prefix, series);
            }
        }
    }
    out
}
