//! Multi-rank runs under a real `mpirun` (Open MPI): totals over ranks, one report, clean-up,
//! per-rank layouts, which rank --reorder reads which region, bonnie on every rank, the
//! launcher guards, plans and reruns under mpirun, `iobm meta` across ranks, `--until-stable`
//! summed over ranks, `--rate` shared by them, find's work stolen across ranks, `--live` and `--requests` written by each rank (the live page by rank 0), a raw device per rank. Built only
//! with `--features mpi`;
//! scripts/test installs Open MPI and runs them.
#![cfg(feature = "mpi")]

mod common;
#[path = "mpi/find.rs"]
mod find;
#[path = "mpi/io500.rs"]
mod io500;
#[path = "mpi/live.rs"]
mod live;
#[path = "mpi/meta.rs"]
mod meta;
#[path = "mpi/plans.rs"]
mod plans;
#[path = "mpi/rate.rs"]
mod rate;
#[path = "mpi/raw.rs"]
mod raw;
#[path = "mpi/requests.rs"]
mod requests;
#[path = "mpi/s3.rs"]
mod s3;
#[path = "mpi/steady.rs"]
mod steady;
#[path = "mpi/strided.rs"]
mod strided;

use common::{aggregate, browser, entries, load, phase_bytes as bytes, Server};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::sync::Mutex;

/// Held by the tests whose timing the others' load would upset on a small machine: the Ctrl-C
/// test gives its ranks a fixed time; 32 oversubscribed ranks, and find's two traced ranks
/// writing 20,000 files, take every core.
static ALONE: Mutex<()> = Mutex::new(());

/// `mpirun -np RANKS` on this machine, oversubscribed, over TCP.
fn launcher(ranks: u32) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--mca",
        "btl",
        "self,tcp",
    ])
    .args(["-np", &ranks.to_string()]);
    c
}

fn mpirun(ranks: u32, args: &[&str], dir: &Path) -> Output {
    launcher(ranks)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args(args)
        .arg(dir)
        .output()
        .expect("mpirun runs")
}

