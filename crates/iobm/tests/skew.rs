//! `--access`, `--think` and `--burst` end to end: skewed reads of a file data set and GETs of
//! an S3 one (the objects drawn checked against zipf's definition), their shares on the hot
//! set in the result and the report, the idle times seen in the per-request records, and the
//! refusals before anything is made.

mod common;

use common::{entries, iobm, load, u};
use iobm_run::requests::{read, Chunk};
use iobm_stats::access::AccessDist;
use serde_json::Value;
use std::path::Path;

/// Runs iobm with `args` and `--requests` and `--json` in a fresh directory: the result, the
/// requests and the text it printed.
fn run_kept(args: &[&str], dir: &Path) -> (Value, Vec<Chunk>, String) {
    let out = tempfile::tempdir().unwrap();
    let (file, json) = (out.path().join("r.zst"), out.path().join("r.json"));
    let done = iobm()
        .args(args)
        .arg(dir)
        .arg("--requests")
        .arg(&file)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&done.stdout).to_string();
    assert!(
        done.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let (chunks, _) = read(&std::fs::read(&file).unwrap()).unwrap();
    (load(&json), chunks, text)
}

/// The records of phase `name`, each with its worker.
fn records<'a>(chunks: &'a [Chunk], name: &str) -> Vec<(u32, &'a iobm_engine::Request)> {
    (chunks.iter().filter(|c| c.phase == name))
        .flat_map(|c| c.records.iter().map(move |r| (c.worker, r)))
        .collect()
}

#[test]
fn skewed_reads_fall_on_the_hot_set_the_result_reports() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "stream",
        "-j",
        "2",
        "--size-per-job",
        "16MiB",
        "--block",
        "4KiB",
        "--random",
        "--access",
        "zipf:1.2",
        "--verify",
    ];
    let (run, chunks, text) = run_kept(&args, dir.path());
    assert_eq!(run["config"]["access"]["kind"], "zipf");
    assert_eq!(run["config"]["access"]["theta"], 1.2);
    assert!(text.contains(", access zipf 1.2"), "{text}");
    let phases = run["phases"].as_array().unwrap();
    // The write makes the data set, every block once: it is not skewed.
    assert!(phases[0]["settings"].get("access").is_none());
    let share = &phases[1]["settings"]["access"];
    assert_eq!(u(&share["picked_among"]), 4096);
    let dist = AccessDist::Zipf { theta: 1.2 };
    assert_eq!(
        share["hottest_1pct"].as_f64().unwrap(),
        dist.hot_share(4096, 0.01)
    );
    assert!(
        text.contains("access: zipf 1.2 over 4096 blocks per job: "),
        "{text}"
    );
    // What the reads did: per job, the share of its reads on its 1% and 10% most read blocks.
    for job in 0..2 {
        let mut counts = std::collections::HashMap::new();
        let reads: Vec<_> = records(&chunks, "read")
            .into_iter()
            .filter(|(w, _)| *w == job)
            .collect();
        assert_eq!(reads.len(), 4096, "one pass: as many reads as blocks");
        for (_, r) in &reads {
            *counts.entry(r.offset).or_insert(0u64) += 1;
        }
        let mut sorted: Vec<u64> = counts.into_values().collect();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        for (part, key) in [(41, "hottest_1pct"), (410, "hottest_10pct")] {
            let seen = sorted.iter().take(part).sum::<u64>() as f64 / 4096.0;
            let expected = share[key].as_f64().unwrap();
            assert!(
                (seen - expected).abs() < 0.05,
                "job {job} {key}: {seen} read, {expected} reported"
            );
        }
    }
}

