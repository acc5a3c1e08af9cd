//! `--html FILE`: the report pages of a stream run, an S3 run, an MPI run and a three-way
//! bonnie comparison, rendered in headless Chromium (Debian's `chromium`, which
//! `scripts/test` installs): every chart draws, nothing fails or is fetched, and the numbers
//! shown are the JSON's.

mod common;

use common::browser::{check_numbers, check_page, MIB};
use common::{aggregate, iobm, load};
use std::path::Path;

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
        let makespan = aggregate(phase, "makespan");
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
