//! Plans as data, end to end: `iobm run PLAN.toml` expanding a matrix, running and comparing
//! (bonnie on tmpfs, the disk and a loop-mounted ext4 as root), a rerun with the original's
//! config hash, every command's `--print-spec` run as a plan, and malformed plans refused before
//! anything is created; plans resumed in `plans/resume.rs`, interrupted in `plans/signals.rs`,
//! and what they print and write at their end in `plans/outputs.rs`.

mod common;
#[path = "plans/outputs.rs"]
mod outputs;
#[path = "plans/resume.rs"]
mod resume;
#[path = "plans/signals.rs"]
mod signals;

use common::mount::{LoopMount, Mount};
use common::{entries, iobm, load};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// The summary of a plan's runs: each label with its status.
fn statuses(out: &Path) -> Vec<(String, String)> {
    load(&out.join("plan.json"))["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// A data set written into `dir` and kept: its result (saved in `work`) and its directory.
fn kept_data_set(dir: &str, work: &Path) -> (std::path::PathBuf, String) {
    let kept = work.join("kept.json");
    iobm()
        .args(["write", "--size", "4MiB", "--keep", "--json"])
        .arg(&kept)
        .arg(dir)
        .assert()
        .success();
    let data_set = load(&kept)["config"]["run_dir"]
        .as_str()
        .unwrap()
        .to_string();
    (kept, data_set)
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
#[ignore = "needs root: mounts a tmpfs and a loop-mounted ext4 (scripts/test runs it as root)"]
fn bonnie_on_three_file_systems_is_expanded_run_and_compared() {
    let tmpfs = Mount::tmpfs("64m");
    let disk = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ext4 = LoopMount::new("64M");
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("fs.toml");
    let dirs = [tmpfs.path(), disk.path(), ext4.mnt.as_path()];
    write(
        &plan,
        &format!(
            "# the seed's comparison: one bonnie per file system\n\
             [defaults]\nsize = \"4MiB\"\nfiles = \"1:4096:0:2\"\n\n\
             [matrix]\ndir = [{}]\n\n\
             [[run]]\ncommand = \"bonnie\"\n",
            dirs.iter()
                .map(|d| format!("{:?}", d.display().to_string()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let named = |text: &str| {
        let mut text = text.replace(
            &assert_cmd::cargo::cargo_bin("iobm").display().to_string(),
            "IOBM",
        );
        for (dir, name) in dirs.iter().zip(["TMPFS", "DISK", "EXT4"]) {
            let d = dir.display().to_string();
            text = text.replace(&d, name);
            text = text.replace(&d.trim_start_matches('/').replace('/', "_"), name);
        }
        text.replace(&work.path().display().to_string(), "WORK")
    };
    let out = work.path().join("out");
    let dry = iobm()
        .args(["run", "--dry-run", "--out"])
        .arg(&out)
        .arg(&plan)
        .output()
        .unwrap();
    assert!(
        dry.status.success(),
        "{}",
        String::from_utf8_lossy(&dry.stderr)
    );
    insta::assert_snapshot!(
        "bonnie_plan_dry_run",
        named(&String::from_utf8_lossy(&dry.stdout))
    );
    assert!(!out.exists(), "a dry run creates nothing");

    let ran = iobm()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .timeout(Duration::from_secs(600))
        .output()
        .unwrap();
    let stdout = named(&String::from_utf8_lossy(&ran.stdout));
    assert!(
        ran.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let labels = ["bonnie dir=TMPFS", "bonnie dir=DISK", "bonnie dir=EXT4"];
    assert_eq!(
        statuses(&out)
            .iter()
            .map(|(l, s)| (named(l), s.clone()))
            .collect::<Vec<_>>(),
        labels.map(|l| (l.to_string(), "complete".to_string()))
    );
    // One comparison of the three, every test a table with a row per file system.
    let comparison = &stdout[stdout.find("== bonnie: 3 runs compared").expect(&stdout)..];
    for test in ["block write MiB/s", "rewrite MiB/s", "block read MiB/s"] {
        let table = &comparison[comparison
            .find(test)
            .unwrap_or_else(|| panic!("{test}: {comparison}"))..];
        let rows: Vec<&str> = table.lines().skip(1).take(3).collect();
        for (row, label) in rows.iter().zip(labels) {
            assert!(
                row.starts_with(label),
                "{test}: {row:?} is not {label}'s row"
            );
        }
        assert!(
            rows[1].contains('x') && rows[2].contains('x'),
            "ratios: {rows:?}"
        );
    }
    for (dir, file) in dirs.iter().zip(
        entries(&out)
            .iter()
            .filter(|f| f.ends_with(".json") && *f != "plan.json"),
    ) {
        let result = load(&out.join(file));
        assert_eq!(result["kind"], "bonnie");
        assert!(
            entries(dir).iter().all(|e| !e.starts_with("iobm-")),
            "{file}: data left in {}",
            dir.display()
        );
    }
    // The seed's CSV for bon_csv2html: a line per file system, in the plan's order.
    let csv = std::fs::read_to_string(out.join("bonnie.csv")).unwrap();
    let names: Vec<String> = csv
        .lines()
        .map(|line| named(line.split(',').nth(2).unwrap_or("")))
        .collect();
    assert_eq!(names, labels, "{csv}");
}

#[test]
fn a_rerun_runs_the_same_workload_with_the_same_config_hash() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let first = work.path().join("a.json");
    iobm()
        .args([
            "stream", "-j", "2", "--size", "4MiB", "--block", "64KiB", "--label", "orig", "--json",
        ])
        .arg(&first)
        .arg(target.path())
        .assert()
        .success();
    let again = work.path().join("b.json");
    iobm()
        .arg("rerun")
        .arg(&first)
        .arg("--json")
        .arg(&again)
        .assert()
        .success();
    let (a, b) = (load(&first), load(&again));
    assert_eq!(a["spec"]["options"]["jobs"], "2", "{}", a["spec"]);
    assert_eq!(b["spec"], a["spec"]);
    assert_eq!(b["config_hash"], a["config_hash"]);
    assert_ne!(b["run_id"], a["run_id"]);
    assert_eq!(b["label"], "orig");

    let changed = work.path().join("c.json");
    iobm()
        .arg("rerun")
        .arg(&first)
        .args(["--set", "jobs=1", "--set", "label=one", "--json"])
        .arg(&changed)
        .assert()
        .success();
    let c = load(&changed);
    assert_eq!(c["label"], "one");
    // A change without a label of its own is not the labelled run: its label goes.
    let unlabelled = work.path().join("d.json");
    iobm()
        .arg("rerun")
        .arg(&first)
        .args(["--set", "block=128KiB", "--json"])
        .arg(&unlabelled)
        .assert()
        .success();
    assert!(load(&unlabelled)["label"].is_null());
    let relabelled = work.path().join("e.json");
    iobm()
        .arg("rerun")
        .arg(&first)
        .args(["--label", "two", "--json"])
        .arg(&relabelled)
        .assert()
        .success();
    assert_eq!(load(&relabelled)["label"], "two");
    assert_eq!(c["spec"]["options"]["jobs"], "1");
    assert_eq!(c["config"]["jobs"], 1);
    assert_ne!(c["config_hash"], a["config_hash"]);

    // A document without a spec says so, and what its command line was.
    let mut old: Value = a.clone();
    old.as_object_mut().unwrap().remove("spec");
    let old_path = work.path().join("old.json");
    write(&old_path, &old.to_string());
    let out = iobm()
        .arg("rerun")
        .arg(&old_path)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no spec recorded") && stderr.contains("--label orig"),
        "{stderr}"
    );
    let out = iobm()
        .arg("rerun")
        .arg(&first)
        .args(["--set", "jbos=1"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "iobm: error: --set jbos=1: jbos: stream has no such option; did you mean jobs?"
    );
}

/// Each command's --print-spec, run by `iobm run`, records the same spec (but its label) and
/// the same config hash as the command line run directly.
#[test]
fn print_spec_of_every_command_round_trips_through_iobm_run() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = target.path().display().to_string();
    // A kept data set for read, and two results for merge.
    let (_, data_set) = kept_data_set(&dir, work.path());
    let (m1, m2) = (work.path().join("m1.json"), work.path().join("m2.json"));
    for m in [&m1, &m2] {
        iobm()
            .args(["write", "--size", "4MiB", "--json"])
            .arg(m)
            .arg(&dir)
            .assert()
            .success();
    }
    let (m1, m2) = (m1.display().to_string(), m2.display().to_string());
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "write", "-j", "2", "--size", "4MiB", "--fsync", "never", &dir,
        ],
        vec![
            "stream", "--size", "4MiB", "--random", "--block", "64KiB", &dir,
        ],
        vec!["read", "--block", "256KiB", &data_set],
        vec![
            "bonnie",
            "--size",
            "4MiB",
            "--files",
            "1:4096:0:2",
            "--chunk",
            "16KiB",
            &dir,
        ],
        vec![
            "s3",
            "put",
            "--ops",
            "6",
            "--obj-size",
            "4KiB",
            "--concurrent",
            "2",
        ],
        vec![
            "meta",
            "-j",
            "2",
            "--items",
            "20",
            "--depth",
            "1",
            "--branch",
            "2",
            "--write-bytes",
            "1KiB",
            &dir,
        ],
        vec![
            "io500",
            "--easy-size",
            "2MiB",
            "--segments",
            "4",
            "--items",
            "20",
            "--stonewall",
            "30s",
            &dir,
        ],
        vec!["merge", "--whole", &m1, &m2],
    ];
    for (i, args) in commands.iter().enumerate() {
        let direct = work.path().join(format!("direct{i}.json"));
        iobm()
            .args(args)
            .arg("--json")
            .arg(&direct)
            .assert()
            .success();
        let printed = iobm().args(args).arg("--print-spec").output().unwrap();
        assert!(
            printed.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&printed.stderr)
        );
        let plan = work.path().join(format!("plan{i}.toml"));
        std::fs::write(&plan, &printed.stdout).unwrap();
        let out = work.path().join(format!("out{i}"));
        let ran = iobm()
            .args(["run", "--out"])
            .arg(&out)
            .arg(&plan)
            .output()
            .unwrap();
        assert!(
            ran.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let file = entries(&out)
            .into_iter()
            .find(|f| f.ends_with(".json") && f != "plan.json")
            .unwrap();
        let (direct, planned) = (load(&direct), load(&out.join(file)));
        let mut spec = planned["spec"].clone();
        // An S3 run's with its operation, so runs of two operations have labels of their own.
        let label = match args[0] {
            "s3" => format!("s3-{}", args[1]),
            command => command.to_string(),
        };
        assert_eq!(
            spec["options"]["label"], label,
            "{args:?}: the default label is the command"
        );
        spec["options"].as_object_mut().unwrap().remove("label");
        assert_eq!(spec, direct["spec"], "{args:?}");
        assert_eq!(planned["config_hash"], direct["config_hash"], "{args:?}");
        assert_eq!(planned["kind"], direct["kind"], "{args:?}");
        // Where the command can tell before it runs, the dry run shows that config hash.
        if ["write", "stream", "bonnie", "read", "s3", "meta", "io500"].contains(&args[0]) {
            let dry = iobm()
                .args(["run", "--dry-run"])
                .arg(&plan)
                .output()
                .unwrap();
            let shown = format!("config {}", planned["config_hash"].as_str().unwrap());
            assert!(
                String::from_utf8_lossy(&dry.stdout).contains(&shown),
                "{args:?}: {shown}"
            );
        }
    }
    // A command that runs no workload has no spec to print.
    let out = iobm()
        .args(["limits", "--print-spec"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--print-spec: limits runs no workload"));
}

#[test]
fn malformed_plans_are_refused_before_anything_is_created() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = format!("{:?}", target.path().display().to_string());
    // A valid first run, so a plan that ran before checking all would leave its data.
    let first = format!("[[run]]\ncommand = \"write\"\ndir = {dir}\nsize = \"4MiB\"\n\n");
    let cases = [
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\njbos = 4\n"),
            "p.toml:9:1: jbos: stream has no such option; did you mean jobs?",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\njobs = \"many\"\n"),
            "p.toml:9:1: jobs: invalid value 'many' for '--jobs <N>'",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\nsize = \"12XB\"\n"),
            "p.toml:9:1: size: invalid value '12XB' for '--size <SIZE>'",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\ndirect = \"yes\"\n"),
            "p.toml:9:1: direct: a flag: true or false",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = \"/no/such/dir\"\n"),
            "p.toml:8:1: run \"stream\": /no/such/dir",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\nsize = {{ a = 1 }}\n"),
            "p.toml:9:8: size: a string, number, boolean or array",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\nsize = \"1M\n"),
            "p.toml:9:",
        ),
        (
            format!("{first}[[run]]\ncommand = \"stream\"\ndir = {dir}\nsize = \"100T\"\n"),
            "p.toml:9:1: run \"stream\": --size",
        ),
    ];
    for (text, expected) in &cases {
        let plan = work.path().join("p.toml");
        write(&plan, text);
        let out = work.path().join("out");
        let ran = iobm()
            .current_dir(work.path())
            .args(["run", "--out"])
            .arg(&out)
            .arg("p.toml")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&ran.stderr);
        assert_eq!(ran.status.code(), Some(2), "{expected}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.starts_with(&format!("iobm: error: {expected}")),
            "{stderr} is not {expected}"
        );
        assert!(
            !out.exists(),
            "{expected}: the output directory was created"
        );
        assert_eq!(
            entries(target.path()),
            Vec::<String>::new(),
            "{expected}: a run started"
        );
    }
}

