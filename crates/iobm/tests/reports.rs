//! Snapshot tests of what people read: `iobm report` of saved runs (stream, a repeated stream
//! ended by --until-stable, bonnie, meta, io500, S3 mixed, a two-rank MPI write, paced ones of
//! `--rate`), `iobm compare` of two bonnie runs and of a cached read beside a real one
//! (in every format), and the HTML pages. The
//! documents under fixtures/ were saved by real runs; a change in any report shows as a diff of
//! the snapshots under snapshots/ (review with `cargo insta review`, or rerun with
//! INSTA_UPDATE=always).

use assert_cmd::Command;
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// The standard output of `iobm ARGS`, which must succeed.
fn iobm(args: &[&str]) -> String {
    let out = Command::cargo_bin("iobm")
        .unwrap()
        .args(args)
        .assert()
        .success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

fn report(name: &str) -> String {
    iobm(&["report", fixture(name).to_str().unwrap()])
}

#[test]
fn stream_report() {
    insta::assert_snapshot!(report("stream.json"));
}

#[test]
fn steady_repeated_report() {
    insta::assert_snapshot!(report("stream-steady.json"));
}

#[test]
fn rate_sweep_report() {
    insta::assert_snapshot!(report("rate-sweep.json"));
}

#[test]
fn a_comparison_with_a_paced_run_gives_its_response_time() {
    let a = fixture("paced-stream.json");
    let b = fixture("stream.json");
    insta::assert_snapshot!(iobm(&["compare", a.to_str().unwrap(), b.to_str().unwrap()]));
}

#[test]
fn meta_report() {
    insta::assert_snapshot!(report("meta.json"));
}

/// The twelve phases of an io500 run, then its score lines, each with its formula, and why it
/// is not a valid submission.
#[test]
fn io500_report() {
    let text = report("io500.json");
    assert!(text.contains("[SCORE] total"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn bonnie_report() {
    insta::assert_snapshot!(report("bonnie-tmpfs.json"));
}

#[test]
fn s3_mixed_report() {
    insta::assert_snapshot!(report("s3-mixed.json"));
}

#[test]
fn mpi_write_report() {
    insta::assert_snapshot!(report("mpi-write.json"));
}

/// Open loop (`--rate`): a stream at 200 operations a second with Poisson arrivals (its read,
/// of uncached blocks, briefly behind its schedule), and a write at a rate no worker can hold.
#[test]
fn paced_reports() {
    insta::assert_snapshot!("paced_stream", report("paced-stream.json"));
    insta::assert_snapshot!("paced_behind", report("paced-behind.json"));
    // The page draws each paced phase's response time beside its service time.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("paced.html");
    let json = fixture("paced-stream.json");
    iobm(&[
        "report",
        json.to_str().unwrap(),
        "--html",
        page.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&page).unwrap();
    for id in ["phase-0-response", "phase-1-response"] {
        assert!(page.contains(&format!("id=\"{id}\"")), "{id}");
    }
    assert!(page.contains("write: response time (from the intended start) and service time"));
    assert!(page.contains("\"label\":\"response p99\""));
}

#[test]
fn bonnie_comparison() {
    let a = fixture("bonnie-tmpfs.json");
    let b = fixture("bonnie-disk.json");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    insta::assert_snapshot!("compare_text", iobm(&["compare", a, b]));
    insta::assert_snapshot!(
        "compare_markdown",
        iobm(&["compare", "--format", "markdown", a, b])
    );
}

/// The fields of one CSV line (quoted fields may hold commas and doubled quotes).
fn csv_fields(line: &str) -> Vec<String> {
    let (mut fields, mut field, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// A read served from the page cache beside one from the device (seed 004's loop-device read):
/// every format marks each value with its verdict, has the legend, and lists the warnings.
#[test]
fn a_cached_read_is_marked_beside_a_real_one_in_every_format() {
    let a = fixture("stream.json");
    let b = fixture("stream-cached.json");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let text = iobm(&["compare", a, b]);
    let cached_row = text
        .lines()
        .find(|l| l.starts_with("stream-cached "))
        .unwrap();
    assert!(cached_row.contains(" C (9.51x)"), "{cached_row}");
    assert!(text.contains("cache verdict beside each value: U uncached, C cached"));
    assert!(text.contains("stream-cached (read): cache effect: 100% of the data"));
    insta::assert_snapshot!("compare_cached_text", text);
    let markdown = iobm(&["compare", "--format", "markdown", a, b]);
    assert!(markdown.contains("| 11047.54 C (9.51x) |"), "{markdown}");
    insta::assert_snapshot!("compare_cached_markdown", markdown);
    let csv = iobm(&["compare", "--format", "csv", a, b]);
    let header = csv_fields(csv.lines().next().unwrap());
    let row = csv_fields(csv.lines().nth(2).unwrap());
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(row[at("read cache verdict")], "cached");
    assert!(row[at("read warnings")].contains("cache effect"));
    insta::assert_snapshot!("compare_cached_csv", csv);
    let transposed = iobm(&["compare", "--format", "csv", "--transpose", a, b]);
    insta::assert_snapshot!("compare_cached_csv_transposed", transposed);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("compare.html");
    iobm(&["compare", a, b, "--html", html.to_str().unwrap()]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<span class=\"mark\" data-verdict=\"cached\" title=\"cached\">C</span>"));
    assert!(page.contains(
        "<li data-run=\"stream-cached\"><b>stream-cached (read)</b>: cache effect: 100%"
    ));
    insta::assert_snapshot!("compare_cached_html", page_content(&page));
}

/// The page without its style sheet and scripts (the vendored uPlot and the drawing code),
/// with the chart data kept: what the page shows and draws.
fn page_content(page: &str) -> String {
    let mut out = String::new();
    let mut rest = page;
    for (open, close) in [
        ("<style>", "</style>"),
        ("<script>", "</script>"),
        ("<script>", "</script>"),
    ] {
        let start = rest.find(open).expect("the page has its style and scripts") + open.len();
        out.push_str(&rest[..start]);
        out.push_str("...");
        let end = start + rest[start..].find(close).unwrap();
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn html_pages() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.html");
    iobm(&[
        "report",
        fixture("mpi-write.json").to_str().unwrap(),
        "--html",
        run.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&run).unwrap();
    insta::assert_snapshot!("html_run", page_content(&page));
    let compare = dir.path().join("compare.html");
    let a = fixture("bonnie-tmpfs.json");
    let b = fixture("bonnie-disk.json");
    iobm(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--html",
        compare.to_str().unwrap(),
    ]);
    let page = std::fs::read_to_string(&compare).unwrap();
    insta::assert_snapshot!("html_compare", page_content(&page));
}
