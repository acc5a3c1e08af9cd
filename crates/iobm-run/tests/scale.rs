//! A phase at cluster scale, without running it: 256 ranks x 16 workers for an hour at 1 s
//! intervals, each worker's series with a latency histogram per interval, folded rank by rank
//! as rank 0 folds them under MPI. The document stays bounded, the per-worker series go to the
//! side file whole, and the aggregates equal a direct computation.

use iobm_engine::{prepare_objects, run_phase, Control, Layout, Op, Phase};
use iobm_results::checks::Machine;
use iobm_results::{detail, PhaseResult, Series};
use iobm_run::ranks::{PhaseMerger, RankPhase};
use iobm_run::record::phase_result;
use iobm_stats::{AggregateKind, HistogramData};
use iobm_target::mem::MemTarget;

const RANKS: u32 = 256;
const WORKERS: usize = 16;
const INTERVALS: usize = 3600;
const SECOND: u64 = 1_000_000_000;

/// A real 16-worker phase on the in-memory target, as the template of every rank's part.
fn template() -> PhaseResult {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(WORKERS, 4 * 4096);
    prepare_objects(&target, &layout).unwrap();
    let phase = Phase::new("write", Op::Write, 4096, layout);
    let outcome = run_phase(&target, &phase, &Control::new(1, WORKERS));
    phase_result(&phase, &outcome, 0, "host", &Machine::with_ram(64 << 30))
}

/// Bytes of worker `w` of rank `r` in interval `k`: uneven over ranks, workers and time.
fn bytes_at(r: u32, w: usize, k: usize) -> u64 {
    (1 << 20) * (1 + (r as u64 % 7) + (w as u64 % 3)) + (k as u64 % 11) * 4096
}

/// Rank `r`'s part: every worker an hour long (rank r starting r ms late), with a series of
/// 3600 intervals and a small latency histogram in each.
fn part(template: &PhaseResult, r: u32) -> RankPhase {
    let mut phase = template.clone();
    phase.start_ns = 0;
    phase.end_ns = INTERVALS as u64 * SECOND + RANKS as u64 * 1_000_000;
    for (w, worker) in phase.workers.iter_mut().enumerate() {
        worker.rank = r;
        worker.host = format!("node{}", r / 8);
        let mut s = Series::new(std::time::Duration::from_secs(1));
        for k in 0..INTERVALS {
            let bytes = bytes_at(r, w, k);
            s.bytes.push(bytes);
            s.ops.push(bytes >> 20);
            let mut h = HistogramData::empty(4);
            let low = 100_000 + (k as u64 % 5) * 8_192;
            h.buckets = vec![[low, 3], [low * 2, 1]];
            (h.count, h.min_ns, h.max_ns, h.sum_ns) = (4, low, low * 2 + 1, low * 5);
            s.latency.push(h);
        }
        let span = &mut worker.span;
        span.start_ns = r as u64 * 1_000_000;
        span.end_ns = span.start_ns + INTERVALS as u64 * SECOND - w as u64 * 1_000;
        span.bytes = s.bytes.iter().sum();
        span.ops = s.ops.iter().sum();
        span.first_op_end_ns = 0;
        worker.series = s;
    }
    RankPhase {
        phase,
        traces: Vec::new(),
        origin_unix_ns: 0,
    }
}

#[test]
fn an_hour_of_4096_workers_is_a_bounded_document_with_exact_aggregates() {
    let template = template();
    let mut merger = PhaseMerger::new(&[], 0, RANKS as usize);
    let (mut total, mut sum_of_rates) = (0u64, 0.0f64);
    let (mut first_start, mut last_end) = (u64::MAX, 0u64);
    for r in 0..RANKS {
        let part = part(&template, r);
        for w in &part.phase.workers {
            total += w.span.bytes;
            sum_of_rates += w.span.bytes as f64 / w.span.seconds();
            first_start = first_start.min(w.span.start_ns);
            last_end = last_end.max(w.span.end_ns);
        }
        merger.add(r, part);
    }
    let phase = merger.finish(&Machine::with_ram(64 << 30));

    assert_eq!(phase.workers.len(), RANKS as usize * WORKERS);
    assert!(phase.worker_series_detached);
    assert!(phase.workers.iter().all(|w| w.series.bytes.is_empty()));
    let document = serde_json::to_vec(&phase).unwrap();
    let side = phase.detached.len();
    println!(
        "4096 workers x 3600 intervals: the phase's document {:.1} MB, its side file {:.1} MB",
        document.len() as f64 / 1e6,
        side as f64 / 1e6
    );
    assert!(document.len() < 50_000_000, "{} bytes", document.len());

    // The sums kept in the document: all workers' series and each rank's.
    let all = phase.series.as_ref().unwrap();
    assert_eq!(all.bytes.len(), INTERVALS);
    assert_eq!(all.bytes.iter().sum::<u64>(), total);
    assert_eq!(all.latency[7].count, 4 * RANKS as u64 * WORKERS as u64);
    assert_eq!(phase.rank_series.len(), RANKS as usize);
    let rank9: u64 = (0..WORKERS)
        .flat_map(|w| (0..INTERVALS).map(move |k| bytes_at(9, w, k)))
        .sum();
    assert_eq!(phase.rank_series[9].series.bytes.iter().sum::<u64>(), rank9);

    // The aggregates equal their formulas computed directly.
    let aggregate = |kind| phase.aggregates.iter().find(|a| a.kind == kind).unwrap();
    let makespan = total as f64 / ((last_end - first_start) as f64 / 1e9);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
    assert!(close(
        aggregate(AggregateKind::Makespan).bytes_per_s,
        makespan
    ));
    assert!(close(
        aggregate(AggregateKind::SumOfRates).bytes_per_s,
        sum_of_rates
    ));
    assert_eq!(aggregate(AggregateKind::Makespan).bytes, total);
}

#[test]
fn detached_series_come_back_whole_from_the_side_file() {
    let template = template();
    // Past the bound: 16 workers x 3600 intervals of one rank.
    let mut merger = PhaseMerger::new(&[], 0, 1);
    let original = part(&template, 3);
    merger.add(3, part(&template, 3));
    let phase = merger.finish(&Machine::with_ram(64 << 30));
    assert!(phase.worker_series_detached);
    let mut run: iobm_results::RunResult =
        serde_json::from_str(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
    run.phases = vec![phase];
    let side = detail::side_file_bytes(&run).unwrap();
    detail::attach(&mut run, &side).unwrap();
    for (back, sent) in run.phases[0].workers.iter().zip(&original.phase.workers) {
        assert_eq!(back.series, sent.series);
    }
    assert!(!run.phases[0].worker_series_detached);
}
