//! The result document is saved as the run goes: a run killed with SIGKILL (as by the OOM
//! killer or a batch system's time limit) leaves a valid document with every phase it
//! completed, which `iobm report` prints.

mod common;

use assert_cmd::Command;
use common::{assert_matches_schema, entries, load, phase_bytes};
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_run_killed_during_its_second_phase_leaves_the_first_saved() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let json = dir.path().join("killed.json");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["stream", "-j", "2", "--size", "8MiB", "--block", "64k"])
        .args(["--duration", "3s", "--json"])
        .arg(&json)
        .arg(data.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the write phase to be saved, then kill the run during its read phase.
    let deadline = Instant::now() + Duration::from_secs(60);
    let phases_saved = || {
        std::fs::read_to_string(&json)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .map_or(0, |v| v["phases"].as_array().map_or(0, Vec::len))
    };
    while phases_saved() < 1 {
        assert!(Instant::now() < deadline, "the first phase was never saved");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(500));
    child.kill().unwrap(); // SIGKILL: nothing runs after it
    child.wait().unwrap();

    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "running");
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1);
    assert_eq!(phases[0]["name"], "write");
    assert_eq!(phases[0]["status"], "complete");
    assert!(phase_bytes(&phases[0]) > 0);
    // Saved through a temporary file and a rename: nothing else is left beside it.
    assert_eq!(entries(dir.path()), vec!["killed.json"]);

    let report = Command::cargo_bin("iobm")
        .unwrap()
        .arg("report")
        .arg(&json)
        .assert()
        .success();
    let text = String::from_utf8(report.get_output().stdout.clone()).unwrap();
    assert!(text.contains("write: complete"), "{text}");
    assert!(
        text.contains("UNFINISHED (still running, or killed"),
        "{text}"
    );
}