#[test]
fn zipf_gets_pick_objects_as_zipf_defines() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "s3",
        "get",
        "--objects",
        "50",
        "--obj-size",
        "1KiB",
        "--concurrent",
        "2",
        "--ops",
        "4000",
        "--access",
        "zipf:1.1",
        "--dir",
    ];
    let (run, chunks, text) = run_kept(&args, dir.path());
    assert!(text.contains(", access zipf 1.1"), "{text}");
    assert_eq!(run["config"]["access"]["kind"], "zipf");
    let mut counts = vec![0u64; 50];
    let gets = records(&chunks, run["phases"][0]["name"].as_str().unwrap());
    for (_, r) in &gets {
        counts[r.object as usize] += 1;
    }
    assert_eq!(counts.iter().sum::<u64>(), 4000);
    // Pearson's chi-square against p_k = k^-1.1 / H: object 0 the hottest.
    let weights: Vec<f64> = (1..=50).map(|k| f64::from(k).powf(-1.1)).collect();
    let sum: f64 = weights.iter().sum();
    let (mut chi2, mut df) = (0.0, 0);
    let (mut rest_seen, mut rest_expected) = (0.0, 0.0);
    for (c, w) in counts.iter().zip(&weights) {
        let e = 4000.0 * w / sum;
        if e < 5.0 {
            (rest_seen, rest_expected) = (rest_seen + *c as f64, rest_expected + e);
        } else {
            chi2 += (*c as f64 - e).powi(2) / e;
            df += 1;
        }
    }
    if rest_expected > 0.0 {
        chi2 += (rest_seen - rest_expected).powi(2) / rest_expected;
        df += 1;
    }
    df -= 1;
    // The run's seed is its own: the 1 - 1e-6 quantile (Wilson-Hilferty), so a true zipf
    // fails once in a million runs; uniform picks give thousands.
    let k = f64::from(df);
    let critical = k * (1.0 - 2.0 / (9.0 * k) + 4.753 * (2.0 / (9.0 * k)).sqrt()).powi(3);
    assert!(
        chi2 < critical,
        "chi2 {chi2:.1} over {critical:.1} ({df} df): {counts:?}"
    );
    assert!(counts[0] > 5 * counts[9], "{counts:?}");
}

#[test]
fn a_thinking_worker_starts_each_operation_its_think_time_after_the_last_ended() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "write", "-j", "1", "--size", "64KiB", "--block", "4KiB", "--think", "20ms",
    ];
    let (run, chunks, text) = run_kept(&args, dir.path());
    assert_eq!(run["config"]["think_s"], 0.02);
    assert!(
        text.contains(", think 20.00ms after each operation"),
        "{text}"
    );
    let mut ops: Vec<_> = records(&chunks, "write")
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    ops.sort_by_key(|r| r.start_ns);
    assert_eq!(ops.len(), 16);
    for w in ops.windows(2) {
        let idle = w[1].start_ns - (w[0].start_ns + w[0].duration_ns);
        assert!(idle >= 20_000_000, "{idle} ns between two operations");
    }
}

/// Each worker's starts (by `at`) lie in 10 ms bursts 200 ms apart: two in a row are 10 ms
/// apart at most (one burst) or 190 ms at least (the idle period between); a start decided
/// in a burst may begin late on a loaded machine, so only gaps of 60 to 140 ms are refused.
fn assert_in_bursts(chunks: &[Chunk], at: fn(&iobm_engine::Request) -> u64) {
    let ops = records(chunks, "write");
    assert!(ops.len() > 1);
    let mut bursts = 1;
    for worker in 0..2 {
        let mut starts: Vec<u64> = ops
            .iter()
            .filter(|(w, _)| *w == worker)
            .map(|(_, r)| at(r))
            .collect();
        starts.sort_unstable();
        for w in starts.windows(2) {
            let gap = w[1] - w[0];
            assert!(
                !(60_000_000..=140_000_000).contains(&gap),
                "{gap} ns between two starts"
            );
            bursts += usize::from(gap > 140_000_000);
        }
    }
    assert!(bursts > 1, "one burst only");
}

