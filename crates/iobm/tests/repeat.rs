//! `--repeat N`: the workload N times on fresh data, every aggregate's spread in the last
//! run's document and report, and `compare` telling a difference from the noise.

mod common;

use common::{aggregate, iobm, load, stdout_of, u};
use serde_json::Value;
use std::path::Path;

fn makespan(phase: &Value) -> f64 {
    aggregate(phase, "makespan")["bytes_per_s"]
        .as_f64()
        .unwrap()
}

#[test]
fn a_repeated_stream_reports_each_aggregate_over_fresh_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let text = stdout_of(
        iobm()
            .args(["stream", "--size", "8MiB", "--repeat", "3", "--json"])
            .arg(&json)
            .arg(dir.path()),
    );
    assert!(text.contains("repeated 3 times"), "{text}");
    assert_eq!(text.matches("repetition ").count(), 3, "{text}");
    let result = load(&json);
    let repeats = &result["repeats"];
    let ids: Vec<&str> = repeats["run_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids[0] != ids[1] && ids[1] != ids[2], "fresh runs: {ids:?}");
    // The document's phases are the last repetition's.
    assert_eq!(result["run_id"], ids[2]);
    for (i, phase) in result["phases"].as_array().unwrap().iter().enumerate() {
        let spread = &repeats["phases"][i];
        assert_eq!(spread["name"], phase["name"]);
        let makespan_spread = aggregate(spread, "makespan");
        let s = &makespan_spread["bytes_per_s"];
        let mut values: Vec<f64> = s["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(values.len(), 3);
        assert_eq!(values[2], makespan(phase));
        values.sort_by(f64::total_cmp);
        assert_eq!(s["median"].as_f64().unwrap(), values[1]);
        assert_eq!(
            (s["min"].as_f64().unwrap(), s["max"].as_f64().unwrap()),
            (values[0], values[2])
        );
        // The interval, computed here from the three values: Student's t over their
        // logarithms, t(0.975, 2) = 4.303, taken back by exp.
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let m = logs.iter().sum::<f64>() / 3.0;
        let sd_logs = (logs.iter().map(|l| (l - m).powi(2)).sum::<f64>() / 2.0).sqrt();
        let half = 4.303 * sd_logs / 3f64.sqrt();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
        let [low, high] = [
            s["ci95"][0].as_f64().unwrap(),
            s["ci95"][1].as_f64().unwrap(),
        ];
        assert!(
            close(low, (m - half).exp()) && close(high, (m + half).exp()),
            "{s}"
        );
        assert!(low > 0.0, "{s}");
        assert!(s["no_interval"].is_null(), "{s}");
        // The coefficient of variation: the sample standard deviation over the mean.
        let mean = values.iter().sum::<f64>() / 3.0;
        assert!(close(s["mean"].as_f64().unwrap(), mean), "{s}");
        let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert!(close(s["cv"].as_f64().unwrap(), sd / mean), "{s}");
    }
    // Every repetition cleaned up after itself.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // The saved run prints its spread again.
    let report = stdout_of(iobm().arg("report").arg(&json));
    assert!(
        report.contains("CV") && report.contains("95% CI"),
        "{report}"
    );
    assert!(report.contains("of the geometric mean"), "{report}");

    // compare: a run against itself is within its noise; against one ten times faster, not.
    let faster = out.path().join("faster.json");
    let mut doc = result.clone();
    for phase in doc["repeats"]["phases"].as_array_mut().unwrap() {
        for a in phase["aggregates"].as_array_mut().unwrap() {
            let s = &mut a["bytes_per_s"];
            for key in ["median", "min", "max", "mean"] {
                s[key] = (s[key].as_f64().unwrap() * 10.0).into();
            }
            for key in ["values", "ci95"] {
                // An aggregate found in one repetition only has no interval.
                for v in s[key].as_array_mut().into_iter().flatten() {
                    *v = (v.as_f64().unwrap() * 10.0).into();
                }
            }
        }
    }
    std::fs::write(&faster, doc.to_string()).unwrap();
    let compared = stdout_of(
        iobm()
            .args(["compare", "--wide"])
            .arg(format!("a={}", json.display()))
            .arg(format!("same={}", json.display()))
            .arg(format!("faster={}", faster.display())),
    );
    let row = |label: &str| {
        compared
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap()
            .to_string()
    };
    assert!(row("same").contains("(1.00x~)"), "{compared}");
    assert!(row("faster").contains("(10.00x)"), "{compared}");
    // The median, then the interval's bounds: [low, high].
    let a = row("a");
    let interval = a.split_once('[').and_then(|(_, r)| r.split_once(']'));
    let (low, high) = interval
        .and_then(|(i, _)| i.split_once(", "))
        .unwrap_or_else(|| panic!("no [low, high] in {a}"));
    let (low, high): (f64, f64) = (low.parse().unwrap(), high.parse().unwrap());
    assert!(0.0 < low && low <= high, "{a}");
    assert!(!a.contains("+-"), "{a}");
}

#[test]
fn repeated_reads_read_one_kept_data_set_and_keep_refuses_repeat() {
    let dir = tempfile::tempdir().unwrap();
    let out = iobm()
        .args(["write", "--keep", "--repeat", "2", "--size", "1MiB"])
        .arg(dir.path())
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("--keep") && err.contains("--repeat"), "{err}");
    stdout_of(
        iobm()
            .args(["write", "--keep", "--size", "4MiB"])
            .arg(dir.path()),
    );
    let data = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let json = dir.path().join("read.json");
    stdout_of(
        iobm()
            .args(["read", "--repeat", "2", "--json"])
            .arg(&json)
            .arg(&data),
    );
    let result = load(&json);
    let spread = &result["repeats"]["phases"][0]["aggregates"][0]["bytes_per_s"];
    assert_eq!(spread["values"].as_array().unwrap().len(), 2);
    // Two values give no interval (t = 12.7), and the report says why.
    assert!(spread["ci95"].is_null(), "{spread}");
    let why = "2 values: too few for an interval (3 or more)";
    assert_eq!(spread["no_interval"], why);
    let report = stdout_of(iobm().arg("report").arg(&json));
    assert!(
        report.contains(&format!("no interval (-): {why}")),
        "{report}"
    );
    assert_eq!(
        u(&result["phases"][0]["workers"][0]["span"]["bytes"]),
        4 << 20
    );
    assert!(
        Path::new(&data).join("data.0").exists(),
        "a read never removes the data set"
    );
}

