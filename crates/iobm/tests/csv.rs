//! `--csv FILE`: the time series as tidy CSV, one row per phase, worker and second; the same
//! from `iobm report --csv` of the saved run.

mod common;

use common::{iobm, load, u};

#[test]
fn the_time_series_as_tidy_csv_add_up_to_the_phases() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    iobm()
        .args(["stream", "-j", "2", "--size", "8MiB", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .arg(dir.path())
        .assert()
        .success();
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..4], ["run_id", "phase", "op", "rank"]);
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let result = load(&json);
    for phase in result["phases"].as_array().unwrap() {
        let name = phase["name"].as_str().unwrap();
        let mine: Vec<&Vec<&str>> = rows.iter().filter(|r| r[1] == name).collect();
        let bytes: u64 = mine
            .iter()
            .map(|r| r[column("bytes")].parse::<u64>().unwrap())
            .sum();
        let moved: u64 = phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u(&w["span"]["bytes"]))
            .sum();
        assert_eq!(bytes, moved, "{name}");
        let intervals: usize = phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["series"]["bytes"].as_array().unwrap().len())
            .sum();
        assert_eq!(mine.len(), intervals, "{name}");
    }
    // The saved run gives the same CSV.
    let again = dir.path().join("again.csv");
    iobm()
        .arg("report")
        .arg(&json)
        .arg("--csv")
        .arg(&again)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&again).unwrap(), text);

    // An S3 mixed phase adds each kind of operation over all workers.
    let s3 = dir.path().join("s3.csv");
    iobm()
        .args([
            "s3",
            "mixed",
            "--objects",
            "10",
            "--obj-size",
            "16KiB",
            "--ops",
            "60",
        ])
        .args(["--concurrent", "2", "--dir"])
        .arg(dir.path())
        .arg("--csv")
        .arg(&s3)
        .assert()
        .success();
    let text = std::fs::read_to_string(&s3).unwrap();
    for op in ["get", "head", "put", "delete"] {
        assert!(text.contains(&format!(",{op},all,all,")), "{op}: {text}");
    }

    // A place that cannot be written is refused before anything runs.
    let out = iobm()
        .args([
            "stream",
            "--size",
            "1MiB",
            "--csv",
            "/nonexistent/dir/r.csv",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--csv"));
}

#[test]
fn a_short_interval_gives_latency_and_errors_per_interval() {
    let dir = tempfile::tempdir().unwrap();
    let (json, csv) = (dir.path().join("r.json"), dir.path().join("r.csv"));
    iobm()
        .args([
            "write",
            "--size",
            "64MiB",
            "--block",
            "64KiB",
            "--duration",
            "1s",
        ])
        .args(["--interval", "100ms", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .arg(dir.path())
        .assert()
        .success();
    let result = load(&json);
    assert_eq!(u(&result["schema_version"]), 2);
    let phase = &result["phases"][0];
    let series = &phase["workers"][0]["series"];
    assert_eq!(u(&series["interval_ns"]), 100_000_000);
    let intervals = series["ops"].as_array().unwrap();
    // One entry per 100 ms from the phase's start to its last operation's end, however long
    // the machine took over the second: that end lies after the last operation's start and
    // before the worker's end (which also holds the file's close).
    let span = &phase["workers"][0]["span"];
    let from = u(&phase["start_ns"]);
    let at = |field: &str| (u(&span[field]) - from) / 100_000_000 + 1;
    let len = intervals.len() as u64;
    assert!(
        (at("last_op_start_ns")..=at("end_ns")).contains(&len),
        "{len} intervals, {span}"
    );
    // Every operation's latency is in the histogram of the interval it ended in; the largest
    // of them is the phase's largest.
    let latency = series["latency"].as_array().unwrap();
    let counted: u64 = latency.iter().map(|h| u(&h["count"])).sum();
    assert_eq!(counted, u(&phase["workers"][0]["span"]["ops"]));
    for (h, ops) in latency.iter().zip(intervals) {
        assert_eq!(u(&h["count"]), u(ops));
        assert_eq!(u(&h["sub_bits"]), 4);
    }
    let max = latency.iter().map(|h| u(&h["max_ns"])).max().unwrap();
    assert_eq!(max, u(&phase["latency"]["max_ns"]));

    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(rows.len(), intervals.len());
    for row in rows.iter().filter(|r| r[column("ops")] != "0") {
        let p50: f64 = row[column("p50_us")].parse().unwrap();
        let p99: f64 = row[column("p99_us")].parse().unwrap();
        let top: f64 = row[column("max_us")].parse().unwrap();
        assert!(0.0 < p50 && p50 <= p99 && p99 <= top, "{row:?}");
        assert!(top * 1e3 <= max as f64 + 50.0, "{row:?}"); // printed to 0.1 us
        assert_eq!(row[column("errors")], "0");
    }

    // Finer than 10ms is refused, naming the flag.
    let out = iobm()
        .args(["write", "--interval", "1ms"])
        .arg(dir.path())
        .assert()
        .failure()
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("--interval") && err.contains("10ms"), "{err}");
}
