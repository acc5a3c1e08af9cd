//! Unit tests of the aggregate bandwidth definitions and the traces they come from.

use super::*;

#[test]
fn a_trace_of_an_hour_stays_bounded_and_keeps_its_first_seconds() {
    let mut t = TraceBuilder::default();
    let hour_ms = 3_600_000u64;
    for ms in 0..hour_ms {
        let p = Progress {
            bytes: ms * 10,
            ops: ms,
        };
        t.sample(ms * 1_000_000, p);
    }
    let interval = t.interval_ns();
    let trace = t.finish(
        hour_ms * 1_000_000,
        Progress {
            bytes: hour_ms * 10,
            ops: hour_ms,
        },
    );
    assert!(trace.len() <= TRACE_POINTS + 1, "{}", trace.len());
    // The head keeps every millisecond; later samples are at most `interval` apart.
    assert!(trace[..TRACE_HEAD]
        .windows(2)
        .all(|w| w[1].0 - w[0].0 == 1_000_000));
    assert!(trace.windows(2).all(|w| w[1].0 - w[0].0 <= interval));
    assert_eq!(interval, 128_000_000, "an hour: 128 ms");
    // A snapshot anywhere is off by less than one interval's progress.
    let at = 1_234_567_890_123;
    let p = progress_at(&trace, at);
    assert!(p.ops <= at / 1_000_000 && at / 1_000_000 - p.ops < interval / 1_000_000);
}

fn span(start: u64, end: u64, bytes: u64, at_start: u64, at_first: u64) -> WorkerSpan {
    WorkerSpan {
        start_ns: start,
        end_ns: end,
        bytes,
        ops: bytes / 10,
        at_all_started: Progress {
            bytes: at_start,
            ops: at_start / 10,
        },
        at_first_done: Progress {
            bytes: at_first,
            ops: at_first / 10,
        },
        ..WorkerSpan::default()
    }
}

#[test]
fn warps_window_drops_each_workers_first_and_last_operation() {
    let ms = 1_000_000;
    let p = |bytes| Progress {
        bytes,
        ops: bytes / 10,
    };
    // Worker 0 ends its first operation at 20 ms, starts its last at 90 ms; worker 1 at
    // 30 ms and 80 ms: the window is 30..80 ms.
    let traces = vec![
        vec![
            (20 * ms, p(10)),
            (30 * ms, p(20)),
            (80 * ms, p(60)),
            (100 * ms, p(80)),
        ],
        vec![(30 * ms, p(10)), (80 * ms, p(50)), (95 * ms, p(60))],
    ];
    let mut spans = [span(0, 100 * ms, 80, 0, 0), span(0, 95 * ms, 60, 0, 0)];
    spans[0].first_op_end_ns = 20 * ms;
    spans[0].last_op_start_ns = 90 * ms;
    spans[1].first_op_end_ns = 30 * ms;
    spans[1].last_op_start_ns = 80 * ms;
    fill_snapshots(&mut spans, &traces);
    let warp = aggregates(&spans)
        .into_iter()
        .find(|a| a.kind == AggregateKind::WarpWindow)
        .unwrap();
    // (60 - 20) + (50 - 10) bytes in 50 ms.
    assert_eq!(warp.bytes, 80);
    assert_eq!(warp.seconds, Some(0.05));
    assert!((warp.bytes_per_s - 1600.0).abs() < 1e-6);
    // Documents from before have no operation stamps: no window.
    let old = [span(0, 100 * ms, 80, 0, 80)];
    assert!(aggregates(&old)
        .iter()
        .all(|a| a.kind != AggregateKind::WarpWindow));
}

fn get(aggs: &[Aggregate], kind: AggregateKind) -> &Aggregate {
    aggs.iter().find(|a| a.kind == kind).unwrap()
}

#[test]
fn equal_workers_agree() {
    let spans: Vec<_> = (0..4)
        .map(|_| span(0, 2_000_000_000, 2000, 0, 2000))
        .collect();
    let aggs = aggregates(&spans);
    // No operation stamps: no warp window.
    assert_eq!(aggs.len(), 4);
    for a in &aggs {
        assert!((a.bytes_per_s - 4000.0).abs() < 1e-9, "{a:?}");
    }
    assert!(disagreement(&aggs, 0.10).is_none());
}

