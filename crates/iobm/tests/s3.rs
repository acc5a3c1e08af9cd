//! `iobm s3` end to end against real S3 servers on loopback: s3s-fs (checks SigV4, files on
//! disk), moto (in memory, no auth) and iobm's own gateway, in-process and as `iobm serve`.
//! Every operation runs on every server; results are checked against the schema and against
//! the per-operation books; cleanup leaves nothing; a server that dies mid-run is counted and
//! ends the run with partial results saved.
//!
//! s3s-fs and moto_server are installed by `scripts/test`; a test whose server is missing
//! fails, under a plain `cargo test` too.

mod common;

use assert_cmd::Command;
use common::{
    aggregate, assert_matches_schema, free_port, interrupt, load, u, wait_for, warns, Server,
};
use serde_json::Value;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

const KEY: &str = "AKIOBMTEST";
const SECRET: &str = "iobmtestsecretiobmtestsecret";

fn iobm() -> Command {
    let mut c = Command::cargo_bin("iobm").unwrap();
    c.env_remove("AWS_ENDPOINT_URL")
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET);
    c
}

fn s3s_fs(root: &Path) -> Server {
    common::s3s_fs(root, KEY, SECRET)
}

fn moto() -> Server {
    let port = free_port();
    common::start(
        "moto_server",
        &["-H", "127.0.0.1", "-p", &port.to_string()].map(String::from),
        port,
    )
}

fn iobm_serve(root: &Path) -> Server {
    common::iobm_serve_with(root, KEY, SECRET)
}

/// Runs `iobm s3 OP` with small objects and returns its JSON result.
fn run(endpoint: Option<&str>, op: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let mut cmd = iobm();
    cmd.args(["s3", op, "--timeout", "20s"])
        .args(["--json", json.to_str().unwrap()]);
    for (flag, default) in [
        ("--objects", "12"),
        ("--obj-size", "64KiB"),
        ("--concurrent", "3"),
    ] {
        if !extra.contains(&flag) {
            cmd.args([flag, default]);
        }
    }
    if let Some(e) = endpoint {
        cmd.args(["--endpoint", e]);
    }
    let out = cmd
        .args(extra)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iobm s3 {op} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    let result = load(&json);
    assert_matches_schema(&result);
    result
}

/// Checks one result: the operation's books add up, nothing failed.
fn check(result: &Value, op: &str) {
    assert_eq!(result["kind"], format!("s3 {op}"));
    assert_eq!(result["status"], "complete", "{result:#}");
    let phase = &result["phases"][0];
    assert!(
        phase["errors"].as_array().unwrap().is_empty(),
        "{:#}",
        phase["errors"]
    );
    let ops = phase["operations"].as_array().unwrap();
    let total_ops: u64 = ops.iter().map(|o| u(&o["ops"])).sum();
    let worker_ops: u64 = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["span"]["ops"]))
        .sum();
    assert_eq!(total_ops, worker_ops, "operation books match the workers'");
    for o in ops {
        let per_second: u64 = o["series"]["ops"].as_array().unwrap().iter().map(u).sum();
        assert_eq!(per_second, u(&o["ops"]), "per-second series of {}", o["op"]);
    }
    assert!(total_ops > 0);
    for o in ops.iter().filter(|o| o["op"] == "get" && u(&o["ops"]) > 0) {
        assert!(o["ttfb"]["p50_ns"].as_u64().unwrap() <= o["latency"]["max_ns"].as_u64().unwrap());
    }
    let moved: u64 = ops.iter().map(|o| u(&o["bytes"])).sum();
    match op {
        "put" | "get" | "multipart" => {
            assert_eq!(moved, total_ops * 65536, "{op} moves whole objects")
        }
        "head" | "delete" | "list" => assert_eq!(moved, 0),
        _ => {}
    }
}

