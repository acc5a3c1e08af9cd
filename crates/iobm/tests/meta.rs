//! `iobm meta` end to end on one process: the tree's shape found on disk, every phase's
//! operations counted, the stonewall with wear-out, the lookups' cache verdict, bad shapes
//! refused before anything is made, and nothing left behind, also after Ctrl-C.

mod common;

use common::{assert_matches_schema, entries, interrupt, iobm, load, phase_ops as ops};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

fn phase<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no phase {name}"))
}

/// Every directory and file below `dir`, counted.
fn count(dir: &Path) -> (u64, u64) {
    let (mut dirs, mut files) = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        if entry.file_type().unwrap().is_dir() {
            dirs += 1;
            let (d, f) = count(&entry.path());
            dirs += d;
            files += f;
        } else {
            files += 1;
        }
    }
    (dirs, files)
}

#[test]
fn the_trees_on_disk_have_the_shape_asked_for() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    // mdtest -u -z 2 -b 3 -I 4 with two workers, files of 100 bytes, kept to be counted.
    iobm()
        .args([
            "meta",
            "-j",
            "2",
            "--unique-dir",
            "--depth",
            "2",
            "--branch",
            "3",
        ])
        .args(["--items", "4", "--items-per-dir", "--write-bytes", "100"])
        .args(["--phases", "dir-create,file-create", "--keep", "--json"])
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let run = load(&json);
    assert_matches_schema(&run);
    let run_dir = Path::new(run["config"]["run_dir"].as_str().unwrap());
    // Each tree: 1 + 3 + 9 directories; every one holds 4 files and 4 item directories, a
    // worker's consecutive (mdtest's order). Items 28 to 31 are in directory 7 (breadth-first):
    // child 0 of child 1 of the root; item 7 in directory 1, the root's child 0.
    let tree_dirs = 1 + 3 + 9;
    let (dirs, files) = count(run_dir);
    assert_eq!(
        dirs,
        2 * (tree_dirs + tree_dirs * 4),
        "trees and item directories"
    );
    assert_eq!(files, 2 * tree_dirs * 4);
    for tree in ["tree.0", "tree.1"] {
        for (dir, item) in [("b1/b0", 28), ("b1/b0", 31), ("b0", 7)] {
            let f = (run_dir.join(tree).join(dir)).join(format!("f.{}.{item}", &tree[5..]));
            assert_eq!(std::fs::metadata(&f).unwrap().len(), 100, "{}", f.display());
        }
    }
    let meta = &run["config"]["meta"];
    assert_eq!(meta["tree_dirs"], tree_dirs);
    assert_eq!(meta["items_per_worker"], tree_dirs * 4);
    assert_eq!(
        meta["phases"],
        serde_json::json!(["tree-create", "dir-create", "file-create"]),
        "no removal asked for, so the tree is not removed by a phase"
    );
    assert_eq!(ops(phase(&run, "tree-create")), 2 * tree_dirs);
    assert_eq!(ops(phase(&run, "file-create")), 2 * tree_dirs * 4);
    assert_eq!(phase(&run, "file-create")["settings"]["data_bytes"], 0);
    let created: u64 = phase(&run, "file-create")["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["span"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(created, 2 * tree_dirs * 4 * 100);
    std::fs::remove_dir_all(run_dir).unwrap();
}

