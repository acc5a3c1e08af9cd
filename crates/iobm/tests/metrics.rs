//! `--metrics-listen`: a real Prometheus server (Debian's `prometheus`, on a free loopback
//! port) scrapes a running iobm, and its query of the bytes counter equals the result's bytes;
//! promtool checks the text the endpoint serves. A missing tool fails the test. A port in use
//! is refused before anything is made.

mod common;

use common::{free_port, load, start, u};
use serde_json::Value;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The body of `GET http://127.0.0.1:port{path}`.
fn get(port: u16, path: &str) -> String {
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    conn.write_all(request.as_bytes()).unwrap();
    let mut reply = String::new();
    conn.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").expect("an HTTP answer");
    assert!(
        head.starts_with("HTTP/1.") && head.contains(" 200 "),
        "{head}"
    );
    body.to_string()
}

/// `query`'s one value from Prometheus' HTTP API, None while it has no sample.
fn query(port: u16, query: &str) -> Option<f64> {
    let encoded: String = query
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    let body = get(port, &format!("/api/v1/query?query={encoded}"));
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["status"], "success", "{answer}");
    let result = answer["data"]["result"].as_array().unwrap();
    let value = result.first()?["value"][1].as_str().unwrap();
    Some(value.parse().unwrap())
}

/// Prometheus on a free loopback port, scraping `target` every 200 ms.
fn prometheus(dir: &Path, target: u16) -> (common::Server, u16) {
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 200ms\n  scrape_timeout: 150ms\nscrape_configs:\n  - job_name: iobm\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let args = [
        format!("--config.file={}", config.display()),
        format!("--storage.tsdb.path={}", dir.join("data").display()),
        format!("--web.listen-address=127.0.0.1:{port}"),
    ];
    let server = start("prometheus", &args, port);
    // Its targets are given to the scrapers some seconds after it starts.
    let began = Instant::now();
    loop {
        let targets: Value = serde_json::from_str(&get(port, "/api/v1/targets")).unwrap();
        if targets["data"]["activeTargets"]
            .as_array()
            .is_some_and(|t| !t.is_empty())
        {
            break;
        }
        assert!(began.elapsed() < Duration::from_secs(60), "{targets}");
        std::thread::sleep(Duration::from_millis(200));
    }
    (server, port)
}

/// Has promtool check the exposition `text`: no error and no lint finding.
fn promtool_check(text: &str) {
    let mut check = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is not installed (scripts/test installs it)");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = check.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "{said}\n{text}"
    );
}

#[test]
fn prometheus_scrapes_a_running_write_and_counts_the_results_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let listen = free_port();
    let (_prometheus, api) = prometheus(out.path(), listen);
    let json = out.path().join("r.json");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "write",
            "-j",
            "2",
            "--size-per-job",
            "64MiB",
            "--block",
            "64KiB",
        ])
        .args([
            "--duration",
            "4s",
            "--metrics-linger",
            "20s",
            "--metrics-listen",
        ])
        .arg(format!("127.0.0.1:{listen}"))
        .arg("--json")
        .arg(&json)
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Scraped during the run: bytes counted while the phase goes.
    let bytes = "iobm_bytes_total{job=\"iobm\",phase=\"write\",op=\"write\"}";
    let began = Instant::now();
    let mut during = None;
    while during.is_none() && began.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(200));
        during = query(api, bytes).filter(|&b| b > 0.0);
    }
    let text = get(listen, "/metrics");
    assert!(child.try_wait().unwrap().is_none(), "the run ended");
    let during = during.expect("Prometheus scraped bytes during the run");
    promtool_check(&text);
    assert!(text.contains("iobm_latency_seconds_bucket{phase=\"write\",op=\"write\",le=\"+Inf\"}"));
    assert!(child.wait().unwrap().success());

    let result = load(&json);
    let workers = result["phases"][0]["workers"].as_array().unwrap();
    let span = |key: &str| workers.iter().map(|w| u(&w["span"][key])).sum::<u64>();
    assert!(during < span("bytes") as f64, "{during}");
    // The last scrape (the endpoint lingered for it), before the target went away.
    let last = |metric: &str| query(api, &format!("max_over_time({metric}[5m])")).unwrap();
    assert_eq!(last(bytes), span("bytes") as f64);
    let ops = "iobm_operations_total{job=\"iobm\",phase=\"write\",op=\"write\"}";
    assert_eq!(last(ops), span("ops") as f64);
    let count = "iobm_latency_seconds_count{job=\"iobm\",phase=\"write\",op=\"write\"}";
    assert_eq!(last(count), span("ops") as f64);
}

#[test]
fn a_port_in_use_is_refused_in_one_line_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = taken.local_addr().unwrap().to_string();
    let assert = common::iobm()
        .args(["write", "--size", "1MiB", "--metrics-listen", &at])
        .arg(dir.path())
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains(&format!("--metrics-listen {at}: cannot listen")),
        "{stderr}"
    );
    assert!(common::entries(dir.path()).is_empty());
}
