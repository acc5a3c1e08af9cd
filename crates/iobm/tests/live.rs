//! What a run shows while it goes: `--live FILE`'s lines and the `--csv` rows as each interval
//! is passed (read while the phase runs, equal in sum to the result), and a bad `--live` path
//! refused before anything is made.

mod common;

use common::{entries, iobm, load, u};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    // Only whole lines: one may be in the middle of its write.
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    whole
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The phases the result file (saved after every phase) holds so far; none before it exists.
fn phases_saved(json: &Path) -> usize {
    let text = std::fs::read_to_string(json).unwrap_or_default();
    let doc: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    doc["phases"].as_array().map_or(0, Vec::len)
}

#[test]
fn live_lines_and_csv_rows_come_while_the_phase_runs_and_sum_to_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (live, csv, json) = (
        out.path().join("l.jsonl"),
        out.path().join("c.csv"),
        out.path().join("r.json"),
    );
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
        .args(["--duration", "6s", "--interval", "500ms", "--live"])
        .arg(&live)
        .arg("--csv")
        .arg(&csv)
        .arg("--json")
        .arg(&json)
        .arg(dir.path())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Read while the phase runs: lines and rows there before the result holds the phase.
    let began = Instant::now();
    let (mut seen, mut rows_seen) = (Vec::new(), String::new());
    while seen.len() < 3 && began.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(100));
        seen = lines(&live);
        let rows = std::fs::read_to_string(&csv).unwrap_or_default();
        rows_seen = rows[..rows.rfind('\n').map_or(0, |end| end + 1)].to_string();
        assert_eq!(
            phases_saved(&json),
            0,
            "the phase ended before 3 lines came"
        );
    }
    assert!(child.try_wait().unwrap().is_none(), "the run ended");
    assert!(seen.len() >= 3, "{seen:?}");
    // The header, and the two workers' rows of two intervals at least.
    let header_and_rows = rows_seen.lines().count();
    assert!(header_and_rows >= 5, "{rows_seen}");
    assert!(child.wait().unwrap().success());

    let result = load(&json);
    let phase = &result["phases"][0];
    let all = lines(&live);
    assert_eq!(
        &all[..seen.len()],
        &seen[..],
        "lines already written changed"
    );
    let workers = phase["workers"].as_array().unwrap();
    let span = |key: &str| workers.iter().map(|w| u(&w["span"][key])).sum::<u64>();
    let sum = |key: &str| all.iter().map(|l| u(&l[key])).sum::<u64>();
    assert_eq!(sum("bytes"), span("bytes"));
    assert_eq!(sum("ops"), span("ops"));
    assert!(span("ops") > 0);
    for (k, line) in all.iter().enumerate() {
        assert_eq!(line["phase"], "write");
        assert_eq!(u(&line["interval"]), k as u64);
        assert_eq!(line["run_id"], result["run_id"]);
        assert_eq!(u(&line["rank"]), 0);
        assert_eq!(line["by_op"][0]["op"], "write");
        assert_eq!(line["by_op"][0]["bytes"], line["bytes"]);
        // Each line is the workers' series at its interval, as the result keeps it.
        let at = |w: &Value, key: &str| w["series"][key][k].as_u64().unwrap_or(0);
        let series = |key: &str| workers.iter().map(|w| at(w, key)).sum::<u64>();
        assert_eq!(u(&line["bytes"]), series("bytes"), "interval {k}");
        assert_eq!(u(&line["ops"]), series("ops"), "interval {k}");
    }
    // The rows written as they came are those of the file written from the result, up to the
    // rates of the last interval, which ends with the phase.
    let last = format!(",{},", all.len() - 1);
    let final_rows = std::fs::read_to_string(&csv).unwrap();
    for row in rows_seen.lines().filter(|r| !r.contains(&last)) {
        assert!(final_rows.lines().any(|r| r == row), "{row}\n{final_rows}");
    }
}

#[test]
fn a_live_file_in_a_missing_directory_is_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let live = out.path().join("missing").join("l.jsonl");
    let assert = iobm()
        .args(["write", "--size", "1MiB", "--live"])
        .arg(&live)
        .arg(dir.path())
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("--live"), "{stderr}");
    assert!(entries(dir.path()).is_empty());
    assert!(entries(out.path()).is_empty());
}
