//! `--rate`: open-loop load on the file commands and S3. Each run's achieved rate is compared
//! with its target from the result, with a generous margin (the machine is shared); response
//! time is checked against a stall planted in one write and the Poisson starts by their gaps
//! as recorded by strace; bad rates are refused naming the flag.

mod common;

use common::{assert_matches_schema, iobm, load, phase_ops, u};
use serde_json::Value;
use std::time::Duration;

/// The operations of a recorded histogram at or above `ns` (by their buckets' lowest values).
fn at_least(latency: &Value, ns: u64) -> u64 {
    latency["histogram"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| u(&b[0]) >= ns)
        .map(|b| u(&b[1]))
        .sum()
}

/// The sum of a recorded histogram, in ns.
fn sum_ns(latency: &Value) -> u64 {
    u(&latency["histogram"]["sum_ns"])
}

/// The pace of `phase`, which must have one, its achieved rate within `margin` of `target`,
/// its response times one per operation and none shorter than their service times.
fn assert_paced(phase: &Value, target: f64, arrivals: &str, margin: f64) {
    let pace = &phase["pace"];
    assert_eq!(pace["target_ops_per_s"], target, "{pace}");
    assert_eq!(pace["arrivals"], arrivals);
    let achieved = pace["achieved_ops_per_s"].as_f64().unwrap();
    assert!(
        (achieved / target - 1.0).abs() < margin,
        "achieved {achieved} of {target}"
    );
    let response = &pace["response"];
    assert_eq!(u(&response["histogram"]["count"]), phase_ops(phase));
    let counted: u64 = pace["series"]["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .sum();
    assert_eq!(counted, phase_ops(phase), "every response is in the series");
    // A response runs from the intended start, never after the actual one: no response is
    // shorter than its operation's service time.
    let service = &phase["latency"];
    assert!(
        u(&response["max_ns"]) >= u(&service["max_ns"]),
        "{response} {service}"
    );
    let least = |l: &Value| u(&l["histogram"]["min_ns"]);
    assert!(least(response) >= least(service), "{response} {service}");
    // Each response is the operation's service time, the storage's queueing and the client's
    // lag in starting it: over the phase, responses add up to at least service and lag
    // together. From the actual start they would add up to the service times alone (no wait
    // ends exactly at its intended start, to the nanosecond: the lag is never all zero).
    let lag = &pace["lag"];
    assert_eq!(u(&lag["histogram"]["count"]), phase_ops(phase), "{lag}");
    assert!(sum_ns(lag) > 0, "{lag}");
    assert!(
        sum_ns(response) >= sum_ns(service) + sum_ns(lag),
        "responses {} ns, service {} ns, lag {} ns",
        sum_ns(response),
        sum_ns(service),
        sum_ns(lag)
    );
}

#[test]
fn a_storage_stall_planted_in_one_write_is_in_the_response_times_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("s.json");
    let rate = 100.0;
    // The 51st write (after 50 of 4 KiB) takes 600 ms more: the writes meant to start
    // meanwhile wait for it, one worker in a closed loop behind its schedule.
    let stall = Duration::from_millis(600);
    iobm()
        .env(
            "IOBM_TEST_STALL_WRITE",
            format!("{}:{}", 50 * 4096, stall.as_millis()),
        )
        .args(["write", "-j", "1", "--size", "16MiB", "--block", "4KiB"])
        .args([
            "--fsync",
            "never",
            "--rate",
            "100/s",
            "--duration",
            "4s",
            "--json",
        ])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let phase = &load(&json)["phases"][0];
    assert_paced(phase, rate, "uniform", 0.3);
    let pace = &phase["pace"];
    let (response, service, lag) = (&pace["response"], &phase["latency"], &pace["lag"]);
    // Buckets hold their lowest value: 1% under what they hold.
    let half = stall.as_nanos() as u64 / 2;
    let bound = half * 99 / 100;
    assert!(
        at_least(service, 2 * bound) >= 1,
        "the stalled write: {service}"
    );
    // The writes meant for the first half of the stall started at least half of it late:
    // their responses are that long at least, their service times are not. From their actual
    // starts, responses would be service times.
    let late = (half as f64 / 1e9 * rate) as u64 - 1;
    assert!(
        at_least(response, bound) >= late + at_least(service, bound),
        "{late} late by {half} ns: {response} {service}"
    );
    // They waited for the storage, not for the client: not its lag, and not said to be.
    assert_eq!(at_least(lag, bound), 0, "{lag}");
    assert!(
        !common::warns(phase, "the client was late"),
        "{}",
        phase["warnings"]
    );
}

