//! `iobm s3 versioned` end to end, and the clean-up in buckets that keep versions: against the
//! built-in gateway (versioning turned on in the bucket the run makes) and against moto
//! (a bucket with versioning turned on by boto3 beforehand, read back by boto3 afterwards).
//!
//! moto_server and boto3 are installed by `scripts/test`; a test whose server is missing fails.

mod common;

use assert_cmd::Command;
use common::{assert_matches_schema, free_port, load, u, Server};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn iobm() -> Command {
    let mut c = Command::cargo_bin("iobm").unwrap();
    c.env_remove("AWS_ENDPOINT_URL")
        .env("AWS_ACCESS_KEY_ID", "AKIOBMTEST")
        .env("AWS_SECRET_ACCESS_KEY", "iobmtestsecretiobmtestsecret");
    c
}

fn moto() -> Server {
    let port = free_port();
    let args = ["-H", "127.0.0.1", "-p", &port.to_string()].map(String::from);
    common::start("moto_server", &args, port)
}

/// Runs boto3 `code` with `s3`, a client of `url`; its standard output.
fn boto(url: &str, code: &str) -> String {
    let script = format!(
        "import boto3, json\ns3 = boto3.client('s3', endpoint_url='{url}', region_name='us-east-1', \
         aws_access_key_id='a', aws_secret_access_key='b')\n{code}"
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every version and delete marker left in `bucket`, as boto3 lists them.
fn versions_left(url: &str, bucket: &str) -> u64 {
    let code = format!(
        "r = s3.list_object_versions(Bucket='{bucket}')\n\
         print(len(r.get('Versions', [])) + len(r.get('DeleteMarkers', [])))"
    );
    boto(url, &code).trim().parse().unwrap()
}

/// `iobm s3 OP` with small objects and the flags `extra`; its JSON result, checked against
/// the schema, and the process's output.
fn run(op: &str, extra: &[&str]) -> (Option<Value>, std::process::Output) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = iobm()
        .args([
            "s3",
            op,
            "--timeout",
            "20s",
            "--obj-size",
            "32KiB",
            "-c",
            "2",
        ])
        .arg("--json")
        .arg(&json)
        .args(extra)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let result = json.exists().then(|| load(&json));
    if let Some(r) = &result {
        assert_matches_schema(r);
    }
    (result, out)
}

/// A complete run's per-operation counts by name, and its errors.
fn books(result: &Value) -> Vec<(String, u64)> {
    assert_eq!(result["status"], "complete", "{result:#}");
    let phase = &result["phases"][0];
    assert!(
        phase["errors"].as_array().unwrap().is_empty(),
        "{:#}",
        phase["errors"]
    );
    let ops = phase["operations"].as_array().unwrap();
    ops.iter()
        .map(|o| (o["op"].as_str().unwrap().to_string(), u(&o["ops"])))
        .collect()
}

fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(files_under(&e.path()));
        }
        out.push(e.path());
    }
    out
}

#[test]
fn versioned_on_the_built_in_gateway_puts_reads_lists_and_deletes_versions_and_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let at = dir.path().to_str().unwrap();
    let mix = [
        "--get", "45", "--head", "30", "--put", "15", "--delete", "10", "--list", "5",
    ];
    let extra = ["--objects", "6", "--ops", "300", "--verify", "--dir", at];
    let (result, out) = run("versioned", &[&extra[..], &mix].concat());
    let result = result.unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    assert!(out.status.success());
    assert_eq!(result["kind"], "s3 versioned");
    assert_eq!(result["config"]["s3"]["bucket_created"], true);
    let books = books(&result);
    let names: Vec<&str> = books.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["get", "head", "put", "delete", "list"]);
    assert!(books.iter().all(|(_, n)| *n > 0), "{books:?}");
    assert_eq!(books.iter().map(|(_, n)| n).sum::<u64>(), 300);
    // Every version and the bucket are gone with the gateway's bookkeeping.
    assert!(
        files_under(dir.path()).is_empty(),
        "{:?}",
        files_under(dir.path())
    );
}

#[test]
fn versioned_against_moto_uses_a_bucket_with_versioning_on_and_removes_every_version() {
    let moto = moto();
    boto(
        &moto.url,
        "s3.create_bucket(Bucket='kept')\n\
         s3.put_bucket_versioning(Bucket='kept', VersioningConfiguration={'Status': 'Enabled'})\n\
         s3.put_object(Bucket='kept', Key='theirs', Body=b'not the run\\'s')",
    );
    let extra = [
        "--endpoint",
        &moto.url,
        "--bucket",
        "kept",
        "--objects",
        "4",
    ];
    let (result, out) = run(
        "versioned",
        &[&extra[..], &["--ops", "120", "--verify"]].concat(),
    );
    let result = result.unwrap_or_else(|| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let books = books(&result);
    assert!(
        books.iter().find(|(n, _)| n == "get").unwrap().1 > 0,
        "{books:?}"
    );
    assert_eq!(result["config"]["s3"]["bucket_created"], false);
    // Only the object that was there before is left, with its one version.
    assert_eq!(versions_left(&moto.url, "kept"), 1);
    let left = boto(
        &moto.url,
        "print(s3.get_object(Bucket='kept', Key='theirs')['Body'].read())",
    );
    assert_eq!(left.trim(), "b\"not the run's\"");
}

#[test]
fn a_put_in_a_bucket_that_keeps_versions_leaves_no_version_or_delete_marker() {
    let moto = moto();
    boto(
        &moto.url,
        "s3.create_bucket(Bucket='plain')\n\
         s3.put_bucket_versioning(Bucket='plain', VersioningConfiguration={'Status': 'Enabled'})",
    );
    let extra = ["--endpoint", &moto.url, "--bucket", "plain", "--ops", "20"];
    let (result, out) = run("put", &extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(result.unwrap()["status"], "complete");
    assert_eq!(versions_left(&moto.url, "plain"), 0);
}

#[test]
fn versioned_on_a_bucket_without_versioning_is_refused_before_anything_is_stored() {
    let moto = moto();
    boto(&moto.url, "s3.create_bucket(Bucket='unversioned')");
    let extra = [
        "--endpoint",
        &moto.url,
        "--bucket",
        "unversioned",
        "--ops",
        "10",
    ];
    let (result, out) = run("versioned", &extra);
    assert_eq!(out.status.code(), Some(2));
    assert!(result.is_none(), "no result for a refused run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--bucket unversioned: versioning is off"),
        "{stderr}"
    );
    assert_eq!(versions_left(&moto.url, "unversioned"), 0);
}