#[test]
fn bonnie_and_s3_repeat_too() {
    // bonnie: each repetition its own line in --bonnie-csv, as bonnie++ -x.
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (json, csv) = (out.path().join("b.json"), out.path().join("b.csv"));
    stdout_of(
        iobm()
            .args([
                "bonnie",
                "--size",
                "4MiB",
                "--files",
                "1:1000:0:2",
                "--seeks",
                "100",
            ])
            .args(["--repeat", "2", "--json"])
            .arg(&json)
            .arg("--bonnie-csv")
            .arg(&csv)
            .arg(dir.path()),
    );
    assert_eq!(std::fs::read_to_string(&csv).unwrap().lines().count(), 2);
    let result = load(&json);
    assert_eq!(result["repeats"]["run_ids"].as_array().unwrap().len(), 2);
    assert_eq!(
        result["repeats"]["phases"].as_array().unwrap().len(),
        result["phases"].as_array().unwrap().len()
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);

    // S3: each repetition through a built-in gateway of its own, which leaves nothing.
    let json = out.path().join("s3.json");
    stdout_of(
        iobm()
            .args([
                "s3",
                "put",
                "--ops",
                "20",
                "--obj-size",
                "16KiB",
                "--repeat",
                "2",
            ])
            .arg("--json")
            .arg(&json)
            .arg("--dir")
            .arg(dir.path()),
    );
    let result = load(&json);
    let spread = &result["repeats"]["phases"][0]["aggregates"][0]["ops_per_s"]["values"];
    assert_eq!(spread.as_array().unwrap().len(), 2);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
