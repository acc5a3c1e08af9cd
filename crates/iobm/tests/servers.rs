//! Evidence from beyond the client, end to end: Prometheus' node_exporter on loopback
//! (Debian's prometheus-node-exporter, started here on a free port) read around every phase
//! with --server-metrics, --server-drop-cmd before reads, the client's interfaces, and the
//! flags refused before anything is written.

mod common;

use common::{entries, free_port, iobm, load, node_evidence, node_exporter, s3s_fs, u};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Runs iobm with `args`, and its result document.
fn run_json(args: &[&str], dir: &Path) -> (std::process::Output, Value) {
    let json = dir.join("r.json");
    let out = iobm()
        .args(args)
        .args(["--json", json.to_str().unwrap()])
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    let doc = load(&json);
    (out, doc)
}

const KEY: &str = "AKNODEEXPORTER";
const SECRET: &str = "secret-of-the-node-exporter-test";

/// A GET just after the upload is served by the server's page cache, which its device counters
/// show; after --server-drop-cmd dropped that cache, the same data set (kept, read with
/// --reuse) is read from its device. s3s-fs keeps the objects as files on this machine's disk,
/// which node_exporter counts. The drop command drops only the data set's own pages (GNU dd's
/// nocache), so other processes' pages are not read back meanwhile.
#[test]
fn a_get_from_the_servers_cache_and_one_from_its_devices_are_told_apart() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let s3 = s3s_fs(root.path(), KEY, SECRET);
    let node = node_exporter();
    let out = tempfile::tempdir().unwrap();
    let common = [
        "--endpoint",
        &s3.url,
        "--access-key",
        KEY,
        "--secret-key",
        SECRET,
        "--concurrent",
        "8",
        "--ops",
        "128",
        "--server-metrics",
        &node.url,
    ];
    // 2048 objects of 512 KiB, 128 GETs at random: few read twice (each second read is the
    // cache's), so the uncached case reads nearly all of what it served from the device.
    let (run, warm) = run_json(
        &[
            &[
                "s3",
                "get",
                "--objects",
                "2048",
                "--obj-size",
                "512KiB",
                "--keep",
            ][..],
            &common[..],
        ]
        .concat(),
        out.path(),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    common::assert_matches_schema(&warm);
    let phase = &warm["phases"][0];
    let served = u(&phase["operations"][0]["bytes"]);
    assert_eq!(served, 128 * 512 * 1024);
    let e = node_evidence(phase, &node.url);
    // The disk under the objects, as node_exporter names it (vda, sda, nvme0n1, ...).
    let disk = e["device"].as_str().unwrap();
    assert!(!disk.is_empty() && !disk.contains("dm-"), "{e}");
    assert!(u(&e["device_read_bytes"]) < served / 10, "{e}");
    assert!(u(&e["memory_bytes"]) > 0, "{e}");
    common::assert_served_by_server_caches(phase, disk, "64.00 MiB");
    // The GETs crossed loopback, the interface towards the endpoint.
    let lo = common::loopback(phase);
    assert_eq!(lo["towards_storage"], true);
    assert!(u(&lo["received_bytes"]) >= served, "{lo}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains(&format!(
            "  server {} (node_exporter): devices {disk} read ",
            node.url
        )),
        "{stdout}"
    );

    let kept = format!(
        "s3://iobm/{}",
        warm["config"]["s3"]["prefix"].as_str().unwrap()
    );
    let drop = format!(
        "sync; find {} -type f -exec dd if={{}} iflag=nocache count=0 status=none ';'",
        root.path().display()
    );
    let (run, cold) = run_json(
        &[
            &["s3", "get", "--reuse", &kept, "--server-drop-cmd", &drop][..],
            &common[..],
        ]
        .concat(),
        out.path(),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let phase = &cold["phases"][0];
    assert_eq!(phase["settings"]["cache_dropped"], "servers");
    assert_eq!(cold["config"]["server_drop_cmd"], drop.as_str());
    let e = node_evidence(phase, &node.url);
    assert!(u(&e["device_read_bytes"]) >= served * 9 / 10, "{e}");
    assert_eq!(
        phase["cache"]["verdict"]["verdict"], "uncached",
        "{}",
        phase["cache"]
    );
    assert!(
        phase["cache"]["verdict"]["evidence"]
            .as_str()
            .unwrap()
            .ends_with("their caches were dropped before the phase (--server-drop-cmd)"),
        "{}",
        phase["cache"]["verdict"]
    );
}