#[test]
fn uneven_workers_show_each_definition() {
    // Worker 0: 0..1s, 1000 B. Worker 1: 0.5s..2s, 3000 B; 1000 B done at 1s, none at 0.5s.
    let spans = [
        span(0, 1_000_000_000, 1000, 500, 1000),
        span(500_000_000, 2_000_000_000, 3000, 0, 1000),
    ];
    let aggs = aggregates(&spans);
    assert!((get(&aggs, AggregateKind::SumOfRates).bytes_per_s - 3000.0).abs() < 1e-9);
    assert!((get(&aggs, AggregateKind::Makespan).bytes_per_s - 2000.0).abs() < 1e-9);
    assert!((get(&aggs, AggregateKind::FirstDone).bytes_per_s - 2000.0).abs() < 1e-9);
    let steady = get(&aggs, AggregateKind::SteadyState);
    assert_eq!(steady.bytes, 1500);
    assert_eq!(steady.seconds, Some(0.5));
    assert!((steady.bytes_per_s - 3000.0).abs() < 1e-9);
    let warning = disagreement(&aggs, 0.10).unwrap().to_string();
    assert!(warning.contains("50%"), "{warning}");
}

#[test]
fn snapshots_come_from_traces() {
    let p = |bytes| Progress {
        bytes,
        ops: bytes / 10,
    };
    let traces = vec![
        vec![(10, p(10)), (20, p(20)), (30, p(30))],
        vec![(15, p(5)), (25, p(15)), (40, p(40))],
    ];
    let mut spans = [span(5, 30, 30, 0, 0), span(12, 40, 40, 0, 0)];
    fill_snapshots(&mut spans, &traces);
    // Last start 12, first end 30.
    assert_eq!(spans[0].at_all_started, p(10));
    assert_eq!(spans[1].at_all_started, p(0));
    assert_eq!(spans[0].at_first_done, p(30));
    assert_eq!(spans[1].at_first_done, p(15));
    assert_eq!(progress_at(&traces[0], 9), p(0));
    assert_eq!(progress_at(&traces[0], 99), p(30));
}

#[test]
fn no_overlap_means_no_steady_state() {
    let spans = [span(0, 10, 10, 0, 10), span(20, 30, 10, 0, 0)];
    let aggs = aggregates(&spans);
    assert!(aggs.iter().all(|a| a.kind != AggregateKind::SteadyState));
    // Overlapping, but for less than the shortest window worth a figure.
    let ms = 1_000_000;
    let brief = [
        span(0, 20 * ms, 10, 0, 10),
        span(15 * ms, 40 * ms, 10, 0, 0),
    ];
    assert!(aggregates(&brief)
        .iter()
        .all(|a| a.kind != AggregateKind::SteadyState));
    assert!(aggregates(&[]).is_empty());
}

#[test]
fn a_phase_of_a_few_trace_intervals_has_no_first_done() {
    // 7 ms: the snapshots are a millisecond apart, so first done would count stale bytes.
    let ms = 1_000_000;
    let short = [span(0, 7 * ms, 10, 0, 10), span(0, 9 * ms, 10, 0, 5)];
    let kinds: Vec<_> = aggregates(&short).iter().map(|a| a.kind).collect();
    assert_eq!(kinds, [AggregateKind::SumOfRates, AggregateKind::Makespan]);
    // The first worker done at exactly ten intervals: first done is given.
    let enough = [span(0, 10 * ms, 10, 0, 10), span(0, 12 * ms, 10, 0, 5)];
    let first = get(&aggregates(&enough), AggregateKind::FirstDone).clone();
    assert_eq!((first.bytes, first.seconds), (15, Some(0.01)));
}

#[test]
fn idle_workers_and_workers_without_stamps_move_no_instant() {
    let ms = 1_000_000;
    // Worker 2 did nothing (start = end): the first end is worker 0's, not worker 2's.
    let mut spans = [
        span(10 * ms, 100 * ms, 80, 0, 0),
        span(20 * ms, 90 * ms, 60, 0, 0),
        span(50 * ms, 50 * ms, 0, 0, 0),
    ];
    spans[0].first_op_end_ns = 30 * ms;
    spans[0].last_op_start_ns = 80 * ms;
    // Worker 1 counted operations but deferred its flush: no stamps, no say in the window.
    spans[1].first_op_end_ns = 0;
    spans[1].last_op_start_ns = 0;
    // Worker 2 has a stamp but completed no operation: no say either.
    spans[2].first_op_end_ns = 40 * ms;
    spans[2].last_op_start_ns = 45 * ms;
    let at = SnapshotInstants::of(&spans);
    assert_eq!(
        at,
        SnapshotInstants {
            last_start_ns: 20 * ms,
            first_end_ns: 90 * ms,
            window_start_ns: 30 * ms,
            window_end_ns: 80 * ms,
        }
    );
    // Onto another clock: every instant moved.
    let moved = at.moved(|t| t + 7);
    assert_eq!(
        moved,
        SnapshotInstants {
            last_start_ns: 20 * ms + 7,
            first_end_ns: 90 * ms + 7,
            window_start_ns: 30 * ms + 7,
            window_end_ns: 80 * ms + 7,
        }
    );
}

