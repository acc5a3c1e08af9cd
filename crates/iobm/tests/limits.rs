//! `iobm limits`: this machine's limits, measured and saved; `iobm report --limits` shows each
//! rate as a share of them and flags one above a limit.

mod common;

use common::{iobm, load};

#[test]
fn limits_are_plausible_and_a_rate_above_one_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // The run to be judged: two workers of 128 KiB O_DIRECT requests, 8 in flight each.
    let run = dir.path().join("run.json");
    iobm()
        .args(["stream", "--size", "8MiB", "-j", "2", "--block", "128KiB"])
        .args(["--direct", "--iodepth", "8", "--json"])
        .arg(&run)
        .arg(&data)
        .assert()
        .success();
    let json = dir.path().join("limits.json");
    let out = iobm()
        .args(["limits", "--size", "16MiB", "--time", "100ms", "--json"])
        .arg(&json)
        .arg("--like")
        .arg(&run)
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("memory copy"), "{stdout}");
    let limits = load(&json);
    let rate = |name: &str| limits[name].as_f64().unwrap();
    assert_eq!(limits["format"], "iobm-limits");
    for name in [
        "memcpy_one_thread_bytes_per_s",
        "loopback_tcp_bytes_per_s",
        "md5_bytes_per_s_per_core",
        "sha256_bytes_per_s_per_core",
        "crc32c_bytes_per_s_per_core",
    ] {
        // Bytes per second, not per ns or per ms: between 1 MB/s (a checksum in a debug build
        // on a loaded machine) and 1 TB/s (no memory bus of today).
        assert!((1e6..1e12).contains(&rate(name)), "{name}: {limits}");
    }
    // A checksum reads every byte and computes over it: slower than copying them.
    for name in ["md5_bytes_per_s_per_core", "sha256_bytes_per_s_per_core"] {
        assert!(
            rate(name) < rate("memcpy_one_thread_bytes_per_s"),
            "{name}: {limits}"
        );
    }
    // A memory copy moves more than a TCP connection, which copies twice and runs a stack.
    assert!(
        rate("memcpy_all_threads_bytes_per_s") > rate("loopback_tcp_bytes_per_s"),
        "{limits}"
    );
    // The fastest ways this machine has, named: several connections, multi-buffer MD5 (its
    // lanes each hash a message; on one core together at least a plain MD5's fraction).
    for name in [
        "loopback_tcp_many_bytes_per_s",
        "md5_many_bytes_per_s_per_core",
    ] {
        assert!((1e6..1e12).contains(&rate(name)), "{name}: {limits}");
    }
    assert!(
        limits["loopback_tcp_connections"].as_u64().unwrap() >= 2,
        "{limits}"
    );
    assert!(limits["md5_many_lanes"].as_u64().unwrap() >= 4, "{limits}");
    assert!(
        !limits["memcpy_method"].as_str().unwrap().is_empty(),
        "{limits}"
    );
    assert!(
        !limits["md5_implementation"].as_str().unwrap().is_empty(),
        "{limits}"
    );
    let device = &limits["device"];
    assert_eq!(device["bytes"], 16 << 20);
    // The device at every block size that fits, through io_uring, at depths 1, 4, 16, ... until
    // two depths in a row did not help (5% more read or write than any shallower), within 256
    // and 64 MiB (here the 16 MiB file) in flight.
    let points = device["points"].as_array().unwrap();
    let shape = |p: &serde_json::Value| {
        (
            p["block_bytes"].as_u64().unwrap(),
            p["iodepth"].as_u64().unwrap(),
        )
    };
    let rates = |p: &serde_json::Value| {
        (
            p["read_bytes_per_s"].as_f64().unwrap(),
            p["write_bytes_per_s"].as_f64().unwrap(),
        )
    };
    for block in [4u64 << 10, 64 << 10, 1 << 20, 4 << 20] {
        let sweep: Vec<&serde_json::Value> =
            points.iter().filter(|p| shape(p).0 == block).collect();
        let depths: Vec<u64> = sweep.iter().map(|p| shape(p).1).collect();
        assert_eq!(depths[0], 1, "{block}: {depths:?}");
        let helped = |i: usize| {
            let best = sweep[..i]
                .iter()
                .map(|p| rates(p))
                .fold((0.0f64, 0.0f64), |a, b| (a.0.max(b.0), a.1.max(b.1)));
            let (r, w) = rates(sweep[i]);
            r >= 1.05 * best.0 || w >= 1.05 * best.1
        };
        for (i, pair) in depths.windows(2).enumerate() {
            assert_eq!(pair[1], pair[0] * 4, "{block}: {depths:?}");
            assert!(pair[1] <= 256 && pair[1] * block <= 16 << 20, "{depths:?}");
            assert!(
                i == 0 || helped(i) || helped(i - 1),
                "depths {} and {} did not help, yet {} was tried: {sweep:?}",
                depths[i - 1],
                pair[0],
                pair[1]
            );
        }
    }
    // And at the judged run's block size, every depth up to its 2 x 8 in flight.
    for depth in [1, 4, 16] {
        assert!(
            points.iter().any(|p| shape(p) == (128 << 10, depth)),
            "{depth}: {points:?}"
        );
    }
    let run_doc = load(&run);
    assert_eq!(device["judged_run"], run_doc["run_id"]);
    assert!(
        stdout.contains(&format!(
            "(with the block sizes and requests in flight of run {})",
            run_doc["run_id"].as_str().unwrap()
        )),
        "{stdout}"
    );
    for p in points {
        for key in ["read_bytes_per_s", "write_bytes_per_s"] {
            let rate = p[key].as_f64().unwrap();
            assert!((1e5..1e12).contains(&rate), "{key}: {p}");
        }
    }
    for key in ["read_bytes_per_s", "write_bytes_per_s"] {
        let rate = device[key].as_f64().unwrap();
        assert!((1e5..1e12).contains(&rate), "{key}: {device}");
    }
    // Its file is gone.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);

    // The run judged like with like, and limits that it exceeds: flagged as impossible
    // without a cache.
    let report = |limits: &std::path::Path| {
        let out = iobm()
            .arg("report")
            .arg(&run)
            .arg("--limits")
            .arg(limits)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = report(&json);
    assert!(text.contains("of memory copy with "), "{text}");
    assert!(
        text.contains("of the device's O_DIRECT read (128.00 KiB blocks, "),
        "{text}"
    );
    assert!(!text.contains("not judged"), "{text}");
    // Limits measured short of the run's shape (its 16 in flight): said, not judged.
    let mut shallow = limits.clone();
    shallow["device"]["points"] = points
        .iter()
        .filter(|p| shape(p).0 != 128 << 10 || shape(p).1 < 16)
        .cloned()
        .collect();
    let shallow_json = dir.path().join("shallow.json");
    std::fs::write(&shallow_json, shallow.to_string()).unwrap();
    let text = report(&shallow_json);
    assert!(
        text.contains("read: not judged against the device's O_DIRECT read: not measured at 128.00 KiB blocks, 16 in flight (measured up to 128.00 KiB blocks, 4 in flight)"),
        "{text}"
    );
    // --like names a run to measure a device for: without DIR, or not a run, exit 2.
    for (args, says) in [
        (vec!["--like", run.to_str().unwrap()], "--like: "),
        (
            vec!["--like", json.to_str().unwrap(), data.to_str().unwrap()],
            "--like ",
        ),
    ] {
        let out = iobm().arg("limits").args(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("iobm: error: {says}")),
            "{stderr}"
        );
    }
    let mut tiny = limits.clone();
    tiny["memcpy_all_threads_bytes_per_s"] = 1000.0.into();
    tiny["memcpy_one_thread_bytes_per_s"] = 1000.0.into();
    let tiny_json = dir.path().join("tiny.json");
    std::fs::write(&tiny_json, tiny.to_string()).unwrap();
    let text = report(&tiny_json);
    // Every byte crosses memory whatever was cached: a rate above it is a limit measured low.
    assert!(
        text.contains("read: warning: above memory copy with all ")
            && text.contains("every byte crossed that path whatever was cached"),
        "{text}"
    );
    // Not a limits document: a clear error naming the flag.
    let out = iobm()
        .arg("report")
        .arg(&run)
        .arg("--limits")
        .arg(&run)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--limits"));
}
