//! The page of a run that is still going (`--live` with `--html`): the intervals passed so far
//! per phase (the figures of the `--live` lines), drawn with the report's own script and
//! charts, and a reload every interval while the run goes; the final report replaces it.

use super::charts::{MIB, MIN_STEPS};
use super::{chart_div, esc, page_with};
use serde_json::{json, Value};
use std::fmt::Write;

/// One phase as its intervals passed so far have it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LivePhase {
    pub name: String,
    /// The kind of operation, as the result names the phase's `op`.
    pub op: String,
    pub interval_ns: u64,
    /// Per interval, in order of index: every worker's bytes, operations, errors, and the p99
    /// latency of the operations that ended in it (µs, None where none ended).
    pub bytes: Vec<u64>,
    pub ops: Vec<u64>,
    pub errors: Vec<u64>,
    pub p99_us: Vec<Option<f64>>,
}

impl LivePhase {
    fn seconds(&self) -> f64 {
        self.bytes.len() as f64 * self.interval_ns as f64 / 1e9
    }

    fn moves_data(&self) -> bool {
        self.bytes.iter().any(|&b| b > 0)
    }
}

/// What the page shows: the run and its phases so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveRun {
    /// `iobm write 20261202T110107-f9d1`.
    pub title: String,
    /// Whose intervals these are, where not the whole run's (rank 0's under MPI).
    pub whose: Option<String>,
    pub phases: Vec<LivePhase>,
    /// When the page was written, ns since the Unix epoch.
    pub written_unix_ns: u64,
    /// While the run goes, the page reloads itself after this many milliseconds; None once the
    /// run ended (the final report, when the run writes it, replaces the page).
    pub reload_ms: Option<u64>,
}

/// The page of `run` so far.
pub fn live_page(run: &LiveRun) -> String {
    let mut body = String::new();
    let _ = writeln!(body, "<header><h1>{}</h1>", esc(&run.title));
    status_line(&mut body, run);
    let _ = writeln!(
        body,
        "<p class=\"written\">written {} (UTC){}</p></header>",
        iobm_stats::time::rfc3339(run.written_unix_ns),
        run.reload_ms.map_or(String::new(), |ms| format!(
            "; reloads every {} s while the run goes",
            ms as f64 / 1e3
        ))
    );
    so_far(&mut body, run);
    let mut charts = Vec::new();
    for (i, phase) in run.phases.iter().enumerate() {
        phase_section(&mut body, &mut charts, i, phase);
    }
    // The page reloads itself by a script while the run goes.
    let head = run.reload_ms.map_or(String::new(), |ms| {
        format!("<script>setTimeout(function () {{ location.reload(); }}, {ms});</script>\n")
    });
    page_with(&run.title, &head, &body, &charts)
}

/// "running: phase X, interval N" (the intervals passed so far), or that the run ended.
fn status_line(out: &mut String, run: &LiveRun) {
    let last = run.phases.last();
    let text = match (run.reload_ms, last) {
        (Some(_), Some(p)) => format!(
            "running: phase {}, interval {} ({} s passed)",
            p.name,
            p.bytes.len(),
            p.seconds()
        ),
        (Some(_), None) => "running: waiting for the first interval".to_string(),
        (None, _) => {
            "ended: the run wrote no report over this page (see its output and result)".to_string()
        }
    };
    let whose = run
        .whose
        .as_deref()
        .map_or(String::new(), |w| format!(" ({w})"));
    let _ = writeln!(
        out,
        "<p class=\"status\" id=\"live\" data-running=\"{}\" data-phase=\"{}\" data-intervals=\"{}\"{}>{}{}</p>",
        run.reload_ms.is_some(),
        esc(last.map_or("", |p| &p.name)),
        last.map_or(0, |p| p.bytes.len()),
        run.reload_ms
            .map_or(String::new(), |ms| format!(" data-reload-ms=\"{ms}\"")),
        esc(&text),
        esc(&whose)
    );
}

