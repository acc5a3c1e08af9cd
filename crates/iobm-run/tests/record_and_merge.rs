//! What the engine measured, turned into the result contract (`record`), and the phases of
//! several ranks merged into one (`ranks::merge_phases`): real phases on the in-memory target,
//! one with an injected ENOSPC, merged with shifted clocks, uneven worker counts and a failed
//! rank.

use iobm_dist::ClockOffset;
use iobm_engine::{prepare_objects, run_phase, Control, Layout, Op, Phase, Ranked};
use iobm_results::checks::Machine;
use iobm_results::{PhaseResult, RunStatus};
use iobm_run::ranks::{merge_phases, RankPhase};
use iobm_run::record::phase_result;
use iobm_stats::names::OpName;
use iobm_stats::AggregateKind;
use iobm_target::fault::FaultTarget;
use iobm_target::mem::MemTarget;
use iobm_target::Target;

const BLOCK: u64 = 4096;
const PER_WORKER: u64 = 10 * BLOCK;
const RAM: u64 = 64 << 30;

/// A write of `workers` x 40 KiB on `target`, recorded as rank `rank`'s part.
fn write_part(target: &dyn Target, workers: usize, rank: u32) -> RankPhase {
    let layout = Layout::file_per_worker(workers, PER_WORKER);
    prepare_objects(target, &layout).unwrap();
    let phase = Phase::new("write", Op::Write, BLOCK, layout);
    let outcome = run_phase(target, &phase, &Control::new(7, workers), &Ranked::ALONE);
    RankPhase {
        phase: phase_result(
            &phase,
            &outcome,
            rank,
            &format!("host{rank}"),
            &Machine::with_ram(RAM),
        ),
        traces: outcome.workers.into_iter().map(|w| w.trace).collect(),
        origin_unix_ns: 0,
    }
}

fn aggregate(phase: &PhaseResult, kind: AggregateKind) -> (u64, f64) {
    let a = phase.aggregates.iter().find(|a| a.kind == kind).unwrap();
    (a.bytes, a.bytes_per_s)
}

#[test]
fn a_phase_becomes_per_worker_records_with_aggregates_latency_and_cpu() {
    let part = write_part(&MemTarget::new(), 3, 2);
    let p = &part.phase;
    assert_eq!(p.status, RunStatus::Complete);
    assert_eq!((p.name.as_str(), p.op), ("write", OpName::Write));
    assert_eq!(p.workers.len(), 3);
    for (i, w) in p.workers.iter().enumerate() {
        assert_eq!((w.worker, w.rank, w.host.as_str()), (i as u32, 2, "host2"));
        assert_eq!(w.span.bytes, PER_WORKER);
        assert_eq!(w.span.ops, 10);
        assert_eq!(w.series.bytes.iter().sum::<u64>(), PER_WORKER);
        assert!(w.span.start_ns >= p.start_ns && w.span.end_ns <= p.end_ns);
    }
    assert_eq!(p.settings.block_bytes, BLOCK);
    assert_eq!(p.settings.data_bytes, 3 * PER_WORKER);
    assert_eq!(
        (p.settings.pattern.as_str(), p.settings.fsync.name()),
        ("sequential", "never")
    );
    assert_eq!(p.latency.histogram.count, 30);
    assert_eq!(p.latency.measures, "one buffered pwrite of 4096 bytes");
    assert!(p.latency.p50_ns.unwrap() <= p.latency.max_ns.unwrap());
    let (bytes, rate) = aggregate(p, AggregateKind::Makespan);
    assert_eq!(bytes, 3 * PER_WORKER);
    let window = (p.workers.iter().map(|w| w.span.end_ns).max().unwrap()
        - p.workers.iter().map(|w| w.span.start_ns).min().unwrap()) as f64
        / 1e9;
    assert!((rate - bytes as f64 / window).abs() <= 1e-6 * rate);
    assert!(p.cpu.cpu_s_per_gib.is_some());
    assert!(p.errors.is_empty() && p.operations.is_empty());
}

#[test]
fn a_failed_phase_keeps_its_errors_by_kind_and_says_so() {
    let target = FaultTarget::fail_writes_after(MemTarget::new(), 2 * BLOCK, libc::ENOSPC);
    let part = write_part(&target, 1, 0);
    let p = &part.phase;
    assert_eq!(p.status, RunStatus::Failed);
    assert_eq!(p.errors.len(), 1);
    assert!(p.errors[0].kind.contains("ENOSPC"), "{:?}", p.errors);
    assert!(p.errors[0].count >= 1);
    assert!(
        p.warnings.iter().any(|w| w.starts_with("failed:")),
        "{:?}",
        p.warnings
    );
    assert!(p.bytes() < PER_WORKER);
}

