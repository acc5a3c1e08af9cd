//! `iobm io500` end to end on one process: the phases in the rules' order, find's counts
//! against what was made, the scores against their formulas recomputed from the phases,
//! nothing left behind (also after Ctrl-C), bad flags refused, a plan of io500 runs resumed,
//! and two io500 results compared.

mod common;

use common::io500::{
    assert_find_counts_what_was_made, assert_scores_recomputed, named_01, phase, RULES,
};
use common::{assert_matches_schema, entries, interrupt, iobm, load, phase_bytes, phase_ops};
use std::path::Path;
use std::time::{Duration, Instant};

#[test]
fn one_process_runs_the_rules_phases_in_order_finds_what_was_made_and_leaves_nothing() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let out = iobm()
        .args([
            "io500",
            "-j",
            "2",
            "--easy-size",
            "4MiB",
            "--easy-transfer",
            "1MiB",
        ])
        .args([
            "--segments",
            "20",
            "--easy-items",
            "150",
            "--hard-items",
            "120",
            "--label",
            "one",
            "--html",
        ])
        .arg(work.path().join("r.html"))
        .arg("--csv")
        .arg(work.path().join("r.csv"))
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let run = load(&json);
    assert_matches_schema(&run);
    assert_eq!(run["kind"], "io500");
    assert_eq!(run["status"], "complete");
    let names: Vec<&str> = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, RULES);
    for name in RULES {
        let p = phase(&run, name);
        assert_eq!(p["status"], "complete", "{name}");
        assert_eq!(p["workers"].as_array().unwrap().len(), 2, "{name}");
    }
    // Nothing hit the 300 s wall: every worker made all it was asked, every read read it.
    assert_eq!(phase_bytes(phase(&run, "ior-easy-write")), 2 * (4 << 20));
    assert_eq!(phase_bytes(phase(&run, "ior-easy-read")), 2 * (4 << 20));
    assert_eq!(phase_bytes(phase(&run, "ior-hard-write")), 2 * 20 * 47008);
    assert_eq!(phase_bytes(phase(&run, "ior-hard-read")), 2 * 20 * 47008);
    assert_eq!(
        phase_bytes(phase(&run, "mdtest-hard-write")),
        2 * 120 * 3901
    );
    assert_eq!(phase_bytes(phase(&run, "mdtest-hard-read")), 2 * 120 * 3901);
    // mdtest-easy's and mdtest-hard's files per worker apart (IO500's two n).
    for (name, items) in [
        ("mdtest-easy-write", 150),
        ("mdtest-easy-stat", 150),
        ("mdtest-easy-delete", 150),
        ("mdtest-hard-stat", 120),
        ("mdtest-hard-delete", 120),
    ] {
        assert_eq!(phase_ops(phase(&run, name)), 2 * items, "{name}");
    }
    assert_eq!(run["config"]["io500"]["easy_items"], 150);
    assert_eq!(run["config"]["io500"]["hard_items"], 120);
    assert_eq!(phase_bytes(phase(&run, "mdtest-easy-write")), 0);
    assert_find_counts_what_was_made(&run, 2);
    assert_eq!(named_01(2, 120), 2, "f.0.101 and f.1.101");
    // The reads check every byte (IOR's -R, mdtest's -X) inside each worker's time; the
    // mdtest writes sync the file system at their end, inside it too (mdtest's -Y).
    assert_eq!(run["config"]["verify"], true);
    let each_worker = |name: &str, field: &str| {
        let workers = phase(&run, name)["workers"].as_array().unwrap().clone();
        workers.iter().all(|w| w[field].as_u64().unwrap() > 0)
    };
    for name in ["ior-easy-read", "ior-hard-read", "mdtest-hard-read"] {
        assert!(each_worker(name, "verify_ns"), "{name}");
    }
    for name in ["mdtest-easy-write", "mdtest-hard-write"] {
        assert!(each_worker(name, "final_sync_ns"), "{name}");
    }
    assert_scores_recomputed(&run);
    let s = &run["io500"];
    assert_eq!(s["stonewall_s"], 300.0);
    assert_eq!(
        s["valid"], false,
        "the writes ended before their 300 s stonewall"
    );
    let why: Vec<&str> = s["invalid_because"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let walls = why
        .iter()
        .filter(|w| w.contains("before its 300 s stonewall"));
    assert_eq!(walls.count(), 4, "{why:?}");
    // The rest: phases whose figures a cache may have served, by their verdicts.
    let rest = why
        .iter()
        .filter(|w| !w.contains("before its 300 s stonewall"));
    assert!(
        rest.clone().all(|w| w.contains(", not uncached")),
        "{why:?}"
    );
    assert_eq!(run["config"]["io500"]["hard_transfer_bytes"], 47008);
    assert_eq!(run["config"]["io500"]["stride"], 0);
    assert!(!run["config_hash"].as_str().unwrap().is_empty());
    // The score lines, printed at the end and again by the report.
    for line in [
        "[SCORE] bandwidth",
        "[SCORE] metadata",
        "[SCORE] total",
        "NOT a valid IO500 submission",
    ] {
        assert!(stdout.contains(line), "{line}: {stdout}");
    }
    let report = iobm().arg("report").arg(&json).assert().success();
    let report = String::from_utf8_lossy(&report.get_output().stdout).to_string();
    let score_line = |text: &str| {
        text.lines()
            .find(|l| l.contains("[SCORE] total"))
            .map(str::to_string)
    };
    assert_eq!(score_line(&report), score_line(&stdout));
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
    // The page shows the score lines; the series has rows of every phase.
    let page = std::fs::read_to_string(work.path().join("r.html")).unwrap();
    assert!(page.contains("io500-scores") && page.contains("[SCORE] total"));
    let csv = std::fs::read_to_string(work.path().join("r.csv")).unwrap();
    for name in RULES {
        assert!(
            csv.contains(&format!(",{name},")),
            "{name}: {}",
            &csv[..300]
        );
    }
    assert_eq!(run["label"], "one");

    // Two io500 results side by side.
    let compared = iobm()
        .arg("compare")
        .arg(format!("a={}", json.display()))
        .arg(format!("b={}", json.display()))
        .assert()
        .success();
    let compared = String::from_utf8_lossy(&compared.get_output().stdout).to_string();
    for name in [
        "ior-hard-write",
        "find",
        "mdtest-hard-delete",
        "IO500 score",
    ] {
        assert!(compared.contains(name), "{name}: {compared}");
    }
}