/// Every percentage figure in `text` (the number before each '%').
fn percentages(text: &str) -> Vec<f64> {
    (text.split('%'))
        .filter_map(|s| s.rsplit(['(', ' ']).next()?.parse().ok())
        .collect()
}

/// Another process reads the server's disk while a GET runs, more than the GET served: the
/// phase is `unknown: other I/O` with the figures, never `uncached`, and no share above 100%
/// is printed. The reader is planted so that the test does not depend on the machine's speed:
/// node_exporter is read through `tests/exporter/planted_reader.py`, which first has dd read
/// a 32 MiB file on the same disk with O_DIRECT, so every reading after the one before the
/// phase (the last being the one after it) counts 32 MiB that 8 MiB of GETs cannot explain.
#[test]
fn another_process_reading_the_servers_disk_is_other_io_never_uncached() {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let beside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let planted = beside.path().join("planted");
    let dd = std::process::Command::new("dd")
        .args([
            "if=/dev/zero",
            "bs=1M",
            "count=32",
            "conv=fsync",
            "status=none",
        ])
        .arg(format!("of={}", planted.display()))
        .status()
        .unwrap();
    assert!(dd.success());
    let s3 = s3s_fs(root.path(), KEY, SECRET);
    let node = node_exporter();
    let port = free_port();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/exporter/planted_reader.py"
    );
    let args = [
        script,
        &port.to_string(),
        &node.url,
        planted.to_str().unwrap(),
    ];
    let reader = common::start("python3", &args.map(String::from), port);
    let metrics = format!("http://127.0.0.1:{port}/metrics");
    let (run, doc) = run_json(
        &[
            "s3",
            "get",
            "--endpoint",
            &s3.url,
            "--access-key",
            KEY,
            "--secret-key",
            SECRET,
            "--objects",
            "16",
            "--obj-size",
            "512KiB",
            "--ops",
            "16",
            "--concurrent",
            "2",
            "--server-metrics",
            &metrics,
        ],
        beside.path(),
    );
    drop(reader);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let phase = &doc["phases"][0];
    assert_eq!(u(&phase["operations"][0]["bytes"]), 8 << 20);
    let e = node_evidence(phase, &metrics);
    assert!(u(&e["device_read_bytes"]) >= 32 << 20, "{e}");
    let disk = e["device"].as_str().unwrap();
    let verdict = &phase["cache"]["verdict"];
    assert_eq!(verdict["verdict"], "unknown", "{}", phase["cache"]);
    let evidence = verdict["evidence"].as_str().unwrap();
    assert!(
        evidence.starts_with(&format!(
            "other I/O ran on the servers' devices (127.0.0.1: {disk}): they read "
        )) && evidence.contains("more than the 8.00 MiB served"),
        "{evidence}"
    );
    assert!(
        common::warns(phase, "other I/O ran on the servers' devices: they read "),
        "{}",
        phase["warnings"]
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("verdict: unknown: other I/O ran on"),
        "{stdout}"
    );
    // Shares, not differences: on a loaded machine the workers may run unevenly, and the
    // warning that says how far the aggregates differ is no share of anything.
    let warnings = phase["warnings"].as_array().unwrap().iter();
    let shares = warnings
        .map(|w| w.as_str().unwrap())
        .filter(|w| !w.starts_with("aggregates differ by"));
    for text in shares.chain([evidence]) {
        assert!(percentages(text).iter().all(|&p| p <= 100.0), "{text}");
    }
}

