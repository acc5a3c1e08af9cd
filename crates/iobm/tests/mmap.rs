//! `--engine mmap` (every byte written through a mapping and read back from one, verified),
//! `--madvise` and `--fadvise`, the flags refused with them, and `--cpus`/`--numa`: each
//! worker's thread pinned, what the kernel then allowed it recorded per worker.

mod common;

use common::{iobm, load, u};
use std::path::Path;

fn run(command: &str, dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let ran = iobm()
        .args([command, "--size", "8MiB", "--block", "64KiB"])
        .args(extra)
        .arg("--json")
        .arg(&json)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{extra:?}: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    load(&json)
}

/// Every phase complete, 8 MiB moved in 128 operations.
fn moved_it_all(result: &serde_json::Value, what: &str) {
    for phase in result["phases"].as_array().unwrap() {
        let what = format!("{what} {}", phase["name"]);
        assert_eq!(phase["status"], "complete", "{what}: {}", phase["errors"]);
        let workers = phase["workers"].as_array().unwrap();
        let bytes: u64 = workers.iter().map(|w| u(&w["span"]["bytes"])).sum();
        assert_eq!(bytes, 8 << 20, "{what}");
        assert_eq!(u(&phase["latency"]["histogram"]["count"]), 128, "{what}");
    }
}

#[test]
fn mmap_writes_and_reads_back_every_byte_verified() {
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "this test needs /dev/shm, a tmpfs on Linux");
    let memory = tempfile::tempdir_in(shm).unwrap();
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cases: [&[&str]; 5] = [
        &[],
        &["--random", "--fsync", "each", "--madvise", "random"],
        &["--fsync", "never", "--madvise", "sequential"],
        &["--random", "--madvise", "hugepage", "--fadvise", "willneed"],
        &["--random", "--rwmix", "70", "--madvise", "willneed"],
    ];
    for dir in [memory.path(), disk.path()] {
        for extra in cases {
            let args = [&["-j", "2", "--engine", "mmap", "--verify"][..], extra].concat();
            let result = run("stream", dir, &args);
            let what = format!("{} {args:?}", dir.display());
            assert_eq!(result["config"]["engine"], "mmap", "{what}");
            moved_it_all(&result, &what);
            for phase in result["phases"].as_array().unwrap() {
                assert_eq!(phase["settings"]["engine"], "mmap", "{what}");
                let measures = phase["latency"]["measures"].as_str().unwrap();
                assert!(measures.contains("the file's mapping"), "{measures}");
            }
            if let Some(i) = args.iter().position(|a| *a == "--madvise") {
                assert_eq!(result["config"]["madvise"], args[i + 1], "{what}");
            }
            let each = extra.contains(&"each");
            let measures = result["phases"][0]["latency"]["measures"].as_str().unwrap();
            assert_eq!(measures.ends_with("then msync"), each, "{measures}");
        }
    }
}

#[test]
fn a_kept_data_set_is_read_back_through_a_mapping() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    // Written by pwrite, read through the mapping, and the other way round.
    for (writer, reader) in [("sync", "mmap"), ("mmap", "sync")] {
        let parent = tempfile::tempdir_in(disk.path()).unwrap();
        run(
            "write",
            parent.path(),
            &["-j", "2", "--engine", writer, "--keep"],
        );
        let kept = std::fs::read_dir(parent.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.is_dir())
            .expect("the kept data set");
        let out = tempfile::tempdir().unwrap();
        let json = out.path().join("r.json");
        let read = iobm()
            .args(["read", "--engine", reader, "--verify", "--json"])
            .arg(&json)
            .arg(&kept)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&read.stderr);
        assert!(read.status.success(), "{writer} then {reader}: {err}");
        let result = load(&json);
        assert_eq!(result["config"]["engine"], reader);
        moved_it_all(&result, &format!("{writer} then {reader}"));
    }
}

#[test]
fn fadvise_is_given_with_every_other_engine() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    for (engine, hint) in [
        ("sync", "sequential"),
        ("sync", "noreuse"),
        ("io_uring", "random"),
    ] {
        let args = [
            "-j",
            "2",
            "--engine",
            engine,
            "--fadvise",
            hint,
            "--verify",
            "--random",
        ];
        let result = run("stream", disk.path(), &args);
        assert_eq!(result["config"]["fadvise"], hint);
        assert_eq!(result["config"]["engine"], engine);
        assert!(result["config"].get("madvise").is_none());
        moved_it_all(&result, &format!("{args:?}"));
    }
}

