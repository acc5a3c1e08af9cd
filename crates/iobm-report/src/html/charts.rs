//! The chart data of a phase: how its workers are grouped, the steps its series is drawn in,
//! throughput and latency over time, the latency distribution, and per-worker and per-rank bars.

use iobm_results::{PhaseResult, RunResult, Series};
use iobm_stats::HistogramData;
use serde_json::{json, Value};
use std::ops::Range;

pub(super) const MIB: f64 = 1024.0 * 1024.0;

pub(super) fn seconds(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// The whole series of a phase over all its workers.
pub(super) fn phase_series(phase: &PhaseResult) -> Series {
    if let Some(all) = &phase.series {
        return all.clone();
    }
    let mut all = Series::new(std::time::Duration::from_nanos(
        phase
            .workers
            .first()
            .map_or(1_000_000_000, |w| w.series.interval_ns),
    ));
    for w in &phase.workers {
        all.merge(&w.series);
    }
    all
}

/// Workers drawn one line each; above this, ranks are (or only the total).
const MAX_LINES: usize = 16;

/// How a phase's workers are drawn: each worker, each rank, or only the total; with the
/// series of each.
fn groups(phase: &PhaseResult, run: &RunResult) -> Vec<(String, Series)> {
    if phase.workers.len() <= MAX_LINES && !phase.worker_series_detached {
        let many_ranks = run.ranks.len() > 1;
        return phase
            .workers
            .iter()
            .map(|w| {
                let name = if many_ranks {
                    format!("rank {} worker {}", w.rank, w.worker)
                } else {
                    format!("worker {}", w.worker)
                };
                (name, w.series.clone())
            })
            .collect();
    }
    let ranks = &phase.rank_series;
    if ranks.len() > 1 && ranks.len() <= MAX_LINES {
        return ranks
            .iter()
            .map(|r| (format!("rank {}", r.rank), r.series.clone()))
            .collect();
    }
    Vec::new()
}

/// Phases drawn over time need at least this many steps; shorter ones get no such charts.
pub(super) const MIN_STEPS: usize = 3;

/// The length in seconds of interval `k` of a phase's series: the last one ends with the phase
/// (one past the phase's end covers nothing).
fn covered(phase: &PhaseResult, interval_ns: u64, k: usize) -> f64 {
    let length = phase.end_ns.saturating_sub(phase.start_ns);
    let start = k as u64 * interval_ns;
    seconds(interval_ns.min(length.saturating_sub(start)))
}

/// The steps a phase's series of `n` intervals is drawn in: where each begins (seconds since the
/// phase began) and, last, where the phase ended; and for each the intervals it holds and the
/// seconds they cover. The last interval covers only what is left of the phase; one shorter
/// than half an interval is drawn with the one before it (their amount over their time
/// together): the operations still in flight at the end complete in it, and over its short
/// time alone they would draw a spike that nothing moved at.
pub(super) fn steps(
    phase: &PhaseResult,
    interval_ns: u64,
    n: usize,
) -> (Vec<f64>, Vec<(Range<usize>, f64)>) {
    let mut spans: Vec<(Range<usize>, f64)> = (0..n)
        .map(|k| (k..k + 1, covered(phase, interval_ns, k)))
        .collect();
    while spans.len() >= 2 && spans[spans.len() - 1].1 < seconds(interval_ns) / 2.0 {
        let (last, length) = spans.pop().expect("two spans");
        let before = spans.last_mut().expect("one span");
        before.0.end = last.end;
        before.1 += length;
    }
    let step = seconds(interval_ns);
    let mut x: Vec<f64> = spans.iter().map(|(r, _)| r.start as f64 * step).collect();
    if let Some((r, length)) = spans.last() {
        x.push(r.start as f64 * step + length);
    }
    (x, spans)
}

/// The rate of `amounts` (bytes or operations per interval) over each step, divided by `unit`;
/// the last value repeated at the phase's end, where its step ends.
pub(super) fn stepped(amounts: &[u64], spans: &[(Range<usize>, f64)], unit: f64) -> Vec<Value> {
    let mut y: Vec<Value> = spans
        .iter()
        .map(|(r, length)| {
            let sum: u64 = r
                .clone()
                .map(|k| amounts.get(k).copied().unwrap_or(0))
                .sum();
            if *length > 0.0 {
                Value::from(sum as f64 / length / unit)
            } else {
                Value::Null
            }
        })
        .collect();
    if let Some(last) = y.last().cloned() {
        y.push(last);
    }
    y
}

/// The rate per interval of the phase, MiB/s (operations per second for phases that move no
/// data): the total and each group, drawn as steps over the time each covers.
pub(super) fn phase_throughput(phase: &PhaseResult, run: &RunResult) -> Value {
    let all = phase_series(phase);
    let step = seconds(all.interval_ns);
    let (x, spans) = steps(phase, all.interval_ns, all.bytes.len());
    let data = phase.moves_data();
    let rate = |s: &Series| {
        if data {
            stepped(&s.bytes, &spans, MIB)
        } else {
            stepped(&s.ops, &spans, 1.0)
        }
    };
    let mut series = vec![json!({"label": "all", "values": rate(&all)})];
    for (name, s) in groups(phase, run) {
        series.push(json!({"label": name, "values": rate(&s)}));
    }
    let unit = if data { "MiB/s" } else { "operations/s" };
    json!({
        "kind": "lines", "step": true, "title": format!("{}: {unit} per {step} s", phase.name),
        "xlabel": "seconds since the phase began", "ylabel": unit, "x": x, "series": series,
    })
}

/// p50, p99 and max latency per interval over all workers (documents from before per-interval
/// latency have none).
pub(super) fn latency_over_time(phase: &PhaseResult) -> Option<Value> {
    let all = phase_series(phase);
    if all.latency.is_empty() {
        return None;
    }
    let step = all.interval_ns as f64 / 1e9;
    let mut columns: [Vec<Value>; 3] = Default::default();
    for h in &all.latency {
        let us = |v: Option<u64>| v.map_or(Value::Null, |v| Value::from(v as f64 / 1e3));
        columns[0].push(us(h.percentile(50.0)));
        columns[1].push(us(h.percentile(99.0)));
        columns[2].push(us((h.count > 0).then_some(h.max_ns)));
    }
    let x: Vec<f64> = (0..all.latency.len()).map(|k| k as f64 * step).collect();
    let [p50, p99, max] = columns;
    Some(json!({
        "kind": "lines", "log": true, "yunit": "latency", "title": format!("{}: latency per {} s", phase.name, step),
        "xlabel": "seconds since the phase began", "ylabel": "latency", "x": x,
        "series": [
            {"label": "p50", "values": p50},
            {"label": "p99", "values": p99},
            {"label": "max", "values": max},
        ],
    }))
}

/// A paced phase (`--rate`): p50 and p99 response time per interval (from each operation's
/// intended start) beside the p99 service time, and the operations behind schedule.
pub(super) fn response_over_time(phase: &PhaseResult) -> Option<Value> {
    let pace = phase.pace.as_ref()?;
    let service = phase_series(phase);
    let response = &pace.series;
    let n = response.latency.len().max(service.latency.len());
    if n == 0 {
        return None;
    }
    let us = |v: Option<u64>| v.map_or(Value::Null, |v| Value::from(v as f64 / 1e3));
    let at = |s: &Series, k: usize, pct: f64| us(s.latency.get(k).and_then(|h| h.percentile(pct)));
    let step = response.interval_ns as f64 / 1e9;
    let x: Vec<f64> = (0..n).map(|k| k as f64 * step).collect();
    let column = |s: &Series, pct: f64| (0..n).map(|k| at(s, k, pct)).collect::<Vec<_>>();
    Some(json!({
        "kind": "lines", "log": true, "yunit": "latency",
        "title": format!("{}: response time (from the intended start) and service time per {} s", phase.name, step),
        "xlabel": "seconds since the phase began", "ylabel": "latency", "x": x,
        "series": [
            {"label": "response p50", "values": column(response, 50.0)},
            {"label": "response p99", "values": column(response, 99.0)},
            {"label": "service p99", "values": column(&service, 99.0)},
        ],
    }))
}

/// A `--rate-sweep` run's curve: p50, p99 and p99.9 response time against the achieved rate of
/// each step; None for another run.
pub(super) fn rate_sweep(run: &RunResult) -> Option<Value> {
    run.config.rate.as_ref()?.sweep_steps?;
    let points = iobm_results::pace::sweep_points(&run.phases);
    if points.is_empty() {
        return None;
    }
    let us = |v: Option<u64>| v.map_or(Value::Null, |v| Value::from(v as f64 / 1e3));
    let x: Vec<f64> = points.iter().map(|p| p.achieved_ops_per_s).collect();
    let column = |f: fn(&iobm_results::pace::SweepPoint) -> Option<u64>| {
        points.iter().map(|p| us(f(p))).collect::<Vec<_>>()
    };
    Some(json!({
        "id": "rate-sweep-chart", "kind": "lines", "log": true, "yunit": "latency",
        "title": "rate sweep: response time (from the intended start) against the achieved rate",
        "xlabel": "achieved operations/s", "ylabel": "response time", "x": x,
        "series": [
            {"label": "p50", "values": column(|p| p.p50_ns)},
            {"label": "p99", "values": column(|p| p.p99_ns)},
            {"label": "p99.9", "values": column(|p| p.p999_ns)},
        ],
    }))
}

/// Operations per latency bucket, on a logarithmic latency axis.
pub(super) fn latency_distribution(h: &HistogramData) -> Option<Value> {
    let buckets: Vec<&[u64; 2]> = h.buckets.iter().filter(|b| b[0] > 0).collect();
    if buckets.is_empty() {
        return None;
    }
    let x: Vec<f64> = buckets.iter().map(|b| b[0] as f64 / 1e3).collect();
    let y: Vec<u64> = buckets.iter().map(|b| b[1]).collect();
    Some(json!({
        "kind": "distribution", "xunit": "latency", "title": "latency distribution: operations per bucket",
        "xlabel": "latency (log scale)", "ylabel": "operations", "x": x,
        "series": [{"label": "operations", "values": y}],
    }))
}

/// Workers or ranks drawn one bar each; more are drawn as their distribution.
const MAX_BARS: usize = 16;

/// Each worker's own rate, bytes over its span (a short bar is a straggler).
pub(super) fn worker_rates(phase: &PhaseResult) -> Value {
    let labels: Vec<String> = phase
        .workers
        .iter()
        .map(|w| format!("r{} w{}", w.rank, w.worker))
        .collect();
    let data = phase.moves_data();
    let what = if data { "bytes" } else { "operations" };
    let bars = format!(
        "each worker's {} (its {what} over its own span)",
        unit(data)
    );
    let group = Group {
        bars,
        many: "workers",
        one: "worker",
    };
    bars_or_sorted(phase, &group, labels, rates_of(phase, data))
}

fn unit(data: bool) -> &'static str {
    if data {
        "MiB/s"
    } else {
        "operations/s"
    }
}

