//! End-to-end tests of the `iobm` binary on real file systems: results against the checked-in
//! schema, aggregates recomputed from the JSON, safety (only the run's directory, cleaned up),
//! bad input, a full file system, Ctrl-C, `read` of kept data, `quick` and `report`.

mod common;

use assert_cmd::Command;
use common::{assert_matches_schema, entries, interrupt, load, phase_bytes, u};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

fn iobm() -> Command {
    Command::cargo_bin("iobm").unwrap()
}

/// The standard output of a command that must succeed.
fn stdout_of(cmd: &mut Command) -> String {
    String::from_utf8(cmd.assert().success().get_output().stdout.clone()).unwrap()
}

/// Recomputes every aggregate of a phase from its worker records alone and compares.
fn assert_aggregates_recomputable(phase: &Value) {
    let workers = phase["workers"].as_array().unwrap();
    let spans: Vec<(f64, f64, f64, f64, f64)> = workers
        .iter()
        .map(|w| {
            let s = &w["span"];
            (
                u(&s["start_ns"]) as f64,
                u(&s["end_ns"]) as f64,
                u(&s["bytes"]) as f64,
                u(&s["at_all_started"]["bytes"]) as f64,
                u(&s["at_first_done"]["bytes"]) as f64,
            )
        })
        .collect();
    let total: f64 = spans.iter().map(|s| s.2).sum();
    let min_start = spans.iter().map(|s| s.0).fold(f64::MAX, f64::min);
    let max_start = spans.iter().map(|s| s.0).fold(0.0, f64::max);
    let min_end = spans.iter().map(|s| s.1).fold(f64::MAX, f64::min);
    let max_end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
    let expected = |kind: &str| -> f64 {
        match kind {
            "sum_of_rates" => spans.iter().map(|s| s.2 / ((s.1 - s.0) / 1e9)).sum(),
            "makespan" => total / ((max_end - min_start) / 1e9),
            "first_done" => spans.iter().map(|s| s.4).sum::<f64>() / ((min_end - min_start) / 1e9),
            "steady_state" => {
                spans.iter().map(|s| s.4 - s.3).sum::<f64>() / ((min_end - max_start) / 1e9)
            }
            other => panic!("unknown aggregate {other}"),
        }
    };
    let aggs = phase["aggregates"].as_array().unwrap();
    assert!(aggs.len() >= 3, "{aggs:?}");
    for a in aggs {
        let kind = a["kind"].as_str().unwrap();
        let got = a["bytes_per_s"].as_f64().unwrap();
        let want = expected(kind);
        assert!(
            (got - want).abs() <= 1e-6 * want.max(1.0),
            "{kind}: saved {got}, recomputed {want}"
        );
        assert!(!a["formula"].as_str().unwrap().is_empty());
    }
}

#[test]
fn stream_reports_every_aggregate_and_saves_a_valid_result() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = iobm()
        .args([
            "stream", "--jobs", "3", "--size", "6MiB", "--block", "64KiB", "--json",
        ])
        .arg(&json)
        .arg(&data)
        .assert()
        .success()
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "write: complete",
        "read: complete",
        "sum of rates",
        "makespan",
        "first done",
        "sum of bytes_w / (max end_w - min start_w)",
        "p99.9",
        "iobm CPU",
        "MiB/s",
        "MB/s",
    ] {
        assert!(stdout.contains(needle), "missing {needle:?} in:\n{stdout}");
    }
    // Nothing left behind, and the progress line stays off when stderr is not a terminal.
    assert!(entries(&data).is_empty(), "{:?}", entries(&data));
    assert!(!String::from_utf8_lossy(&out.stderr).contains('\r'));

    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "complete");
    assert_eq!(result["kind"], "stream");
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    for phase in phases {
        let workers = phase["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 3);
        assert_eq!(phase_bytes(phase), 6 << 20);
        for w in workers {
            let series: u64 = w["series"]["bytes"].as_array().unwrap().iter().map(u).sum();
            assert_eq!(series, u(&w["span"]["bytes"]));
        }
        assert_eq!(u(&phase["latency"]["histogram"]["count"]), 96);
        assert_aggregates_recomputable(phase);
    }
    // The data set's pages were dropped before the read, and the residency was measured after.
    let read = &phases[1];
    assert_eq!(read["settings"]["drop_cache"], true);
    assert!(read["cache"]["resident_before_bytes"].is_u64());
    assert!(result["environment"]["storage"]["fs_type"].is_string());

    // `iobm report` prints the same numbers from the file alone.
    let text = stdout_of(iobm().arg("report").arg(&json));
    let makespan_line = |s: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with("makespan"))
            .map(str::to_string)
            .unwrap()
    };
    assert_eq!(makespan_line(&text), makespan_line(&stdout));
}