/// The headline so far: per phase its intervals, seconds, rates over them, errors and the
/// last interval's p99.
fn so_far(out: &mut String, run: &LiveRun) {
    if run.phases.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"headline\"><h2>So far</h2>\n<table class=\"headline\">\n\
<tr><th>phase</th><th>intervals</th><th>seconds</th><th>MiB/s</th><th>ops/s</th><th>errors</th><th>p99 latency (last interval)</th></tr>\n",
    );
    for p in &run.phases {
        let seconds = p.seconds();
        let rate = |sum: u64, unit: f64| {
            if seconds > 0.0 {
                format!("{:.2}", sum as f64 / seconds / unit)
            } else {
                "-".to_string()
            }
        };
        let p99 = p.p99_us.last().copied().flatten();
        let _ = writeln!(
            out,
            "<tr data-phase=\"{}\"><td>{}</td><td class=\"intervals\">{}</td><td>{}</td>\
<td class=\"mibs\">{}</td><td class=\"opss\">{}</td><td class=\"errors\">{}</td><td>{}</td></tr>",
            esc(&p.name),
            esc(&format!("{} ({})", p.name, p.op)),
            p.bytes.len(),
            seconds,
            rate(p.bytes.iter().sum(), MIB),
            rate(p.ops.iter().sum(), 1.0),
            p.errors.iter().sum::<u64>(),
            super::latency_text(p99.map(|us| (us * 1e3) as u64)),
        );
    }
    out.push_str("</table>\n</section>\n");
}

/// A phase's charts so far: MiB/s (where it moves data) and operations/s over time.
fn phase_section(out: &mut String, charts: &mut Vec<Value>, i: usize, phase: &LivePhase) {
    let _ = writeln!(
        out,
        "<section class=\"phase\" id=\"phase-{i}\" data-phase=\"{}\">\n<h2>{}</h2>",
        esc(&phase.name),
        esc(&format!("{} ({})", phase.name, phase.op))
    );
    let n = phase.bytes.len();
    let step = phase.interval_ns as f64 / 1e9;
    if n < MIN_STEPS {
        let _ = writeln!(
            out,
            "<p class=\"short\">{n} of {MIN_STEPS} intervals of {step} s passed: charts over time from {MIN_STEPS} on</p>"
        );
    } else {
        let x: Vec<f64> = (0..=n).map(|k| k as f64 * step).collect();
        let mut drawn = Vec::new();
        if phase.moves_data() {
            drawn.push(("throughput", &phase.bytes, MIB, "MiB/s"));
        }
        drawn.push(("operations", &phase.ops, 1.0, "operations/s"));
        out.push_str("<div class=\"charts\">\n");
        for (suffix, amounts, unit, label) in drawn {
            let id = format!("phase-{i}-{suffix}");
            chart_div(out, &id);
            // Steps over each interval, the last value repeated where its step ends.
            let mut y: Vec<f64> = amounts.iter().map(|&a| a as f64 / step / unit).collect();
            y.push(y[n - 1]);
            charts.push(json!({
                "id": id, "kind": "lines", "step": true,
                "title": format!("{}: {label} per {step} s, so far", phase.name),
                "xlabel": "seconds since the phase began", "ylabel": label, "x": x,
                "series": [{"label": "all workers", "values": y}],
            }));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(n: usize) -> LivePhase {
        LivePhase {
            name: "write".into(),
            op: "write".into(),
            interval_ns: 500_000_000,
            bytes: vec![1 << 20; n],
            ops: vec![16; n],
            errors: vec![0; n],
            p99_us: vec![Some(1500.0); n],
        }
    }

    fn run(phases: Vec<LivePhase>, reload_ms: Option<u64>) -> LiveRun {
        LiveRun {
            title: "iobm write 20261202T110107-f9d1".into(),
            whose: None,
            phases,
            written_unix_ns: 0,
            reload_ms,
        }
    }

    #[test]
    fn a_running_page_says_where_the_run_is_and_reloads_itself() {
        let page = live_page(&run(vec![phase(4)], Some(1000)));
        assert!(page.contains("running: phase write, interval 4 (2 s passed)"));
        assert!(page.contains("location.reload(); }, 1000)"));
        assert!(page.contains("data-reload-ms=\"1000\""));
        assert!(page.contains("written 1970-01-01T00:00:00.000Z (UTC)"));
        // 1 MiB per half second: 2 MiB/s, 32 ops/s.
        assert!(page.contains("<td class=\"mibs\">2.00</td><td class=\"opss\">32.00</td>"));
        assert!(page.contains("id=\"phase-0-throughput\""));
        assert!(page.contains("id=\"phase-0-operations\""));
    }

    #[test]
    fn an_ended_page_does_not_reload_and_a_short_phase_has_no_charts_yet() {
        let page = live_page(&run(vec![phase(2)], None));
        assert!(!page.contains("location.reload"));
        assert!(page.contains("data-running=\"false\""));
        assert!(page.contains("2 of 3 intervals of 0.5 s passed"));
        assert!(!page.contains("class=\"chart\""));
        let waiting = live_page(&run(Vec::new(), Some(1000)));
        assert!(waiting.contains("running: waiting for the first interval"));
    }
}
