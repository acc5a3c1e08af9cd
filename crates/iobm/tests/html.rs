//! `--html FILE`: the report pages of a stream run, an S3 run of 20 workers, a meta run, an MPI
//! run, an IO500 run, a rate sweep, 2,000 workers and a three-way bonnie comparison, rendered
//! in headless Chromium (Debian's `chromium`, which `scripts/test` installs): every chart
//! draws, nothing fails or is fetched, the numbers shown are the JSON's, the page opens on its
//! headline, and by what is drawn no label is over another or outside its plot and nothing is
//! wider than the page.

mod common;

use common::browser::{check_headline, check_numbers, check_page, MIB};
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
    report_html(&json, &again);
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
        .args(["--concurrent", "20", "--interval", "200ms", "--json"])
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .arg("--dir")
        .arg(dir.path())
        .assert()
        .success();
    let dom = check_page(&html, 1 + 4);
    check_numbers(&dom, &load(&json));
    // 20 workers: their rates as a distribution, the slowest and fastest named, not 20 bars.
    let workers = charts_of(&html).pop().unwrap();
    assert_eq!(workers["kind"], "lines");
    let title = workers["title"].as_str().unwrap();
    assert!(
        title.contains("the 20 workers' MiB/s, slowest first (slowest r0 w"),
        "{title}"
    );
    assert!(title.contains(", fastest r0 w"), "{title}");
    check_headline(&dom, &load(&json));
}

#[test]
fn the_io500_page_opens_on_its_headline_and_its_labels_and_scores_fit() {
    // A document saved by a real `iobm io500` run: twelve phases, nine of them within the
    // last few milliseconds of the run's chart (their labels stacked, `find` among them).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/io500.json");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("io500.html");
    report_html(&fixture, &html);
    let charts = charts_of(&html);
    let dom = check_page(&html, charts.len());
    let result = load(&fixture);
    check_headline(&dom, &result);
    let labels = common::browser::attribute(&dom, "id=\"run-throughput\"", "data-labels").unwrap();
    let labels: Vec<[f64; 4]> = serde_json::from_str(labels).unwrap();
    assert_eq!(labels.len(), 12);
    assert!(dom.contains("<section id=\"io500-scores\">"));
}

#[test]
fn a_page_of_2000_workers_draws_their_distribution() {
    // A synthetic document: the stream fixture's workers copied to 2,000 over 125 ranks.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stream.json");
    let mut result = load(&fixture);
    for phase in result["phases"].as_array_mut().unwrap() {
        let one = phase["workers"][0].clone();
        let workers: Vec<serde_json::Value> = (0..2000u64)
            .map(|k| {
                let mut w = one.clone();
                w["rank"] = (k / 16).into();
                w["worker"] = (k % 16).into();
                // Every worker a little slower than the one before.
                let end = common::u(&w["span"]["end_ns"]);
                w["span"]["end_ns"] = (end + k * 1000).into();
                w
            })
            .collect();
        phase["workers"] = workers.into();
    }
    let ranks = result["ranks"][0].clone();
    let ranks: Vec<serde_json::Value> = (0..125u64)
        .map(|r| {
            let mut rank = ranks.clone();
            rank["rank"] = r.into();
            rank
        })
        .collect();
    result["ranks"] = ranks.into();
    let dir = tempfile::tempdir().unwrap();
    let (json, html) = (dir.path().join("many.json"), dir.path().join("many.html"));
    std::fs::write(&json, serde_json::to_vec(&result).unwrap()).unwrap();
    report_html(&json, &html);
    let charts = charts_of(&html);
    check_page(&html, charts.len());
    let many: Vec<_> = charts
        .iter()
        .filter(|c| c["xlabel"] == "workers, slowest first")
        .collect();
    assert_eq!(many.len(), 2, "one per phase");
    for chart in many {
        let title = chart["title"].as_str().unwrap();
        assert!(title.contains("the 2000 workers'"), "{title}");
        assert!(title.contains("(slowest r124 w15 "), "{title}");
        assert!(title.contains(", fastest r0 w0 "), "{title}");
    }
    let ranks: Vec<_> = charts
        .iter()
        .filter(|c| c["xlabel"] == "ranks, slowest first")
        .collect();
    assert_eq!(ranks.len(), 2, "one per phase");
}

#[test]
fn a_meta_run_page_draws_a_chart_of_operations_per_worker_for_every_phase() {
    // A document saved by a real `iobm meta` run: nine phases, each a few milliseconds.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/meta.json");
    let result = load(&fixture);
    let phases = result["phases"].as_array().unwrap().len();
    assert_eq!(phases, 9);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("meta.html");
    report_html(&fixture, &html);
    // The run's throughput, then per phase: its latency distribution and each worker's rate.
    let dom = check_page(&html, 1 + 2 * phases);
    for phase in result["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        assert!(
            dom.contains(&format!("{name}: each worker's operations/s")),
            "{name}"
        );
    }
    assert!(
        dom.contains("data-verdict=\"cached\""),
        "the lookups' verdict is shown"
    );
}