#[test]
fn shared_file_random_and_duration() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let data = tempfile::tempdir().unwrap();
    iobm()
        .args([
            "stream",
            "-j",
            "2",
            "--shared-file",
            "--random",
            "--size",
            "4MiB",
            "--block",
            "4k",
            "--duration",
            "300ms",
            "--fsync",
            "never",
            "--data",
            "compressible:50",
            "--keep-cache",
            "--json",
        ])
        .arg(&json)
        .arg(data.path())
        .assert()
        .success();
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["config"]["layout"], "shared_file");
    assert_eq!(result["config"]["pattern"], "random");
    for phase in result["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete");
        assert!(u(&phase["latency"]["histogram"]["count"]) > 0);
        assert_aggregates_recomputable(phase);
    }
    // Phases of 300 ms have an all-active window long enough for a steady-state figure.
    for phase in result["phases"].as_array().unwrap() {
        let kinds: Vec<&str> = phase["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            ["sum_of_rates", "makespan", "first_done", "steady_state"]
        );
    }
    // With --keep-cache the read right after the write is a page-cache read, and it says so.
    let read = &result["phases"][1];
    assert_eq!(read["settings"]["drop_cache"], false);
    assert!(
        read["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("cache effect")),
        "{:?}",
        read["warnings"]
    );
    assert!(entries(data.path()).is_empty());
}

