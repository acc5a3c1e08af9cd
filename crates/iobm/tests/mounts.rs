//! Runs on small file systems mounted for the test (root only: marked ignored, run by
//! `scripts/test` as root): a full tmpfs ends the run cleanly with partial results, a
//! read-only one refuses `--json` before the run, a ramfs refuses `--direct` clearly, the
//! gateway serves a ramfs (no extended attributes), a FUSE file system that fails writes
//! with EIO under a full io_uring queue ends the run cleanly, and io500's writes that fill a
//! tmpfs before their stonewall end the suite clearly, not valid.

mod common;

use common::mount::Mount;
use common::{assert_matches_schema, entries, iobm, iobm_serve_with, load, phase_bytes};
use std::path::Path;

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
#[ignore = "needs root: mounts a ramfs (scripts/test runs it as root)"]
fn the_gateway_serves_a_file_system_without_extended_attributes() {
    // ramfs keeps no user extended attributes: buckets and objects are still made, and ETags
    // are computed from the bytes when asked for (checked by --verify).
    let fs = Mount::new("ramfs", "mode=0755");
    let server = iobm_serve_with(fs.path(), "AKRAMFS", "ramfs-secret");
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("r.json");
    let out = iobm()
        .args([
            "s3",
            "get",
            "--objects",
            "4",
            "--ops",
            "8",
            "--obj-size",
            "64KiB",
        ])
        .args(["--verify", "--endpoint", &server.url, "--json"])
        .arg(&json)
        .env("AWS_ACCESS_KEY_ID", "AKRAMFS")
        .env("AWS_SECRET_ACCESS_KEY", "ramfs-secret")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Every GET answered whole and checked against what was stored, none failing.
    let result = load(&json);
    let get = result["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["op"] == "get")
        .expect("a get phase");
    assert_eq!(get["status"], "complete");
    assert_eq!(get["settings"]["verify"], true);
    assert_eq!(get["operations"][0]["ops"], 8);
    assert_eq!(get["operations"][0]["errors"], 0);
    assert_eq!(phase_bytes(get), 8 * 64 * 1024);
    // Each worker that read checked what it read.
    for w in get["workers"].as_array().unwrap() {
        assert_eq!(w["span"]["ops"] == 0, w["verify_ns"] == 0, "{w}");
    }
    // The run's bucket is gone; the gateway's own state stays.
    assert_eq!(entries(fs.path()), [".iobm-gateway"]);
}

#[test]
#[ignore = "needs root: mounts a tmpfs (scripts/test runs it as root)"]
fn a_full_file_system_under_a_full_queue_ends_the_run_cleanly() {
    // 32 writes in flight per worker when the file system fills: the failed ones are counted,
    // the ones that completed are in the numbers, every request is reaped, and the result is
    // saved.
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
            "64k",
            "--iodepth",
            "32",
        ])
        .args(["--ignore-free-space", "--json"])
        .arg(&json)
        .arg(fs.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result = failed_with(&json, "ENOSPC", 8 << 20);
    assert_eq!(result["phases"][0]["settings"]["iodepth"], 32);
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}

/// The saved result of a run that a fault of `kind` stopped under a full queue: failed, the
/// fault named, what completed (some bytes, at most `at_most`) counted, every completed
/// request's latency recorded.
fn failed_with(json: &Path, kind: &str, at_most: u64) -> serde_json::Value {
    let result = load(json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "failed");
    let phase = &result["phases"][0];
    assert_eq!(phase["errors"][0]["kind"], kind);
    let written = phase_bytes(phase);
    assert!(written > 0 && written <= at_most, "{written}");
    let ops: u64 = phase["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["span"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(phase["latency"]["histogram"]["count"], ops);
    result
}

/// A FUSE file system (tests/fuse/faulty_fs.py, in memory) whose data files fail every write
/// with EIO once they hold `fail_after` bytes; unmounted when dropped.
struct FaultyFs {
    dir: tempfile::TempDir,
    daemon: std::process::Child,
}

impl FaultyFs {
    fn mount(fail_after: u64) -> FaultyFs {
        common::assert_root("this test mounts a FUSE file system as root");
        let dir = tempfile::tempdir().unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fuse/faulty_fs.py");
        let daemon = std::process::Command::new("python3")
            .arg(script)
            .arg(dir.path())
            .arg(fail_after.to_string())
            .spawn()
            .expect(
                "python3 runs the FUSE daemon (fusepy and libfuse2: scripts/test installs them)",
            );
        let fs = FaultyFs { dir, daemon };
        let mounted = || {
            let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
            let at = fs.dir.path().to_str().unwrap().to_string();
            mounts
                .lines()
                .any(|l| l.split(' ').nth(1) == Some(at.as_str()))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !mounted() {
            assert!(
                std::time::Instant::now() < deadline,
                "the FUSE file system did not mount"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        fs
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for FaultyFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

#[test]
#[ignore = "needs root: mounts a FUSE file system (scripts/test runs it as root)"]
fn a_storage_fault_under_a_full_queue_ends_the_run_cleanly() {
    // EIO from the storage with 8 writes in flight: the failure is named and counted, what
    // completed is in the numbers (at most what the storage took), every request is reaped,
    // the result is saved and the run's directory removed.
    let fs = FaultyFs::mount(2 << 20);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("eio.json");
    let out = iobm()
        .args([
            "write",
            "--size",
            "8MiB",
            "--block",
            "64k",
            "--iodepth",
            "8",
            "--json",
        ])
        .arg(&json)
        .arg(fs.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the run stopped: write data.") && stderr.contains("(EIO)"),
        "{stderr}"
    );
    let result = failed_with(&json, "EIO", 2 << 20);
    let phase = &result["phases"][0];
    assert_eq!(phase["settings"]["engine"], "io_uring");
    let failed: u64 = phase["workers"][0]["series"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_u64().unwrap())
        .sum();
    assert_eq!(failed, phase["errors"][0]["count"].as_u64().unwrap());
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}

#[test]
#[ignore = "needs root: mounts a tmpfs (scripts/test runs it as root)"]
fn io500_sizes_beyond_the_free_space_run_and_a_full_disk_ends_the_suite_not_valid() {
    let fs = Mount::tmpfs("16m");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    // ior-easy's 1 GiB does not fit: said, not refused; the write fills the disk first.
    let out = iobm()
        .args(["io500", "--easy-size", "1GiB", "--segments", "4"])
        .args(["--items", "10", "--stonewall", "60s", "--json"])
        .arg(&json)
        .arg(fs.path())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("more than the")
            && stdout.contains("the stonewall is to end the writes first"),
        "{stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("No space left on device (ENOSPC)"),
        "{stderr}"
    );
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(result["status"], "failed");
    let write = &result["phases"][0];
    assert_eq!(write["name"], "ior-easy-write");
    assert_eq!(write["errors"][0]["kind"], "ENOSPC");
    let why = result["io500"]["invalid_because"].to_string();
    assert!(
        why.contains("ior-easy-write had failed operations (1 ENOSPC)"),
        "{why}"
    );
    assert_eq!(result["io500"]["valid"], false);
    assert!(entries(fs.path()).is_empty(), "{:?}", entries(fs.path()));
}
