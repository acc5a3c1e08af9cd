//! `iobm bonnie` end to end: every test in bonnie++'s order with its numbers recomputable from
//! the document, the bonnie++ CSV line that bonnie++'s own tools read, per-char by system call,
//! and `iobm compare` of saved runs.

mod common;

use common::{
    aggregate, assert_aggregates_recomputable, assert_matches_schema, entries, iobm, load,
    phase_bytes, stdout_of, u,
};
use serde_json::Value;
use std::path::Path;

/// Runs a small bonnie suite into `data`, saving JSON and CSV under `out` as NAME.json/.csv.
fn small_bonnie(data: &Path, out: &Path, name: &str, extra: &[&str]) -> Value {
    let json = out.join(format!("{name}.json"));
    let csv = out.join(format!("{name}.csv"));
    let stdout = stdout_of(
        iobm()
            .args([
                "bonnie",
                "--size",
                "8MiB",
                "--files",
                "1:1000:0:2",
                "--seeks",
                "200",
            ])
            .args(["--label", name, "--json"])
            .arg(&json)
            .arg("--bonnie-csv")
            .arg(&csv)
            .args(extra)
            .arg(data),
    );
    assert!(stdout.contains("Sequential Output"), "{stdout}");
    assert!(stdout.contains("Sequential Create"), "{stdout}");
    load(&json)
}

#[test]
fn bonnie_runs_every_test_and_writes_a_csv_line_bonnies_tools_read() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = small_bonnie(data.path(), out.path(), "nfs", &[]);
    assert_matches_schema(&result);
    assert_eq!(result["kind"], "bonnie");
    let phases = result["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "per-char write",
            "block write",
            "rewrite",
            "per-char read",
            "block read",
            "random seeks",
            "sequential create",
            "sequential stat",
            "sequential delete",
            "random create",
            "random stat",
            "random delete"
        ]
    );
    for phase in phases {
        assert_eq!(phase["status"], "complete", "{}", phase["errors"]);
        assert_aggregates_recomputable(phase);
    }
    // Buffered per-char moves the whole file; block tests too; 200 seeks by 5 workers.
    for i in 0..5 {
        let bytes = phase_bytes(&phases[i]);
        assert_eq!(bytes, 8 << 20, "{}", names[i]);
    }
    let seeks = &phases[5]["workers"];
    assert_eq!(seeks.as_array().unwrap().len(), 5);
    assert_eq!(
        seeks
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u(&w["span"]["ops"]))
            .sum::<u64>(),
        200
    );
    for phase in &phases[6..] {
        assert_eq!(u(&phase["latency"]["histogram"]["count"]), 1024);
    }
    let tests = result["bonnie"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 12);
    assert!(tests[1]["kib_per_s"].as_f64().unwrap() > 0.0);
    assert!(tests[5]["kib_per_s"].is_null() && tests[5]["ops_per_s"].as_f64().unwrap() > 0.0);
    assert!(
        result["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("twice the RAM")),
        "{}",
        result["warnings"]
    );
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );

    let csv = std::fs::read_to_string(out.path().join("nfs.csv")).unwrap();
    let fields: Vec<&str> = csv.trim_end().split(',').collect();
    assert_eq!(fields.len(), 50, "{csv}");
    assert_eq!(fields[0], "1.98");
    assert_eq!(fields[2], "nfs");
    assert_eq!(fields[5], "8M");
    assert_eq!((fields[7], fields[8]), ("200", "5"));
    assert_eq!(
        fields[11],
        format!("{:.0}", tests[1]["kib_per_s"].as_f64().unwrap())
    );
    assert_eq!((fields[21], fields[22], fields[24]), ("1", "1000", "2"));
    assert!(
        fields[38..]
            .iter()
            .all(|f| f.ends_with("us") || f.ends_with("ms")),
        "{csv}"
    );

    // bonnie++'s own tools (Debian package bonnie++, installed by scripts/test) read it; a
    // missing tool fails here.
    for (tool, needle) in [
        ("bon_csv2txt", "Sequential Output"),
        ("bon_csv2html", "<table"),
    ] {
        let out = std::process::Command::new(tool)
            .stdin(std::fs::File::open(out.path().join("nfs.csv")).unwrap())
            .output()
            .unwrap_or_else(|e| panic!("{tool} (scripts/test installs bonnie++): {e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains(needle),
            "{tool}: {text}"
        );
        assert!(text.contains("nfs"), "{tool}: {text}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("Expected"),
            "{tool} refused the line"
        );
    }
}

#[test]
fn bonnie_syscall_per_char_moves_a_64th() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let result = small_bonnie(
        data.path(),
        out.path(),
        "sys",
        &["--per-char", "syscall", "--fsync", "each"],
    );
    assert_eq!(result["config"]["bonnie"]["per_char"], "syscall");
    for i in [0, 3] {
        let bytes = phase_bytes(&result["phases"][i]);
        assert_eq!(bytes, (8 << 20) / 64);
    }
    assert!(result["phases"][1]["latency"]["measures"]
        .as_str()
        .unwrap()
        .ends_with("then fsync"));
}