#[test]
fn stamps_move_onto_another_clock_and_absent_ones_stay_absent() {
    let mut s = span(100, 900, 10, 0, 0);
    s.first_op_end_ns = 200;
    s.last_op_start_ns = 800;
    s.move_stamps(|t| t + 1000);
    assert_eq!(
        (s.start_ns, s.end_ns, s.first_op_end_ns, s.last_op_start_ns),
        (1100, 1900, 1200, 1800)
    );
    // No operation stamps (0): they stay 0, never become a stamp at the clock's offset.
    let mut old = span(100, 900, 10, 0, 0);
    old.move_stamps(|t| t + 1000);
    assert_eq!(
        (
            old.start_ns,
            old.end_ns,
            old.first_op_end_ns,
            old.last_op_start_ns
        ),
        (1100, 1900, 0, 0)
    );
}

#[test]
fn each_definition_is_named_and_carries_its_formula() {
    let labels: Vec<_> = AggregateKind::ALL.iter().map(|k| k.label()).collect();
    assert_eq!(
        labels,
        [
            "sum of rates",
            "makespan",
            "first done",
            "steady state",
            "warp window"
        ]
    );
    let starts = [
        "sum over workers of bytes_w / (end_w - start_w)",
        "sum of bytes_w / (max end_w - min start_w)",
        "sum of bytes_w done when the first worker finished",
        "sum of bytes_w done between the last start and the first end",
        "sum of bytes_w done between the last first-operation end",
    ];
    for (kind, start) in AggregateKind::ALL.iter().zip(starts) {
        assert!(kind.formula().starts_with(start), "{kind:?}");
    }
    let spans = [span(0, 2_000_000_000, 2000, 0, 2000)];
    for a in aggregates(&spans) {
        assert_eq!(a.formula, a.kind.formula());
    }
    // A worker that ran no time has no rate, not an infinite one.
    let idle = span(5, 5, 10, 0, 0);
    assert_eq!(idle.bytes_per_s(), 0.0);
}

#[test]
fn an_idle_worker_changes_no_aggregate() {
    let ms = 1_000_000;
    let busy = [
        span(0, 100 * ms, 1000, 0, 1000),
        span(0, 100 * ms, 1000, 0, 1000),
    ];
    let mut with_idle = busy.to_vec();
    with_idle.push(span(200 * ms, 200 * ms, 0, 0, 0));
    assert_eq!(aggregates(&with_idle), aggregates(&busy));
    assert_eq!(aggregates(&busy).len(), 4);
}

#[test]
fn a_warp_window_shorter_than_ten_intervals_gets_no_figure() {
    let ms = 1_000_000;
    let mut spans = [span(0, 100 * ms, 80, 0, 0)];
    spans[0].first_op_end_ns = 40 * ms;
    spans[0].last_op_start_ns = 45 * ms;
    assert!(aggregates(&spans)
        .iter()
        .all(|a| a.kind != AggregateKind::WarpWindow));
    spans[0].last_op_start_ns = 50 * ms;
    assert!(aggregates(&spans)
        .iter()
        .any(|a| a.kind == AggregateKind::WarpWindow));
}

#[test]
fn disagreement_is_told_past_the_tolerance_and_when_one_is_zero() {
    let agg = |kind, bytes_per_s| Aggregate {
        kind,
        formula: String::new(),
        bytes: 0,
        ops: 0,
        seconds: None,
        bytes_per_s,
        ops_per_s: 0.0,
    };
    let pair = |lo, hi| {
        [
            agg(AggregateKind::Makespan, lo),
            agg(AggregateKind::SumOfRates, hi),
        ]
    };
    // Exactly at the tolerance: nothing; past it: a warning naming both.
    assert_eq!(disagreement(&pair(1.0, 1.5), 0.5), None);
    let w = disagreement(&pair(1.0, 1.5), 0.25).unwrap().to_string();
    assert!(
        w.contains("50%") && w.contains("sum of rates is highest, makespan lowest"),
        "{w}"
    );
    // All zero: they agree; one zero and one not: said so.
    assert_eq!(disagreement(&pair(0.0, 0.0), 0.1), None);
    assert_eq!(
        disagreement(&pair(0.0, 3.0), 0.1).unwrap().to_string(),
        "aggregates disagree: makespan is zero while sum of rates is not"
    );
    assert_eq!(disagreement(&[], 0.1), None);
}
