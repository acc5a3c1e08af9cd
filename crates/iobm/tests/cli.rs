//! End-to-end tests of the `iobm` binary on real file systems: results against the checked-in
//! schema, aggregates recomputed from the JSON, safety (only the run's directory, cleaned up),
//! bad input, Ctrl-C, `read` of kept data, `--verify`, `quick` and `report` (bonnie and compare
//! in bonnie.rs, mounted file systems in mounts.rs).

mod common;

use common::{
    assert_aggregates_recomputable, assert_matches_schema, entries, interrupt, iobm, load,
    phase_bytes, stdout_of, u,
};
use std::process::Stdio;

#[test]
fn stream_reports_every_aggregate_and_saves_a_valid_result() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Paced at 1000 operations a second over the 3 jobs, so each worker runs about 96 ms
    // (32 operations): first done needs the first worker to last 10 trace intervals, which an
    // unpaced 2 MiB job on a fast disk does not.
    let out = iobm()
        .args([
            "stream", "--jobs", "3", "--size", "6MiB", "--block", "64KiB", "--rate", "1000/s",
            "--json",
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
    // Phases of 300 ms have an all-active window long enough for a steady-state figure, and
    // the read warp's window too (not the write, whose bytes are flushed only at its end).
    for (index, phase) in result["phases"].as_array().unwrap().iter().enumerate() {
        let kinds: Vec<&str> = phase["aggregates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["kind"].as_str().unwrap())
            .collect();
        let mut expected = vec!["sum_of_rates", "makespan", "first_done", "steady_state"];
        if index == 1 {
            expected.push("warp_window");
        }
        assert_eq!(kinds, expected);
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
        (
            &["write", "-j", "4", "--size-per-job", "8388608T", d],
            "larger than 16 EiB",
        ),
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
fn mistyped_options_get_the_name_iobm_gives_them() {
    let data = tempfile::tempdir().unwrap();
    let d = data.path().to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["write", "--threads", "4", d],
            "did you mean '--jobs'? (iobm's name for elbencho's --threads)",
        ),
        (
            &["stream", "--numjobs=4", d],
            "did you mean '--jobs'? (iobm's name for fio's --numjobs)",
        ),
        (
            &["stream", "--bs", "4k", d],
            "did you mean '--block'? (iobm's name for fio's --bs)",
        ),
        (
            &["read", "--runtime", "1m", d],
            "did you mean '--duration'?",
        ),
        (
            &["s3", "put", "--threads", "4"],
            "did you mean '--concurrent'?",
        ),
        (
            &["s3", "put", "--host", "x:9000"],
            "did you mean '--endpoint'? (iobm's name for warp's --host)",
        ),
        (
            &["s3", "put", "--obj.size", "1M"],
            "did you mean '--obj-size'?",
        ),
        (
            &["bonnie", "-d", d],
            "give the directory as the argument, as in 'iobm bonnie DIR'",
        ),
        // A near miss of iobm's own name: clap's own suggestion stays.
        (
            &["write", "--jbos", "2", d],
            "a similar argument exists: '--jobs'",
        ),
    ];
    for &(args, tip) in cases {
        let out = iobm().args(args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(tip), "{args:?}: {err}");
        // Not clap's advice to pass the flag as a value.
        assert!(!err.contains("as a value"), "{args:?}: {err}");
        assert!(err.contains("Usage: iobm"), "{args:?}: {err}");
    }
    // `read` has no --jobs (as many as wrote the data set): nothing suggested.
    let out = iobm()
        .args(["read", "--threads", "2", d])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("did you mean"));
    assert!(entries(data.path()).is_empty());
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
fn two_interrupts_together_are_one_the_result_is_saved_and_the_data_removed() {
    // As `timeout -s INT` and a terminal's Ctrl-C do: one signal to the process, one to its
    // group, together. They must not be taken for a second Ctrl-C ("exit at once").
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let json = dir.path().join("int.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["stream", "-j", "2", "--size", "16MiB", "--block", "64k"])
        .args(["--duration", "4s", "--json"])
        .arg(&json)
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the write phase is saved, during the read.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let write_saved = || {
        let saved = std::fs::read_to_string(&json).ok();
        let result = saved.and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
        result.is_some_and(|r| r["phases"].as_array().is_some_and(|p| !p.is_empty()))
    };
    while !write_saved() {
        assert!(
            std::time::Instant::now() < deadline,
            "the write phase never ended"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let pid = child.id() as i32;
    // SAFETY: kill sends a signal to the child process we spawned.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(50));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(!stderr.contains("exiting at once"), "{stderr}");
    // Not a terminal: no control sequences.
    assert!(
        !stderr.contains('\x1b') && !stderr.contains('\r'),
        "{stderr:?}"
    );
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "interrupted");
    let phases: Vec<(&str, &str)> = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["status"].as_str().unwrap()))
        .collect();
    // The interrupt reached the read, or came before it began (while the written data was
    // flushed and its pages dropped): either way the read is not complete.
    assert_eq!(phases[0], ("write", "complete"));
    assert!(
        phases[1..] == [("read", "interrupted")] || phases.len() == 1,
        "{phases:?}"
    );
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
}

#[test]
fn a_run_directory_that_cannot_be_removed_is_named_and_exits_4() {
    let dir = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["write", "-j", "2", "--size", "8MiB", "--block", "64k"])
        .args(["--duration", "3s", "--json"])
        .arg(&json)
        .arg(data.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Someone else's file lands in the run's directory while it runs: iobm removes only its
    // own, so the directory stays, and the run must say so.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let run_dir = loop {
        if let Some(d) = entries(data.path())
            .into_iter()
            .find(|e| e.starts_with("iobm-"))
        {
            break data.path().join(d);
        }
        assert!(std::time::Instant::now() < deadline, "no run directory");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::fs::write(run_dir.join("theirs"), b"not iobm's").unwrap();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "complete");
    let left = &result["left_behind"][0];
    assert_eq!(left["what"], "directory");
    assert_eq!(left["location"], run_dir.to_str().unwrap());
    let said = format!(
        "directory {} left: it holds files iobm did not create",
        run_dir.display()
    );
    assert!(stdout.contains(&said), "{stdout}");
    assert!(stderr.contains(&said), "{stderr}");
    // Only the foreign file is left: the run's own are gone.
    assert_eq!(entries(&run_dir), ["theirs"]);
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
        // Each step's own evidence: the gateway's CPU apart from the client's, and what the
        // gateway counted over that step alone (a GET serves what the step read).
        // (Present, not above 0: a short GET from the page cache may take under one tick.)
        let gateway_s = phase["cpu"]["gateway_s"].as_f64();
        assert!(gateway_s.is_some_and(|s| s >= 0.0), "{}", phase["cpu"]);
        let counted = &phase["cache"]["servers"][0];
        let moved = u(&phase["operations"][0]["bytes"]);
        let key = if op == "put" {
            "received_bytes"
        } else {
            "served_bytes"
        };
        assert_eq!(u(&counted[key]), moved, "{op}: {counted}");
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

#[test]
fn direct_io_where_supported() {
    // The build's temp dir is on the disk file system holding the checkout.
    let data = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Whether this file system takes O_DIRECT, asked here as iobm's probe would be.
    let probe = data.path().join("probe");
    let supported = {
        use std::os::unix::fs::OpenOptionsExt;
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe);
        match opened {
            Ok(_) => true,
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => false,
            Err(e) => panic!("opening {}: {e}", probe.display()),
        }
    };
    std::fs::remove_file(&probe).unwrap();
    let json = data.path().join("r.json");
    let out = iobm()
        .args([
            "stream", "--direct", "-j", "2", "--size", "4MiB", "--block", "64k", "--json",
        ])
        .arg(&json)
        .arg(data.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !supported {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("refuses O_DIRECT"), "{stderr}");
        assert!(entries(data.path()).is_empty());
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("O_DIRECT"), "{stdout}");
    let result = load(&json);
    let read = &result["phases"][1];
    assert_eq!(read["name"], "read");
    assert_eq!(read["settings"]["direct"], true);
    // With O_DIRECT the read is not a page-cache read: its residency is not measured (null,
    // where a buffered read records 0 or more), so no page-cache warning can follow from it.
    assert!(read["cache"]["resident_before_bytes"].is_null(), "{read}");
    assert_eq!(entries(data.path()), ["r.json"]);
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
        .code(3)
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

#[test]
fn a_short_phase_gets_enough_intervals_unless_one_is_given() {
    // A write of 2 s, its series recorded in the result and its interval said on the page.
    let run = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let (json, html) = (dir.path().join("r.json"), dir.path().join("r.html"));
        iobm()
            .args(["write", "-j", "2", "--size", "4MiB", "--block", "64k"])
            .args(["--duration", "2s", "--json"])
            .arg(&json)
            .arg("--html")
            .arg(&html)
            .args(extra)
            .arg(&data)
            .assert()
            .success();
        let result = load(&json);
        assert_matches_schema(&result);
        (result, std::fs::read_to_string(&html).unwrap())
    };
    let intervals = |phase: &serde_json::Value| phase["series"]["bytes"].as_array().unwrap().len();

    // No --interval: 100ms, the longest readable one giving 2 s at least 20 intervals.
    let (chosen, page) = run(&[]);
    let phase = &chosen["phases"][0];
    assert_eq!(
        phase["series"]["interval_ns"], 100_000_000,
        "{}",
        phase["series"]
    );
    for worker in phase["workers"].as_array().unwrap() {
        assert_eq!(worker["series"]["interval_ns"], 100_000_000);
    }
    let n = intervals(phase);
    assert!(n >= 20, "{n} intervals");
    assert!(
        page.contains(&format!("over time: {n} intervals of 0.1 s")),
        "the page does not say the interval"
    );

    // --interval always wins.
    let (given, page) = run(&["--interval", "1s"]);
    let phase = &given["phases"][0];
    assert_eq!(phase["series"]["interval_ns"], 1_000_000_000);
    assert!(intervals(phase) <= 3, "{}", phase["series"]);
    assert!(
        page.contains(" intervals of 1 s"),
        "the page does not say the interval"
    );
}
