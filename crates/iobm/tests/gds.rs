//! `--gds`: GPU buffers moved by cuFile, end to end on iobm's fake GPU and fake cuFile
//! (`IOBM_TEST_FAKE_GPU`, `IOBM_TEST_FAKE_CUFILE`), with every byte verified; the path each
//! phase took judged from fake nvidia-fs counters (`IOBM_TEST_NVFS_STATS`, a file the fake
//! cuFile adds its bytes to in `direct` mode and leaves in `compat` mode): GPU-direct,
//! compatibility mode, or unknown without counters, in the text, the document and the gdsio
//! line's XferType; and, where cuFile cannot be loaded (this machine), the one-line refusal
//! before anything is created.

mod common;

use common::{assert_matches_schema, iobm, load, u};
use std::path::Path;

const MIB: u64 = 1 << 20;

/// nvidia-fs's counters as its stats file shows them, with `read` and `written` MiB.
fn nvfs_stats(read: u64, written: u64) -> String {
    format!(
        "GDS Version: 1.9.0.20\nNVFS statistics(ver: 4.0)\nReads                           : n=1 ok=1 err=0 readMiB={read} io_state_err=0\nWrites                          : n=1 ok=1 err=0 writeMiB={written} io_state_err=0 pg-cache=0 pg-cache-fail=0 pg-cache-eio=0\n"
    )
}

/// `iobm` on one fake GPU reached by the fake cuFile in `mode`, its counters in `stats`.
fn on_fake_cufile(mode: &str, stats: &Path) -> assert_cmd::Command {
    let mut cmd = iobm();
    cmd.env("IOBM_TEST_FAKE_GPU", "1")
        .env("IOBM_TEST_FAKE_CUFILE", mode)
        .env("IOBM_TEST_NVFS_STATS", stats);
    cmd
}

/// Runs a `--gds` stream of 8 MiB with `--verify` and `--gdsio-line`: its text and document.
fn gds_stream(mode: &str, stats: &Path, dir: &Path) -> (String, serde_json::Value) {
    let json = dir.join("g.json");
    let data = dir.join("data");
    std::fs::create_dir(&data).unwrap();
    let out = on_fake_cufile(mode, stats)
        .args([
            "stream", "--mem", "gpu:0", "--gds", "-j", "2", "--size", "8MiB",
        ])
        .args(["--block", "1MiB", "--verify", "--gdsio-line", "--json"])
        .arg(&json)
        .arg(&data)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let run = load(&json);
    assert_matches_schema(&run);
    assert_eq!(run["config"]["memory"]["path"], "direct");
    assert!(
        text.contains("buffers on gpu:0 (fake) through cuFile (--gds)"),
        "{text}"
    );
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(u(&phase["latency"]["histogram"]["count"]), 8, "{phase}");
        let measures = phase["latency"]["measures"].as_str().unwrap();
        assert!(measures.starts_with("one cuFile"), "{measures}");
        // Nothing bounced through host memory.
        assert!(phase.get("device_copy").is_none(), "{phase}");
        assert!(phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w.get("copy_ns").is_none()));
    }
    (text, run)
}

/// The gdsio lines' XferType words.
fn xfer_types(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.strip_prefix("IoType: "))
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect()
}

#[test]
fn counters_that_moved_the_bytes_show_gpu_direct() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("nvfs-stats");
    std::fs::write(&stats, nvfs_stats(100, 200)).unwrap();
    let (text, run) = gds_stream("direct", &stats, dir.path());
    let (write, read) = (&run["phases"][0], &run["phases"][1]);
    assert_eq!(u(&write["gds"]["nvfs"]["written_bytes"]), 8 * MIB);
    assert_eq!(u(&write["gds"]["nvfs"]["read_bytes"]), 0);
    assert_eq!(u(&read["gds"]["nvfs"]["read_bytes"]), 8 * MIB);
    for phase in [write, read] {
        assert_eq!(phase["gds"]["path"]["verdict"], "gpu-direct", "{phase}");
    }
    assert!(
        text.contains("  gds path: GPU-direct: nvidia-fs moved 8.00 MiB of the 8.00 MiB the phase moved (cuFile, gdsio -x 0)"),
        "{text}"
    );
    assert_eq!(xfer_types(&text), ["GPUD", "GPUD"]);
    // The fake nvidia-fs counted the run's bytes on top of what it held.
    assert_eq!(
        std::fs::read_to_string(&stats).unwrap().lines().count(),
        2,
        "rewritten by the fake"
    );
    let after = std::fs::read_to_string(&stats).unwrap();
    assert!(
        after.contains("readMiB=108 ") && after.contains("writeMiB=208 "),
        "{after}"
    );
}

