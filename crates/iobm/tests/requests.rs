//! `--requests FILE`: every operation kept, its counts and bytes equal to the result's and its
//! percentiles within the result's histogram's bucket, a run killed mid-phase whose file reads
//! up to its last whole frame, and a bad path refused before anything is made.

mod common;

use common::{entries, iobm, load, phase_bytes, phase_ops, stdout_of, u};
use iobm_run::requests::{read, Chunk};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The phase's successful requests' latencies, sorted, and their bytes.
fn of_phase(chunks: &[Chunk], phase: &str) -> (Vec<u64>, u64) {
    let records = (chunks.iter().filter(|c| c.phase == phase)).flat_map(|c| c.records.iter());
    let ok: Vec<_> = records.filter(|r| r.error == 0).collect();
    let mut lat: Vec<u64> = ok.iter().map(|r| r.duration_ns).collect();
    lat.sort_unstable();
    (lat, ok.iter().map(|r| r.bytes).sum())
}

/// Nearest-rank quantile, as the histogram ranks.
fn quantile(v: &[u64], pct: f64) -> u64 {
    v[(((pct / 100.0) * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

#[test]
fn requests_recompute_the_results_counts_bytes_and_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (file, json) = (out.path().join("r.zst"), out.path().join("r.json"));
    iobm()
        .args([
            "stream",
            "-j",
            "3",
            "--size-per-job",
            "6MiB",
            "--block",
            "16KiB",
        ])
        .arg("--requests")
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let (chunks, cut) = read(&std::fs::read(&file).unwrap()).unwrap();
    assert!(!cut, "a finished run's file ends on a whole frame");
    let run = load(&json);
    let phases = run["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for phase in phases {
        let name = phase["name"].as_str().unwrap();
        let (lat, bytes) = of_phase(&chunks, name);
        assert_eq!(lat.len() as u64, phase_ops(phase), "{name}: operations");
        assert_eq!(bytes, phase_bytes(phase), "{name}: bytes");
        for (pct, key) in [(50.0, "p50_ns"), (90.0, "p90_ns"), (99.0, "p99_ns")] {
            let (exact, binned) = (quantile(&lat, pct), u(&phase["latency"][key]));
            // The histogram gives its bucket's top: 128 sub-buckets per power of two.
            assert!(
                binned >= exact && binned - exact <= exact / 64 + 1,
                "{name} {key}: {exact} exact, {binned} in the result"
            );
        }
        // Every file's offsets, each block once.
        let mut at: Vec<(u64, u64)> = (chunks.iter().filter(|c| c.phase == name))
            .flat_map(|c| c.records.iter().map(|r| (r.object, r.offset)))
            .collect();
        at.sort_unstable();
        at.dedup();
        assert_eq!(at.len(), 3 * 384, "{name}: distinct file and offset pairs");
    }
    let report = stdout_of(iobm().arg("report").arg("--requests").arg(&file));
    let ops = phase_ops(&phases[0]);
    assert!(
        report.contains(&format!("write {ops:>9} {:>12}", phase_bytes(&phases[0]))),
        "{report}"
    );
    assert!(
        report.contains("slowest:") && report.contains("over time"),
        "{report}"
    );
    // Every frame names this host, and the report splits by it.
    let host = String::from_utf8(Command::new("uname").arg("-n").output().unwrap().stdout).unwrap();
    assert!(
        chunks.iter().all(|c| c.host == host.trim()),
        "{:?}",
        chunks[0].host
    );
    assert!(
        report.contains(&format!("  {:<12} {ops:>6}", host.trim())),
        "{report}"
    );
    // A window keeps the requests that started in it, and only those.
    let mut starts: Vec<u64> = (chunks.iter().filter(|c| c.phase == "write"))
        .flat_map(|c| c.records.iter().map(|r| r.start_ns))
        .collect();
    starts.sort_unstable();
    let (from, to) = (starts[starts.len() / 4], starts[starts.len() * 3 / 4]);
    let inside = starts.iter().filter(|&&t| (from..to).contains(&t)).count();
    assert!(inside > 0 && inside < starts.len());
    let windowed = stdout_of(
        iobm()
            .args([
                "report",
                "--window",
                &format!("{from}ns..{to}ns"),
                "--requests",
            ])
            .arg(&file),
    );
    assert!(
        windowed.contains(&format!("phase write: {inside} requests")),
        "{inside} expected:\n{windowed}"
    );
}

#[test]
fn a_run_killed_mid_phase_keeps_the_requests_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("r.zst");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "write",
            "-j",
            "2",
            "--size-per-job",
            "4MiB",
            "--block",
            "4KiB",
        ])
        .args(["--duration", "20s", "--requests"])
        .arg(&file)
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let began = Instant::now();
    while std::fs::metadata(&file).map_or(0, |m| m.len()) < 4096 {
        assert!(began.elapsed() < Duration::from_secs(15), "nothing written");
        std::thread::sleep(Duration::from_millis(50));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let (chunks, _) = read(&bytes).unwrap();
    let records: usize = chunks.iter().map(|c| c.records.len()).sum();
    assert!(records >= 4096, "{records} requests read");
    // A frame cut by the kill: the ones before it still read.
    let (cut_chunks, cut) = read(&bytes[..bytes.len() - 3]).unwrap();
    assert!(cut);
    assert_eq!(cut_chunks.len(), chunks.len() - 1);
    let report = stdout_of(iobm().arg("report").arg("--requests").arg(&file));
    assert!(
        report.contains(&format!("phase write: {records} requests")),
        "{report}"
    );
}

#[test]
fn a_bad_window_or_a_result_beside_requests_is_refused_in_one_line() {
    for args in [
        &["report", "--requests", "r.zst", "--window", "5s..2s"][..],
        &["report", "--requests", "r.zst", "--window", "2s"],
        &["report", "r.json", "--requests", "r.zst"],
        &["report", "r.json", "--window", "1s..2s"],
    ] {
        let run = iobm().args(args).assert().code(2);
        let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with("iobm: error:"), "{args:?}: {err}");
        assert!(
            first.contains("--window") || first.contains("--requests"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_bad_requests_path_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no/such/r.zst");
    let run = iobm()
        .args(["write", "-j", "1", "--size-per-job", "1MiB", "--requests"])
        .arg(&missing)
        .arg(dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&run.get_output().stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--requests"), "{err}");
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}
