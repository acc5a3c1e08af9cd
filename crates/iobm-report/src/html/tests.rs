//! Unit tests of the HTML report.

use super::*;
use iobm_results::Series;
use iobm_stats::names::OpName;

/// A phase of `length_ns` whose summed series has these MiB per interval of 1 s.
fn phase(op: OpName, length_ns: u64, mib: &[u64]) -> PhaseResult {
    let mut p: PhaseResult =
        serde_json::from_str(include_str!("../../../iobm/tests/fixtures/stream.json"))
            .map(|r: RunResult| r.phases[0].clone())
            .unwrap();
    p.op = op;
    p.end_ns = p.start_ns + length_ns;
    let mut s = Series::new(std::time::Duration::from_secs(1));
    s.bytes = mib.iter().map(|m| m << 20).collect();
    s.ops = mib.to_vec();
    p.series = Some(s);
    p
}

fn values(chart: &Value, i: usize) -> Vec<f64> {
    chart["series"][i]["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn xs(chart: &Value) -> Vec<f64> {
    chart["x"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn run_of(p: &PhaseResult) -> RunResult {
    let mut r: RunResult =
        serde_json::from_str(include_str!("../../../iobm/tests/fixtures/stream.json")).unwrap();
    r.phases = vec![p.clone()];
    r
}

#[test]
fn a_short_last_interval_is_drawn_with_the_one_before_over_their_real_length() {
    // 3.224 s: the last 0.224 s hold the 4 MiB of requests that were in flight at the end.
    let p = phase(OpName::Write, 3_224_000_000, &[7, 9, 9, 4]);
    let chart = phase_throughput(&p, &run_of(&p));
    assert_eq!(chart["step"], true);
    assert_eq!(xs(&chart), [0.0, 1.0, 2.0, 3.224]);
    let y = values(&chart, 0);
    let tail = 13.0 / 1.224;
    assert_eq!(y.len(), 4);
    assert_eq!(&y[..2], [7.0, 9.0]);
    assert!(
        (y[2] - tail).abs() < 1e-9 && (y[3] - tail).abs() < 1e-9,
        "{y:?}"
    );
    // Bytes over the steps' lengths add up to every byte moved: nothing made up.
    let drawn: f64 = y[..3]
        .iter()
        .zip([1.0, 1.0, 1.224])
        .map(|(r, t)| r * t)
        .sum();
    assert!((drawn - 29.0).abs() < 1e-9);
    // A last interval of at least half its length is its own step, over its own time.
    let p = phase(OpName::Write, 3_600_000_000, &[7, 9, 9, 4]);
    let chart = phase_throughput(&p, &run_of(&p));
    assert_eq!(xs(&chart), [0.0, 1.0, 2.0, 3.0, 3.6]);
    assert!((values(&chart, 0)[3] - 4.0 / 0.6).abs() < 1e-9);
}

#[test]
fn phases_that_move_no_data_are_drawn_in_operations_per_second() {
    let p = phase(OpName::Create, 3_000_000_000, &[100, 200, 300]);
    let chart = phase_throughput(&p, &run_of(&p));
    assert_eq!(chart["ylabel"], "operations/s");
    assert_eq!(values(&chart, 0), [100.0, 200.0, 300.0, 300.0]);
    assert_eq!(worker_rates(&p)["ylabel"], "operations/s");
    // A run of which no phase moves data (a meta run) is drawn in operations/s over the run.
    let run = run_throughput(&run_of(&p));
    assert_eq!(run["ylabel"], "operations/s");
    let drawn = &run["series"][0]["values"].as_array().unwrap()[..3];
    assert_eq!(drawn, [100.0, 200.0, 300.0].map(Value::from));
    // Beside a phase that moves data, in the run's MiB/s they are a gap, not a zero.
    let mut both = run_of(&phase(OpName::Write, 3_000_000_000, &[1, 2, 3]));
    both.phases.push(p);
    let run = run_throughput(&both);
    assert_eq!(run["ylabel"], "MiB/s");
    let values = run["series"][0]["values"].as_array().unwrap();
    let (write, create) = values.split_at(values.len() / 2);
    assert!(
        write.iter().any(|v| v.as_f64().is_some_and(|r| r > 0.0)),
        "{write:?}"
    );
    assert!(create.iter().all(Value::is_null), "{create:?}");
}

#[test]
fn latencies_read_in_the_unit_of_their_size() {
    assert_eq!(readable_latency(850.0), "850 ns");
    assert_eq!(readable_latency(23_800.0), "23.8 µs");
    assert_eq!(readable_latency(171_966_500.0), "171.97 ms");
    assert_eq!(readable_latency(2_500_000_000.0), "2.500 s");
    let p = phase(OpName::Write, 3_000_000_000, &[1, 1, 1]);
    let mut out = String::new();
    latency_line(&mut out, &p);
    let p99 = p.latency.p99_ns.unwrap();
    assert!(
        out.contains(&format!(
            "<span data-p=\"p99\" data-ns=\"{p99}\">{}</span>",
            readable_latency(p99 as f64)
        )),
        "{out}"
    );
    assert!(!out.contains(" in us"), "{out}");
}

#[test]
fn a_phase_ended_by_until_stable_says_where_on_the_page() {
    let run: RunResult = serde_json::from_str(include_str!(
        "../../../iobm/tests/fixtures/stream-steady.json"
    ))
    .unwrap();
    let page = run_page(&run);
    let lines: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("<p class=\"steady\">"))
        .collect();
    assert_eq!(lines.len(), 2, "one per phase");
    assert!(
        lines[0].contains("until stable (50% over 1s, sampled every 0.1s): steady at 1.000s"),
        "{}",
        lines[0]
    );
    // A run without the flag has none.
    let plain: RunResult =
        serde_json::from_str(include_str!("../../../iobm/tests/fixtures/stream.json")).unwrap();
    assert!(!run_page(&plain).contains("class=\"steady\""));
}

#[test]
fn a_rate_sweep_has_its_table_and_its_curve_on_the_page() {
    let run: RunResult =
        serde_json::from_str(include_str!("../../../iobm/tests/fixtures/rate-sweep.json")).unwrap();
    let chart = charts::rate_sweep(&run).expect("a sweep's curve");
    let points = iobm_results::pace::sweep_points(&run.phases);
    assert_eq!(points.len(), 3);
    let achieved: Vec<f64> = points.iter().map(|p| p.achieved_ops_per_s).collect();
    assert_eq!(xs(&chart), achieved);
    let p99: Vec<f64> = points
        .iter()
        .map(|p| p.p99_ns.unwrap() as f64 / 1e3)
        .collect();
    assert_eq!(values(&chart, 1), p99, "p99 in µs");
    assert_eq!(chart["series"].as_array().unwrap().len(), 3);
    let page = run_page(&run);
    assert!(page.contains("<section id=\"rate-sweep\"><h2>Rate sweep</h2>"));
    assert!(
        page.contains("knee: 500 ops/s targeted"),
        "the table and its knee"
    );
    assert!(page.contains("id=\"rate-sweep-chart\""));
    // A run without a sweep has neither.
    let plain: RunResult = serde_json::from_str(include_str!(
        "../../../iobm/tests/fixtures/paced-stream.json"
    ))
    .unwrap();
    assert!(charts::rate_sweep(&plain).is_none());
    assert!(!run_page(&plain).contains("rate-sweep"));
}