#[test]
fn counters_that_did_not_move_show_compatibility_mode() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("nvfs-stats");
    std::fs::write(&stats, nvfs_stats(100, 200)).unwrap();
    let (text, run) = gds_stream("compat", &stats, dir.path());
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["gds"]["path"]["verdict"], "compat-mode", "{phase}");
        assert_eq!(u(&phase["gds"]["nvfs"]["read_bytes"]), 0);
        assert_eq!(u(&phase["gds"]["nvfs"]["written_bytes"]), 0);
    }
    assert!(
        text.contains("  gds path: compatibility mode: nvidia-fs moved 0 B of the 8.00 MiB the phase moved: cuFile ran in compatibility mode"),
        "{text}"
    );
    // What compatibility mode does is gdsio's CPU_GPU: host memory, then a copy.
    assert_eq!(xfer_types(&text), ["CPU_GPU", "CPU_GPU"]);
}

#[test]
fn no_counters_show_an_unknown_path() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("no-nvidia-fs-here");
    let (text, run) = gds_stream("direct", &stats, dir.path());
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["gds"]["path"]["verdict"], "unknown", "{phase}");
        assert!(phase["gds"]["nvfs"].is_null());
    }
    assert!(
        text.contains(
            "  gds path: unknown: no nvidia-fs counters (/proc/driver/nvidia-fs/stats absent"
        ),
        "{text}"
    );
    assert_eq!(xfer_types(&text), ["UNKNOWN", "UNKNOWN"]);
}

#[test]
fn a_kept_data_set_written_and_read_through_cufile_is_verified() {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("nvfs-stats");
    std::fs::write(&stats, nvfs_stats(0, 0)).unwrap();
    let json = dir.path().join("w.json");
    on_fake_cufile("direct", &stats)
        .args(["write", "--mem", "gpu:0", "--gds", "--keep", "-j", "2"])
        .args(["--size", "4MiB", "--block", "256KiB", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let written = load(&json);
    assert_eq!(written["phases"][0]["gds"]["path"]["verdict"], "gpu-direct");
    assert_eq!(written["config"]["direct"], true, "--gds implies --direct");
    let run_dir = dir
        .path()
        .join(format!("iobm-{}", written["run_id"].as_str().unwrap()));
    // What cuFile wrote is on storage: read through host memory, every byte checked.
    iobm()
        .args(["read", "--verify"])
        .arg(&run_dir)
        .assert()
        .success();
    let out = on_fake_cufile("direct", &stats)
        .args(["read", "--mem", "gpu:0", "--gds", "--verify", "--json"])
        .arg(dir.path().join("r.json"))
        .arg(&run_dir)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("verify: every byte read was checked"),
        "{text}"
    );
    let read = load(&dir.path().join("r.json"));
    assert_eq!(read["phases"][0]["gds"]["path"]["verdict"], "gpu-direct");
    assert_eq!(u(&read["phases"][0]["gds"]["nvfs"]["read_bytes"]), 4 * MIB);
}

#[test]
fn no_cufile_or_no_gpu_buffers_are_refused_in_one_line_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let refused = |cmd: &mut assert_cmd::Command, args: &[&str], says: &str| {
        let out = cmd
            .arg("write")
            .args(args)
            .args(["--size", "1MiB"])
            .arg(dir.path())
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.starts_with(says), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    };
    // This machine has no cuFile: the library is what is missing, on a fake GPU too.
    let no_cufile = "iobm: error: --mem gpu:0 --gds: libcufile.so.0 cannot be loaded (";
    refused(&mut iobm(), &["--mem", "gpu:0", "--gds"], no_cufile);
    let mut fake_gpu = iobm();
    fake_gpu.env("IOBM_TEST_FAKE_GPU", "1");
    refused(&mut fake_gpu, &["--mem", "gpu:0", "--gds"], no_cufile);
    refused(
        &mut iobm(),
        &["--gds"],
        "iobm: error: --gds moves bytes between storage and GPU memory: add --mem gpu:N",
    );
    let stats = dir.path().join("nvfs-stats");
    refused(
        &mut on_fake_cufile("direct", &stats),
        &["--mem", "gpu:0", "--gds", "--iodepth", "4"],
        "iobm: error: --mem gpu:0 --gds moves one request at a time through cuFile: use --engine sync",
    );
}
