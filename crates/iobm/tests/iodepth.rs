//! `--iodepth N` through io_uring: every depth and engine on tmpfs and on this disk's file
//! system, buffered and O_DIRECT, with every byte read back verified; the flags that do not go
//! together are refused.

mod common;

use common::{iobm, load, u};
use std::path::Path;

fn stream(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let run = iobm()
        .args([
            "stream", "-j", "2", "--size", "8MiB", "--block", "64KiB", "--verify",
        ])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    load(&json)
}

#[test]
fn every_depth_and_engine_moves_and_verifies_every_byte() {
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "this test needs /dev/shm, a tmpfs on Linux");
    let memory = tempfile::tempdir_in(shm).unwrap();
    // On a disk (the build directory's), not a tmpfs /tmp.
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for dir in [memory.path(), disk.path()] {
        for direct in [false, true] {
            for (depth, engine) in [
                ("1", "sync"),
                ("1", "io_uring"),
                ("8", "io_uring"),
                ("32", "io_uring"),
            ] {
                let mut extra = vec!["--iodepth", depth, "--engine", engine, "--random"];
                if direct {
                    extra.push("--direct");
                }
                let result = stream(dir, &extra);
                assert_eq!(result["config"]["engine"], engine);
                assert_eq!(result["config"]["iodepth"], depth.parse::<u64>().unwrap());
                for phase in result["phases"].as_array().unwrap() {
                    let what = format!("{extra:?} {}", phase["name"]);
                    assert_eq!(phase["status"], "complete", "{what}: {}", phase["errors"]);
                    assert_eq!(phase["settings"]["engine"], engine, "{what}");
                    let bytes: u64 = phase["workers"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|w| u(&w["span"]["bytes"]))
                        .sum();
                    assert_eq!(bytes, 8 << 20, "{what}");
                    // One latency per request: 2 workers x 64 blocks.
                    assert_eq!(u(&phase["latency"]["histogram"]["count"]), 128, "{what}");
                    if engine == "io_uring" {
                        let measures = phase["latency"]["measures"].as_str().unwrap();
                        assert!(
                            measures.contains("from its submission to its completion"),
                            "{measures}"
                        );
                    }
                }
            }
        }
    }
    // --iodepth alone means io_uring.
    let result = stream(disk.path(), &["--iodepth", "4"]);
    assert_eq!(result["config"]["engine"], "io_uring");
}

#[test]
fn flags_that_do_not_go_together_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (
            vec!["--iodepth", "4", "--engine", "sync"],
            "--engine io_uring",
        ),
        (vec!["--iodepth", "4", "--fsync", "each"], "--fsync each"),
        (vec!["--iodepth", "0"], "--iodepth"),
    ] {
        let out = iobm()
            .args(["stream", "--size", "1MiB"])
            .args(&args)
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[test]
fn reads_and_writes_together_keep_their_own_books() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for extra in [&["--rwmix", "70"][..], &["--rwmix", "70", "--iodepth", "8"]] {
        let result = stream(disk.path(), &[extra, &["--random"]].concat());
        let phase = &result["phases"][1];
        assert_eq!(phase["op"], "readwrite");
        assert_eq!(phase["name"], "read-write 70/30");
        assert_eq!(phase["status"], "complete", "{}", phase["errors"]);
        let ops = phase["operations"].as_array().unwrap();
        assert_eq!(ops[0]["op"], "read");
        assert_eq!(ops[1]["op"], "write");
        let (reads, writes) = (u(&ops[0]["ops"]), u(&ops[1]["ops"]));
        assert_eq!(reads + writes, 128, "{extra:?}");
        assert!(
            (64..=115).contains(&reads),
            "{extra:?}: {reads} reads of 128"
        );
        // Every byte read was checked against what the run wrote (and rewrote) there.
        assert!(phase["settings"]["verify"].as_bool().unwrap());
        let verify_ns: u64 = phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| u(&w["verify_ns"]))
            .sum();
        assert!(verify_ns > 0);
        assert!(phase["cache"]["verdict"]["evidence"]
            .as_str()
            .unwrap()
            .contains("written"));
    }
    let dir = tempfile::tempdir().unwrap();
    for command in ["write", "read"] {
        let out = iobm()
            .args([command, "--rwmix", "50"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{command}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--rwmix"));
    }
}