#[test]
fn flags_that_do_not_go_with_mmap_or_this_machine_are_refused_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let allowed = std::fs::read_to_string("/proc/self/status").unwrap();
    assert!(allowed.contains("Cpus_allowed_list"));
    for (args, needle) in [
        (
            &["--engine", "mmap", "--direct"][..],
            "--direct with --engine mmap",
        ),
        (
            &["--madvise", "random"],
            "--madvise random advises a mapping",
        ),
        (
            &["--engine", "sync", "--madvise", "random"],
            "needs --engine mmap",
        ),
        (
            &["--engine", "mmap", "--iodepth", "4"],
            "mmap keeps one request",
        ),
        (&["--fadvise", "often"], "--fadvise"),
        (
            &["--cpus", "0,1000"],
            "--cpus 0,1000: CPU 1000 is not one this process may run on",
        ),
        (&["--cpus", "0-4095"], "--cpus"),
        (&["--cpus", "a"], "--cpus"),
        (&["--numa", "7"], "--numa 7: no NUMA node 7 here"),
        (&["--numa", "0", "--cpus", "0"], "--numa"),
    ] {
        let out = iobm()
            .args(["stream", "--size", "1MiB"])
            .args(args)
            .arg(dir.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{args:?}"
        );
    }
}

/// The CPUs this test may use, as /proc says.
fn allowed_cpus() -> Vec<usize> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap();
    let mut cpus = Vec::new();
    for part in line.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
    }
    cpus
}

/// What each worker's thread of each phase was allowed, by worker.
fn pinned(result: &serde_json::Value) -> Vec<Vec<String>> {
    let phases = result["phases"].as_array().unwrap();
    let cpus = |w: &serde_json::Value| w["cpus"].as_str().expect("pinned").to_string();
    let workers =
        |p: &serde_json::Value| p["workers"].as_array().unwrap().iter().map(cpus).collect();
    phases.iter().map(workers).collect()
}

#[test]
fn each_worker_is_pinned_to_the_listed_cpus_in_turn() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let cpus = allowed_cpus();
    let last = cpus.last().unwrap().to_string();
    let result = run(
        "stream",
        disk.path(),
        &["-j", "3", "--cpus", &last, "--verify"],
    );
    assert_eq!(result["config"]["cpus"], last.as_str());
    assert_eq!(pinned(&result), vec![vec![last.clone(); 3]; 2]);
    // Two CPUs in turn over three workers, where this machine has two.
    assert!(cpus.len() >= 2, "this test needs two CPUs: {cpus:?}");
    let list = format!("{},{}", cpus[0], cpus[1]);
    let result = run("write", disk.path(), &["-j", "3", "--cpus", &list]);
    let turn = [cpus[0], cpus[1], cpus[0]].map(|c| c.to_string()).to_vec();
    assert_eq!(pinned(&result), vec![turn]);
    // A single worker gets a thread of its own, pinned.
    let result = run("write", disk.path(), &["-j", "1", "--cpus", &last]);
    assert_eq!(pinned(&result), vec![vec![last.clone()]]);
    // Unpinned workers record nothing.
    let result = run("write", disk.path(), &["-j", "2"]);
    assert!(result["phases"][0]["workers"][0].get("cpus").is_none());
    assert!(result["config"].get("cpus").is_none());
}

#[test]
fn numa_pins_to_the_nodes_cpus_and_the_report_says_so() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let node0 = std::fs::read_to_string("/sys/devices/system/node/node0/cpulist")
        .expect("this test needs NUMA node 0 in sysfs");
    let node0: Vec<usize> = {
        let mut cpus = Vec::new();
        for part in node0.trim().split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
        }
        cpus
    };
    let result = run("write", disk.path(), &["-j", "2", "--numa", "0"]);
    assert_eq!(result["config"]["numa"], 0);
    let expected: Vec<String> = (0..2).map(|w| node0[w % node0.len()].to_string()).collect();
    assert_eq!(pinned(&result), vec![expected]);
    let report = iobm_report(&result);
    assert!(report.contains("pinned to NUMA node 0 (CPUs "), "{report}");
    // The devices' NUMA node as sysfs gave it, -1 (none) included, and the report's words.
    let nics = result["environment"]["nics"].as_array().unwrap();
    let device = &result["environment"]["storage"]["block_device"];
    let devices = nics
        .iter()
        .chain([device].into_iter().filter(|d| !d.is_null()));
    for d in devices {
        let node = d["numa_node"].as_i64().expect("a NUMA node or -1");
        let words = match node {
            -1 => "no NUMA node".to_string(),
            n => format!("NUMA node {n}"),
        };
        assert!(node >= -1 && report.contains(&words), "{d}: {report}");
    }
}

#[test]
fn the_workload_line_names_the_engine_and_its_hints() {
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let args = [
        "-j",
        "2",
        "--engine",
        "mmap",
        "--madvise",
        "random",
        "--fadvise",
        "noreuse",
    ];
    let report = iobm_report(&run("write", disk.path(), &args));
    assert!(
        report.contains("fsync end, mmap, madvise random, fadvise noreuse, data random"),
        "{report}"
    );
}

/// `iobm report` of a saved result.
fn iobm_report(result: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.json");
    std::fs::write(&path, result.to_string()).unwrap();
    let out = iobm().arg("report").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