/// What a chart of rates is of: its title as bars, and what it counts.
struct Group {
    bars: String,
    many: &'static str,
    one: &'static str,
}

/// A bar per label, or for more than [`MAX_BARS`] the rates sorted, slowest first, with the
/// slowest and the fastest named in the title (a strip of hundreds of labels is unreadable).
fn bars_or_sorted(
    phase: &PhaseResult,
    group: &Group,
    labels: Vec<String>,
    rates: Vec<f64>,
) -> Value {
    let unit = unit(phase.moves_data());
    if rates.len() <= MAX_BARS {
        return json!({
            "kind": "bars", "title": format!("{}: {}", phase.name, group.bars),
            "xlabel": group.one, "ylabel": unit, "labels": labels,
            "series": [{"label": unit, "values": rates}],
        });
    }
    let mut order: Vec<usize> = (0..rates.len()).collect();
    order.sort_by(|&a, &b| rates[a].total_cmp(&rates[b]));
    let (slow, fast) = (order[0], order[order.len() - 1]);
    let number = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let x: Vec<f64> = (1..=order.len()).map(|k| k as f64).collect();
    let sorted: Vec<f64> = order.iter().map(|&w| rates[w]).collect();
    json!({
        "kind": "lines", "title": format!(
            "{}: the {} {}' {unit}, slowest first (slowest {} {}, fastest {} {})",
            phase.name, rates.len(), group.many, labels[slow], number(rates[slow]), labels[fast], number(rates[fast])),
        "xlabel": format!("{}, slowest first", group.many), "ylabel": unit, "x": x,
        "series": [{"label": unit, "values": sorted}],
    })
}

