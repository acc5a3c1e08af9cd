//! The HTML reports in headless Chromium (Debian's `chromium`, which `scripts/test` installs):
//! the DOM after the page's scripts ran, and the checks every page must pass.

use super::u;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

pub const MIB: f64 = 1024.0 * 1024.0;

/// The page's DOM after its scripts ran, from headless Chromium.
pub fn rendered(page: &Path) -> String {
    rendered_within(page, 10_000)
}

/// [`rendered`] after `budget_ms` of the browser's virtual time: a page that reloads itself
/// (a run's live page) is read within less than its reload, which virtual time would follow
/// without end.
pub fn rendered_within(page: &Path, budget_ms: u64) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1200,2000",
            "--dump-dom",
        ])
        .arg(format!("--virtual-time-budget={budget_ms}"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium is needed for the HTML tests (scripts/test installs Debian's chromium)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The value of attribute `name` in the first tag that starts with `tag` in `html`.
pub fn attribute<'a>(html: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let at = html.find(tag)?;
    let end = at + html[at..].find('>')?;
    let element = &html[at..end];
    let key = format!("{name}=\"");
    let from = element.find(&key)? + key.len();
    Some(&element[from..from + element[from..].find('"')?])
}

/// Checks what every page must be: self-contained, every chart drawn, no errors; returns the
/// rendered DOM.
pub fn check_page(page: &Path, charts: usize) -> String {
    check_page_within(page, charts, 10_000)
}

/// [`check_page`] rendered within `budget_ms` of virtual time ([`rendered_within`]).
pub fn check_page_within(page: &Path, charts: usize, budget_ms: u64) -> String {
    let source = std::fs::read_to_string(page).unwrap();
    assert!(source.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    for reference in [" src=", " href=", "@import", "url("] {
        assert!(
            !source.contains(reference),
            "the page refers to {reference}"
        );
    }
    let dom = rendered_within(page, budget_ms);
    let state = attribute(&dom, "<body", "data-state").unwrap_or("none");
    let errors = attribute(&dom, "<body", "data-errors");
    assert_eq!(
        (state, errors),
        ("drawn", Some("0")),
        "{}",
        &dom[..dom.len().min(3000)]
    );
    assert_eq!(
        attribute(&dom, "<body", "data-charts"),
        Some(&*charts.to_string())
    );
    let divs: Vec<&str> = dom.split("<div class=\"chart\"").skip(1).collect();
    assert_eq!(divs.len(), charts);
    for div in divs {
        let head = &div[..div.len().min(300)];
        // Pixels in the series' own colours: axes, grid and labels have none, so a chart
        // whose data is missing fails here.
        let pixels: u64 = attribute(div, "", "data-series-pixels")
            .unwrap_or_else(|| panic!("no series pixels: {head}"))
            .parse()
            .unwrap();
        // (IO500's run chart of phases a few milliseconds long draws about 180.)
        assert!(
            pixels > 100,
            "a chart drew only {pixels} pixels of data: {head}"
        );
        assert_eq!(
            attribute(div, "", "data-clipped"),
            Some(""),
            "clipped axis labels: {head}"
        );
        check_labels(div, head);
    }
    assert_eq!(
        attribute(&dom, "<body", "data-overflow"),
        Some(""),
        "blocks wider than the page"
    );
    // A legend shows a value only for the point under the cursor, never uPlot's "--".
    assert!(!dom.contains("class=\"u-value\">--<"), "a legend shows --");
    dom
}

/// Boxes (left, top, width, height) in a chart's attribute `name`.
fn boxes(div: &str, name: &str) -> Vec<[f64; 4]> {
    let text = attribute(div, "", name).map(|t| t.replace("&quot;", "\""));
    text.map_or(Vec::new(), |t| serde_json::from_str(&t).unwrap())
}

/// No two of `boxes` intersect.
fn apart(boxes: &[[f64; 4]], what: &str, head: &str) {
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let apart = a[0] + a[2] <= b[0]
                || b[0] + b[2] <= a[0]
                || a[1] + a[3] <= b[1]
                || b[1] + b[3] <= a[1];
            assert!(apart, "{what} {a:?} and {b:?} overlap: {head}");
        }
    }
}

/// A chart's phase labels, as drawn: apart, within the plot's width in the band above it
/// (never over the data), each box holding its label's ink
/// and no ink of a label outside them; a bar chart's tick labels apart.
fn check_labels(div: &str, head: &str) {
    apart(&boxes(div, "data-ticks"), "tick labels", head);
    let labels = boxes(div, "data-labels");
    apart(&labels, "phase labels", head);
    let plot = boxes(div, "data-plot");
    let Some(&[left, top, width, _]) = plot.first() else {
        panic!("no plot box: {head}")
    };
    for b in &labels {
        let inside =
            b[0] >= left && b[0] + b[2] <= left + width && b[1] >= 0.0 && b[1] + b[3] <= top + 1.0;
        assert!(
            inside,
            "phase label {b:?} outside the plot {plot:?}: {head}"
        );
    }
    let ink = attribute(div, "", "data-label-ink").unwrap_or_else(|| panic!("no ink: {head}"));
    let ink: Value = serde_json::from_str(&ink.replace("&quot;", "\"")).unwrap();
    assert_eq!(ink["outside"], 0, "label ink outside its box: {head}");
    let inside = ink["inside"].as_array().unwrap();
    assert_eq!(inside.len(), labels.len());
    for (n, b) in inside.iter().zip(&labels) {
        assert!(n.as_u64().unwrap() > 10, "no label drawn in {b:?}: {head}");
    }
}

/// Whether `iobm report` keeps an aggregate of this kind when it recomputes the phase: first
/// done and steady state only from windows of ten trace intervals (10 ms) or more.
fn recomputed(phase: &Value, kind: &str) -> bool {
    let spans: Vec<(u64, u64)> = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| &w["span"])
        .map(|s| (u(&s["start_ns"]), u(&s["end_ns"])))
        .filter(|(start, end)| end > start)
        .collect();
    let min_start = spans.iter().map(|s| s.0).min().unwrap_or(0);
    let max_start = spans.iter().map(|s| s.0).max().unwrap_or(0);
    let min_end = spans.iter().map(|s| s.1).min().unwrap_or(0);
    match kind {
        "first_done" => min_end >= min_start + 10_000_000,
        "steady_state" => min_end >= max_start + 10_000_000,
        _ => true,
    }
}