/// The servers are read through every phase too, once per interval, beside the client's
/// series: readings across the phase, each what the data devices moved since the one before, the
/// last one the reading after the phase, so that they add up to the phase's evidence.
#[test]
fn the_servers_are_read_once_per_interval_through_each_phase() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let node = node_exporter();
    let (run, doc) = run_json(
        &[
            "write",
            dir.path().to_str().unwrap(),
            "--size",
            "16MiB",
            "--duration",
            "2s",
            "--direct",
            "--interval",
            "200ms",
            "--server-metrics",
            &node.url,
        ],
        dir.path(),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    common::assert_matches_schema(&doc);
    let phase = &doc["phases"][0];
    let e = node_evidence(phase, &node.url);
    let s = &e["series"];
    assert_eq!(u(&s["interval_ns"]), 200_000_000, "{s}");
    let at: Vec<u64> = s["at_ns"].as_array().unwrap().iter().map(u).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}");
    let (start, end) = (u(&phase["start_ns"]), u(&phase["end_ns"]));
    assert!(
        at.iter().filter(|&&t| t > start && t < end).count() >= 2,
        "{start}..{end}: {at:?}"
    );
    assert!(*at.last().unwrap() >= end, "{end}: {at:?}");
    for key in [
        "device_read_bytes",
        "device_written_bytes",
        "cpu_busy",
        "page_cache_bytes",
    ] {
        let column = s[key].as_array().unwrap();
        assert_eq!(column.len(), at.len(), "{key}: {s}");
        // Every reading answered: no gaps.
        assert!(column.iter().all(|v| !v.is_null()), "{key}: {s}");
    }
    for key in ["device_read_bytes", "device_written_bytes"] {
        let sum: u64 = s[key].as_array().unwrap().iter().map(u).sum();
        assert_eq!(sum, u(&e[key]), "{key}: {e}");
    }
    // The O_DIRECT writes reached the disk, during the phase.
    let written: Vec<u64> = s["device_written_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .collect();
    assert!(u(&e["device_written_bytes"]) >= 16 << 20, "{e}");
    assert!(written[..written.len() - 1].iter().any(|&b| b > 0), "{s}");
    assert!(
        s["cpu_busy"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| (0.0..=1.0).contains(&b.as_f64().unwrap())),
        "{s}"
    );
}

/// A server that stops answering mid-run: that phase's server evidence is "unavailable" and
/// the run goes on. The drop command before the read stops node_exporter itself.
#[test]
fn a_server_that_stops_answering_mid_run_leaves_that_phase_without_evidence() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut node = node_exporter();
    let pid = node.child.id();
    let (run, doc) = run_json(
        &[
            "stream",
            "--size",
            "8MiB",
            dir.path().to_str().unwrap(),
            "--server-metrics",
            &node.url,
            "--server-drop-cmd",
            // Until it has exited (a zombie: this test reaps it), its socket closed.
            &format!(
                "kill {pid}; while ! grep -q '^State:.*Z' /proc/{pid}/status; do sleep 0.05; done"
            ),
        ],
        dir.path(),
    );
    let _ = node.child.wait();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(doc["status"], "complete");
    let (write, read) = (&doc["phases"][0], &doc["phases"][1]);
    let answered = node_evidence(write, &node.url);
    assert!(answered["unavailable"].is_null(), "{answered}");
    assert!(answered["device_written_bytes"].is_u64(), "{answered}");
    let lost = &read["cache"]["servers"][0];
    assert_eq!(lost["endpoint"], node.url.as_str());
    let why = lost["unavailable"].as_str().unwrap();
    assert!(
        why.starts_with("before the phase: ")
            && (why.contains("refused") || why.contains("reset by peer")),
        "{why}"
    );
    assert!(
        common::warns(read, "server evidence unavailable: http://127.0.0.1:"),
        "{}",
        read["warnings"]
    );
    assert_eq!(read["settings"]["cache_dropped"], "files+servers");
    // Its readings through the phase are gaps, none a number.
    let series = &lost["series"];
    assert!(!series["at_ns"].as_array().unwrap().is_empty(), "{lost}");
    for key in [
        "device_read_bytes",
        "device_written_bytes",
        "page_cache_bytes",
    ] {
        assert!(
            series[key].as_array().unwrap().iter().all(Value::is_null),
            "{key}: {series}"
        );
    }
}