/// Every operation against one endpoint; afterwards the run's prefix is empty.
fn every_operation(endpoint: &str) {
    for op in ["put", "get", "head", "list", "delete", "multipart"] {
        let extra: &[&str] = if op == "multipart" {
            &[
                "--ops",
                "3",
                "--obj-size",
                "11MiB",
                "--part-size",
                "5MiB",
                "--part-concurrency",
                "2",
            ]
        } else {
            &["--ops", "30"]
        };
        let result = run(Some(endpoint), op, extra);
        if op == "multipart" {
            let phase = &result["phases"][0];
            assert_eq!(u(&phase["operations"][0]["ops"]), 3);
            assert_eq!(u(&phase["operations"][0]["bytes"]), 3 * 11 * 1048576);
        } else {
            check(&result, op);
        }
        if op == "list" {
            let list = &result["phases"][0]["operations"][0];
            assert_eq!(
                u(&list["keys"]),
                12 * u(&list["ops"]),
                "every page lists the 12 objects"
            );
        }
        if op == "delete" {
            assert_eq!(
                u(&result["phases"][0]["operations"][0]["ops"]),
                12,
                "each object once"
            );
        }
    }
    let mixed = run(
        Some(endpoint),
        "mixed",
        &["--ops", "200", "--obj-size", "16KiB"],
    );
    let names: Vec<&str> = mixed["phases"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["op"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get", "head", "put", "delete"]);
    assert_eq!(mixed["status"], "complete");
    let ranged = run(
        Some(endpoint),
        "get",
        &["--ops", "20", "--range-size", "1000"],
    );
    assert_eq!(u(&ranged["phases"][0]["operations"][0]["bytes"]), 20_000);
    let hashed = run(
        Some(endpoint),
        "put",
        &["--ops", "10", "--payload-signing", "sha256"],
    );
    assert_eq!(hashed["config"]["s3"]["payload_signing"], "sha256");
    check(&hashed, "put");
}

#[test]
fn every_operation_against_s3s_fs() {
    let root = tempfile::tempdir().unwrap();
    let server = s3s_fs(root.path());
    every_operation(&server.url);
    // Cleanup left no object of any run (s3s-fs keeps objects as files).
    let bucket = root.path().join("iobm");
    let files: Vec<_> = walk(&bucket).into_iter().filter(|p| p.is_file()).collect();
    assert!(files.is_empty(), "left behind: {files:?}");
}

#[test]
fn every_operation_against_moto() {
    let server = moto();
    every_operation(&server.url);
}

#[test]
fn https_endpoints_check_certificates_unless_insecure() {
    let port = free_port();
    let args = ["-H", "127.0.0.1", "-p", &port.to_string(), "--ssl"].map(String::from);
    let server = common::start("moto_server", &args, port);
    let url = server.url.replace("http://", "https://");
    // moto's certificate is self-signed: refused, with the reason, before anything is written.
    let out = iobm()
        .args(["s3", "put", "--endpoint", &url, "--ops", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("certificate") && err.contains("TLS: "),
        "{err}"
    );
    let host_port = url.trim_start_matches("https://").to_string();
    for op in ["put", "get"] {
        let result = run(
            Some(&host_port),
            op,
            &["--tls", "--insecure", "--ops", "12"],
        );
        check(&result, op);
        assert_eq!(result["config"]["s3"]["tls"], true);
        assert_eq!(result["config"]["s3"]["endpoints"][0], url);
    }
}

#[test]
fn every_operation_against_iobm_serve_with_two_endpoints() {
    let root = tempfile::tempdir().unwrap();
    let a = iobm_serve(root.path());
    let b = iobm_serve(root.path());
    let both = format!("{},{}", a.url, b.url);
    every_operation(&both);
    let result = run(Some(&both), "put", &["--ops", "30", "--concurrent", "4"]);
    let endpoints: Vec<&str> = result["phases"][0]["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["endpoint"].as_str().unwrap())
        .collect();
    assert_eq!(endpoints, [&a.url, &b.url, &a.url, &b.url]);
    // Each endpoint's series: its two workers' added up.
    let phase = &result["phases"][0];
    let per_endpoint = phase["endpoint_series"].as_array().unwrap();
    assert_eq!(per_endpoint.len(), 2);
    for (e, url) in per_endpoint.iter().zip([&a.url, &b.url]) {
        assert_eq!(e["endpoint"], url.as_str());
        let ops: u64 = e["series"]["ops"].as_array().unwrap().iter().map(u).sum();
        let own: u64 = phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["endpoint"] == url.as_str())
            .map(|w| u(&w["span"]["ops"]))
            .sum();
        assert_eq!(ops, own);
    }
    let files: Vec<_> = walk(&root.path().join("iobm"))
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(files.is_empty(), "left behind: {files:?}");
}

#[test]
fn without_an_endpoint_the_built_in_gateway_serves_and_disappears() {
    let dir = tempfile::tempdir().unwrap();
    for op in ["put", "get"] {
        let result = run(
            None,
            op,
            &["--ops", "24", "--dir", dir.path().to_str().unwrap()],
        );
        check(&result, op);
        assert_eq!(result["config"]["s3"]["builtin_gateway"], true);
        assert!(result["phases"][0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("cpu.gateway_s")));
        assert!(result["phases"][0]["cpu"]["gateway_s"].as_f64().is_some());
        // `iobm report` recomputes warnings from the records and keeps this note of the run.
        let saved = dir.path().join("saved.json");
        std::fs::write(&saved, result.to_string()).unwrap();
        let out = iobm().arg("report").arg(&saved).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("cpu.gateway_s") && text.contains("the built-in gateway used"));
        std::fs::remove_file(&saved).unwrap();
    }
    // The bucket it made is gone again, and so is the gateway's bookkeeping.
    assert!(walk(dir.path()).is_empty(), "{:?}", walk(dir.path()));
    // The gateway's threads' CPU is told apart from the client's (counted in 10 ms ticks).
    let heavier = run(None, "put", &["--ops", "100", "--obj-size", "1MiB"]);
    let cpu = &heavier["phases"][0]["cpu"];
    assert!(cpu["gateway_s"].as_f64().unwrap() > 0.0, "{cpu}");
    // Without --dir: a temporary directory, removed afterwards.
    let result = run(None, "put", &["--ops", "6"]);
    let gateway_dir = result["config"]["s3"]["gateway_dir"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(!Path::new(&gateway_dir).exists(), "{gateway_dir} removed");
}

#[test]
fn keep_leaves_the_objects_and_never_deletes_a_bucket_it_did_not_create() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("theirs")).unwrap();
    std::fs::write(root.path().join("theirs/precious"), b"keep me").unwrap();
    let server = iobm_serve(root.path());
    let result = run(
        Some(&server.url),
        "put",
        &["--ops", "5", "--bucket", "theirs", "--keep"],
    );
    assert_eq!(result["config"]["s3"]["bucket_created"], false);
    let prefix = result["config"]["s3"]["prefix"].as_str().unwrap();
    let kept = root.path().join("theirs").join(prefix);
    // Five objects and the data set's description (for --reuse).
    assert_eq!(std::fs::read_dir(&kept).unwrap().count(), 6);
    run(
        Some(&server.url),
        "put",
        &["--ops", "5", "--bucket", "theirs"],
    );
    assert_eq!(
        std::fs::read(root.path().join("theirs/precious")).unwrap(),
        b"keep me"
    );
    assert_eq!(
        std::fs::read_dir(&kept).unwrap().count(),
        6,
        "another run's objects untouched"
    );
}

#[test]
fn a_server_that_dies_mid_run_is_counted_and_the_run_ends_with_results() {
    let root = tempfile::tempdir().unwrap();
    let mut server = iobm_serve(root.path());
    let (child, json, _dir) = long_put(&server.url, &["--max-errors", "10", "--timeout", "5s"]);
    std::thread::sleep(Duration::from_millis(1500));
    let _ = server.child.kill();
    let _ = server.child.wait();
    let out = child.wait_with_output().unwrap();
    // The run failed (1), but what it stored is still there: that is what the code says (4).
    assert_eq!(
        out.status.code(),
        Some(4),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("the run stopped"), "{stderr}");
    assert!(stderr.contains("the clean-up failed: up to "), "{stderr}");
    let result = load(&json);
    assert_matches_schema(&result);
    let phase = &result["phases"][0];
    assert_eq!(phase["status"], "failed");
    assert!(
        u(&phase["operations"][0]["ops"]) > 0,
        "work before the failure is kept"
    );
    let errors: u64 = phase["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| u(&e["count"]))
        .sum();
    // The worker that passes the limit stops the phase; the other's request in flight may fail too.
    assert!(
        (11..=12).contains(&errors),
        "stopped once more than --max-errors failed: {errors}"
    );
    let kinds: Vec<&str> = phase["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.iter().all(|k| [
            "connection refused",
            "connection reset",
            "connection closed"
        ]
        .contains(k)),
        "{kinds:?}"
    );
}