/// The aggregates and latency shown for each phase are the JSON's.
pub fn check_numbers(dom: &str, result: &Value) {
    for (i, phase) in result["phases"].as_array().unwrap().iter().enumerate() {
        let section = dom
            .split(&format!("id=\"phase-{i}\""))
            .nth(1)
            .unwrap()
            .split("</section>")
            .next()
            .unwrap();
        for a in phase["aggregates"].as_array().unwrap() {
            let label = a["kind"].as_str().unwrap().replace('_', " ");
            if !recomputed(phase, a["kind"].as_str().unwrap()) {
                // Saved by an older iobm from a window too short to trust: the report, which
                // recomputes the aggregates, leaves it out.
                assert!(
                    !section.contains(&format!("<tr data-kind=\"{label}\">")),
                    "{label} shown from a window under ten trace intervals"
                );
                continue;
            }
            let row = section
                .split(&format!("<tr data-kind=\"{label}\">"))
                .nth(1)
                .unwrap_or_else(|| panic!("no row for {label}"));
            let shown = row.split("<td class=\"mib\">").nth(1).unwrap();
            let expected = format!("{:.2}</td>", a["bytes_per_s"].as_f64().unwrap() / MIB);
            assert!(
                shown.starts_with(&expected),
                "{label}: {shown:.40} vs {expected}"
            );
        }
        // The p99 in the unit of its size: 171.97 ms, not 171966.5 (us).
        let p99 = u(&phase["latency"]["p99_ns"]);
        let shown = section
            .split(&format!("<span data-p=\"p99\" data-ns=\"{p99}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("p99 {p99} ns not in phase {i}"));
        let shown = &shown[..shown.find('<').unwrap()];
        let (value, unit) = shown.split_once(' ').unwrap();
        let scale = match unit {
            "ns" => 1.0,
            "µs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            _ => panic!("p99 shown as {shown}"),
        };
        let value: f64 = value.parse().unwrap();
        assert!(
            (1.0..1000.0).contains(&value) || unit == "s",
            "p99 shown as {shown}"
        );
        assert!(
            (value * scale - p99 as f64).abs() <= 0.01 * p99 as f64,
            "p99 {p99} ns shown as {shown}"
        );
    }
}

/// The page opens on its headline, before any chart: a row per phase with its makespan figure.
pub fn check_headline(dom: &str, result: &serde_json::Value) {
    let at = dom.find("<section id=\"headline\">").expect("a headline");
    assert!(at < dom.find("<div class=\"chart\"").unwrap());
    for phase in result["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        let row = dom[at..]
            .split(&format!("<tr data-phase=\"{name}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("no headline row for {name}"));
        let figure = row.split("<td class=\"figure\">").nth(1).unwrap();
        let makespan = super::aggregate(phase, "makespan");
        // Phases that move data show MiB/s, the others (metadata, find) operations per second.
        let expected = if figure.contains(" MiB/s<") {
            format!(
                "{:.2} MiB/s",
                makespan["bytes_per_s"].as_f64().unwrap() / MIB
            )
        } else {
            format!("{:.2} ops/s", makespan["ops_per_s"].as_f64().unwrap())
        };
        assert!(
            figure.starts_with(&expected),
            "{name}: {figure:.40} vs {expected}"
        );
    }
}
