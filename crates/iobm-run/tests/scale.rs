//! A phase at cluster scale, without running it: 256 ranks x 16 workers for an hour at 1 s
//! intervals, each worker's series with a latency histogram per interval, each rank's part
//! folded and sent as that rank sends it and folded in as rank 0 does under MPI. The document and the side file are the sizes docs/mpi.md
//! quotes, the per-worker series go to the side file whole, and the aggregates equal a direct
//! computation.

mod synthetic;

use iobm_results::checks::Machine;
use iobm_results::detail;
use iobm_run::ranks::PhaseMerger;
use iobm_stats::AggregateKind;
use synthetic::{bytes_at, template};

fn part(template: &iobm_results::PhaseResult, r: u32) -> iobm_run::ranks::RankPhase {
    synthetic::part(template, r, RANKS, INTERVALS)
}

const RANKS: u32 = 256;
const WORKERS: usize = 16;
const INTERVALS: usize = 3600;

#[test]
fn an_hour_of_4096_workers_makes_the_sizes_the_guide_quotes_with_exact_aggregates() {
    let template = template(WORKERS);
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
        merger.add_sent(r, &synthetic::sent(part, RANKS)).unwrap();
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
    // The sizes docs/mpi.md quotes for this hour, to its rounding.
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/mpi.md"))
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let quoted = format!(
        "synthetic hour of {RANKS} ranks x {WORKERS} workers makes a {:.1} MB document with a {:.1} MB side file",
        document.len() as f64 / 1e6,
        side as f64 / 1e6
    );
    assert!(
        guide.contains(&quoted),
        "docs/mpi.md does not say what this hour makes: {quoted}"
    );

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
    let template = template(WORKERS);
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
