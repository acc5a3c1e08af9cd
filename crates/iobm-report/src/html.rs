//! The HTML report (`--html FILE`): one self-contained page per run or comparison. Tables are
//! written here from the result document; charts are drawn in the browser by uPlot (vendored
//! under `vendor/uplot`, embedded at build time) from the chart data this module computes.
//! The page loads nothing: its Content-Security-Policy forbids every request.

mod charts;
mod headline;
pub mod live;
mod servers;

use crate::compare::{interval_text, verdict_mark, Cell, Comparison, Unit};
use crate::text::render_header;
use charts::{
    latency_distribution, latency_over_time, phase_series, phase_throughput, rank_bars,
    response_over_time, seconds, stepped, steps, worker_rates, MIB, MIN_STEPS,
};
use iobm_results::{PhaseResult, RunResult};
use iobm_stats::AggregateKind;
use serde_json::{json, Value};
use std::fmt::Write;

const UPLOT_JS: &str = include_str!("../vendor/uplot/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("../vendor/uplot/uPlot.min.css");
const PAGE_JS: &str = include_str!("html/report.js");
const PAGE_CSS: &str = include_str!("html/report.css");

/// Text as HTML.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The page around `body`, with the chart specifications `charts` for the script.
fn page(title: &str, body: &str, charts: &[Value]) -> String {
    page_with(title, "", body, charts)
}

/// [`page`] with `head` added to its head (a live page's reload).
fn page_with(title: &str, head: &str, body: &str, charts: &[Value]) -> String {
    // JSON inside a script element: "</" must not close it.
    let data = serde_json::to_string(&charts).expect("chart data serialises");
    let data = data.replace("</", "<\\/");
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
<title>{title}</title>\n{head}<style>\n{UPLOT_CSS}\n{PAGE_CSS}</style>\n</head>\n\
<body data-state=\"loading\">\n{body}\
<script type=\"application/json\" id=\"iobm-charts\">{data}</script>\n\
<script>\n{UPLOT_JS}\n</script>\n<script>\n{PAGE_JS}</script>\n</body>\n</html>\n",
        title = esc(title)
    )
}

fn chart_div(out: &mut String, id: &str) {
    let _ = writeln!(out, "<div class=\"chart\" id=\"{id}\"></div>");
}

/// The page of one run: its environment, a throughput chart over the whole run with the phases
/// marked, then per phase its aggregates, latency, cache verdict, warnings and charts.
pub fn run_page(run: &RunResult) -> String {
    let mut body = String::new();
    let mut charts = Vec::new();
    let label = run
        .label
        .as_deref()
        .map_or(String::new(), |l| format!(" \"{l}\""));
    let title = format!("iobm {} {}{label}", run.kind, run.run_id);
    let _ = writeln!(
        body,
        "<header><h1>{}</h1><p class=\"status\">{}</p></header>",
        esc(&title),
        esc(&format!("{:?}", run.status).to_lowercase())
    );
    headline::headline_section(&mut body, run);
    let _ = writeln!(
        body,
        "<section><h2>Where it ran</h2><pre class=\"env\">{}</pre></section>",
        esc(&render_header(run))
    );
    if run.bonnie.is_some() {
        let _ = writeln!(
            body,
            "<section id=\"bonnie-tables\"><h2>bonnie++'s tables</h2><pre class=\"bonnie\">{}</pre></section>",
            esc(&crate::bonnie::render_tables(run))
        );
    }
    if run.io500.is_some() {
        let _ = writeln!(
            body,
            "<section id=\"io500-scores\"><h2>IO500's scores</h2><pre class=\"bonnie\">{}</pre></section>",
            esc(&crate::io500::render_scores(run))
        );
    }
    if let Some(chart) = charts::rate_sweep(run) {
        let _ = writeln!(
            body,
            "<section id=\"rate-sweep\"><h2>Rate sweep</h2><pre>{}</pre>",
            esc(&crate::text::pace::render_sweep(run))
        );
        chart_div(&mut body, "rate-sweep-chart");
        body.push_str("</section>\n");
        charts.push(chart);
    }
    if !run.phases.is_empty() {
        body.push_str("<section><h2>Throughput over the run</h2>\n");
        chart_div(&mut body, "run-throughput");
        body.push_str("</section>\n");
        charts.push(run_throughput(run));
    }
    for (i, phase) in run.phases.iter().enumerate() {
        phase_section(&mut body, &mut charts, i, phase, run);
    }
    if run.repeats.is_some() {
        let _ = writeln!(
            body,
            "<section id=\"repeats\"><h2>Over the repetitions</h2><pre>{}</pre></section>",
            esc(&crate::render_repeats(run))
        );
    }
    if !run.warnings.is_empty() {
        body.push_str("<section><h2>Run warnings</h2>\n");
        warnings(&mut body, &run.warnings);
        body.push_str("</section>\n");
    }
    page(&title, &body, &charts)
}