/// The largest distance between the empirical distribution of `gaps` and the exponential of
/// mean `mean` (Kolmogorov-Smirnov's D).
fn ks_exponential(gaps: &mut [f64], mean: f64) -> f64 {
    gaps.sort_by(f64::total_cmp);
    let n = gaps.len() as f64;
    gaps.iter()
        .enumerate()
        .map(|(i, &g)| {
            let f = 1.0 - (-g / mean).exp();
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn poisson_starts_have_exponential_gaps_as_strace_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace");
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // Four workers sharing 40/s: each starts its writes (its pwrite64 calls, which strace
    // stamps by thread) 100 ms apart on average, long beside the stamps' jitter on a loaded
    // machine.
    let status = std::process::Command::new("strace")
        .args([
            "-f",
            "-qq",
            "-ttt",
            "-e",
            "trace=pwrite64",
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&trace)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["write", "-j", "4", "--size", "16MiB", "--block", "4KiB"])
        .args([
            "--fsync",
            "never",
            "--rate",
            "40/s",
            "--arrivals",
            "poisson",
        ])
        .args(["--duration", "6s"])
        .arg(&data)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&trace).unwrap();
    let mut starts: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    for line in text
        .lines()
        .filter(|l| l.contains("pwrite64(") && l.ends_with("= 4096"))
    {
        let mut fields = line.split_whitespace();
        let thread = fields.next().unwrap();
        let at: f64 = fields.next().unwrap().parse().unwrap();
        starts.entry(thread).or_default().push(at);
    }
    assert_eq!(starts.len(), 4, "a thread per worker");
    let mut gaps: Vec<f64> = starts
        .values()
        .flat_map(|s| s.windows(2).map(|w| w[1] - w[0]))
        .collect();
    assert!(gaps.len() > 120, "{} gaps", gaps.len());
    let mean = 4.0 / 40.0;
    let d = ks_exponential(&mut gaps, mean);
    // Rejected at the 0.1% level only: Kolmogorov-Smirnov's critical value 1.95/sqrt(n).
    let critical = 1.95 / (gaps.len() as f64).sqrt();
    assert!(
        d < critical,
        "D {d} over {critical} for {} gaps",
        gaps.len()
    );
    // Evenly spaced starts, or Poisson ones at twice the mean gap, would be far off.
    let mut even = vec![mean; gaps.len()];
    assert!(ks_exponential(&mut even, mean) > critical);
    assert!(ks_exponential(&mut gaps, 2.0 * mean) > critical);
}

#[test]
fn write_and_read_at_a_rate_achieve_it_and_report_response_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("w.json");
    let run = iobm()
        .args(["write", "-j", "2", "--size", "16MiB", "--block", "4KiB"])
        .args(["--rate", "200/s", "--duration", "2s", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8(run.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("rate: target 200 ops/s (uniform arrivals), achieved"),
        "{text}"
    );
    assert!(
        text.contains("response time from the intended start"),
        "{text}"
    );
    let written = load(&json);
    assert_matches_schema(&written);
    assert_eq!(written["config"]["rate"]["ops_per_s"], 200.0);
    assert_paced(&written["phases"][0], 200.0, "uniform", 0.25);

    // A data set of its own to read (a write cut short by its duration is not kept).
    iobm()
        .args([
            "write", "-j", "2", "--size", "8MiB", "--block", "4KiB", "--keep",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let data = common::entries(dir.path());
    let kept = dir.path().join(&data[0]);
    let json = out.path().join("r.json");
    iobm()
        .args([
            "read",
            "--random",
            "--rate",
            "800KiB/s",
            "--arrivals",
            "poisson",
        ])
        .args(["--duration", "2s", "--json"])
        .arg(&json)
        .arg(&kept)
        .assert()
        .success();
    let read = load(&json);
    assert_matches_schema(&read);
    // 800 KiB/s of 4 KiB blocks: 200 reads a second.
    assert_paced(&read["phases"][0], 200.0, "poisson", 0.3);

    // Through io_uring, 4 reads in flight per worker: each submitted at its intended start.
    iobm()
        .args(["read", "--random", "--iodepth", "4", "--rate", "400/s"])
        .args(["--duration", "2s", "--json"])
        .arg(&json)
        .arg(&kept)
        .assert()
        .success();
    let queued = load(&json);
    assert_eq!(queued["phases"][0]["settings"]["engine"], "io_uring");
    assert_paced(&queued["phases"][0], 400.0, "uniform", 0.3);
}

#[test]
fn a_paced_phase_runs_its_whole_duration_and_its_rate_is_over_it() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("p.json");
    let run = iobm()
        .args([
            "write", "-j", "2", "--size", "1MiB", "--block", "4KiB", "--fsync", "never",
        ])
        .args(["--rate", "5/s", "--duration", "2s", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    // 200 ms per operation per worker: no client is that slow against no storage.
    let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    assert!(!err.contains("warning: --rate"), "{err}");
    let phase = &load(&json)["phases"][0];
    // Ten starts are due in 2 s; the workers wait out the rest of it after the last.
    assert_eq!(phase_ops(phase), 10);
    for w in phase["workers"].as_array().unwrap() {
        let ran = (u(&w["span"]["end_ns"]) - u(&w["span"]["start_ns"])) as f64 / 1e9;
        assert!(ran >= 1.99, "{ran}");
    }
    let achieved = phase["pace"]["achieved_ops_per_s"].as_f64().unwrap();
    assert!((achieved / 5.0 - 1.0).abs() < 0.05, "{achieved}");
    // The response-time series holds the operations' bytes too.
    let bytes: u64 = phase["pace"]["series"]["bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(u)
        .sum();
    assert_eq!(bytes, 10 * 4096);
}

#[test]
fn s3_gets_at_a_rate_against_the_built_in_gateway() {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("g.json");
    iobm()
        .args([
            "s3",
            "get",
            "--objects",
            "8",
            "--obj-size",
            "4KiB",
            "--concurrent",
            "2",
        ])
        .args([
            "--rate",
            "100/s",
            "--duration",
            "2s",
            "--timeout",
            "20s",
            "--json",
        ])
        .arg(&json)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    let result = load(&json);
    assert_matches_schema(&result);
    assert_paced(&result["phases"][0], 100.0, "uniform", 0.25);
}

/// `iobm s3 put|get --rate ...` against the built-in gateway: its standard error.
fn s3_paced(op: &str, rate: &str, concurrent: &str, ops: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let run = iobm()
        .args(["s3", op, "--objects", "8", "--obj-size", "4KiB"])
        .args(["--concurrent", concurrent, "--rate", rate, "--ops", ops])
        .args(["--timeout", "20s", "--json"])
        .arg(dir.path().join("r.json"))
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    String::from_utf8(run.get_output().stderr.clone()).unwrap()
}

#[test]
fn an_s3_rate_the_client_cannot_hold_is_warned_of_from_its_measured_cost() {
    // One worker asked for a PUT every 0.1 µs: no HTTP request through any client takes that
    // little, as the trial against a null server measures (its figure, whatever it is, above
    // 0.1 µs).
    let err = s3_paced("put", "10000000/s", "1", "50");
    let said = "warning: --rate 10000000 ops/s over 1 workers: each must start an operation every 0.1 µs, and against no storage (a null S3 server on loopback, through iobm's S3 client, 100 ms closed loop at this shape) each took ";
    let at = err.find(said).unwrap_or_else(|| panic!("{err}"));
    let rest = &err[at + said.len()..];
    let took: f64 = rest.split(' ').next().unwrap().parse().unwrap();
    assert!(took > 0.1, "{err}");
    assert!(
        rest.starts_with(&format!(
            "{took:.1} µs per operation; this client cannot hold it"
        )),
        "{err}"
    );
    // Two workers at 10 GETs a second, one every 200 ms each: held, nothing said.
    let err = s3_paced("get", "10/s", "2", "4");
    assert!(!err.contains("cannot hold"), "{err}");
}

#[test]
fn a_rate_that_cannot_be_held_is_warned_of_before_and_after_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    // One worker asked for a write every 10 ns: more than the client alone can start, as
    // measured before the run against no storage.
    let run = iobm()
        .args([
            "write", "--size", "64MiB", "--block", "4KiB", "--fsync", "never",
        ])
        .args(["--rate", "100000000/s", "--duration", "1s", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let err = String::from_utf8(run.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("warning: --rate 100000000 ops/s over 1 workers: each must start an operation every 0.0 µs, and against no storage (iobm's null target, 100 ms closed loop at this shape) each took"),
        "{err}"
    );
    let result = load(&json);
    let phase = &result["phases"][0];
    assert!(
        common::warns(phase, "could not keep its rate"),
        "{}",
        phase["warnings"]
    );
    assert!(
        phase["pace"]["fell_behind_s"].is_number(),
        "{}",
        phase["pace"]
    );
}

#[test]
fn bad_rates_are_refused_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Each with the flag its error names.
    let cases: &[(&[&str], &str)] = &[
        (&["write", "--rate", "0/s", d], "--rate"),
        (&["write", "--rate", "5MB", d], "--rate"),
        (&["read", "--rate=-1/s", d], "--rate"),
        (&["s3", "get", "--rate", "0MiB/s"], "--rate"),
        (
            &["write", "--rate", "10/s", "--arrivals", "bursty", d],
            "--arrivals",
        ),
        (&["read", "--rate-sweep", "400..100/4", d], "--rate-sweep"),
        (&["read", "--rate-sweep", "100..400/1", d], "--rate-sweep"),
        (
            &["read", "--rate", "10/s", "--rate-sweep", "1..2/2", d],
            "--rate",
        ),
        (&["write", "--rate-sweep", "1..3/2", d], "--rate-sweep"),
        // A size per second needs one transfer size.
        (
            &["s3", "mixed", "--obj-size", "16KiB", "--rate", "8MiB/s"],
            "--rate 8.00MiB/s: a mix's operations",
        ),
        (
            &[
                "s3",
                "get",
                "--obj-size",
                "1MiB",
                "--range-size",
                "64KiB",
                "--rate",
                "1MiB/s",
            ],
            "--rate 1.00MiB/s: with --range-size",
        ),
        (
            &[
                "s3",
                "get",
                "--obj-size-range",
                "4KiB..1MiB",
                "--rate",
                "1MiB/s",
            ],
            "a range of sizes",
        ),
    ];
    for &(args, flag) in cases {
        // A rate taken by mistake would run (for long): stopped, it fails here.
        let run = iobm().args(args).timeout(Duration::from_secs(20)).assert();
        let out = run.code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        let first = err.lines().next().unwrap();
        assert!(first.starts_with("iobm: error: "), "{args:?}: {err}");
        assert!(first.contains(flag), "{args:?}: {err}");
    }
    // --arrivals alone: the --rate or --rate-sweep it needs is named.
    let out = iobm()
        .args(["write", "--arrivals", "poisson", d])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("required arguments were not provided:\n  <--rate <N/s|SIZE/s>|--rate-sweep"),
        "{err}"
    );
    assert!(common::entries(dir.path()).is_empty());
}

#[test]
fn a_sweep_reads_at_each_rate_and_finds_the_knee_under_the_slo() {
    let dir = tempfile::tempdir().unwrap();
    iobm()
        .args(["write", "--size", "8MiB", "--block", "4KiB", "--keep"])
        .arg(dir.path())
        .assert()
        .success();
    let kept = dir.path().join(&common::entries(dir.path())[0]);
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("s.json");
    let sweep = |slo: &str| {
        let mut cmd = iobm();
        cmd.args([
            "read",
            "--random",
            "--rate-sweep",
            "100..300/3",
            "--duration",
            "1s",
        ])
        .args(["--slo", slo, "--json"])
        .arg(&json)
        .arg(&kept);
        let run = cmd.assert().success();
        String::from_utf8(run.get_output().stdout.clone()).unwrap()
    };
    // No read of a few KiB takes 10 s: every step is under it, the knee is the last.
    let text = sweep("10s");
    let result = load(&json);
    let phases = result["phases"].as_array().unwrap();
    let targets: Vec<f64> = phases
        .iter()
        .map(|p| p["pace"]["target_ops_per_s"].as_f64().unwrap())
        .collect();
    assert_eq!(targets, [100.0, 200.0, 300.0]);
    assert_eq!(phases[1]["name"], "read at 200 ops/s");
    for (phase, target) in phases.iter().zip(targets) {
        assert_paced(phase, target, "uniform", 0.3);
    }
    let rate = &result["config"]["rate"];
    assert_eq!(
        (
            rate["sweep_to_ops_per_s"].as_f64(),
            rate["sweep_steps"].as_u64()
        ),
        (Some(300.0), Some(3))
    );
    assert!(text.contains("rate sweep (uniform arrivals"), "{text}");
    assert!(text.contains("knee: 300 ops/s targeted"), "{text}");
    // The SLO is how the result is read: the same workload, the same hash.
    let hash = result["config_hash"].clone();
    // Under a nanosecond no step is: no knee.
    let text = sweep("1ns");
    assert!(text.contains("knee: none"), "{text}");
    assert_eq!(load(&json)["config_hash"], hash);
}

#[test]
fn paced_runs_started_by_hand_merge_into_one_at_their_rates_together() {
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = |name: &str| out.path().join(format!("{name}.json"));
    let clients: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
                .args([
                    "write", "--size", "16MiB", "--block", "4KiB", "--rate", "100/s",
                ])
                .args(["--duration", "2s", "--json"])
                .arg(json(name))
                .arg(dir.path())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in clients {
        assert!(c.wait().unwrap().success());
    }
    iobm()
        .args(["merge", "--whole", "--json"])
        .arg(json("m"))
        .arg(json("a"))
        .arg(json("b"))
        .assert()
        .success();
    let merged = load(&json("m"));
    let phase = &merged["phases"][0];
    // Two clients at 100 a second each: 200 together, every response of both kept.
    let parts: u64 = ["a", "b"]
        .iter()
        .map(|n| u(&load(&json(n))["phases"][0]["pace"]["response"]["histogram"]["count"]))
        .sum();
    assert_eq!(u(&phase["pace"]["response"]["histogram"]["count"]), parts);
    assert_paced(phase, 200.0, "uniform", 0.3);
}
