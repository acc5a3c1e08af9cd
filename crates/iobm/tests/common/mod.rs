//! Helpers shared by the end-to-end tests.
#![allow(dead_code)] // each test crate uses its own share of them

pub mod browser;
pub mod io500;
pub mod loopdev;
pub mod mount;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The names in a directory, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A JSON file.
pub fn load(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A JSON number that must be an unsigned integer.
pub fn u(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// A JSON array of numbers.
pub fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Whether one of a phase's warnings says `text`.
pub fn warns(phase: &Value, text: &str) -> bool {
    phase["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains(text))
}

/// Bytes moved by all workers of a phase.
pub fn phase_bytes(phase: &Value) -> u64 {
    phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["span"]["bytes"]))
        .sum()
}

/// Operations done by all workers of a phase.
pub fn phase_ops(phase: &Value) -> u64 {
    phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["span"]["ops"]))
        .sum()
}

/// Fails unless `result` matches the checked-in JSON Schema of the result contract.
pub fn assert_matches_schema(result: &Value) {
    let schema_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../schema/iobm-result-v2.schema.json");
    let schema = load(&schema_path);
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(result)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "result does not match schema: {errors:#?}"
    );
}

/// Lets `child` run for 1.5 s, sends it SIGINT (Ctrl-C) and waits: it must exit with 130.
pub fn interrupt(child: std::process::Child) -> std::process::Output {
    std::thread::sleep(std::time::Duration::from_millis(1500));
    // SAFETY: kill sends a signal to the child process we spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn iobm() -> Command {
    Command::cargo_bin("iobm").unwrap()
}

/// The standard output of a command that must succeed.
/// The aggregate `kind` ("makespan", "sum_of_rates", ...) of a phase, or of a phase's spread
/// over repetitions.
pub fn aggregate<'a>(phase: &'a Value, kind: &str) -> &'a Value {
    phase["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} aggregate"))
}

pub fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

/// Recomputes every aggregate of a phase from its worker records alone and compares.
pub fn assert_aggregates_recomputable(phase: &Value) {
    let workers = phase["workers"].as_array().unwrap();
    let spans: Vec<(f64, f64, f64, f64, f64)> = workers
        .iter()
        .map(|w| {
            let s = &w["span"];
            (
                u(&s["start_ns"]) as f64,
                u(&s["end_ns"]) as f64,
                u(&s["bytes"]) as f64,
                u(&s["at_all_started"]["bytes"]) as f64,
                u(&s["at_first_done"]["bytes"]) as f64,
            )
        })
        .collect();
    let total: f64 = spans.iter().map(|s| s.2).sum();
    let min_start = spans.iter().map(|s| s.0).fold(f64::MAX, f64::min);
    let max_start = spans.iter().map(|s| s.0).fold(0.0, f64::max);
    let min_end = spans.iter().map(|s| s.1).fold(f64::MAX, f64::min);
    let max_end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
    let expected = |kind: &str| -> f64 {
        match kind {
            "sum_of_rates" => spans.iter().map(|s| s.2 / ((s.1 - s.0) / 1e9)).sum(),
            "makespan" => total / ((max_end - min_start) / 1e9),
            "first_done" => spans.iter().map(|s| s.4).sum::<f64>() / ((min_end - min_start) / 1e9),
            "steady_state" => {
                spans.iter().map(|s| s.4 - s.3).sum::<f64>() / ((min_end - max_start) / 1e9)
            }
            "warp_window" => {
                let stamp = |w: &Value, name: &str| u(&w["span"][name]) as f64;
                let from = workers
                    .iter()
                    .map(|w| stamp(w, "first_op_end_ns"))
                    .fold(0.0, f64::max);
                let to = workers
                    .iter()
                    .map(|w| stamp(w, "last_op_start_ns"))
                    .fold(f64::MAX, f64::min);
                let bytes: f64 = workers
                    .iter()
                    .map(|w| {
                        u(&w["span"]["at_window_end"]["bytes"]) as f64
                            - u(&w["span"]["at_window_start"]["bytes"]) as f64
                    })
                    .sum();
                bytes / ((to - from) / 1e9)
            }
            other => panic!("unknown aggregate {other}"),
        }
    };
    let aggs = phase["aggregates"].as_array().unwrap();
    let has = |kind: &str| aggs.iter().any(|a| a["kind"] == kind);
    assert!(has("sum_of_rates") && has("makespan"), "{aggs:?}");
    // First done and steady state only from windows of ten trace intervals or more.
    let long = |from: f64, to: f64| to >= from + 10.0 * 1e6;
    assert_eq!(has("first_done"), long(min_start, min_end), "{aggs:?}");
    assert_eq!(has("steady_state"), long(max_start, min_end), "{aggs:?}");
    for a in aggs {
        let kind = a["kind"].as_str().unwrap();
        let got = a["bytes_per_s"].as_f64().unwrap();
        let want = expected(kind);
        assert!(
            (got - want).abs() <= 1e-6 * want.max(1.0),
            "{kind}: saved {got}, recomputed {want}"
        );
        assert!(!a["formula"].as_str().unwrap().is_empty());
    }
}