fn warnings(out: &mut String, list: &[String]) {
    out.push_str("<ul class=\"warnings\">\n");
    for w in list {
        let _ = writeln!(out, "<li>{}</li>", esc(w));
    }
    out.push_str("</ul>\n");
}

/// Total MiB/s over the run's time, each phase from its own start, phases marked; operations
/// per second for a run of which no phase moves data (a meta run).
fn run_throughput(run: &RunResult) -> Value {
    let by_ops = !run.phases.iter().any(|p| p.moves_data());
    let origin = run.phases.first().map_or(0, |p| p.start_ns);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut marks = Vec::new();
    for phase in &run.phases {
        let s = phase_series(phase);
        let start = seconds(phase.start_ns.saturating_sub(origin));
        marks.push(json!({"at": start, "label": phase.name}));
        let (at, spans) = steps(phase, s.interval_ns, s.bytes.len());
        // Phases that move no data have no MiB/s: a gap, not a zero.
        let rates = if by_ops {
            stepped(&s.ops, &spans, 1.0)
        } else if phase.moves_data() {
            stepped(&s.bytes, &spans, MIB)
        } else {
            vec![Value::Null; at.len()]
        };
        x.extend(at.iter().map(|t| start + t));
        y.extend(rates);
        // A gap between phases, so the line does not join them.
        x.push(seconds(phase.end_ns.saturating_sub(origin)));
        y.push(Value::Null);
    }
    let unit = if by_ops { "operations/s" } else { "MiB/s" };
    json!({
        "id": "run-throughput", "kind": "lines", "step": true, "title": format!("{unit} over the run (all workers)"),
        "xlabel": "seconds since the first phase began", "ylabel": unit,
        "x": x, "series": [{"label": "all workers", "values": y}], "marks": marks,
    })
}

/// One phase's section: its aggregates and lines as the text report has them, then its charts.
fn phase_section(
    out: &mut String,
    charts: &mut Vec<Value>,
    i: usize,
    phase: &PhaseResult,
    run: &RunResult,
) {
    let _ = writeln!(
        out,
        "<section class=\"phase\" id=\"phase-{i}\" data-phase=\"{}\">\n<h2>{}</h2>",
        esc(&phase.name),
        esc(&format!("{} ({})", phase.name, phase.op))
    );
    aggregates_table(out, phase);
    latency_line(out, phase);
    phase_lines(out, phase);
    warnings(out, &phase.warnings);
    let over_time = interval_line(out, phase);
    out.push_str("<div class=\"charts\">\n");
    for (suffix, chart) in phase_charts(phase, run, over_time) {
        if let Some(mut chart) = chart {
            let id = format!("phase-{i}-{suffix}");
            chart_div(out, &id);
            chart["id"] = Value::from(id);
            charts.push(chart);
        }
    }
    out.push_str("</div>\n</section>\n");
}

/// A phase's CPU, `--until-stable`, cache verdict and errors.
fn phase_lines(out: &mut String, phase: &PhaseResult) {
    let _ = writeln!(
        out,
        "<p class=\"cpu\">iobm CPU: {:.2} s user + {:.2} s system{}</p>",
        phase.cpu.user_s,
        phase.cpu.system_s,
        phase
            .cpu
            .cpu_s_per_gib
            .map_or(String::new(), |c| format!(" = {c:.3} CPU-s per GiB moved"))
    );
    if let Some(steady) = &phase.until_stable {
        let line = crate::text::steady_line(steady, phase.status);
        let _ = writeln!(out, "<p class=\"steady\">{}</p>", esc(line.trim()));
    }
    if let Some(v) = &phase.cache.verdict {
        let _ = writeln!(
            out,
            "<p class=\"verdict\" data-verdict=\"{}\"><b>cache: {}</b>: {}</p>",
            esc(v.verdict.as_str()),
            esc(v.verdict.as_str()),
            esc(&v.evidence)
        );
    }
    if !phase.errors.is_empty() {
        out.push_str("<ul class=\"errors\">\n");
        for e in &phase.errors {
            let _ = writeln!(
                out,
                "<li>{} x {}: first: {}</li>",
                e.count,
                esc(&e.kind),
                esc(&e.first)
            );
        }
        out.push_str("</ul>\n");
    }
}