#[test]
fn ctrl_c_stops_reports_and_removes_what_the_run_wrote() {
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let (child, json, _dir) = long_put(&server.url, &[]);
    let out = interrupt(child);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("put: INTERRUPTED"), "{text}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "interrupted");
    assert!(u(&result["phases"][0]["operations"][0]["ops"]) > 0);
    // Every object the run stored is gone, and so is the bucket it created.
    assert!(
        !root.path().join("iobm").exists(),
        "{:?}",
        walk(root.path())
    );
}

#[test]
fn wrong_credentials_and_bad_input_are_named_with_the_right_code() {
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let out = iobm()
        .args(["s3", "put", "--endpoint", &server.url, "--ops", "1"])
        .env("AWS_SECRET_ACCESS_KEY", "wrong")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    // The server's own words, once: a HEAD answer has no body, so they are asked for.
    assert!(err.contains("HTTP 403 SignatureDoesNotMatch"), "{err}");
    assert!(
        err.contains("(check the key pair: the server holds another secret for this access key; --access-key and --secret-key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"),
        "{err}"
    );
    assert_eq!(err.matches("HTTP 403").count(), 1, "{err}");
    let unsigned = iobm()
        .args(["s3", "put", "--endpoint", &server.url, "--ops", "1"])
        .env_remove("AWS_ACCESS_KEY_ID")
        .env_remove("AWS_SECRET_ACCESS_KEY")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&unsigned.stderr);
    assert!(
        err.contains("HTTP 403 AccessDenied: Signature is required"),
        "{err}"
    );
    for (args, needle) in [
        (vec!["--endpoint", "ftp://x"], "--endpoint"),
        (vec!["--endpoint", "gopher://x:1"], "--endpoint"),
        (vec!["--bucket", "Not_A_Bucket"], "--bucket"),
        (vec!["--obj-size-range", "2M..1M"], "larger"),
        (vec!["--duration", "0s"], "--duration"),
        (vec!["--verify", "--data", "zero"], "stamped data"),
        (
            vec!["--range-size", "4KiB"],
            "--range-size works with get and mixed",
        ),
    ] {
        let out = iobm().args(["s3", "put"]).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        // The problem on the first line; argument errors go on with clap's pointer to --help.
        let first = err.lines().next().unwrap_or_default();
        assert!(first.contains(needle), "{err}");
        assert!(err.lines().count() == 1 || err.contains("--help"), "{err}");
    }
    // A range as large as the objects would quietly be whole-object GETs.
    let out = iobm()
        .args(["s3", "get", "--range-size", "1MiB", "--obj-size", "64KiB"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "iobm: error: --range-size 1.00 MiB is not smaller than the objects (64.00 KiB): every GET would read whole objects (omit it, or give larger --obj-size)"
    );
}