#[test]
fn ranks_merge_onto_rank_0s_clock_with_uneven_workers_and_a_failed_rank() {
    let root_origin = 1_000_000_000_000_u64;
    let mut rank0 = write_part(&MemTarget::new(), 1, 0);
    let mut rank1 = write_part(&MemTarget::new(), 3, 1);
    let failing = FaultTarget::fail_writes_after(MemTarget::new(), BLOCK, libc::ENOSPC);
    let mut rank2 = write_part(&failing, 2, 2);
    // Rank 1 started its clock 5 s after rank 0, on a wall clock 2 s ahead: its stamps move
    // 3 s later. Rank 2 started 1 s after, on a clock 1 s behind: 2 s later.
    rank0.origin_unix_ns = root_origin;
    rank1.origin_unix_ns = root_origin + 5_000_000_000;
    rank2.origin_unix_ns = root_origin + 1_000_000_000;
    let offsets = [
        ClockOffset {
            rank: 1,
            offset_ns: 2_000_000_000,
            uncertainty_ns: 10,
        },
        ClockOffset {
            rank: 2,
            offset_ns: -1_000_000_000,
            uncertainty_ns: 10,
        },
    ];
    let before: Vec<(u32, u64)> = [&rank0, &rank1, &rank2]
        .iter()
        .flat_map(|p| p.phase.workers.iter().map(|w| (w.rank, w.span.start_ns)))
        .collect();
    let parts_bytes: u64 = [&rank0, &rank1, &rank2]
        .iter()
        .map(|p| p.phase.bytes())
        .sum();
    let ops: u64 = [&rank0, &rank1, &rank2]
        .iter()
        .map(|p| p.phase.latency.histogram.count)
        .sum();
    let rank0_start = rank0.phase.start_ns;
    let machine = Machine::with_ram(RAM);
    let merged = merge_phases(vec![rank0, rank1, rank2], &offsets, root_origin, &machine);

    assert_eq!(merged.workers.len(), 6);
    let ranks: Vec<u32> = merged.workers.iter().map(|w| w.rank).collect();
    assert_eq!(ranks, [0, 1, 1, 1, 2, 2]);
    for (w, (rank, start)) in merged.workers.iter().zip(before) {
        let shift = [0, 3_000_000_000, 2_000_000_000][rank as usize];
        assert_eq!(w.span.start_ns, start + shift, "rank {rank}");
    }
    // The others were shifted seconds later: the phase starts when rank 0's did.
    assert_eq!(merged.start_ns, rank0_start);
    // The failed rank fails the merged phase; its errors and bytes count.
    assert_eq!(merged.status, RunStatus::Failed);
    assert!(merged.errors[0].kind.contains("ENOSPC"));
    assert_eq!(merged.bytes(), parts_bytes);
    assert_eq!(merged.latency.histogram.count, ops);
    assert_eq!(merged.settings.data_bytes, (1 + 3 + 2) * PER_WORKER);
    // Aggregates over every worker of every rank, on one timeline.
    let (bytes, rate) = aggregate(&merged, AggregateKind::Makespan);
    assert_eq!(bytes, parts_bytes);
    let end = merged.workers.iter().map(|w| w.span.end_ns).max().unwrap();
    let start = merged
        .workers
        .iter()
        .map(|w| w.span.start_ns)
        .min()
        .unwrap();
    let window = (end - start) as f64 / 1e9;
    assert!(
        window > 2.9,
        "the shifted ranks widen the window to about 3 s: {window}"
    );
    assert!((rate - bytes as f64 / window).abs() <= 1e-6 * rate);
}

#[test]
fn report_recomputes_warnings_and_keeps_notes_old_and_new() {
    use iobm_results::checks::JUST_WRITTEN;
    let mut part = write_part(&MemTarget::new(), 2, 0);
    part.phase.note(JUST_WRITTEN);
    part.phase
        .warnings
        .push("a stale warning the records do not support".into());
    let mut run: iobm_results::RunResult = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../iobm/tests/fixtures/stream.json"
        ))
        .unwrap(),
    )
    .unwrap();
    run.phases = vec![part.phase.clone()];
    iobm_run::recompute::recompute(&mut run);
    let w = &run.phases[0].warnings;
    assert!(w.contains(&JUST_WRITTEN.to_string()), "{w:?}");
    assert!(!w.iter().any(|w| w.starts_with("a stale")), "{w:?}");
    // A document from before phases had notes: the note is found among its warnings.
    let mut old = part.phase;
    old.notes.clear();
    run.phases = vec![old];
    iobm_run::recompute::recompute(&mut run);
    assert_eq!(run.phases[0].notes, vec![JUST_WRITTEN.to_string()]);
    assert!(run.phases[0].warnings.contains(&JUST_WRITTEN.to_string()));
}
