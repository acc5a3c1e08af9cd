//! Snapshot tests of what people read: `iobm report` of saved runs (stream, bonnie, S3 mixed, a
//! two-rank MPI write), `iobm compare` of two bonnie runs, and the HTML pages of both. The
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