/// The intervals the phase was recorded in, and whether they are enough for charts over time.
fn interval_line(out: &mut String, phase: &PhaseResult) -> bool {
    let all = phase_series(phase);
    let drawn = steps(phase, all.interval_ns, all.bytes.len()).1.len();
    let over_time = drawn >= MIN_STEPS;
    if !over_time {
        let _ = writeln!(
            out,
            "<p class=\"short\">{} interval{} of {} s: too few for charts over time (run longer, or give a shorter --interval)</p>",
            drawn,
            if drawn == 1 { "" } else { "s" },
            seconds(all.interval_ns)
        );
    } else {
        // The interval the run recorded at (--interval, or the one chosen for the phase).
        let _ = writeln!(
            out,
            "<p class=\"interval\">over time: {} intervals of {} s</p>",
            all.bytes.len(),
            seconds(all.interval_ns)
        );
    }
    over_time
}

/// A phase's charts by the suffix of their ids, in the order drawn; those over time only
/// with `over_time`, and none where the phase has nothing to show.
fn phase_charts(
    phase: &PhaseResult,
    run: &RunResult,
    over_time: bool,
) -> [(&'static str, Option<Value>); 7] {
    [
        (
            "throughput",
            over_time.then(|| phase_throughput(phase, run)),
        ),
        ("latency", latency_over_time(phase).filter(|_| over_time)),
        ("response", response_over_time(phase).filter(|_| over_time)),
        ("servers", servers::server_devices(phase, MIN_STEPS)),
        (
            "distribution",
            latency_distribution(&phase.latency.histogram),
        ),
        // One worker's bar is the aggregate again; many are drawn as their distribution.
        (
            "workers",
            (phase.workers.len() > 1).then(|| worker_rates(phase)),
        ),
        ("ranks", rank_bars(phase, run)),
    ]
}

fn aggregates_table(out: &mut String, phase: &PhaseResult) {
    out.push_str(
        "<table class=\"aggregates\">\n<tr><th>aggregate</th><th>MiB/s</th><th>MB/s</th>\
<th>ops/s</th><th>formula</th></tr>\n",
    );
    for a in &phase.aggregates {
        let _ = writeln!(
            out,
            "<tr data-kind=\"{}\"><td>{}</td><td class=\"mib\">{:.2}</td><td>{:.2}</td>\
<td class=\"ops\">{:.0}</td><td class=\"formula\">{}</td></tr>",
            a.kind.label(),
            a.kind.label(),
            a.bytes_per_s / MIB,
            a.bytes_per_s / 1e6,
            a.ops_per_s,
            esc(&a.formula)
        );
    }
    out.push_str("</table>\n");
}

/// A latency in the unit its size reads best in: ns, µs, ms or s.
pub fn readable_latency(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

fn latency_text(ns: Option<u64>) -> String {
    ns.map_or("-".to_string(), |v| readable_latency(v as f64))
}

/// One percentile: readable, with its nanoseconds in `data-ns`.
fn percentile_span(name: &str, ns: Option<f64>) -> String {
    match ns {
        Some(v) => format!(
            "<span data-p=\"{name}\" data-ns=\"{v:.0}\">{}</span>",
            readable_latency(v)
        ),
        None => format!("<span data-p=\"{name}\">-</span>"),
    }
}

fn latency_line(out: &mut String, phase: &PhaseResult) {
    let l = &phase.latency;
    let ns = |v: Option<u64>| v.map(|v| v as f64);
    let _ = writeln!(
        out,
        "<p class=\"latency\">latency of {} ({} operations): mean {}, p50 {}, p99 {}, p99.9 {}, max {}</p>",
        esc(&l.measures),
        l.histogram.count,
        percentile_span("mean", l.mean_ns),
        percentile_span("p50", ns(l.p50_ns)),
        percentile_span("p99", ns(l.p99_ns)),
        percentile_span("p999", ns(l.p999_ns)),
        percentile_span("max", ns(l.max_ns))
    );
}

/// The page of a comparison: the table of every test's value per run (with its ratio to the
/// first run, its p99 latency and iobm's CPU), then one bar chart per test across the runs.
pub fn compare_page(runs: &[(String, RunResult)], aggregate: AggregateKind, unit: Unit) -> String {
    let c = Comparison::of(runs, aggregate, unit);
    let mut body = String::new();
    let title = format!("iobm compare: {}", c.labels.join(", "));
    let _ = writeln!(
        body,
        "<header><h1>{}</h1><p class=\"note\">{}</p></header>",
        esc(&title),
        esc(&c.note).replace('\n', "<br>")
    );
    body.push_str("<table class=\"compare\">\n<tr><th>test</th>");
    for l in &c.labels {
        let _ = write!(body, "<th>{}</th>", esc(l));
    }
    body.push_str("</tr>\n");
    let mut charts = Vec::new();
    for (t, (test, unit)) in c.tests.iter().enumerate() {
        let _ = write!(
            body,
            "<tr data-test=\"{}\"><td>{}</td>",
            esc(test),
            esc(test)
        );
        for (r, (label, cells)) in c.labels.iter().zip(&c.cells).enumerate() {
            body.push_str(&compare_cell(&cells[t], label, unit, r > 0));
        }
        body.push_str("</tr>\n");
        let values: Vec<Value> = c
            .cells
            .iter()
            .map(|cells| cells[t].value.map_or(Value::Null, Value::from))
            .collect();
        // Each bar named with its run's cache mark, as the table and the text mark the values.
        let marked = |(label, cells): (&String, &Vec<Cell>)| match &cells[t].verdict {
            Some(v) => format!("{label} [{}]", verdict_mark(v)),
            None => label.clone(),
        };
        let labels: Vec<String> = c.labels.iter().zip(&c.cells).map(marked).collect();
        charts.push(json!({
            "id": format!("test-{t}"), "kind": "bars", "title": format!("{test} ({unit})"),
            "xlabel": "run [cache mark]", "ylabel": unit, "labels": labels,
            "series": [{"label": unit, "values": values}],
        }));
    }
    body.push_str("</table>\n");
    compare_warnings(&mut body, &c);
    body.push_str("<div class=\"charts\">\n");
    for t in 0..c.tests.len() {
        chart_div(&mut body, &format!("test-{t}"));
    }
    body.push_str("</div>\n");
    page(&title, &body, &charts)
}

/// One run's cell of a test: its value with its interval, cache mark, unit and ratio to the
/// first run (`with_ratio`), then its p99 and CPU.
fn compare_cell(cell: &Cell, label: &str, unit: &str, with_ratio: bool) -> String {
    let Some(v) = cell.value else {
        return "<td>-</td>".to_string();
    };
    let noise = if cell.within_noise { " ~" } else { "" };
    let ratio = cell
        .ratio
        .filter(|_| with_ratio)
        .map_or(String::new(), |r| {
            format!(" <span class=\"ratio\">x{r:.2}{noise}</span>")
        });
    let spread = cell.ci95.map_or(String::new(), |ci| {
        format!(" <span class=\"ci\">{}</span>", interval_text(ci))
    });
    let mark = cell.verdict.as_ref().map_or(String::new(), |v| {
        format!(
            " <span class=\"mark\" data-verdict=\"{}\" title=\"{}\">{}</span>",
            esc(v.as_str()),
            esc(v.as_str()),
            esc(verdict_mark(v))
        )
    });
    format!(
        "<td data-run=\"{}\"><span class=\"value\">{v:.2}</span>{spread}{mark} {unit}{ratio}<br><small>p99 {}, CPU {}</small></td>",
        esc(label),
        latency_text(cell.p99_ns),
        cell.cpu_percent.map_or("-".to_string(), |c| format!("{c:.0}%")),
    )
}

/// The comparison's warnings, each with its run and tests; nothing without.
fn compare_warnings(body: &mut String, c: &Comparison) {
    let list = c.warnings();
    if list.is_empty() {
        return;
    }
    body.push_str("<section id=\"compare-warnings\"><h2>Warnings</h2>\n<ul class=\"warnings\">\n");
    for (run, tests, w) in list {
        let _ = writeln!(
            body,
            "<li data-run=\"{}\"><b>{} ({})</b>: {}</li>",
            esc(&run),
            esc(&run),
            esc(&tests),
            esc(&w)
        );
    }
    body.push_str("</ul>\n</section>\n");
}

#[cfg(test)]
mod tests;