#[test]
fn keep_then_read_and_read_of_nothing_explains() {
    let data = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let err = iobm()
        .arg("read")
        .arg(empty.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains("no iobm data") && err.contains("write --keep") && err.contains("stream"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    iobm()
        .args([
            "write", "--keep", "-j", "2", "--size", "2MiB", "--block", "256k",
        ])
        .arg(data.path())
        .assert()
        .success();
    let kept = entries(data.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].starts_with("iobm-"));
    let run_dir = data.path().join(&kept[0]);
    assert_eq!(
        entries(&run_dir),
        ["data.0", "data.1", "iobm-manifest.json"]
    );
    let json = data.path().join("read.json");
    // The parent directory is found as well as the run directory itself.
    for path in [data.path().to_path_buf(), run_dir.clone()] {
        iobm()
            .args(["read", "--block", "64k", "--json"])
            .arg(&json)
            .arg(&path)
            .assert()
            .success();
        let result = load(&json);
        assert_eq!(result["kind"], "read");
        let bytes = phase_bytes(&result["phases"][0]);
        assert_eq!(bytes, 2 << 20);
    }
    // Reading never removes the data set.
    assert_eq!(entries(&run_dir).len(), 3);
}

#[test]
fn bad_input_is_named_exit_2_and_writes_nothing() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap();
    let file = data.path().join("plain-file");
    std::fs::write(&file, b"x").unwrap();
    let f = file.to_str().unwrap();
    // iobm's own checks: one line naming the flag or path.
    let checked: &[(&[&str], &str)] = &[
        (&["write", "/nonexistent/dir"], "/nonexistent/dir"),
        (&["write", f], "not a directory"),
        (&["write", "--block", "2M", "--size", "1M", d], "--block"),
        (
            &["write", "--direct", "--block", "1000", "--size", "1M", d],
            "--direct",
        ),
        (&["write", "--size", "1P", d], "does not fit"),
        (&["write", "--json", "/nonexistent/x.json", d], "--json"),
        (&["report", f], "plain-file"),
        (&["write", "--verify", d], "--verify applies to reading"),
        (
            &["write", "--keep-cache", d],
            "--keep-cache applies to reading",
        ),
        (&["write", "--reorder", d], "--reorder applies to reading"),
    ];
    // Argument errors: clap's whole message, the flag named in its first line, the valid
    // values where there is a list, and the usage or a pointer to --help.
    let parsed: &[(&[&str], &str, &str)] = &[
        (&["write", "--size", "12X", d], "--size", ""),
        (&["write", "--size", "0", d], "--size", ""),
        (&["write", "--frobnicate", d], "--frobnicate", ""),
        (&["write", "--jobs", "0", d], "--jobs", ""),
        (&["write", "--duration", "3x", d], "--duration", ""),
        (&["write", "--data", "ones", d], "--data", ""),
        (
            &["write", "--fsync", "always", d],
            "--fsync",
            "never, end, each",
        ),
        (&["s3", "gett"], "gett", "put, get, head"),
        (&["write"], "required arguments", "<DIR>"),
    ];
    let run = |args: &[&str]| {
        let out = iobm().args(args).assert().code(2).get_output().clone();
        assert!(out.stdout.is_empty(), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    for &(args, needle) in checked {
        let err = run(args);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
    }
    for &(args, needle, more) in parsed {
        let err = run(args);
        let first = err.lines().next().unwrap();
        assert!(first.starts_with("iobm: error: "), "{args:?}: {err}");
        assert!(first.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
        assert!(err.contains(more), "{args:?}: {err:?} lacks {more:?}");
        assert!(
            err.contains("Usage: iobm") || err.contains("--help"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(entries(data.path()), ["plain-file"]);
}

#[test]
fn help_shows_examples_units_and_exit_codes() {
    let help = stdout_of(iobm().arg("--help"));
    for needle in ["Examples:", "iobm quick", "Exit codes:", "130", "MiB"] {
        assert!(help.contains(needle), "{needle}");
    }
    let help = stdout_of(iobm().args(["stream", "--help"]));
    for flag in [
        "--jobs",
        "--size-per-job",
        "--shared-file",
        "--direct",
        "--fsync",
        "--duration",
        "--random",
        "--keep",
        "--data",
        "--json",
    ] {
        assert!(help.contains(flag), "{flag}");
    }
}

#[test]
fn ctrl_c_reports_partial_results_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let json = dir.path().join("int.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "write",
            "-j",
            "2",
            "--size",
            "8MiB",
            "--block",
            "64k",
            "--duration",
            "60s",
            "--json",
        ])
        .arg(&json)
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = interrupt(child);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("write: INTERRUPTED"), "{stdout}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "interrupted");
    assert!(u(&result["phases"][0]["workers"][0]["span"]["bytes"]) > 0);
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
}

#[test]
fn quick_tours_a_directory_and_prints_a_summary() {
    let data = tempfile::tempdir().unwrap();
    let json = data.path().join("quick.json");
    let text = stdout_of(
        iobm()
            .args(["quick", "--step-time", "200ms", "--json"])
            .arg(&json)
            .arg(data.path()),
    );
    for step in [
        "sequential write 1MiB",
        "sequential read 1MiB",
        "random read 4KiB",
        "random write 4KiB + fsync",
        "IOPS",
        "p99",
        "Sequential Output",
        "Sequential Create",
        "s3 put 1MiB",
        "s3 get 1MiB",
    ] {
        assert!(text.contains(step), "{step} missing:\n{text}");
    }
    let result = load(&json);
    assert_matches_schema(&result);
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4 + 12 + 2);
    // The S3 steps went through the built-in gateway over HTTP, with per-operation books.
    for (phase, op) in phases[16..].iter().zip(["put", "get"]) {
        assert_eq!(phase["op"], op);
        assert!(u(&phase["operations"][0]["ops"]) > 0);
        assert_eq!(phase["operations"][0]["errors"], 0);
    }
    assert_eq!(
        result["bonnie"]["tests"].as_array().unwrap().len(),
        phases.len()
    );
    for phase in result["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete", "{}", phase["errors"]);
    }
    assert_eq!(entries(data.path()), ["quick.json"]);
}

/// A small file system mounted for one test. Such tests need root and are marked ignored:
/// `scripts/test` runs them when it runs as root (as CI does) and counts them skipped otherwise.
struct Mount(tempfile::TempDir);

impl Mount {
    /// A tmpfs of this size.
    fn tmpfs(size: &str) -> Mount {
        Mount::new("tmpfs", &format!("size={size}"))
    }

    fn new(fs_type: &str, options: &str) -> Mount {
        // SAFETY: geteuid has no preconditions.
        assert!(
            unsafe { libc::geteuid() } == 0,
            "this test mounts a {fs_type} and needs root"
        );
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", fs_type, "-o", options, fs_type])
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount {fs_type} failed although running as root");
        Mount(dir)
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

#[test]
#[ignore = "needs root: mounts a tmpfs (scripts/test runs it as root)"]
fn a_full_file_system_ends_the_run_cleanly() {
    let fs = Mount::tmpfs("8m");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("full.json");
    let out = iobm()
        .args([
            "write",
            "-j",
            "2",
            "--size",
            "32MiB",
            "--block",
            "256k",
            "--ignore-free-space",
            "--json",
        ])
        .arg(&json)
        .arg(fs.path())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("ENOSPC"), "{stdout}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("iobm: error: the run stopped: write data.")
            && stderr.contains("No space left on device (ENOSPC)"),
        "{stderr}"
    );
    assert!(stdout.contains("write: FAILED"), "{stdout}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "failed");
    assert_eq!(result["phases"][0]["errors"][0]["kind"], "ENOSPC");
    let written = phase_bytes(&result["phases"][0]);
    assert!(written > 0 && written <= 8 << 20, "{written}");
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));

    // Without --ignore-free-space the same request is refused before anything is written.
    let err = iobm()
        .args(["write", "--size", "32MiB"])
        .arg(fs.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(String::from_utf8(err).unwrap().contains("does not fit"));
}

#[test]
#[ignore = "needs root: mounts a read-only tmpfs (scripts/test runs it as root)"]
fn json_into_a_directory_that_cannot_be_written_is_refused_before_the_run() {
    let ro = Mount::new("tmpfs", "ro,size=1m");
    let data = tempfile::tempdir().unwrap();
    let json = ro.path().join("r.json");
    let out = iobm()
        .args(["write", "--size", "1MiB", "--json"])
        .arg(&json)
        .arg(data.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("--json") && err.contains("not writable"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert!(entries(data.path()).is_empty());
}

#[test]
#[ignore = "needs root: mounts a ramfs (scripts/test runs it as root)"]
fn direct_io_refused_by_the_file_system_is_a_clear_error() {
    // ramfs has no O_DIRECT (tmpfs has it since Linux 6.6).
    let fs = Mount::new("ramfs", "mode=0755");
    let out = iobm()
        .args(["write", "--direct", "--size", "1MiB", "--block", "4k"])
        .arg(fs.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("--direct") && err.contains("ramfs"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(entries(fs.path()).is_empty());
}

#[test]
fn direct_io_where_supported() {
    // The build's temp dir is on the disk file system holding the checkout.
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = iobm()
        .args([
            "stream", "--direct", "-j", "2", "--size", "4MiB", "--block", "64k",
        ])
        .arg(data.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("refuses O_DIRECT") {
        eprintln!("this file system refuses O_DIRECT; checked the clear error instead");
        assert_eq!(out.status.code(), Some(2));
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("O_DIRECT"), "{stdout}");
    // With O_DIRECT, the read is not a page-cache read: no residency check, no cache warning.
    assert!(
        !stdout.contains("page cache when the read began"),
        "{stdout}"
    );
    assert!(entries(data.path()).is_empty());
}

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

    // bonnie++'s own tools (Debian package bonnie++, installed by scripts/test) read it.
    let has_tools = std::process::Command::new("bon_csv2txt")
        .arg("--help")
        .stdin(Stdio::null())
        .output()
        .is_ok();
    if !has_tools && std::env::var_os("CI").is_none() {
        eprintln!("bon_csv2txt not installed here; scripts/test installs it");
        return;
    }
    for (tool, needle) in [
        ("bon_csv2txt", "Sequential Output"),
        ("bon_csv2html", "<table"),
    ] {
        let out = std::process::Command::new(tool)
            .stdin(std::fs::File::open(out.path().join("nfs.csv")).unwrap())
            .output()
            .unwrap();
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
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("run")
            && lines[0].contains("block write MiB/s")
            && lines[0].contains("random seeks /s"),
        "{table}"
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
    assert_eq!(rows[0].len(), 1 + 2 * 12);
    assert_eq!(rows[1][2], "1.00");
    assert!(rows[2][2].parse::<f64>().unwrap() > 0.0);

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

#[cfg(not(feature = "mpi"))]
#[test]
fn started_by_mpirun_without_mpi_support_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let out = iobm()
        .env("OMPI_COMM_WORLD_SIZE", "4")
        .args(["write", "--size", "1MiB"])
        .arg(data.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("one of 4 ranks") && err.contains("--features mpi"),
        "{err}"
    );
    assert!(entries(data.path()).is_empty());
}

#[test]
fn verify_checks_what_is_read_back() {
    let data = tempfile::tempdir().unwrap();
    iobm()
        .args([
            "stream", "--verify", "-j", "2", "--size", "2MiB", "--block", "64k",
        ])
        .arg(data.path())
        .assert()
        .success();
    iobm()
        .args(["write", "--keep", "--size", "1MiB", "--block", "64k"])
        .arg(data.path())
        .assert()
        .success();
    let run_dir = data.path().join(&entries(data.path())[0]);
    iobm()
        .args(["read", "--verify"])
        .arg(&run_dir)
        .assert()
        .success();
    // Damage one stamp in the middle of the file: the read names the offset.
    let file = run_dir.join("data.0");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[65536 + 20] ^= 0xff;
    std::fs::write(&file, &bytes).unwrap();
    let out = iobm()
        .args(["read", "--verify"])
        .arg(&run_dir)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("offset 65536") && stderr.contains("bad data"),
        "{stderr}"
    );
    // Without --verify the damage goes unnoticed, as a plain read would.
    iobm().arg("read").arg(&run_dir).assert().success();
    // Unstamped data cannot be verified.
    iobm()
        .args(["stream", "--verify", "--data", "zero", "--size", "1MiB"])
        .arg(data.path())
        .assert()
        .code(2);
}
