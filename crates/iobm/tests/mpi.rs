//! Multi-rank runs under a real `mpirun` (Open MPI): totals over ranks, one report, clean-up,
//! per-rank layouts, --reorder, bonnie on every rank, and the launcher guards. Built only with
//! `--features mpi`; scripts/test installs Open MPI and runs them.
#![cfg(feature = "mpi")]

mod common;

use common::{entries, load, phase_bytes as bytes};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn mpirun(ranks: u32, args: &[&str], dir: &Path) -> Output {
    Command::new("mpirun")
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "--mca",
            "btl",
            "self,tcp",
        ])
        .args(["-np", &ranks.to_string()])
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args(args)
        .arg(dir)
        .output()
        .expect("mpirun runs")
}

/// Makespan recomputed from the per-worker stamps of all ranks.
fn assert_makespan_recomputable(phase: &Value) {
    let workers = phase["workers"].as_array().unwrap();
    let start = workers
        .iter()
        .map(|w| w["span"]["start_ns"].as_u64().unwrap())
        .min()
        .unwrap();
    let end = workers
        .iter()
        .map(|w| w["span"]["end_ns"].as_u64().unwrap())
        .max()
        .unwrap();
    let want = bytes(phase) as f64 / ((end - start) as f64 / 1e9);
    let got = phase["aggregates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "makespan")
        .unwrap()["bytes_per_s"]
        .as_f64()
        .unwrap();
    assert!(
        (got - want).abs() <= 1e-6 * want,
        "makespan {got} vs {want}"
    );
}

fn ok(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn four_ranks_write_one_report_whose_totals_are_the_sum_over_ranks() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("w.json");
    let out = mpirun(
        4,
        &[
            "write",
            "-j",
            "2",
            "--size-per-job",
            "2MiB",
            "--block",
            "256k",
            "--json",
            json.to_str().unwrap(),
        ],
        data.path(),
    );
    let stdout = ok(&out);
    assert_eq!(
        stdout.matches("write: complete").count(),
        1,
        "one report: {stdout}"
    );
    assert!(stdout.contains("4 MPI ranks"), "{stdout}");
    let result = load(&json);
    let ranks = result["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    assert!(ranks.iter().all(|r| r["clock_uncertainty_ns"].is_u64()));
    // The MPI library names itself, in the result and the report's header.
    let library = result["environment"]["mpi"].as_str().unwrap();
    assert!(library.contains("MPI"), "{library}");
    assert!(stdout.contains(library), "{stdout}");
    assert!(result["phases"][0]["cache"]["verdict"]["verdict"].is_string());
    let phase = &result["phases"][0];
    let workers = phase["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 8);
    for rank in 0..4u64 {
        assert_eq!(workers.iter().filter(|w| w["rank"] == rank).count(), 2);
    }
    assert_eq!(bytes(phase), 4 * 2 * (2 << 20));
    assert_eq!(phase["latency"]["histogram"]["count"], 4 * 2 * 8);
    assert_makespan_recomputable(phase);
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
}

#[test]
fn a_shared_file_read_back_by_the_next_rank() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("s.json");
    let out = mpirun(
        3,
        &[
            "stream",
            "--shared-file",
            "--reorder",
            "-j",
            "2",
            "--size-per-job",
            "1MiB",
            "--block",
            "128k",
            "--json",
            json.to_str().unwrap(),
        ],
        data.path(),
    );
    ok(&out);
    let result = load(&json);
    assert_eq!(result["config"]["layout"], "shared_file");
    for phase in result["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete");
        assert_eq!(bytes(phase), 3 * 2 * (1 << 20));
        assert_makespan_recomputable(phase);
    }
    assert!(entries(data.path()).is_empty());
}

#[test]
fn kept_data_is_read_by_as_many_ranks() {
    let data = tempfile::tempdir().unwrap();
    ok(&mpirun(
        4,
        &["write", "--keep", "-j", "2", "--size-per-job", "1MiB"],
        data.path(),
    ));
    let kept = entries(data.path());
    assert_eq!(kept.len(), 1);
    let run_dir = data.path().join(&kept[0]);
    let json = data.path().join("r.json");
    ok(&mpirun(
        4,
        &[
            "read",
            "--reorder",
            "--verify",
            "--block",
            "256k",
            "--json",
            json.to_str().unwrap(),
        ],
        &run_dir,
    ));
    assert_eq!(bytes(&load(&json)["phases"][0]), 4 * 2 * (1 << 20));
    let wrong = mpirun(3, &["read"], &run_dir);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("written by 4 rank(s)"));
}

#[test]
fn size_is_the_total_over_every_ranks_jobs() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("s.json");
    let args = [
        "write", "-j", "2", "--size", "8MiB", "--block", "256k", "--json",
    ];
    let stdout = ok(&mpirun(
        2,
        &[&args[..], &[json.to_str().unwrap()]].concat(),
        data.path(),
    ));
    assert!(
        stdout.contains("2 ranks x 2 jobs x 2.00 MiB = 8.00 MiB"),
        "{stdout}"
    );
    let result = load(&json);
    assert_eq!(bytes(&result["phases"][0]), 8 << 20);
    assert_eq!(result["config"]["total_bytes"], 8 << 20);
}

#[test]
fn bonnie_runs_on_every_rank() {
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("b.json");
    let stdout = ok(&mpirun(
        4,
        &[
            "bonnie",
            "--size",
            "4MiB",
            "--files",
            "1",
            "--seeks",
            "100",
            "--json",
            json.to_str().unwrap(),
        ],
        data.path(),
    ));
    assert!(stdout.contains("Sequential Output"), "{stdout}");
    let result = load(&json);
    let phases = result["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 12);
    assert_eq!(bytes(&phases[1]), 4 * (4 << 20));
    let ops = |p: &Value| -> u64 {
        p["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["span"]["ops"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(ops(&phases[5]), 4 * 100);
    for phase in &phases[6..] {
        assert_eq!(ops(phase), 4 * 1024, "{}", phase["name"]);
    }
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );
}

#[test]
fn a_world_of_one_under_a_launcher_of_three_is_refused() {
    // PMI_SIZE is what MPICH's launcher sets; Open MPI then starts as a singleton.
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .env("PMI_SIZE", "3")
        .args(["write", "--size", "1MiB"])
        .arg(data.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MPI sees a world of 1"), "{err}");
    assert!(entries(data.path()).is_empty());
}