#[test]
fn a_rate_sweep_page_draws_its_curve_with_every_other_chart() {
    // A document saved by a real `iobm read --rate-sweep 200..800/3 --slo 5ms` run.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rate-sweep.json");
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("sweep.html");
    report_html(&fixture, &html);
    let charts = charts_of(&html);
    assert_eq!(
        charts[0]["title"],
        "rate sweep: response time (from the intended start) against the achieved rate"
    );
    let dom = check_page(&html, charts.len());
    assert!(
        dom.contains("knee: 500 ops/s targeted"),
        "the table and its knee"
    );
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
    report_html(&fixture, &html);
    let phases = result["phases"].as_array().unwrap().len();
    // Per phase (each a few milliseconds: one interval, no charts over time): distribution,
    // workers, ranks.
    let dom = check_page(&html, 1 + phases * 3);
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
        let shown = cell.split("<br>").next().unwrap();
        assert!(
            shown.contains("<span class=\"mark\" data-verdict="),
            "{name}: no verdict mark in {shown}"
        );
        let value = if shown.contains(" MiB/s") {
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
    // Each bar carries its run's cache mark, the one its table cell shows.
    let charts = charts_of(&html);
    let bars: Vec<_> = charts.iter().filter(|c| c["kind"] == "bars").collect();
    assert_eq!(bars.len(), tests.len());
    for (chart, phase) in bars.iter().zip(tests) {
        let name = phase["name"].as_str().unwrap();
        let row = dom
            .split(&format!("<tr data-test=\"{name}\">"))
            .nth(1)
            .unwrap();
        let cell = row.split("<td data-run=\"now\">").nth(1).unwrap();
        let mark = cell.split("<span class=\"mark\"").nth(1).unwrap();
        let mark = mark.split('>').nth(1).unwrap().split('<').next().unwrap();
        let label = chart["labels"][2].as_str().unwrap();
        assert_eq!(label, format!("now [{mark}]"), "{name}");
    }
}

/// The chart specifications a page carries.
/// `iobm report RESULT --html PAGE`, which must succeed.
fn report_html(result: &Path, page: &Path) {
    iobm()
        .arg("report")
        .arg(result)
        .arg("--html")
        .arg(page)
        .assert()
        .success();
}

fn charts_of(page: &Path) -> Vec<serde_json::Value> {
    let source = std::fs::read_to_string(page).unwrap();
    let data = source
        .split("<script type=\"application/json\" id=\"iobm-charts\">")
        .nth(1)
        .unwrap()
        .split("</script>")
        .next()
        .unwrap()
        .replace("<\\/", "</");
    serde_json::from_str(&data).unwrap()
}

#[test]
fn a_bonnie_run_page_is_compact_with_bonnie_tables_and_no_empty_rate_charts() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bonnie-disk.json");
    let result = load(&fixture);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("bonnie.html");
    report_html(&fixture, &html);
    let phases = result["phases"].as_array().unwrap();
    // Its tests last milliseconds: one interval each, so no charts over time; bars of workers
    // only for the seeks' several; a latency distribution each, and the run's throughput.
    let several = phases
        .iter()
        .filter(|p| p["workers"].as_array().unwrap().len() > 1)
        .count();
    assert!(several > 0);
    let dom = check_page(&html, 1 + phases.len() + several);
    for i in 0..phases.len() {
        let section = dom.split(&format!("id=\"phase-{i}\"")).nth(1).unwrap();
        let section = section.split("</section>").next().unwrap();
        assert!(
            section.contains("too few for charts over time"),
            "phase {i}"
        );
    }
    // No chart in MiB/s of a test that moves no data.
    for chart in charts_of(&html) {
        let id = chart["id"].as_str().unwrap();
        let Some(i) = id.strip_prefix("phase-").and_then(|r| r.split('-').next()) else {
            continue;
        };
        let phase = &phases[i.parse::<usize>().unwrap()];
        if common::phase_bytes(phase) == 0 {
            assert_ne!(chart["ylabel"], "MiB/s", "{id}");
        }
    }
    // bonnie++'s two tables, as `iobm report` prints them.
    let tables = dom.split("<pre class=\"bonnie\">").nth(1).unwrap();
    for row in [
        "Sequential Output",
        "Sequential Create",
        "disk:4M",
        "Latency p99/max",
    ] {
        assert!(tables.contains(row), "{row} not in the tables");
    }
    // Compact: the page was about 20,000 px tall with an empty MiB/s chart per metadata test.
    let height: u64 = common::browser::attribute(&dom, "<body", "data-height")
        .unwrap()
        .parse()
        .unwrap();
    assert!(height < 10_000, "the page is {height} px tall");
}