#[test]
fn compare_puts_runs_side_by_side_and_refuses_mixed_kinds() {
    let data = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    for name in ["nfs", "lustre", "gluster"] {
        small_bonnie(data.path(), out.path(), name, &[]);
    }
    // --bonnie-csv appends: a second run into nfs.csv adds a line, as for bon_csv2html.
    small_bonnie(data.path(), out.path(), "nfs", &[]);
    let csv = std::fs::read_to_string(out.path().join("nfs.csv")).unwrap();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.lines().all(|l| l.split(',').count() == 50), "{csv}");
    let arg = |name: &str| {
        out.path()
            .join(format!("{name}.json"))
            .display()
            .to_string()
    };
    let text = |args: &[String]| stdout_of(iobm().arg("compare").args(args));
    let table = text(&[
        arg("nfs"),
        arg("lustre"),
        format!("GlusterFS wb={}", arg("gluster")),
    ]);
    // Tables of a few tests each fit 100 columns; --wide puts every test in one.
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
    assert!(table.contains("random seeks /s  %CPU"), "{table}");
    let wide = text(&[
        "--wide".into(),
        arg("nfs"),
        arg("lustre"),
        format!("GlusterFS wb={}", arg("gluster")),
    ]);
    let lines: Vec<&str> = wide.lines().collect();
    assert!(
        lines[0].starts_with("run")
            && lines[0].contains("block write MiB/s")
            && lines[0].contains("random seeks /s"),
        "{wide}"
    );
    assert!(
        lines[1].starts_with("nfs") && !lines[1].contains('x'),
        "{table}"
    );
    assert!(
        lines[2].starts_with("lustre") && lines[2].contains("x)"),
        "{table}"
    );
    assert!(lines[3].starts_with("GlusterFS wb"), "{table}");

    let transposed = text(&["--transpose".into(), arg("nfs"), arg("lustre")]);
    assert!(
        transposed.lines().next().unwrap().contains("nfs")
            && transposed.contains("\nrewrite MiB/s"),
        "{transposed}"
    );

    let md = text(&[
        "--format".into(),
        "markdown".into(),
        arg("nfs"),
        arg("lustre"),
    ]);
    assert!(md.starts_with("| run |") && md.contains("|---|"), "{md}");

    let csv = text(&["--format".into(), "csv".into(), arg("nfs"), arg("lustre")]);
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3);
    // Per test: value, ratio, %CPU, p99, cache verdict and warnings; then the run's warnings.
    assert_eq!(rows[0].len(), 1 + 6 * 12 + 1);
    assert_eq!(rows[0][5], "per-char write cache verdict");
    assert_eq!(rows[0].last(), Some(&"run warnings"));
    assert_eq!(rows[0][3], "per-char write cpu%");
    assert_eq!(rows[1][2], "1.00");
    assert!(rows[2][2].parse::<f64>().unwrap() > 0.0);

    // bonnie++'s K/sec: KiB per second.
    let kps = text(&[
        "--format".into(),
        "csv".into(),
        "--unit".into(),
        "k".into(),
        arg("nfs"),
    ]);
    let header: Vec<&str> = kps.lines().next().unwrap().split(',').collect();
    assert_eq!(header[1], "per-char write K/sec");
    let k: f64 = kps
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let mib: f64 = rows[1][1].parse().unwrap();
    assert!((k / 1024.0 - mib).abs() < 0.01, "{k} K/sec, {mib} MiB/s");

    // Another aggregate: each value is that aggregate's rate from the saved run.
    let by = |kind: &str| {
        let csv = text(&[
            "--format".into(),
            "csv".into(),
            "--aggregate".into(),
            kind.into(),
            arg("nfs"),
        ]);
        csv.lines()
            .nth(1)
            .unwrap()
            .split(',')
            .nth(1)
            .unwrap()
            .to_string()
    };
    let nfs = load(&out.path().join("nfs.json"));
    let saved = |kind: &str| {
        aggregate(&nfs["phases"][0], kind)["bytes_per_s"]
            .as_f64()
            .unwrap()
            / 1048576.0
    };
    for (flag, kind) in [("sum-of-rates", "sum_of_rates"), ("makespan", "makespan")] {
        let shown: f64 = by(flag).parse().unwrap();
        assert!((shown - saved(kind)).abs() < 0.01, "{flag}: {shown}");
    }
    assert!(
        text(&["--aggregate".into(), "first-done".into(), arg("nfs")])
            .contains("values are first done rates")
    );

    // A stream run is not comparable with bonnie runs.
    let stream = out.path().join("stream.json");
    iobm()
        .args(["stream", "--size", "1MiB", "--json"])
        .arg(&stream)
        .arg(data.path())
        .assert()
        .success();
    let err = iobm()
        .arg("compare")
        .arg(arg("nfs"))
        .arg(&stream)
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains("different kinds") && err.contains("bonnie") && err.contains("stream"),
        "{err}"
    );
}