/// What `iobm run` has every run of a plan do before any starts: each workload command checks
/// its flags and target and stops before it creates anything.
#[test]
fn every_workload_command_stops_after_its_checks() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let dir = target.path().display().to_string();
    let (kept, data_set) = kept_data_set(&dir, work.path());
    let before = entries(target.path());
    let kept = kept.display().to_string();
    let commands: Vec<Vec<&str>> = vec![
        vec!["write", "--size", "4MiB", &dir],
        vec!["stream", "--size", "4MiB", &dir],
        vec!["read", &data_set],
        vec!["bonnie", "--size", "4MiB", "--files", "1:4096:0:2", &dir],
        vec!["quick", &dir],
        vec!["s3", "put", "--ops", "4", "--dir", &dir],
        vec!["io500", "--items", "10", &dir],
        vec!["merge", &kept, &kept],
    ];
    for args in &commands {
        let json = work.path().join("checked.json");
        let out = iobm()
            .args(args)
            .arg("--check-only")
            .arg("--json")
            .arg(&json)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(entries(target.path()), before, "{args:?} created something");
        assert!(!json.exists(), "{args:?} saved a result");
        let data_files = entries(Path::new(&data_set));
        assert!(
            data_files.iter().any(|f| f.starts_with("data.")),
            "{args:?}: {data_files:?}"
        );
    }
}
