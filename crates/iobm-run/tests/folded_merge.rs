//! The merge of ranks that fold their own series before sending (`ranks::part`): synthetic
//! ranks framed as each rank sends them give the figures people read exactly as a direct
//! computation over every worker does (bytes, operations, rates, latency percentiles, each
//! rank's and the slowest and fastest worker's), the side file holds every worker's series
//! whole, and past the document's bound the rank series are coarsened, said so, with their
//! totals kept.

mod synthetic;

use iobm_results::checks::Machine;
use iobm_results::{detail, PhaseResult};
use iobm_run::ranks::PhaseMerger;
use iobm_stats::{AggregateKind, Histogram};
use synthetic::{bytes_at, template};

const SECOND: u64 = 1_000_000_000;

/// Rank 0's merge of `ranks` synthetic ranks of `template`'s workers and `intervals` intervals,
/// each sent as bytes as its rank sends it.
fn merged(template: &PhaseResult, ranks: u32, intervals: usize) -> PhaseResult {
    let mut merger = PhaseMerger::new(&[], 0, ranks as usize);
    for r in 0..ranks {
        let part = synthetic::part(template, r, ranks, intervals);
        merger.add_sent(r, &synthetic::sent(part, ranks)).unwrap();
    }
    merger.finish(&Machine::with_ram(64 << 30))
}

#[test]
fn folded_ranks_give_the_figures_of_a_direct_computation() {
    // 12 ranks x 16 workers x 300 intervals: past the bound of the document's worker series.
    let template = template(16);
    let phase = merged(&template, 12, 300);
    let parts: Vec<_> = (0..12)
        .map(|r| synthetic::part(&template, r, 12, 300))
        .collect();
    let workers: Vec<_> = parts.iter().flat_map(|p| &p.phase.workers).collect();
    assert_eq!(phase.workers.len(), workers.len());
    assert!(phase.worker_series_detached);

    // Bytes, operations and the aggregates' formulas over every worker's span.
    let total: u64 = workers.iter().map(|w| w.span.bytes).sum();
    let ops: u64 = workers.iter().map(|w| w.span.ops).sum();
    let first = workers.iter().map(|w| w.span.start_ns).min().unwrap();
    let last = workers.iter().map(|w| w.span.end_ns).max().unwrap();
    let aggregate = |kind| phase.aggregates.iter().find(|a| a.kind == kind).unwrap();
    assert_eq!(aggregate(AggregateKind::Makespan).bytes, total);
    assert_eq!(phase.bytes(), total);
    assert_eq!(phase.spans().iter().map(|s| s.ops).sum::<u64>(), ops);
    let makespan = total as f64 / ((last - first) as f64 / 1e9);
    let sum_of_rates: f64 = workers
        .iter()
        .map(|w| w.span.bytes as f64 / w.span.seconds())
        .sum();
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
    assert!(close(
        aggregate(AggregateKind::Makespan).bytes_per_s,
        makespan
    ));
    assert!(close(
        aggregate(AggregateKind::SumOfRates).bytes_per_s,
        sum_of_rates
    ));

    // Latency percentiles: those of every part's histogram merged directly.
    let mut direct = Histogram::new();
    for p in &parts {
        direct += &Histogram::from_data(&p.phase.latency.histogram);
    }
    let measures = phase.latency.measures.clone();
    assert_eq!(phase.latency, iobm_run::record::latency(measures, &direct));
    assert!(phase.latency.p99_ns.is_some());

    // Each rank's bytes and span, the slowest and the fastest worker: from the same records.
    for (r, p) in parts.iter().enumerate() {
        let theirs: Vec<_> = phase
            .workers
            .iter()
            .filter(|w| w.rank == r as u32)
            .collect();
        assert_eq!(theirs.len(), p.phase.workers.len());
        for (a, b) in theirs.iter().zip(&p.phase.workers) {
            assert_eq!(a.span, b.span);
        }
    }

    // The sums kept in the document, interval by interval, and each rank's.
    let all = phase.series.as_ref().unwrap();
    for k in [0, 7, 299] {
        let direct: u64 = (0..12)
            .flat_map(|r| (0..16).map(move |w| bytes_at(r, w, k)))
            .sum();
        assert_eq!(all.bytes[k], direct);
        assert_eq!(all.latency[k].count, 4 * 12 * 16);
    }
    assert_eq!(phase.rank_series.len(), 12);
    assert_eq!(phase.rank_series[5].series.interval_ns, SECOND);
    let rank5: u64 = (0..16)
        .flat_map(|w| (0..300).map(move |k| bytes_at(5, w, k)))
        .sum();
    assert_eq!(phase.rank_series[5].series.bytes.iter().sum::<u64>(), rank5);
    assert!(phase.notes.iter().all(|n| !n.contains("coarsened")));

    // Every worker's own series back whole from the side file.
    let mut run: iobm_results::RunResult =
        serde_json::from_str(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
    run.phases = vec![phase];
    let side = detail::side_file_bytes(&run).unwrap();
    detail::attach(&mut run, &side).unwrap();
    for (back, sent) in run.phases[0].workers.iter().zip(workers) {
        assert_eq!(back.series, sent.series);
    }
}

#[test]
fn rank_series_past_the_bound_are_coarsened_said_so_with_their_totals() {
    // 600 ranks of one worker for an hour: 2,160,000 rank-intervals, past 2,097,152.
    let template = template(1);
    let phase = merged(&template, 600, 3600);
    assert_eq!(phase.rank_series.len(), 600);
    let rank = &phase.rank_series[17].series;
    assert_eq!(rank.interval_ns, 2 * SECOND);
    assert_eq!(rank.bytes.len(), 1800);
    let part = synthetic::part(&template, 17, 600, 3600);
    let sent = &part.phase.workers[0].series;
    assert_eq!(rank.bytes[3], sent.bytes[6] + sent.bytes[7]);
    assert_eq!(
        rank.bytes.iter().sum::<u64>(),
        sent.bytes.iter().sum::<u64>()
    );
    assert_eq!(rank.ops.iter().sum::<u64>(), sent.ops.iter().sum::<u64>());
    // The phase's own series keeps every interval; the coarsening is in the document's notes.
    assert_eq!(phase.series.as_ref().unwrap().bytes.len(), 3600);
    let note = phase
        .notes
        .iter()
        .find(|n| n.contains("rank_series coarsened"));
    assert!(
        note.unwrap().contains("adds up 2 of the phase's intervals"),
        "{:?}",
        phase.notes
    );
    assert!(phase
        .warnings
        .iter()
        .any(|w| w.contains("rank_series coarsened")));
}