/// A --server-drop-cmd that fails ends the run cleanly at that phase, naming the flag: the
/// write before it is kept, the read never ran.
#[test]
fn a_failing_drop_command_ends_the_run_with_what_it_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (run, doc) = run_json(
        &[
            "stream",
            "--size",
            "4MiB",
            dir.path().to_str().unwrap(),
            "--server-drop-cmd",
            "echo 'ssh: nfs1: no route' >&2; exit 255",
        ],
        dir.path(),
    );
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    let said = "--server-drop-cmd 'echo 'ssh: nfs1: no route' >&2; exit 255' before phase 'read': exit status 255 (ssh: nfs1: no route); the run ends here";
    assert!(stderr.contains(said), "{stderr}");
    assert_eq!(doc["status"], "failed");
    assert_eq!(doc["phases"].as_array().unwrap().len(), 1);
    assert_eq!(doc["phases"][0]["op"], "write");
    assert!(
        doc["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == said),
        "{}",
        doc["warnings"]
    );
    // The run's own directory is gone: only the result is left.
    assert_eq!(entries(dir.path()), vec!["r.json"]);
}

/// Bad server flags: one line naming the flag, exit 2, nothing written.
#[test]
fn server_flags_that_cannot_work_are_refused_before_anything_is_written() {
    let node = node_exporter();
    let closed = format!("http://127.0.0.1:{}/metrics", free_port());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let not_metrics = s3s_fs(elsewhere.path(), KEY, SECRET);
    for (args, expected) in [
        (
            vec!["write", d, "--server-metrics", &closed],
            format!("--server-metrics {closed}: Connection refused"),
        ),
        (
            vec!["stream", d, "--server-metrics", &format!("{},{closed}", node.url)],
            format!("--server-metrics {closed}: Connection refused"),
        ),
        (
            vec!["bonnie", d, "--size", "8MiB", "--server-metrics", &closed],
            "--server-metrics".into(),
        ),
        (
            vec!["quick", d, "--server-metrics", &closed],
            "--server-metrics".into(),
        ),
        (
            vec!["s3", "get", "--server-metrics", &closed],
            "--server-metrics".into(),
        ),
        (
            vec!["write", d, "--server-metrics", &not_metrics.url],
            format!("--server-metrics {}: answered", not_metrics.url),
        ),
        (
            vec!["write", d, "--server-metrics", &node.url, "--server-devices", "sdz9"],
            "--server-devices sdz9: no --server-metrics endpoint reports such a device (they report: ".into(),
        ),
        (
            vec!["write", d, "--server-metrics", &node.url, "--server-metrics", &node.url],
            "given twice".into(),
        ),
        (
            vec!["write", d, "--server-drop-cmd", "true"],
            "--server-drop-cmd applies to reading".into(),
        ),
        (
            vec!["s3", "put", "--server-drop-cmd", "true"],
            "--server-drop-cmd runs before GETs".into(),
        ),
        (vec!["write", d, "--line-rate", "10Gbit"], "--line-rate: ".into()),
        (vec!["s3", "get", "--line-rate", "auto"], "--line-rate auto: ".into()),
        (
            vec!["s3", "get", "--endpoint", "http://127.0.0.1:1", "--line-rate", "auto"],
            "--line-rate auto: the storage is reached over loopback (lo)".into(),
        ),
    ] {
        let out = iobm().args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&expected), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            entries(dir.path()).is_empty(),
            "{args:?} wrote {:?}",
            entries(dir.path())
        );
    }
}