#[test]
fn a_short_stonewall_says_the_run_is_not_a_valid_submission() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let out = iobm()
        .args([
            "io500",
            "--easy-size",
            "2MiB",
            "--segments",
            "4",
            "--items",
            "10",
        ])
        .args(["--stonewall", "5s", "--json"])
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let run = load(&json);
    assert_eq!(run["io500"]["valid"], false);
    assert_eq!(run["io500"]["stonewall_s"], 5.0);
    let why = run["io500"]["invalid_because"].to_string();
    assert!(
        why.contains("stonewall was 5 s, not the rules' 300 s"),
        "{why}"
    );
    assert!(
        stdout.contains("--stonewall 5 s: NOT a valid IO500 submission"),
        "{stdout}"
    );
    assert!(run["warnings"]
        .to_string()
        .contains("NOT a valid IO500 submission"));
    assert_eq!(run["config"]["io500"]["stonewall_s"], 5.0);
    assert!(entries(target.path()).is_empty());
}

#[test]
fn bad_flags_are_refused_in_one_line_before_anything_is_made() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let dir = target.path().to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--stonewall", "0s"], "--stonewall 0s: must be more than 0"),
        (
            &["--easy-size", "3MiB", "--easy-transfer", "2MiB"],
            "--easy-size 3.00 MiB: must be a whole number (at least 1) of --easy-transfer 2.00 MiB transfers",
        ),
        (&["--easy-transfer", "0"], "--easy-transfer 0 B: must be more than 0"),
        (&["--segments", "0"], "--segments 0: must be at least 1"),
        (
            &["--items", "0"],
            "--items 0: mdtest-easy and mdtest-hard need at least 1 file per worker",
        ),
        (
            &["--hard-items", "0"],
            "--hard-items 0: mdtest-easy and mdtest-hard need at least 1 file per worker",
        ),
    ];
    for (args, message) in cases {
        let out = iobm().arg("io500").args(args).arg(dir).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).to_string();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
    let help = iobm().args(["io500", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&help.get_output().stdout).to_string();
    assert!(
        help.contains("Examples:") && help.contains("--stonewall"),
        "{help}"
    );
    assert!(
        help.contains("--easy-items") && help.contains("[mdtest-hard] n"),
        "{help}"
    );
    // The suite runs once, as the rules have it: what it would refuse is not offered.
    for flag in ["--repeat", "--until-stable"] {
        assert!(!help.contains(flag), "{flag}: {help}");
        iobm().args(["io500", flag, "2", dir]).assert().code(2);
    }
    assert!(entries(target.path()).is_empty());
}