/// Starts a minute-long `iobm s3 put` against `url` with 2 workers and small objects; returns
/// it, where its JSON result goes, and the directory holding that.
fn long_put(url: &str, extra: &[&str]) -> (Child, std::path::PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .args([
            "s3",
            "put",
            "--endpoint",
            url,
            "--duration",
            "60s",
            "--concurrent",
            "2",
        ])
        .args(["--obj-size", "64KiB", "--json", json.to_str().unwrap()])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    (child, json, dir)
}

/// Every path under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            }
            out.push(p);
        }
    }
    out
}

#[test]
fn a_data_set_read_many_times_over_is_said_to_come_possibly_from_caches() {
    // A server that does not count where its bytes came from: only the client's view.
    let root = tempfile::tempdir().unwrap();
    let server = s3s_fs(root.path());
    let warned = |result: &Value| warns(&result["phases"][0], "times over");
    let reread = run(
        Some(&server.url),
        "get",
        &["--objects", "4", "--obj-size", "64KiB", "--ops", "200"],
    );
    assert_eq!(reread["phases"][0]["settings"]["data_bytes"], 4 * 65536);
    // The data set's upload is the PUT rate a GET is compared with.
    assert!(
        reread["config"]["s3"]["upload_bytes_per_s"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    assert!(warned(&reread), "{}", reread["phases"][0]["warnings"]);
    assert_eq!(verdict(&reread), "possibly cached");
    let once = run(
        Some(&server.url),
        "get",
        &["--objects", "40", "--obj-size", "64KiB", "--ops", "40"],
    );
    assert!(!warned(&once), "{}", once["phases"][0]["warnings"]);
    assert!(once["phases"][0]["cache"]["servers"]
        .as_array()
        .unwrap()
        .is_empty());
}

/// One plain HTTP/1.1 GET of `path` on 127.0.0.1:`port`, unsigned: the whole answer.
fn http_get(port: u16, path: &str) -> String {
    use std::io::{Read, Write};
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\naccept: text/plain\r\nconnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    conn.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn the_gateways_counters_are_unsigned_only_on_the_metrics_address() {
    let root = tempfile::tempdir().unwrap();
    let (port, metrics_port) = (free_port(), free_port());
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("serve")
        .arg(root.path())
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics_port}")])
        .args(["--access-key", KEY, "--secret-key", SECRET])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, &mut child);
    wait_for(metrics_port, &mut child);
    let _server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let refused = http_get(port, "/metrics");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    assert!(refused.contains("AccessDenied"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("x-iobm-gateway: "),
        "{refused}"
    );
    let scraped = http_get(metrics_port, "/metrics");
    assert!(scraped.starts_with("HTTP/1.1 200"), "{scraped}");
    assert!(
        scraped.contains("content-type: text/plain; version=0.0.4"),
        "{scraped}"
    );
    assert!(
        scraped.contains("# TYPE iobm_gateway_served_bytes_total counter"),
        "{scraped}"
    );
    assert!(
        scraped.contains("iobm_gateway_cpu_seconds_total{mode=\"user\"}"),
        "{scraped}"
    );
    assert!(http_get(metrics_port, "/other").starts_with("HTTP/1.1 404"));
}

#[test]
fn a_batch_delete_is_one_request_per_batch_against_real_servers() {
    let root = tempfile::tempdir().unwrap();
    let serve = iobm_serve(root.path());
    let foreign_root = tempfile::tempdir().unwrap();
    let s3s_fs = s3s_fs(foreign_root.path());
    for url in [&serve.url, &s3s_fs.url] {
        let result = run(Some(url), "delete", &["--objects", "35", "--batch", "10"]);
        assert_eq!(result["config"]["s3"]["delete_batch"], 10);
        let delete = &result["phases"][0]["operations"][0];
        // Four requests (10, 10, 10 and 5 keys), every object once.
        assert_eq!((u(&delete["ops"]), u(&delete["keys"])), (4, 35), "{url}");
        assert_eq!(u(&delete["errors"]), 0);
    }
    let files: Vec<_> = walk(&root.path().join("iobm"))
        .into_iter()
        .filter(|p| p.is_file())
        .collect();
    assert!(files.is_empty(), "left behind: {files:?}");
    let out = iobm()
        .args(["s3", "get", "--batch", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--batch"));
    // Parts S3 would refuse at completion are refused before the run.
    let out = iobm()
        .args(["s3", "multipart", "--part-size", "1MiB"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--part-size 1.00 MiB"));
}

/// A phase's cache verdict.
fn verdict(result: &Value) -> &str {
    result["phases"][0]["cache"]["verdict"]["verdict"]
        .as_str()
        .unwrap()
}

#[test]
fn an_iobm_gateway_says_how_much_it_served_from_its_page_cache() {
    // The data set was just uploaded: the built-in gateway serves it from its page cache.
    // On a disk (the build directory's), not a tmpfs /tmp: its pages can be dropped.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let gateway = dir.path().to_str().unwrap();
    let gets = ["--objects", "40", "--obj-size", "256KiB", "--ops", "10"];
    let warm = run(None, "get", &[&gets[..], &["--dir", gateway]].concat());
    let phase = &warm["phases"][0];
    let server = &phase["cache"]["servers"][0];
    assert_eq!(server["endpoint"], warm["config"]["s3"]["endpoints"][0]);
    assert_eq!(server["served_bytes"], u(&phase["operations"][0]["bytes"]));
    assert_eq!(server["resident_bytes"], server["served_bytes"]);
    assert_eq!(verdict(&warm), "cached");
    assert!(
        warns(phase, "the gateway's page cache held 100%"),
        "{}",
        phase["warnings"]
    );
    // Dropped after the upload (the whole page cache as root, else the objects' pages): the
    // gateway read them from its disk.
    let cold = run(
        None,
        "get",
        &[&gets[..], &["--dir", gateway, "--drop-caches"]].concat(),
    );
    let phase = &cold["phases"][0];
    let server = &phase["cache"]["servers"][0];
    assert_ne!(phase["settings"]["cache_dropped"], "nothing");
    let served = u(&server["served_bytes"]);
    assert!(u(&server["resident_bytes"]) * 2 < served, "{server}");
    assert!(u(&server["device_read_bytes"]) * 2 >= served, "{server}");
    assert_ne!(verdict(&cold), "cached", "{}", phase["cache"]["verdict"]);

    // `iobm serve` as an endpoint: the same counters, read with signed requests.
    let root = tempfile::tempdir().unwrap();
    let serve = iobm_serve(root.path());
    let put = run(Some(&serve.url), "put", &["--ops", "12"]);
    let phase = &put["phases"][0];
    assert_eq!(phase["cache"]["servers"][0]["endpoint"], serve.url.as_str());
    assert_eq!(
        u(&phase["cache"]["servers"][0]["received_bytes"]),
        12 * 65536
    );
    let get = run(Some(&serve.url), "get", &["--ops", "12"]);
    assert_eq!(
        get["phases"][0]["cache"]["servers"][0]["endpoint"],
        serve.url.as_str()
    );
    assert_eq!(verdict(&get), "cached");
    let saved = root.path().join("get.json");
    std::fs::write(&saved, get.to_string()).unwrap();
    let text = iobm().arg("report").arg(&saved).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("  gateway {}: served", serve.url)),
        "{text}"
    );
    assert!(
        text.contains("  verdict: cached: the gateway served"),
        "{text}"
    );
}

#[test]
#[ignore = "needs root: drops the page cache (scripts/test runs it as root)"]
fn drop_caches_reaches_an_iobm_serve_on_this_host_as_root() {
    common::assert_root("this test drops the page cache and needs root");
    // On a disk (the build directory's), not a tmpfs /tmp: its pages can be dropped.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let serve = iobm_serve(root.path());
    let gets = ["--objects", "40", "--obj-size", "256KiB", "--ops", "10"];
    let cold = run(
        Some(&serve.url),
        "get",
        &[&gets[..], &["--drop-caches"]].concat(),
    );
    let phase = &cold["phases"][0];
    assert_eq!(phase["settings"]["cache_dropped"], "system");
    assert_eq!(phase["settings"]["drop_cache"], true);
    // The server on this host read the objects from its disk, not from its page cache.
    let server = &phase["cache"]["servers"][0];
    assert_eq!(server["endpoint"], serve.url.as_str());
    assert_eq!(server["same_host"], true);
    let served = u(&server["served_bytes"]);
    assert!(served > 0, "{server}");
    assert!(u(&server["resident_bytes"]) * 2 < served, "{server}");
    assert_ne!(verdict(&cold), "cached", "{}", phase["cache"]["verdict"]);
}

#[test]
fn drop_caches_is_refused_for_a_server_on_another_host() {
    // 192.0.2.1 (TEST-NET-1) is no address of this machine; refused before anything is sent.
    let out = iobm()
        .args([
            "s3",
            "get",
            "--drop-caches",
            "--endpoint",
            "http://192.0.2.1:9000",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    for said in [
        "--drop-caches",
        "http://192.0.2.1:9000",
        "--reuse PREFIX",
        "--server-drop-cmd",
    ] {
        assert!(err.contains(said), "{said}: {err}");
    }
}

#[test]
fn gets_above_the_line_rate_or_within_the_servers_memory_are_flagged() {
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let flagged = |result: &Value| warns(&result["phases"][0], "above the line rate");
    let gets = ["--objects", "40", "--ops", "40"];
    // 1 Mbit/s is 125 kB/s: 40 GETs of 64 KiB over loopback take far less than the 21 s that
    // rate would need.
    let slow_line = run(
        Some(&server.url),
        "get",
        &[&gets[..], &["--line-rate", "1Mbit"]].concat(),
    );
    assert_eq!(slow_line["config"]["line_rate_bytes_per_s"], 125_000);
    assert!(
        flagged(&slow_line),
        "{}",
        slow_line["phases"][0]["warnings"]
    );
    let fast_line = run(
        Some(&server.url),
        "get",
        &[&gets[..], &["--line-rate", "1000Tbit"]].concat(),
    );
    assert!(
        !flagged(&fast_line),
        "{}",
        fast_line["phases"][0]["warnings"]
    );
    // The built-in gateway's bytes cross no network: recorded, not checked.
    let builtin = run(
        None,
        "get",
        &[&gets[..], &["--line-rate", "1Mbit"]].concat(),
    );
    assert_eq!(builtin["config"]["line_rate_bytes_per_s"], 125_000);
    assert!(!flagged(&builtin), "{}", builtin["phases"][0]["warnings"]);
    // A server that does not count for itself: the client compares the data set with the
    // memory the user states.
    let foreign_root = tempfile::tempdir().unwrap();
    let server = s3s_fs(foreign_root.path());
    let server_cache = |result: &Value| warns(&result["phases"][0], "possible server cache");
    // 40 objects of 64 KiB fit in a server of 1 GiB, not in one of 1 MiB.
    let small = run(
        Some(&server.url),
        "get",
        &[&gets[..], &["--server-ram", "1GiB"]].concat(),
    );
    assert_eq!(small["config"]["server_ram_bytes"], 1u64 << 30);
    assert!(server_cache(&small), "{}", small["phases"][0]["warnings"]);
    let large = run(
        Some(&server.url),
        "get",
        &[&gets[..], &["--server-ram", "1MiB"]].concat(),
    );
    assert!(!server_cache(&large), "{}", large["phases"][0]["warnings"]);
    let unstated = run(Some(&server.url), "get", &gets);
    assert!(unstated["config"]["line_rate_bytes_per_s"].is_null());
    assert!(!flagged(&unstated), "{}", unstated["phases"][0]["warnings"]);

    let out = iobm()
        .args(["s3", "get", "--line-rate", "100G"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--line-rate"), "{err}");
}

#[test]
fn compare_puts_a_get_run_beside_a_put_run_of_one_store() {
    let dir = tempfile::tempdir().unwrap();
    let (put, get) = (dir.path().join("put.json"), dir.path().join("get.json"));
    for (op, json) in [("put", &put), ("get", &get)] {
        iobm()
            .args([
                "s3",
                op,
                "--duration",
                "1s",
                "--obj-size",
                "64KiB",
                "--objects",
                "20",
            ])
            .arg("--json")
            .arg(json)
            .arg("--dir")
            .arg(dir.path())
            .assert()
            .success();
    }
    let out = iobm()
        .args(["compare", "--format", "csv"])
        .arg(&put)
        .arg(&get)
        .assert()
        .success();
    let csv = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    // One rate, each run's own operation, the GET's ratio to the PUT's.
    assert_eq!(rows[0][..3], ["run", "rate MiB/s", "rate ratio"], "{csv}");
    assert_eq!((rows[1][0], rows[2][0]), ("put (s3 put)", "get (s3 get)"));
    let mib = |path: &Path| {
        let phase = &load(path)["phases"][0];
        let makespan = aggregate(phase, "makespan")["bytes_per_s"]
            .as_f64()
            .unwrap();
        makespan / 1048576.0
    };
    let (p, g) = (mib(&put), mib(&get));
    assert_eq!(rows[1][1], format!("{p:.2}"));
    assert_eq!(rows[2][1], format!("{g:.2}"));
    assert_eq!(rows[2][2], format!("{:.2}", g / p));
}

/// `iobm serve ROOT` with extra flags, on a free loopback port, listening when returned.
fn iobm_serve_args(root: &Path, extra: &[&str]) -> Server {
    let port = free_port();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("serve")
        .arg(root)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--access-key", KEY, "--secret-key", SECRET])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, &mut child);
    Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

/// What [`proxy_until_cleanup`] does when the clean-up starts.
type OnList = Box<dyn FnOnce() + Send>;

/// A loopback TCP proxy in front of `backend` for runs whose only listing is their clean-up (a
/// PUT run): the first request for one (`list-type=2`) is held, never forwarded (later ones
/// are); `on_list` is called, and with `cut` every connection is then closed and new ones
/// refused, as a server that died would. Returns the proxy's URL.
fn proxy_until_cleanup(
    backend: &str,
    cut: bool,
    on_list: impl FnOnce() + Send + 'static,
) -> String {
    use std::io::{Read, Write};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let backend: std::net::SocketAddr = backend.trim_start_matches("http://").parse().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let tripped = Arc::new(AtomicBool::new(false));
    let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    let on_list: Arc<Mutex<Option<OnList>>> = Arc::new(Mutex::new(Some(Box::new(on_list))));
    std::thread::spawn(move || loop {
        if tripped.load(Ordering::SeqCst) && cut {
            return; // the listener goes: connections are refused
        }
        let client = match listener.accept() {
            Ok((c, _)) => c,
            Err(_) => {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
        };
        client.set_nonblocking(false).unwrap();
        let Ok(server) = TcpStream::connect(backend) else {
            continue;
        };
        let mut guard = open.lock().unwrap();
        guard.push(client.try_clone().unwrap());
        guard.push(server.try_clone().unwrap());
        drop(guard);
        let (mut from_server, mut to_client) =
            (server.try_clone().unwrap(), client.try_clone().unwrap());
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            while let Ok(n @ 1..) = from_server.read(&mut buf) {
                if to_client.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
            let _ = to_client.shutdown(std::net::Shutdown::Write);
        });
        let (tripped, open, on_list) = (tripped.clone(), open.clone(), on_list.clone());
        let (mut from_client, mut to_server) = (client, server);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut tail: Vec<u8> = Vec::new();
            while let Ok(n @ 1..) = from_client.read(&mut buf) {
                tail.extend_from_slice(&buf[..n]);
                let first = !tripped.load(Ordering::SeqCst);
                if first && tail.windows(11).any(|w| w == b"list-type=2") {
                    tripped.store(true, Ordering::SeqCst);
                    if let Some(f) = on_list.lock().unwrap().take() {
                        f();
                    }
                    if cut {
                        for s in open.lock().unwrap().iter() {
                            let _ = s.shutdown(std::net::Shutdown::Both);
                        }
                        return;
                    }
                    // Held: the clean-up waits for an answer that never comes.
                    std::thread::sleep(Duration::from_secs(600));
                    return;
                }
                if to_server.write_all(&buf[..n]).is_err() {
                    break;
                }
                let keep = tail.len().saturating_sub(16);
                tail.drain(..keep);
            }
            let _ = to_server.shutdown(std::net::Shutdown::Write);
        });
    });
    url
}

/// Every file under the bucket directory `bucket`.
fn files_in(bucket: &Path) -> Vec<std::path::PathBuf> {
    walk(bucket).into_iter().filter(|p| p.is_file()).collect()
}

#[test]
fn a_put_longer_than_the_servers_header_timeout_leaves_nothing() {
    // The server closes a connection idle for 2 s; the run's own control connection sits idle
    // through the 4 s phase, and the clean-up must not rely on it.
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve_args(root.path(), &["--header-timeout", "2s"]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = iobm()
        .args(["s3", "put", "--endpoint", &server.url, "--duration", "4s"])
        .args(["--concurrent", "2", "--obj-size", "64KiB"])
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let bucket = root.path().join("iobm");
    assert!(!bucket.exists(), "left behind: {:?}", files_in(&bucket));
    let result = load(&json);
    assert_matches_schema(&result);
    assert!(u(&result["phases"][0]["operations"][0]["ops"]) > 0);
    assert_eq!(result["left_behind"], serde_json::json!([]), "{stderr}");
}

#[test]
fn two_puts_started_together_on_one_bucket_both_run_and_merge() {
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let dir = tempfile::tempdir().unwrap();
    let start = |name: &str| {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
            .env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .args(["s3", "put", "--endpoint", &server.url, "--duration", "2s"])
            .args(["--concurrent", "2", "--obj-size", "64KiB", "--json"])
            .arg(dir.path().join(name))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start("a.json"), start("b.json"));
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
    }
    let (a, b) = (
        load(&dir.path().join("a.json")),
        load(&dir.path().join("b.json")),
    );
    // Exactly one of them made the bucket: only that one may remove it.
    let created = [&a, &b]
        .iter()
        .filter(|r| r["config"]["s3"]["bucket_created"] == true)
        .count();
    assert_eq!(created, 1);
    assert!(files_in(&root.path().join("iobm")).is_empty());
    let merged = dir.path().join("m.json");
    iobm()
        .arg("merge")
        .arg(dir.path().join("a.json"))
        .arg(dir.path().join("b.json"))
        .arg("--json")
        .arg(&merged)
        .assert()
        .success();
    let merged = load(&merged);
    assert_matches_schema(&merged);
    assert_eq!(merged["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(merged["phases"][0]["workers"].as_array().unwrap().len(), 4);
}

#[test]
fn two_interrupts_together_are_one_even_while_cleaning_up() {
    // As `timeout -s INT` delivers them: one to the process, one to its group, 50 ms apart,
    // while the clean-up is still going (its first listing held until the run's --timeout).
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let (seen_tx, seen) = std::sync::mpsc::channel();
    let url = proxy_until_cleanup(&server.url, false, move || {
        let _ = seen_tx.send(());
    });
    let (child, json, _dir) = long_put(&url, &["--timeout", "3s"]);
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as i32;
    // SAFETY: kill sends a signal to the child process we spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(50));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("exiting at once"), "{stderr}");
    assert!(
        seen.try_recv().is_ok(),
        "the clean-up's listing was held: {stderr}"
    );
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "interrupted");
    assert!(u(&result["phases"][0]["operations"][0]["ops"]) > 0);
    assert_eq!(result["left_behind"], serde_json::json!([]));
    // The clean-up ran to its end on a fresh connection: nothing is left.
    assert!(
        !root.path().join("iobm").exists(),
        "{:?}",
        files_in(&root.path().join("iobm"))
    );
}

#[test]
fn a_second_interrupt_exits_at_once_and_leaves_the_result_so_far() {
    let root = tempfile::tempdir().unwrap();
    let server = iobm_serve(root.path());
    let (seen_tx, seen) = std::sync::mpsc::channel();
    // The clean-up's listing is held: the run is still cleaning up when the second Ctrl-C comes.
    let url = proxy_until_cleanup(&server.url, false, move || {
        let _ = seen_tx.send(());
    });
    let (child, json, _dir) = long_put(&url, &["--timeout", "60s"]);
    std::thread::sleep(Duration::from_millis(1500));
    let pid = child.id() as i32;
    // SAFETY: kill sends a signal to the child process we spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    seen.recv_timeout(Duration::from_secs(30)).unwrap();
    // Past the window in which signals count as one: a user's second Ctrl-C.
    std::thread::sleep(Duration::from_millis(1500));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("exiting at once"), "{stderr}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "interrupted");
    assert!(
        u(&result["phases"][0]["operations"][0]["ops"]) > 0,
        "what was measured"
    );
    let prefix = result["config"]["s3"]["prefix"].as_str().unwrap();
    assert_eq!(
        result["left_behind"][0]["location"],
        format!("s3://iobm/{prefix}"),
        "{}",
        result["left_behind"]
    );
    assert!(!files_in(&root.path().join("iobm").join(prefix)).is_empty());
}

#[test]
fn a_server_killed_before_the_clean_up_gives_exit_4_and_names_what_remains() {
    let root = tempfile::tempdir().unwrap();
    let server = std::sync::Arc::new(std::sync::Mutex::new(iobm_serve(root.path())));
    let killed = server.clone();
    let url = proxy_until_cleanup(&server.lock().unwrap().url.clone(), true, move || {
        let mut s = killed.lock().unwrap();
        let _ = s.child.kill();
        let _ = s.child.wait();
    });
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = iobm()
        .args(["s3", "put", "--endpoint", &url, "--duration", "1s"])
        .args([
            "--concurrent",
            "2",
            "--obj-size",
            "64KiB",
            "--timeout",
            "5s",
        ])
        .arg("--json")
        .arg(&json)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(
        result["status"], "complete",
        "the measurement itself was fine"
    );
    let prefix = result["config"]["s3"]["prefix"].as_str().unwrap();
    let location = format!("s3://iobm/{prefix}");
    let left = &result["left_behind"][0];
    assert_eq!(left["location"], location.as_str(), "{left}");
    assert_eq!(left["what"], "objects");
    // Nothing could be listed: the run's own books bound what remains.
    assert!(left["count"].is_null());
    let put = &result["phases"][0]["operations"][0];
    let at_most = u(&left["at_most"]);
    assert_eq!(at_most, u(&put["ops"]) + u(&put["errors"]));
    let on_disk = files_in(&root.path().join("iobm").join(prefix)).len() as u64;
    assert!(on_disk > 0 && on_disk <= at_most, "{on_disk} of {at_most}");
    // The bucket the run created stays with them.
    assert!(result["left_behind"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["what"] == "bucket" && l["location"] == "s3://iobm"));
    // Said where the user looks: the report's footer and the last lines on stderr.
    let said = format!("up to {at_most} objects left in {location}");
    assert!(stdout.contains(&said), "{stdout}");
    assert!(stderr.contains(&said), "{stderr}");
    assert!(stderr.contains("aws s3 rm --recursive") || stdout.contains("aws s3 rm --recursive"));
}
