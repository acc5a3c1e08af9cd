//! The HTML page of a run that is still going (`--live` with `--html`): opened in headless
//! Chromium while a paced run goes, it shows the running phase with the intervals passed so
//! far (the `--live` lines' figures) and reloads itself; at the end it is the final report,
//! which reloads no more.

mod common;

use common::browser::{
    attribute, check_headline, check_numbers, check_page, check_page_within, MIB,
};
use common::{iobm, load, u};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The intervals the page says have passed, when it says the run is going.
fn running_intervals(page: &str) -> Option<usize> {
    let status = page.find("<p class=\"status\" id=\"live\"")?;
    let status = &page[status..];
    (attribute(status, "", "data-running") == Some("true"))
        .then(|| attribute(status, "", "data-intervals")?.parse().ok())
        .flatten()
}

fn live_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_page_shows_the_run_while_it_goes_and_is_the_final_report_at_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (live, json, html) = (
        out.path().join("l.jsonl"),
        out.path().join("r.json"),
        out.path().join("r.html"),
    );
    // Paced: 6 s of 500 ms intervals on any machine.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "write",
            "-j",
            "2",
            "--size-per-job",
            "16MiB",
            "--block",
            "4KiB",
        ])
        .args(["--rate", "50/s", "--duration", "6s", "--interval", "500ms"])
        .arg("--live")
        .arg(&live)
        .arg("--json")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // What a person opening the page at that moment gets: a copy, read as the run goes, once
    // it has the intervals a chart needs.
    let began = Instant::now();
    let snapshot = loop {
        let text = std::fs::read_to_string(&html).unwrap_or_default();
        if running_intervals(&text).is_some_and(|n| n >= 3) {
            break text;
        }
        assert!(child.try_wait().unwrap().is_none(), "the run ended first");
        assert!(began.elapsed() < Duration::from_secs(60), "no page");
        std::thread::sleep(Duration::from_millis(50));
    };
    let copy = out.path().join("then.html");
    std::fs::write(&copy, &snapshot).unwrap();
    // Drawn: the phase's MiB/s and operations/s so far (read before its reload, 1 s on).
    let dom = check_page_within(&copy, 2, 500);
    let seen = running_intervals(&dom).unwrap();
    let status = &dom[dom.find("id=\"live\"").unwrap()..];
    assert!(
        status.contains(&format!(">running: phase write, interval {seen} (")),
        "{status:.300}"
    );
    // Reloading every interval, and at least a second apart.
    assert!(snapshot.contains("location.reload(); }, 1000)"));
    assert!(child.wait().unwrap().success());

    let result = load(&json);
    let lines = live_lines(&live);
    assert!(
        seen >= 3 && seen < lines.len(),
        "{seen} of {} intervals",
        lines.len()
    );
    // The figures so far are those of the first lines of the live file.
    let bytes: u64 = lines[..seen].iter().map(|l| u(&l["bytes"])).sum();
    let ops: u64 = lines[..seen].iter().map(|l| u(&l["ops"])).sum();
    let seconds = seen as f64 * 0.5;
    let row = dom.split("<tr data-phase=\"write\">").nth(1).unwrap();
    let expected = format!(
        "<td class=\"mibs\">{:.2}</td><td class=\"opss\">{:.2}</td>",
        bytes as f64 / seconds / MIB,
        ops as f64 / seconds
    );
    assert!(row.contains(&expected), "{row:.400} vs {expected}");

    // At the end: the final report, every chart drawn with the result's figures, no reload.
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("location.reload") && !page.contains("id=\"live\""));
    let dom = check_page(&html, 6);
    check_headline(&dom, &result);
    check_numbers(&dom, &result);
    let again = out.path().join("again.html");
    iobm()
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), page);
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        5,
        "only the run's files, the copy and the report: no temporary left"
    );
}
