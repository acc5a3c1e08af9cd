//! `--ramp`: a warm-up before each phase's duration that no number counts, and warp's window
//! among the aggregates.

mod common;

use common::{iobm, load, u};

#[test]
fn a_warm_up_is_run_but_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    iobm()
        .args(["write", "-j", "2", "--size", "8MiB", "--block", "64KiB"])
        .args([
            "--duration",
            "1s",
            "--ramp",
            "500ms",
            "--fsync",
            "each",
            "--json",
        ])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let result = load(&json);
    assert_eq!(result["config"]["ramp_s"], 0.5);
    let phase = &result["phases"][0];
    assert_eq!(phase["settings"]["ramp_s"], 0.5);
    let start = u(&phase["start_ns"]);
    // The phase begins where the warm-up ends: stamps count from the run's origin, taken
    // before the files were made, so a counted warm-up would start the phase within the
    // set-up's few milliseconds instead.
    assert!(start >= 500_000_000, "{start}");
    for w in phase["workers"].as_array().unwrap() {
        let span = &w["span"];
        assert!(u(&span["start_ns"]) >= start, "{span}");
        // Every counted byte is in the series, which starts after the warm-up.
        let series: u64 = w["series"]["bytes"].as_array().unwrap().iter().map(u).sum();
        assert_eq!(series, u(&span["bytes"]));
        // Operations stamped inside the counted span.
        assert!(u(&span["first_op_end_ns"]) > u(&span["start_ns"]), "{span}");
        assert!(u(&span["last_op_start_ns"]) < u(&span["end_ns"]), "{span}");
    }
    let ops: u64 = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| u(&w["span"]["ops"]))
        .sum();
    assert_eq!(u(&phase["latency"]["histogram"]["count"]), ops);
    // Each write flushed as it went: warp's window applies.
    let warp = phase["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "warp_window")
        .expect("a warp window");
    assert!(warp["formula"]
        .as_str()
        .unwrap()
        .contains("first-operation end"));
    assert!(u(&warp["bytes"]) > 0 && u(&warp["bytes"]) <= ops * 65536);

    // A warm-up needs a duration to come before.
    let out = iobm()
        .args(["write", "--size", "1MiB", "--ramp", "1s"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--duration"), "{err}");
}

#[test]
fn an_s3_phase_warms_up_too() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    iobm()
        .args(["s3", "put", "--concurrent", "2", "--obj-size", "64KiB"])
        .args(["--duration", "1s", "--ramp", "500ms", "--dir"])
        .arg(dir.path())
        .arg("--json")
        .arg(&json)
        .assert()
        .success();
    let result = load(&json);
    assert_eq!(result["config"]["ramp_s"], 0.5);
    let phase = &result["phases"][0];
    let put = &phase["operations"][0];
    assert_eq!(u(&put["latency"]["histogram"]["count"]), u(&put["ops"]));
    // The gateway stored the warm-up's objects too; only the counted ones are in the phase.
    // The gateway received the warm-up's objects as well: at least one more 64 KiB body than
    // the phase counts.
    let received = u(&phase["cache"]["servers"][0]["received_bytes"]);
    assert!(
        received >= u(&put["bytes"]) + 65536,
        "{received} {}",
        put["bytes"]
    );
    let start = u(&phase["start_ns"]);
    assert!(
        start >= 500_000_000,
        "the phase begins after the warm-up: {start}"
    );
}