/// Each worker's rate, in MiB/s where the phase moves data, else operations per second.
fn rates_of(phase: &PhaseResult, data: bool) -> Vec<f64> {
    phase
        .workers
        .iter()
        .map(|w| {
            let span = seconds(w.span.end_ns.saturating_sub(w.span.start_ns));
            match (span > 0.0, data) {
                (true, true) => w.span.bytes as f64 / span / MIB,
                (true, false) => w.span.ops as f64 / span,
                (false, _) => 0.0,
            }
        })
        .collect()
}

/// Each rank's rate (its bytes over its workers' first start to last end), with more than one.
pub(super) fn rank_bars(phase: &PhaseResult, run: &RunResult) -> Option<Value> {
    if run.ranks.len() < 2 {
        return None;
    }
    let data = phase.moves_data();
    let amount = |w: &iobm_results::WorkerResult| if data { w.span.bytes } else { w.span.ops };
    let mut ranks: Vec<(u32, u64, u64, u64)> = Vec::new();
    for w in &phase.workers {
        match ranks.iter_mut().find(|r| r.0 == w.rank) {
            Some(r) => {
                r.1 += amount(w);
                r.2 = r.2.min(w.span.start_ns);
                r.3 = r.3.max(w.span.end_ns);
            }
            None => ranks.push((w.rank, amount(w), w.span.start_ns, w.span.end_ns)),
        }
    }
    ranks.sort_by_key(|r| r.0);
    let labels: Vec<String> = ranks.iter().map(|r| format!("rank {}", r.0)).collect();
    let rates: Vec<f64> = ranks
        .iter()
        .map(|&(_, amount, start, end)| {
            let span = seconds(end.saturating_sub(start));
            match (span > 0.0, data) {
                (true, true) => amount as f64 / span / MIB,
                (true, false) => amount as f64 / span,
                (false, _) => 0.0,
            }
        })
        .collect();
    let what = if data { "bytes" } else { "operations" };
    let bars = format!(
        "each rank's {} (its {what} over its workers' first start to last end)",
        unit(data)
    );
    let group = Group {
        bars,
        many: "ranks",
        one: "rank",
    };
    Some(bars_or_sorted(phase, &group, labels, rates))
}