/// A free TCP port on 127.0.0.1 (free when asked).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process (`iobm serve`, s3s-fs, moto), killed when dropped.
pub struct Server {
    pub child: std::process::Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits until something listens on 127.0.0.1:`port`; fails if `child` exits first.
pub fn wait_for(port: u16, child: &mut std::process::Child) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("server exited before listening: {status}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "server did not listen on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `iobm serve ROOT` on a free loopback port with this key pair, listening when returned.
pub fn iobm_serve_with(root: &Path, key: &str, secret: &str) -> Server {
    let port = free_port();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("serve")
        .arg(root)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .args(["--access-key", key, "--secret-key", secret])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, &mut child);
    Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

/// Starts `program args` listening on a free port. A missing program fails the test that
/// needs it (`scripts/test` installs every one): a test that cannot run never counts as passed.
pub fn start(program: &str, args: &[String], port: u16) -> Server {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .unwrap()
        .status
        .success();
    assert!(
        found,
        "{program} is not installed (scripts/test installs it)"
    );
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_for(port, &mut child);
    Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    }
}

/// s3s-fs over `root` with this key pair, on a free loopback port.
pub fn s3s_fs(root: &Path, key: &str, secret: &str) -> Server {
    let port = free_port();
    let args = [
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--access-key",
        key,
        "--secret-key",
        secret,
        root.to_str().unwrap(),
    ];
    start("s3s-fs", &args.map(String::from), port)
}

/// Prometheus' node_exporter on a free loopback port, its URL the metrics page; a missing one
/// fails the test (scripts/test installs it).
pub fn node_exporter() -> Server {
    let port = free_port();
    let listen = format!("--web.listen-address=127.0.0.1:{port}");
    let mut server = start("prometheus-node-exporter", &[listen], port);
    server.url = format!("http://127.0.0.1:{port}/metrics");
    server
}

/// The entry of a phase's `cache.servers` that node_exporter at `url` made.
pub fn node_evidence<'a>(phase: &'a Value, url: &str) -> &'a Value {
    phase["cache"]["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["endpoint"] == url && e["source"] == "node_exporter")
        .unwrap_or_else(|| panic!("no node_exporter evidence: {}", phase["cache"]))
}

/// Asserts that the phase was served by the servers' caches, told by node_exporter: the
/// verdict `cached`, with the servers' device `disk` reading little of the `served` bytes.
pub fn assert_served_by_server_caches(phase: &Value, disk: &str, served: &str) {
    assert_eq!(
        phase["cache"]["verdict"]["verdict"], "cached",
        "{}",
        phase["cache"]
    );
    let evidence = phase["cache"]["verdict"]["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with(&format!("the servers' devices (127.0.0.1: {disk}) read "))
            && evidence.contains(&format!("of the {served} served"))
            && evidence.contains("served by their caches"),
        "{evidence}"
    );
}

/// The client's loopback interface counters over a phase (its `cache.wire` entry `lo`).
pub fn loopback(phase: &Value) -> &Value {
    phase["cache"]["wire"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["nic"] == "lo")
        .unwrap_or_else(|| panic!("no loopback counters: {}", phase["cache"]["wire"]))
}

/// Whether the tests run as root.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Fails a test that needs root when not run as root, saying why it does (such tests are
/// marked ignored; scripts/test runs them as root and counts them skipped otherwise).
pub fn assert_root(why: &str) {
    assert!(is_root(), "{why}");
}