/// [`mpirun`], which must succeed (its stderr shown when it does not).
fn mpirun_ok(ranks: u32, args: &[&str], dir: &Path) -> Output {
    let out = mpirun(ranks, args, dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
    let got = aggregate(phase, "makespan")["bytes_per_s"]
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
    let html = out_dir.path().join("w.html");
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
            "--html",
            html.to_str().unwrap(),
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
    // Open MPI's version string ends in a NUL: none reaches the result or the report.
    assert!(!library.chars().any(char::is_control), "{library:?}");
    assert!(
        !stdout.chars().any(|c| c.is_control() && c != '\n'),
        "{stdout:?}"
    );
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
    // The page rank 0 wrote: the run's throughput, then the phase's throughput and latency over
    // time (unless the phase ran fewer than three intervals, which the page says), distribution,
    // workers and ranks, every chart drawn with the JSON's numbers.
    let short = std::fs::read_to_string(&html)
        .unwrap()
        .contains("too few for charts over time");
    let dom = browser::check_page(&html, if short { 1 + 3 } else { 1 + 5 });
    assert!(dom.contains("id=\"phase-0-ranks\""));
    browser::check_numbers(&dom, &result);
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

    // Which rank reads which region: a kept shared file with one bad block in rank k's region
    // of job k % 2, read with --reorder --verify, stops at that block; the one worker whose
    // series counts an error read it, and must be rank (k + 2) % 3's (the rank before k) worker
    // k % 2.
    let per_job = 1usize << 20;
    ok(&mpirun(
        3,
        &[
            "write",
            "--shared-file",
            "--keep",
            "-j",
            "2",
            "--size-per-job",
            "1MiB",
            "--block",
            "128k",
        ],
        data.path(),
    ));
    let kept = entries(data.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let run_dir = data.path().join(&kept[0]);
    let file = run_dir.join("data.shared");
    let pristine = std::fs::read(&file).unwrap();
    assert_eq!(pristine.len(), 3 * 2 * per_job);
    for k in 0..3usize {
        let mut bad = pristine.clone();
        bad[(k * 2 + k % 2) * per_job + 300_000] ^= 0x01;
        std::fs::write(&file, &bad).unwrap();
        let json = out_dir.path().join(format!("r{k}.json"));
        let out = mpirun(
            3,
            &[
                "read",
                "--reorder",
                "--verify",
                "--json",
                json.to_str().unwrap(),
            ],
            &run_dir,
        );
        assert_eq!(out.status.code(), Some(3), "{out:?}");
        let phase = &load(&json)["phases"][0];
        assert_eq!(
            phase["errors"][0]["kind"], "bad data",
            "{}",
            phase["errors"]
        );
        let found: Vec<(u64, u64)> = phase["workers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| {
                w["series"]["errors"]
                    .as_array()
                    .is_some_and(|e| e.iter().any(|n| u64_of(n) > 0))
            })
            .map(|w| (u64_of(&w["rank"]), u64_of(&w["worker"])))
            .collect();
        assert_eq!(
            found,
            [(((k + 2) % 3) as u64, (k % 2) as u64)],
            "the bad block in rank {k}'s region {} was read by",
            k % 2
        );
    }
}

#[test]
fn kept_data_is_read_by_as_many_ranks() {
    let data = tempfile::tempdir().unwrap();
    let stdout = ok(&mpirun(
        4,
        &["write", "--keep", "-j", "2", "--size-per-job", "1MiB"],
        data.path(),
    ));
    let kept = entries(data.path());
    assert_eq!(kept.len(), 1);
    let run_dir = data.path().join(&kept[0]);
    // The hint says how: as many ranks as wrote it.
    let hint = format!("read it with: mpirun -np 4 iobm read {}", run_dir.display());
    assert!(stdout.contains(&hint), "{stdout}");
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

const KEY: &str = "AKIOBMMPI";
const SECRET: &str = "iobmmpisecretiobmmpisecret";

pub(crate) fn iobm_serve(dir: &Path) -> Server {
    common::iobm_serve_with(dir, KEY, SECRET)
}

/// `mpirun -np N iobm s3 ARGS` with the test's credentials.
pub(crate) fn mpirun_s3(ranks: u32, args: &[&str]) -> Output {
    launcher(ranks)
        .args(["-x", "AWS_ACCESS_KEY_ID", "-x", "AWS_SECRET_ACCESS_KEY"])
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("s3")
        .args(args)
        .output()
        .expect("mpirun runs")
}

/// Every file under `dir`.
pub(crate) fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn u64_of(v: &Value) -> u64 {
    v.as_u64().unwrap()
}

/// Ctrl-C of `mpirun`: Open MPI sends the ranks SIGTERM `odls_base_sigkill_timeout` seconds
/// after it (1 by default) and SIGKILL as long again later; given 10 s, every rank stops, rank 0
/// reports and saves what was measured, and the run's data (files, objects and bucket) is
/// removed once.
#[test]
fn ctrl_c_of_the_launcher_reports_and_cleans_up_given_the_time() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let interrupted = |args: &[&str], json: &Path| {
        let mut child = launcher(2)
            .args(["--mca", "odls_base_sigkill_timeout", "10"])
            .args(["-x", "AWS_ACCESS_KEY_ID", "-x", "AWS_SECRET_ACCESS_KEY"])
            .env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .arg(assert_cmd::cargo::cargo_bin("iobm"))
            .args(args)
            .arg("--json")
            .arg(json)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Interrupted once the phase runs: the result file is saved before it starts.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while !json.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "the run never started"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        std::thread::sleep(std::time::Duration::from_secs(1));
        // SAFETY: kill(2) on the launcher this test started.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        child.wait().unwrap();
        let result = load(json);
        assert_eq!(result["status"], "interrupted");
        assert_eq!(result["phases"][0]["status"], "interrupted");
        result
    };
    let out = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let result = interrupted(
        &[
            "write",
            "--size",
            "1GiB",
            "--duration",
            "60s",
            data.path().to_str().unwrap(),
        ],
        &out.path().join("write.json"),
    );
    assert_eq!(result["phases"][0]["workers"].as_array().unwrap().len(), 2);
    assert!(
        entries(data.path()).is_empty(),
        "{:?}",
        entries(data.path())
    );

    let dir = tempfile::tempdir().unwrap();
    let server = iobm_serve(dir.path());
    let result = interrupted(
        &[
            "s3",
            "put",
            "--endpoint",
            &server.url,
            "--concurrent",
            "2",
            "--obj-size",
            "64KiB",
            "--duration",
            "60s",
        ],
        &out.path().join("put.json"),
    );
    assert_eq!(result["phases"][0]["workers"].as_array().unwrap().len(), 4);
    assert!(!dir.path().join("iobm").exists(), "the bucket was removed");
}

#[test]
fn thirty_two_ranks_are_merged_rank_by_rank_into_a_bounded_document() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // 32 ranks x 2 workers x 400 intervals of 10 ms: past the 20,000 worker-intervals a
    // document keeps, so the per-worker series go to the side file beside it.
    let data = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let json = out_dir.path().join("w.json");
    let out = mpirun(
        32,
        &[
            "write",
            "-j",
            "2",
            "--size-per-job",
            "8MiB",
            "--block",
            "64k",
            "--duration",
            "4s",
            "--interval",
            "10ms",
            "--json",
            json.to_str().unwrap(),
        ],
        data.path(),
    );
    let stdout = ok(&out);
    assert!(stdout.contains("32 MPI ranks"), "{stdout}");
    assert!(
        stdout.contains("gather: rank 0 gathered and merged"),
        "{stdout}"
    );
    let result = load(&json);
    let phase = &result["phases"][0];
    assert!(phase["gather_s"].as_f64().unwrap() > 0.0);
    assert_eq!(phase["workers"].as_array().unwrap().len(), 64);
    assert_eq!(phase["rank_series"].as_array().unwrap().len(), 32);
    let sum = |s: &Value| -> u64 { s["bytes"].as_array().unwrap().iter().map(u64_of).sum() };
    assert_eq!(sum(&phase["series"]), bytes(phase));
    let by_ranks: u64 = phase["rank_series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| sum(&r["series"]))
        .sum();
    assert_eq!(by_ranks, bytes(phase));
    assert_eq!(phase["worker_series_detached"], true);
    let side = out_dir
        .path()
        .join(result["worker_series_file"].as_str().unwrap());
    assert!(side.exists(), "{}", side.display());
    // The per-worker series come back from the side file: the CSV holds every worker's rows.
    let csv = out_dir.path().join("w.csv");
    let report = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("report")
        .arg(&json)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert!(report.status.success());
    let text = std::fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let column = header.iter().position(|h| *h == "bytes").unwrap();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert!(rows.len() >= 20_000, "{}", rows.len());
    let csv_bytes: u64 = rows.iter().map(|r| r[column].parse::<u64>().unwrap()).sum();
    assert_eq!(csv_bytes, bytes(phase));
    assert!(entries(data.path()).is_empty());
}
