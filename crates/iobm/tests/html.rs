//! `--html FILE`: the report pages of a stream run, an S3 run, an MPI run and a three-way
//! bonnie comparison, rendered in headless Chromium (Debian's `chromium`, which
//! `scripts/test` installs): every chart draws, nothing fails or is fetched, and the numbers
//! shown are the JSON's.

mod common;

use common::{iobm, load, u};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const MIB: f64 = 1024.0 * 1024.0;

/// The page's DOM after its scripts ran, from headless Chromium.
fn rendered(page: &Path) -> String {
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
fn attribute<'a>(html: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    let at = html.find(tag)?;
    let end = at + html[at..].find('>')?;
    let element = &html[at..end];
    let key = format!("{name}=\"");
    let from = element.find(&key)? + key.len();
    Some(&element[from..from + element[from..].find('"')?])
}

/// Checks what every page must be: self-contained, every chart drawn, no errors; returns the
/// rendered DOM.
fn check_page(page: &Path, charts: usize) -> String {
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
fn check_numbers(dom: &str, result: &Value) {
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

#[test]
fn a_stream_run_page_draws_every_chart_with_the_json_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("r.json"), dir.path().join("r.html"));
    iobm()
        .args(["stream", "-j", "2", "--size", "32MiB", "--duration", "1s"])
        .args(["--interval", "100ms", "--json"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .arg(dir.path())
        .assert()
        .success();
    // The run's throughput, then per phase: throughput, latency over time, distribution, workers.
    let dom = check_page(&html, 1 + 2 * 4);
    let result = load(&json);
    check_numbers(&dom, &result);
    assert!(dom.contains("data-verdict="), "the cache verdict is shown");
    // `iobm report --html` of the saved run gives the same page.
    let again = dir.path().join("again.html");
    iobm()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&html).unwrap()
    );
}

#[test]
fn an_s3_run_page_draws_every_chart_with_the_json_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("s3.json"), dir.path().join("s3.html"));
    iobm()
        .args(["s3", "put", "--duration", "1s", "--obj-size", "64KiB"])
        .args(["--concurrent", "2", "--interval", "200ms", "--json"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .success();
    let dom = check_page(&html, 1 + 4);
    check_numbers(&dom, &load(&json));
}

#[test]
fn an_mpi_run_page_has_a_bar_per_rank() {
    // A document saved by a real `mpirun -np 2` run (before per-interval latency: no latency
    // chart over time).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mpi-write.json");
    let result = load(&fixture);
    assert!(result["ranks"].as_array().unwrap().len() > 1);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("mpi.html");
    iobm()
        .arg("report")
        .arg(&fixture)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let phases = result["phases"].as_array().unwrap().len();
    // Per phase: throughput, distribution, workers, ranks.
    let dom = check_page(&html, 1 + phases * 4);
    assert!(dom.contains("id=\"phase-0-ranks\""));
    check_numbers(&dom, &result);
}

#[test]
fn a_three_way_bonnie_comparison_page_has_a_chart_per_test() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("ext4.json");
    iobm()
        .args([
            "bonnie",
            "--size",
            "8MiB",
            "--files",
            "1:1000:0:2",
            "--seeks",
            "200",
        ])
        .arg("--json")
        .arg(&fresh)
        .arg(dir.path())
        .assert()
        .success();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let html = dir.path().join("compare.html");
    iobm()
        .arg("compare")
        .arg(format!(
            "disk={}",
            fixtures.join("bonnie-disk.json").display()
        ))
        .arg(format!(
            "tmpfs={}",
            fixtures.join("bonnie-tmpfs.json").display()
        ))
        .arg(format!("now={}", fresh.display()))
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let result = load(&fresh);
    let tests = result["phases"].as_array().unwrap();
    let dom = check_page(&html, tests.len());
    // The fresh run's column shows its own makespan rates.
    for phase in tests {
        let name = phase["name"].as_str().unwrap();
        let row = dom
            .split(&format!("<tr data-test=\"{name}\">"))
            .nth(1)
            .unwrap_or_else(|| panic!("no row for {name}"))
            .split("</tr>")
            .next()
            .unwrap();
        let cell = row.split("<td data-run=\"now\">").nth(1).unwrap();
        let makespan = phase["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["kind"] == "makespan")
            .unwrap();
        // Tests that move data compare MiB/s; seeks and metadata tests, operations per second.
        let value = if cell.split("</span>").nth(1).unwrap().starts_with(" MiB/s") {
            makespan["bytes_per_s"].as_f64().unwrap() / MIB
        } else {
            makespan["ops_per_s"].as_f64().unwrap()
        };
        let expected = format!("<span class=\"value\">{value:.2}</span>");
        assert!(
            cell.starts_with(&expected),
            "{name}: {cell:.60} vs {expected}"
        );
    }
}
