//! Snapshot tests of what people read: `iobm report` of saved runs (stream, bonnie, S3 mixed, a
//! two-rank MPI write) and `iobm compare` of two bonnie runs. The documents under fixtures/
//! were saved by real runs; a change in any report shows as a diff of the snapshots under
//! snapshots/ (review with `cargo insta review`, or rerun with INSTA_UPDATE=always).

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
