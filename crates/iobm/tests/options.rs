//! What users expect of the options: `--label` on every command that runs a workload, a mix of
//! only the weights given, every option that changes the workload in the configuration hash
//! (and none that does not), a merge's totals over all its runs.

mod common;

use common::{iobm, load, stdout_of};
use serde_json::Value;
use std::path::Path;

/// A small `iobm stream` in `dir` with `extra` flags, saved to `json`: its result.
fn stream(dir: &Path, json: &Path, extra: &[&str]) -> Value {
    iobm()
        .args(["stream", "-j", "2", "--size", "1MiB", "--block", "64KiB"])
        .args(extra)
        .arg("--json")
        .arg(json)
        .arg(dir)
        .assert()
        .success();
    load(json)
}

#[test]
fn every_command_that_runs_a_workload_takes_a_label_and_compare_names_the_run_by_it() {
    for command in ["write", "read", "stream", "bonnie", "s3", "quick", "merge"] {
        let help = stdout_of(iobm().args([command, "--help"]));
        assert!(help.contains("--label <NAME>"), "{command}: {help}");
    }
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("a.json"), out.path().join("b.json"));
    assert_eq!(
        stream(dir.path(), &a, &["--label", "nvme"])["label"],
        "nvme"
    );
    assert_eq!(
        stream(dir.path(), &b, &["--label", "lustre"])["label"],
        "lustre"
    );
    let table = stdout_of(iobm().arg("compare").arg(&a).arg(&b));
    assert!(
        table.contains("nvme") && table.contains("lustre"),
        "{table}"
    );
}

#[test]
fn only_options_that_change_the_workload_change_its_config_hash() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = |name: &str| out.path().join(format!("{name}.json"));
    let hash = |result: &Value| result["config_hash"].as_str().unwrap().to_string();
    let base = stream(dir.path(), &json("base"), &[]);
    let html = out.path().join("r.html");
    let html = html.to_str().unwrap();
    let outputs = stream(
        dir.path(),
        &json("outputs"),
        &["--label", "x", "--html", html],
    );
    assert_eq!(
        hash(&outputs),
        hash(&base),
        "--label and --html are not the workload"
    );
    let mut seen = vec![hash(&base)];
    for (name, flags) in [
        ("reorder", &["--reorder"][..]),
        ("verify", &["--verify"]),
        ("rwmix", &["--rwmix", "0"]),
        ("rwmix70", &["--rwmix", "70"]),
        ("rate", &["--rate", "20000/s"]),
        ("poisson", &["--rate", "20000/s", "--arrivals", "poisson"]),
    ] {
        let result = stream(dir.path(), &json(name), flags);
        let h = hash(&result);
        assert!(
            !seen.contains(&h),
            "{flags:?} gives a hash already seen: {h}"
        );
        seen.push(h);
    }
    assert_eq!(load(&json("reorder"))["config"]["reorder"], true);
    assert_eq!(
        load(&json("rwmix"))["config"]["rwmix_pct"],
        serde_json::json!([0, 100])
    );
    // Unset, the new options are absent: the documents (and hashes) of earlier runs stand.
    assert!(base["config"].get("reorder").is_none() && base["config"].get("verify").is_none());
    assert!(base["config"].get("rate").is_none());
    assert_eq!(
        load(&json("poisson"))["config"]["rate"],
        serde_json::json!({"ops_per_s": 20000.0, "arrivals": "poisson"})
    );
}

/// `iobm s3 mixed` through the built-in gateway with `weights`: its result and report.
fn mixed(weights: &[&str]) -> (Value, String) {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("mixed.json");
    let report = stdout_of(
        iobm()
            .args(["s3", "mixed", "--ops", "300", "--objects", "20"])
            .args(["--obj-size", "4KiB", "--concurrent", "2"])
            .args(weights)
            .arg("--json")
            .arg(&json)
            .env_remove("AWS_ENDPOINT_URL"),
    );
    (load(&json), report)
}

#[test]
fn a_mix_of_some_weights_draws_only_those_and_the_workload_line_shows_it() {
    let (result, report) = mixed(&["--get", "36", "--put", "47", "--delete", "17"]);
    assert_eq!(
        result["config"]["s3"]["mix"],
        serde_json::json!([36, 0, 47, 17])
    );
    let ops: Vec<(&str, u64)> = result["phases"][0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["op"].as_str().unwrap(), o["ops"].as_u64().unwrap()))
        .collect();
    assert!(ops.iter().all(|&(op, n)| op != "head" || n == 0), "{ops:?}");
    assert!(ops.iter().any(|&(op, n)| op == "put" && n > 0), "{ops:?}");
    assert!(
        report.contains("mix: get 36%, put 47%, delete 17%,"),
        "{report}"
    );
    // No weight given: the default mix, every operation.
    let (result, report) = mixed(&[]);
    assert_eq!(
        result["config"]["s3"]["mix"],
        serde_json::json!([45, 30, 15, 10])
    );
    assert!(
        report.contains("mix: get 45%, head 30%, put 15%, delete 10%,"),
        "{report}"
    );
}

#[test]
fn a_merge_totals_the_data_of_every_run() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/stream.json");
    let single = load(&fixture);
    assert_eq!(single["config"]["total_bytes"], 8 << 20);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("merged.json");
    let fixture = fixture.to_str().unwrap();
    let report = stdout_of(
        iobm()
            .args(["merge", &format!("a={fixture}"), &format!("b={fixture}")])
            .arg("--json")
            .arg(&json),
    );
    assert!(
        report.contains("2 runs x 2 jobs x 4.00 MiB = 16.00 MiB,"),
        "{report}"
    );
    let merged = load(&json);
    assert_eq!(merged["config"]["total_bytes"], 16 << 20);
    // The hash is of the merged workload, twice the data of either run's.
    let hash = |v: &Value| {
        let run = iobm_results::RunResult::from_json(&v.to_string()).unwrap();
        iobm_results::config_hash(&run.kind, &run.config)
    };
    assert_eq!(merged["config_hash"], hash(&merged));
    assert_ne!(hash(&merged), hash(&single));
}