#[test]
fn bursts_start_operations_only_while_on_closed_and_open_loop() {
    let dir = tempfile::tempdir().unwrap();
    let closed = [
        "write",
        "-j",
        "2",
        "--size",
        "1MiB",
        "--block",
        "4KiB",
        "--duration",
        "1s",
        "--burst",
        "10ms/190ms",
    ];
    let (run, chunks, text) = run_kept(&closed, dir.path());
    assert_eq!(run["config"]["burst_s"], serde_json::json!([0.01, 0.19]));
    assert!(text.contains(", load 10.00ms on / 190.00ms off"), "{text}");
    assert_in_bursts(&chunks, |r| r.start_ns);
    // Open loop: 1000/s while on, so its target over the phase is 1000 x 10 / 200 = 50/s; the
    // intended starts lie in the bursts only (as scheduled: no speed assumed).
    let open = [
        "write",
        "-j",
        "1",
        "--size",
        "1MiB",
        "--block",
        "4KiB",
        "--duration",
        "1s",
        "--rate",
        "1000/s",
        "--burst",
        "10ms/190ms",
    ];
    let (run, chunks, _) = run_kept(&open, dir.path());
    let target = run["phases"][0]["pace"]["target_ops_per_s"]
        .as_f64()
        .unwrap();
    assert!((target - 50.0).abs() < 1e-9, "{target}");
    assert_in_bursts(&chunks, |r| r.intended_ns);
}

#[test]
fn bad_load_flags_are_refused_before_anything_is_made() {
    for (args, says) in [
        (&["read", "--access", "zipf:0"][..], "--access"),
        (&["read", "--access", "gauss:1"][..], "--access"),
        (
            &["write", "--random", "--access", "zipf:1.2"][..],
            "--access",
        ),
        (&["stream", "--access", "pareto:0.2"][..], "add --random"),
        (&["write", "--burst", "1s"][..], "--burst"),
        (&["write", "--think", "0s"][..], "--think"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = iobm().args(args).arg(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(
            err.trim()
                .lines()
                .filter(|l| l.starts_with("iobm") || l.starts_with("error"))
                .count(),
            1,
            "{args:?}: {err}"
        );
        assert!(entries(dir.path()).is_empty(), "{args:?} made something");
    }
    for (args, says) in [
        (
            &["s3", "put", "--access", "zipf:1.2"][..],
            "applies to s3 get, head and mixed",
        ),
        (
            &["s3", "get", "--once", "--access", "zipf:1.2"][..],
            "--once",
        ),
    ] {
        let out = iobm().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn list_takes_its_weight_in_a_mix_and_a_mix_without_it_has_no_list() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let mixed = |weights: &[&str]| {
        let done = iobm()
            .args([
                "s3",
                "mixed",
                "--objects",
                "20",
                "--obj-size",
                "1KiB",
                "--ops",
                "300",
            ])
            .args(["--page-keys", "5", "--concurrent", "2"])
            .args(weights)
            .arg("--dir")
            .arg(dir.path())
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap();
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
        let run = load(&json);
        let ops: Vec<(String, u64, u64)> = (run["phases"][0]["operations"].as_array().unwrap())
            .iter()
            .map(|o| {
                (
                    o["op"].as_str().unwrap().to_string(),
                    u(&o["ops"]),
                    u(&o["keys"]),
                )
            })
            .collect();
        (run, ops)
    };
    let (run, ops) = mixed(&["--get", "50", "--list", "50"]);
    assert_eq!(
        run["config"]["s3"]["mix"],
        serde_json::json!([50, 0, 0, 0, 50])
    );
    let list = ops
        .iter()
        .find(|(op, _, _)| op == "list")
        .expect("a list row");
    let get = ops.iter().find(|(op, _, _)| op == "get").unwrap();
    assert_eq!(list.1 + get.1, 300, "{ops:?}");
    // About half of 300 (a binomial: 150 +- 8.7 for one deviation), one page of 5 keys each.
    assert!((90..=210).contains(&list.1), "{ops:?}");
    assert_eq!(list.2, 5 * list.1, "{ops:?}");
    assert_eq!(get.2, 0, "a GET after a LIST returns no keys: {ops:?}");
    let (run, ops) = mixed(&["--get", "50", "--put", "50"]);
    assert_eq!(
        run["config"]["s3"]["mix"],
        serde_json::json!([50, 0, 50, 0])
    );
    assert!(ops.iter().all(|(op, _, _)| op != "list"), "{ops:?}");
}