#[test]
fn ctrl_c_stops_the_suite_saves_what_was_measured_and_removes_everything() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "io500",
            "-j",
            "2",
            "--easy-size",
            "1GiB",
            "--easy-transfer",
            "64KiB",
        ])
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // ior-easy's files are being written before the Ctrl-C.
    let deadline = Instant::now() + Duration::from_secs(60);
    let written = || {
        entries(target.path()).iter().any(|run_dir| {
            let easy = target.path().join(run_dir).join("ior-easy");
            std::fs::read_dir(easy).is_ok_and(|files| {
                files
                    .flatten()
                    .any(|f| f.metadata().is_ok_and(|m| m.len() > 0))
            })
        })
    };
    while !written() {
        assert!(Instant::now() < deadline, "nothing was written");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = interrupt(child);
    let run = load(&json);
    assert_eq!(run["status"], "interrupted");
    assert_eq!(phase(&run, "ior-easy-write")["status"], "interrupted");
    // No score from a suite cut short, and the write is not said to be too small for its wall.
    let scores = &run["io500"];
    for score in ["bw_gib_s", "md_kiops", "score"] {
        assert!(scores[score].is_null(), "{score}: {scores}");
    }
    let why = scores["invalid_because"].to_string();
    assert!(why.contains("ior-easy-write did not complete"), "{why}");
    assert!(!why.contains("ior-easy-write ended after"), "{why}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("[SCORE] none: not every phase"), "{text}");
    assert!(
        entries(target.path()).is_empty(),
        "{:?}: {}",
        entries(target.path()),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `plan.json`'s runs: label and status.
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

#[test]
fn a_plan_runs_io500_and_resumes_it() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    let entry = |label: &str| {
        format!(
            "[[run]]\ncommand = \"io500\"\nlabel = \"{label}\"\ndir = {:?}\neasy-size = \"2MiB\"\n\
             segments = 4\nitems = 20\nstonewall = \"30s\"\n\n",
            target.path().display().to_string()
        )
    };
    std::fs::write(&plan, entry("first")).unwrap();
    iobm()
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .assert()
        .success();
    let first = load(&out.join("first.json"));
    assert_eq!(first["kind"], "io500");
    assert_eq!(first["status"], "complete");
    assert!(first["io500"]["score"].as_f64().unwrap() > 0.0);
    assert_eq!(first["spec"]["command"], "io500");
    // A second run added: --resume keeps the first and runs the second.
    std::fs::write(&plan, entry("first") + &entry("second")).unwrap();
    iobm()
        .args(["run", "--resume", "--out"])
        .arg(&out)
        .arg(&plan)
        .assert()
        .success();
    assert_eq!(load(&out.join("first.json"))["run_id"], first["run_id"]);
    let second = load(&out.join("second.json"));
    assert_eq!(second["status"], "complete");
    assert_ne!(second["run_id"], first["run_id"]);
    assert_eq!(
        second["config_hash"], first["config_hash"],
        "the same workload"
    );
    assert_eq!(
        statuses(&out),
        [
            ("first".to_string(), "resumed".to_string()),
            ("second".to_string(), "complete".to_string())
        ]
    );
    assert!(entries(target.path()).is_empty());
}

#[test]
fn keep_keeps_the_run_directory_with_what_the_phases_left() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    iobm()
        .args(["io500", "-j", "2", "--easy-size", "2MiB", "--segments", "4"])
        .args(["--items", "10", "--keep", "--json"])
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let run = load(&json);
    assert!(run["warnings"].to_string().contains("(--keep)"));
    let kept = entries(target.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let run_dir = target.path().join(&kept[0]);
    // ior's files stay; the deletes removed every mdtest file, their directories stay.
    assert_eq!(
        entries(&run_dir),
        [
            "ior-easy",
            "ior-hard",
            "mdtest-easy.0",
            "mdtest-easy.1",
            "mdtest-hard"
        ]
    );
    assert_eq!(entries(&run_dir.join("ior-easy")), ["data.0", "data.1"]);
    assert_eq!(entries(&run_dir.join("ior-hard")), ["data.shared"]);
    assert!(entries(&run_dir.join("mdtest-hard")).is_empty());
}

#[test]
fn the_rules_default_sizes_beyond_the_free_space_are_bounded_by_the_stonewall_not_refused() {
    // IO500's defaults: 9920000 MiB of ior-easy per worker, 10 million segments, a million
    // files: far beyond this disk, and accepted (the stonewall ends the writes).
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = iobm()
        .args(["io500", "--check-only"])
        .arg(target.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(stdout.starts_with("config_hash "), "{stdout}");
    assert!(entries(target.path()).is_empty());
    let help = iobm().args(["io500", "--help"]).assert().success();
    let help = String::from_utf8_lossy(&help.get_output().stdout).to_string();
    assert!(help.contains("[default: 9920000MiB]"), "{help}");
}
