//! The HTML reports in headless Chromium (Debian's `chromium`, which `scripts/test` installs):
//! the DOM after the page's scripts ran, and the checks every page must pass.

use super::u;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

pub const MIB: f64 = 1024.0 * 1024.0;

/// The page's DOM after its scripts ran, from headless Chromium.
pub fn rendered(page: &Path) -> String {
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
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
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
    let source = std::fs::read_to_string(page).unwrap();
    assert!(source.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    for reference in [" src=", " href=", "@import", "url("] {
        assert!(
            !source.contains(reference),
            "the page refers to {reference}"
        );
    }
    let dom = rendered(page);
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
        let pixels: u64 = attribute(div, "", "data-pixels").unwrap().parse().unwrap();
        assert!(
            pixels > 1000,
            "a chart drew only {pixels} pixels: {}",
            &div[..200]
        );
    }
    dom
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
        let p99 = u(&phase["latency"]["p99_ns"]) as f64 / 1e3;
        let shown = format!("<span data-p=\"p99\">{p99:.1}</span>");
        assert!(section.contains(&shown), "p99 {shown} not in phase {i}");
    }
}
