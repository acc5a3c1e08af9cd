//! Synthetic rank parts of a phase, as rank 0 receives them under MPI, for the scale test and
//! the merge benchmark (`examples/merge_scale.rs`): `workers` workers per rank, each with a
//! series of `intervals` 1 s intervals and a small latency histogram in each; and the bytes each
//! rank sends of its part (`sent`).

use iobm_engine::{prepare_objects, run_phase, Control, Layout, Op, Phase, Ranked};
use iobm_results::checks::Machine;
use iobm_results::{PhaseResult, Series};
use iobm_run::ranks::RankPhase;
use iobm_run::record::phase_result;
use iobm_stats::HistogramData;
use iobm_target::mem::MemTarget;

const SECOND: u64 = 1_000_000_000;

/// A real phase of `workers` workers on the in-memory target, the template of every part.
pub fn template(workers: usize) -> PhaseResult {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(workers, 4 * 4096);
    prepare_objects(&target, &layout).unwrap();
    let phase = Phase::new("write", Op::Write, 4096, layout);
    let outcome = run_phase(&target, &phase, &Control::new(1, workers), &Ranked::ALONE);
    phase_result(&phase, &outcome, 0, "host", &Machine::with_ram(64 << 30))
}

/// Bytes of worker `w` of rank `r` in interval `k`: uneven over ranks, workers and time.
pub fn bytes_at(r: u32, w: usize, k: usize) -> u64 {
    (1 << 20) * (1 + (r as u64 % 7) + (w as u64 % 3)) + (k as u64 % 11) * 4096
}

/// Rank `r`'s part: every worker `intervals` seconds long (rank r starting r ms late).
pub fn part(template: &PhaseResult, r: u32, ranks: u32, intervals: usize) -> RankPhase {
    let mut phase = template.clone();
    phase.start_ns = 0;
    phase.end_ns = intervals as u64 * SECOND + ranks as u64 * 1_000_000;
    for (w, worker) in phase.workers.iter_mut().enumerate() {
        worker.rank = r;
        worker.host = format!("node{}", r / 8);
        let mut s = Series::new(std::time::Duration::from_secs(1));
        for k in 0..intervals {
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
        span.end_ns = span.start_ns + intervals as u64 * SECOND - w as u64 * 1_000;
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

/// The bytes rank `r`'s `part` sends rank 0 in a run of `ranks` ranks, as `Ranks::merge` makes
/// them: its series folded, and its workers' own detached when every rank's together pass the
/// document's bound.
pub fn sent(part: RankPhase, ranks: u32) -> Vec<u8> {
    let intervals = iobm_results::detail::SeriesFolder::worker_intervals(&part.phase.workers);
    let detach = intervals * ranks as usize > iobm_results::detail::INLINE_WORKER_INTERVALS;
    iobm_run::ranks::part::send(part, detach)
}
