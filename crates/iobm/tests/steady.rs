//! `--until-stable`: a phase that runs for a --duration ends once its rate is steady, saying
//! so in the result and the report; `--repeat` names an unstable phase; bad rules and runs with
//! no timed phase are refused in one line.

mod common;

use common::{assert_matches_schema, entries, floats, iobm, load, u};

#[test]
fn a_steady_stream_ends_each_phase_early_and_says_where() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    let assert = iobm()
        .args(["stream", "-j", "2", "--size", "16MiB", "--block", "64KiB"])
        .args(["--duration", "120s", "--until-stable=50%/1s", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let result = load(&json);
    assert_matches_schema(&result);
    assert_eq!(
        result["config"]["until_stable"],
        serde_json::json!([50.0, 1.0])
    );
    for phase in result["phases"].as_array().unwrap() {
        let steady = &phase["until_stable"];
        assert_eq!(steady["tolerance_pct"], 50.0, "{steady}");
        assert_eq!(steady["window_s"], 1.0);
        assert_eq!(steady["tick_s"], 0.1);
        assert_eq!(steady["unit"], "bytes/s");
        let at = steady["stable_at_s"].as_f64().expect("steady within 50%");
        let wall = (u(&phase["end_ns"]) - u(&phase["start_ns"])) as f64 / 1e9;
        // Ended where it was found steady, long before its 120 s.
        assert!((1.0..120.0).contains(&at) && wall < 120.0, "{at} {wall}");
        let rates = floats(&steady["rates"]);
        assert_eq!(rates.len(), 10);
        let mean = rates.iter().sum::<f64>() / 10.0;
        assert!(
            rates.iter().all(|r| (r - mean).abs() <= 0.5 * mean),
            "{rates:?}"
        );
    }
    assert_eq!(
        text.matches("until stable (50% over 1s, sampled every 0.1s): steady at ")
            .count(),
        2,
        "{text}"
    );
    assert!(entries(dir.path()).is_empty(), "{:?}", entries(dir.path()));
}

#[test]
fn without_the_flag_nothing_is_watched_and_the_config_hash_differs() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let json = out.path().join(name);
        iobm()
            .args(["write", "--size", "4MiB", "--duration", "1s"])
            .args(extra)
            .arg("--json")
            .arg(&json)
            .arg(dir.path())
            .assert()
            .success();
        load(&json)
    };
    let plain = run("plain.json", &[]);
    let watched = run("watched.json", &["--until-stable=0.5%/500ms"]);
    assert!(plain["config"].get("until_stable").is_none());
    assert!(plain["phases"][0].get("steady").is_none());
    assert_eq!(
        watched["config"]["until_stable"],
        serde_json::json!([0.5, 0.5])
    );
    assert_ne!(plain["config_hash"], watched["config_hash"]);
    // Given without a value: warp's 7.5% over 15 s, which a 1 s phase is too short for.
    let refused = iobm()
        .args(["write", "--duration", "1s", "--until-stable"])
        .arg(dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8(refused.get_output().stderr.clone()).unwrap();
    assert_eq!(
        err.trim(),
        "iobm: error: --until-stable=7.5%/15s: the window is not shorter than the phase's --duration 1s"
    );
}

#[test]
fn bad_rules_and_runs_without_a_timed_phase_are_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, says) in [
        (
            vec!["write", "--duration", "5s", "--until-stable=0%/1s", d],
            "the tolerance 0% is not between 0% and 100%",
        ),
        (
            vec!["write", "--duration", "5s", "--until-stable=7.5/1s", d],
            "the tolerance '7.5' needs a %",
        ),
        (
            vec!["write", "--duration", "5s", "--until-stable=5%/50ms", d],
            "the window must be at least 100ms",
        ),
        (
            vec!["write", "--duration", "5s", "--until-stable=5%", d],
            "expected TOL/WINDOW",
        ),
        (
            vec!["write", "--size", "1MiB", "--until-stable=5%/1s", d],
            "--until-stable=5%/1s: ends a phase that runs for a --duration early, and no phase of this run does",
        ),
        (
            vec!["bonnie", "--until-stable=5%/1s", d],
            "--until-stable=5%/1s: ends a phase that runs for a --duration early",
        ),
        (
            // IO500's phases run as the rules say: it takes no --until-stable at all.
            vec!["io500", "--until-stable=5%/1s", d],
            "unexpected argument '--until-stable'",
        ),
        (
            vec!["meta", "--until-stable=5%/1s", d],
            "--until-stable=5%/1s: ends a phase that runs for a --duration early",
        ),
        (
            vec!["s3", "get", "--ops", "10", "--until-stable=5%/1s"],
            "--until-stable=5%/1s: ends a phase that runs for a --duration early",
        ),
        (
            vec!["quick", "--until-stable", d],
            "--until-stable=7.5%/15s: the window is not shorter than the phase's --step-time 6s",
        ),
        (
            vec!["write", "--duration", "5s", "--until-stable", "5%/1s", d],
            "--until-stable takes its value after '=': --until-stable=5%/1s",
        ),
    ] {
        let out = iobm().args(&args).assert().code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("iobm: error: ") && first.contains(says),
            "{args:?}: {err}"
        );
        assert!(first.contains("--until-stable"), "{args:?}: {err}");
    }
    // Nothing was made.
    assert!(entries(dir.path()).is_empty());
}

#[test]
fn an_s3_phase_settles_on_its_rate_through_the_built_in_gateway() {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("r.json");
    iobm()
        .args(["s3", "put", "--concurrent", "2", "--obj-size", "16KiB"])
        .args(["--duration", "120s", "--until-stable=50%/1s", "--json"])
        .arg(&json)
        .assert()
        .success();
    let result = load(&json);
    let steady = &result["phases"][0]["until_stable"];
    assert!(steady["stable_at_s"].as_f64().is_some(), "{steady}");
    assert_eq!(steady["unit"], "bytes/s");
}