#[test]
fn every_phase_runs_on_what_was_made_and_nothing_is_left() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    let out = iobm()
        .args([
            "meta", "-j", "3", "--items", "50", "--depth", "1", "--branch", "2",
        ])
        .args([
            "--write-bytes",
            "4KiB",
            "--read-bytes",
            "1KiB",
            "--label",
            "shared",
        ])
        .args([
            "--phases",
            "file-remove,file-rename,file-read,file-stat,file-create",
        ])
        .args(["--phases", "dir-create,dir-stat,dir-remove", "--json"])
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("workload 3 jobs, 50 items per worker in one shared tree of 3 directories (depth 1, branch 2), 4.00 KiB per file"),
        "{stdout}"
    );
    let run = load(&json);
    assert_matches_schema(&run);
    let names: Vec<&str> = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "tree-create",
            "dir-create",
            "dir-stat",
            "dir-remove",
            "file-create",
            "file-stat",
            "file-read",
            "file-rename",
            "file-remove",
            "tree-remove"
        ],
        "in mdtest's order whatever order --phases gave"
    );
    // A shared tree is made and removed by worker 0 alone.
    assert_eq!(ops(phase(&run, "tree-create")), 3);
    assert_eq!(ops(phase(&run, "tree-remove")), 3);
    for name in &names[1..names.len() - 1] {
        let p = phase(&run, name);
        assert_eq!(p["status"], "complete", "{name}");
        assert_eq!(ops(p), 150, "{name}: 3 workers x 50 items");
        assert!(
            p["errors"].as_array().unwrap().is_empty(),
            "{name}: {}",
            p["errors"]
        );
    }
    let read: u64 = phase(&run, "file-read")["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["span"]["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(read, 150 * 1024, "--read-bytes of each file");
    // The lookups of this client's own entries, caches not dropped, are cache reads.
    for name in ["dir-stat", "file-stat", "file-read"] {
        let verdict = &phase(&run, name)["cache"]["verdict"];
        assert_eq!(verdict["verdict"], "cached", "{name}: {verdict}");
        assert!(
            verdict["evidence"]
                .as_str()
                .unwrap()
                .contains("made by this client"),
            "{verdict}"
        );
    }
    assert!(
        stdout.contains("file-stat: complete 150 ops in"),
        "{stdout}"
    );
    assert!(
        stdout.contains("latency of one file-stat (150 ops)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("did no operation"),
        "worker 0 alone makes the shared tree: {stdout}"
    );
    assert_eq!(run["label"], "shared");
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
}

#[test]
fn a_stonewall_stops_every_worker_and_the_later_phases_work_on_what_was_made() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    // Far more files than two workers make in 200 ms on any disk.
    let items: u64 = 500_000;
    let out = iobm()
        .args([
            "meta",
            "-j",
            "2",
            "--items",
            &items.to_string(),
            "--stonewall",
            "200ms",
        ])
        .args(["--phases", "file-create,file-stat,file-remove", "--json"])
        .arg(&json)
        .arg(target.path())
        .timeout(Duration::from_secs(600))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let run = load(&json);
    assert_matches_schema(&run);
    let create = phase(&run, "file-create");
    assert_eq!(create["settings"]["stonewall_s"], 0.2);
    let wall = &create["stonewall"];
    assert_eq!(wall["stopped_workers"], 2, "{wall}");
    let made = wall["wear_out_items"].as_u64().unwrap();
    assert!(made > 0 && made < items, "{wall}");
    assert!(wall["fewest_at_wall"].as_u64().unwrap() <= made, "{wall}");
    // Wear-out: every worker made exactly as many as the most any had made at the wall.
    for w in create["workers"].as_array().unwrap() {
        assert_eq!(w["span"]["ops"], made, "{w}");
    }
    // The removal sees every file made, and only those: no errors, nothing left.
    let remove = phase(&run, "file-remove");
    assert!(remove["stonewall"].is_null(), "removals have no stonewall");
    assert_eq!(ops(remove), 2 * made);
    assert!(remove["errors"].as_array().unwrap().is_empty());
    let stat = phase(&run, "file-stat");
    assert!(ops(stat) <= 2 * made);
    assert!(
        stat["errors"].as_array().unwrap().is_empty(),
        "{}",
        stat["errors"]
    );
    assert!(
        stdout.contains(&format!(
            "stonewall: 0.2s: it stopped 2 worker(s), the slowest at {} items; each went on to {made} items",
            wall["fewest_at_wall"]
        )),
        "{stdout}"
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn bad_shapes_and_phases_are_refused_before_anything_is_made() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = target.path().to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (
            &["--depth", "0", "--items", "0"],
            "--depth 0 --branch 1 --items 0: depth 0 with 0 items: nothing to create",
        ),
        (
            &["--stride", "1"],
            "--stride 1: a stride of 1 with 1 ranks has every rank work on its own items (a stride needs several MPI ranks: mpirun -np N)",
        ),
        (
            &["--phases", "file-stat"],
            "--phases file-stat: needs file-create in the same run (the run's directory starts empty)",
        ),
        (
            &["--phases", "dir-create,dir-remove,file-read"],
            "--phases file-read: needs file-create in the same run",
        ),
        (
            &["--write-bytes", "1KiB", "--read-bytes", "4KiB"],
            "--read-bytes 4.00 KiB: more than the 1.00 KiB each file holds (--write-bytes)",
        ),
        (
            &["--items", "1000000000000", "--write-bytes", "1MiB"],
            "needs more inodes than the",
        ),
        (
            &["--depth", "3", "--branch", "1000", "--items", "1"],
            "--depth 3 --branch 1000 --items 1: the namespace (1001001003 directories and files) needs more inodes than the",
        ),
        (
            &["--items", "1000000", "--write-bytes", "1TiB"],
            "--write-bytes: the files (",
        ),
    ];
    for (args, message) in cases {
        let out = iobm().arg("meta").args(args).arg(dir).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let unknown = iobm()
        .args(["meta", "--phases", "file-delete", dir])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&unknown.get_output().stderr).to_string();
    assert!(
        stderr.contains("file-remove"),
        "the valid names are listed: {stderr}"
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn ctrl_c_stops_the_phase_saves_what_was_measured_and_removes_everything() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("m.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "meta",
            "-j",
            "2",
            "--items",
            "1000000",
            "--phases",
            "file-create,file-remove",
        ])
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Files are being made before the Ctrl-C.
    let deadline = Instant::now() + Duration::from_secs(60);
    while count(target.path()).1 < 100 {
        assert!(Instant::now() < deadline, "no file was made");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = interrupt(child);
    let run = load(&json);
    assert_eq!(run["status"], "interrupted");
    let create = phase(&run, "file-create");
    assert_eq!(create["status"], "interrupted");
    assert!(ops(create) > 0);
    assert!(
        entries(target.path()).is_empty(),
        "{:?}: {}",
        entries(target.path()),
        String::from_utf8_lossy(&out.stderr)
    );
}
