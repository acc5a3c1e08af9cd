//! The phase runner: prepares every worker, releases them together through a barrier, times
//! each operation with the monotonic clock, and collects per-worker spans, per-second series,
//! latency histograms, errors by kind, iobm's CPU time and the cache evidence around the phase.

use crate::control::{Control, LivePhase};
use crate::cpu::CpuTimes;
use crate::data::Generator;
use crate::objects::ObjectTask;
use crate::outcome::{CacheDrop, ErrorCount, OpOutcome, PhaseEnd, PhaseOutcome, WorkerOutcome};
use crate::pace::{Monotonic, PaceOutcome};
use crate::steady::{self, SteadyOutcome, SumRanks, Tally};
use crate::stonewall::{Agree, Wall};
use crate::task::Task;
use crate::tasks::file_task;
use crate::workload::{Layout, Op, Phase, StopRule};
use iobm_stats::{fill_snapshots, Histogram, Trace, WorkerSpan};
use iobm_target::layers::ProcessIo;
use iobm_target::{error_kind, Access, OpenOptions, Target};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};
use worker::run_worker;

/// Creates the layout's files, empty, before a write phase (not timed).
pub fn prepare_objects(target: &dyn Target, layout: &Layout) -> io::Result<()> {
    for file in &layout.files {
        let handle = target
            .open(
                &file.name,
                OpenOptions {
                    access: Access::Create,
                    direct: false,
                },
            )
            .map_err(|e| io::Error::new(e.kind(), format!("create {}: {e}", file.name)))?;
        handle.close()?;
    }
    Ok(())
}

/// Drops what the phase asks from the page cache (untimed) and says what was dropped.
fn drop_caches(target: &dyn Target, phase: &Phase) -> (io::Result<()>, CacheDrop) {
    if phase.drop_system_cache && iobm_target::posix::drop_system_cache() {
        return (Ok(()), CacheDrop::System);
    }
    if !(phase.drop_cache || phase.drop_system_cache) {
        return (Ok(()), CacheDrop::Nothing);
    }
    let mut dropped = CacheDrop::Nothing;
    let result = phase
        .layout
        .files
        .iter()
        .filter_map(|f| target.drop_cache(&f.name))
        .inspect(|_| dropped = CacheDrop::Files)
        .collect::<io::Result<Vec<()>>>()
        .map(|_| ());
    (result, dropped)
}

/// Phase-wide coordination between workers.
struct Shared {
    workers: usize,
    /// Set when the phase must end: an error (past `max_errors`) or a worker that could not start.
    abort: AtomicBool,
    /// Failed operations so far, across workers.
    errors: AtomicU64,
    /// Set when `--until-stable` found the phase steady: the workers stop.
    settled: AtomicBool,
    /// Workers that have ended their operations (into their final flush, or done).
    left: AtomicUsize,
}

/// Stamps the start of a phase (after every worker is prepared) and publishes it for progress.
fn begin(phase: &Phase, control: &Control) -> (CpuTimes, Instant) {
    let cpu_before = CpuTimes::now();
    let start = Instant::now();
    *control.phase.lock().unwrap() = Some(LivePhase {
        name: phase.name.clone(),
        started: start,
        planned_bytes: Some(phase.layout.total_bytes())
            .filter(|&total| phase.stop == StopRule::Once && total > 0),
        duration: match phase.stop {
            StopRule::Duration(d) | StopRule::Stonewall(d) => Some(d),
            _ => None,
        },
    });
    (cpu_before, start)
}

/// Runs one phase to its stop rule, Ctrl-C or the first failed operation.
pub fn run_phase(target: &dyn Target, phase: &Phase, control: &Control) -> PhaseOutcome {
    run_phase_gated(target, phase, control, &|| {})
}

/// [`run_phase`], calling `gate` on this thread once every local worker is prepared and before
/// the phase starts: the barrier across MPI ranks.
pub fn run_phase_gated(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    gate: &dyn Fn(),
) -> PhaseOutcome {
    run_phase_agreed(target, phase, control, gate, &|most| most)
}

/// [`run_phase_gated`] on one of several ranks: a [`StopRule::Stonewall`] phase calls `agree`
/// on this thread once, when every local worker has been stopped by the wall or ended, with
/// the most operations any of them did; it returns the most of every rank (an all-reduce with
/// max, made by every rank in the same phase), which the stopped workers then go on to. A
/// phase that fails before its workers start (as before its `gate`) makes no call.
pub fn run_phase_agreed(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    gate: &dyn Fn(),
    agree: Agree,
) -> PhaseOutcome {
    run_phase_ranked(target, phase, control, gate, agree, &|mine| mine)
}

/// [`run_phase_agreed`], with the sum across ranks that a phase with [`Phase::steady`] makes at
/// each of its ticks (every rank's coordinating thread calls `sum` at the same ticks, until
/// the phase is steady or every worker of every rank has ended).
pub fn run_phase_ranked(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    gate: &dyn Fn(),
    agree: Agree,
    sum: SumRanks,
) -> PhaseOutcome {
    let workers = phase.workers;
    assert!(
        workers <= control.live.len(),
        "Control sized for fewer workers"
    );
    for counter in &control.live {
        counter.bytes.store(0, Ordering::Relaxed);
        counter.ops.store(0, Ordering::Relaxed);
    }
    // Runs are refused before they start (`needs::refusal`); a phase run on its own is too.
    if let Err(e) = target.capabilities().check(crate::needs(phase)) {
        return PhaseOutcome::failed_before_start(phase, control, &e.into(), "check the target");
    }
    let (dropped, cache_dropped) = drop_caches(target, phase);
    // Every phase that reads file data (bonnie's per-char reads, seeks and rewrites too).
    let reads_files = matches!(
        phase.op,
        Op::Read | Op::GetChar(_) | Op::Seek { .. } | Op::Rewrite | Op::ReadWrite { .. }
    );
    let resident_before = (reads_files && !phase.direct)
        .then(|| {
            phase
                .layout
                .files
                .iter()
                .map(|f| target.resident_bytes(&f.name)?.ok())
                .sum::<Option<u64>>()
        })
        .flatten();
    if let Err(e) = dropped {
        return PhaseOutcome::failed_before_start(phase, control, &e, "drop the page cache");
    }
    let device_before = target.device_counters();
    let below_before = target.layers().filter(|s| s.has_layers());
    let own_before = ProcessIo::now();

    let shared = Shared {
        workers,
        abort: AtomicBool::new(false),
        errors: AtomicU64::new(0),
        settled: AtomicBool::new(false),
        left: AtomicUsize::new(0),
    };
    // Object bodies are made by one generator shared by the workers (it is only read).
    let content = Generator::new(phase.data, phase.verify.unwrap_or(control.run_id));
    let content = &content;
    // Building a worker's task (opening files, filling buffers) is untimed.
    let prepare = |w: usize| {
        let task = match phase.op {
            Op::Object(op) => ObjectTask::new(target, phase, op, control.run_id, w, content)
                .map(|t| Box::new(t) as Box<dyn Task + '_>),
            _ => file_task(target, phase, control.run_id, w),
        };
        task.map_err(|(e, what)| WorkerError::new(&e, what))
    };
    let wall = matches!(phase.stop, StopRule::Stonewall(_)).then(|| Wall::new(workers));
    let wall = wall.as_ref();
    // `agree` is given to a worker only when it runs alone on this thread.
    let work = |w: usize,
                prepared: Result<Box<dyn Task + '_>, WorkerError>,
                origin: Instant,
                agree: Option<Agree>| {
        let at = Walled { wall, agree };
        match prepared {
            Ok(task) => run_worker(task, w, phase, control, &shared, origin, at, &Monotonic),
            Err(error) => {
                shared.abort.store(true, Ordering::SeqCst);
                shared.left.fetch_add(1, Ordering::SeqCst);
                if let Some(wall) = wall {
                    wall.ended(w, 0, agree);
                }
                let now = control.ns(Instant::now());
                (WorkerResult::empty(now, phase), vec![error])
            }
        }
    };
    let mut steady_outcome: Option<SteadyOutcome> = None;
    // A steady phase needs the coordinating thread to watch its rate.
    let alone = workers == 1 && phase.ramp.is_zero() && phase.steady.is_none();
    let (results, cpu, start, end) = if alone {
        // One worker runs on this thread: a process with a single thread keeps the kernel's
        // cheap path for file descriptors (no reference counting or position lock per call),
        // which is a tenth of a one-byte write(2) on tmpfs, as for single-threaded tools.
        let prepared = prepare(0);
        gate();
        let (cpu_before, start) = begin(phase, control);
        let result = work(0, prepared, start, Some(agree));
        let end = Instant::now();
        (vec![result], CpuTimes::now().since(cpu_before), start, end)
    } else {
        // Workers prepare, meet the coordinator at `ready`, which then stamps the phase start
        // and releases them all at `go`: nothing of the preparation is timed or counted as CPU.
        let ready = Barrier::new(workers + 1);
        let go = Barrier::new(workers + 1);
        let phase_start = Mutex::new(Instant::now());
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (ready, go, phase_start, prepare, work) =
                        (&ready, &go, &phase_start, &prepare, &work);
                    scope.spawn(move || {
                        let prepared = prepare(w);
                        ready.wait();
                        go.wait();
                        let origin = *phase_start.lock().unwrap();
                        work(w, prepared, origin, None)
                    })
                })
                .collect();
            ready.wait();
            gate();
            let (mut cpu_before, start) = begin(phase, control);
            *phase_start.lock().unwrap() = start;
            go.wait();
            if !phase.ramp.is_zero() {
                // The CPU of the warm-up is not the phase's: counted from its end.
                while start.elapsed() < phase.ramp && handles.iter().any(|h| !h.is_finished()) {
                    std::thread::sleep(Duration::from_millis(1));
                }
                cpu_before = CpuTimes::now();
            }
            if let Some(rule) = phase.steady {
                let local = || {
                    let left = shared.left.load(Ordering::SeqCst);
                    Tally {
                        bytes: control.live_bytes(),
                        ops: control.live_ops(),
                        done: left == workers,
                        ending: left > 0,
                    }
                };
                let from = start + phase.ramp;
                let watched = steady::watch(rule, from, &local, sum, &shared.settled);
                steady_outcome = Some(watched);
            }
            if let Some(wall) = wall {
                wall.resolve(agree);
            }
            let results: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("worker thread panicked"))
                .collect();
            let end = Instant::now();
            (results, CpuTimes::now().since(cpu_before), start, end)
        })
    };
    *control.phase.lock().unwrap() = None;
    let device_after = target.device_counters();
    let own_after = ProcessIo::now();
    let below_after = below_before.as_ref().and_then(|_| target.layers());

    let mut latency = Histogram::new();
    let mut by_op: Vec<OpOutcome> = OpOutcome::per_class(phase);
    let mut errors: Vec<ErrorCount> = Vec::new();
    let mut outcomes = Vec::with_capacity(workers);
    let mut pace = phase.pace.map(|p| PaceOutcome::new(p, phase.interval));
    for (result, worker_errors) in results {
        if let (Some(total), Some(own)) = (pace.as_mut(), &result.pace) {
            total.merge(own);
        }
        for (total, class) in by_op.iter_mut().zip(&result.classes) {
            latency += &class.latency;
            total.merge(class);
        }
        for error in worker_errors {
            match errors.iter_mut().find(|e| e.kind == error.kind) {
                Some(e) => e.count += error.count,
                None => errors.push(ErrorCount {
                    kind: error.kind,
                    count: error.count,
                    first: error.message,
                }),
            }
        }
        outcomes.push(result.outcome);
    }
    let mut spans: Vec<WorkerSpan> = outcomes.iter().map(|w| w.span).collect();
    let traces: Vec<Trace> = outcomes
        .iter_mut()
        .map(|w| std::mem::take(&mut w.trace))
        .collect();
    fill_snapshots(&mut spans, &traces);
    for ((outcome, span), trace) in outcomes.iter_mut().zip(spans).zip(traces) {
        outcome.span = span;
        outcome.trace = trace;
    }
    // Errors fail the phase when it stopped for them (over `max_errors`, or any with 0).
    let failed = !errors.is_empty()
        && (phase.max_errors == 0 || shared.errors.load(Ordering::Relaxed) > phase.max_errors);
    let end_kind = if failed || (shared.abort.load(Ordering::Relaxed) && !errors.is_empty()) {
        PhaseEnd::Failed
    } else if control.stop_requested() {
        PhaseEnd::Interrupted
    } else {
        PhaseEnd::Completed
    };
    PhaseOutcome {
        name: phase.name.clone(),
        op: phase.op,
        end: end_kind,
        stonewall: wall.map(Wall::outcome),
        steady: steady_outcome,
        // After a warm-up, the phase is what was counted.
        start_ns: control.ns(start + phase.ramp).min(control.ns(end)),
        end_ns: control.ns(end),
        workers: outcomes,
        latency,
        by_op,
        errors,
        cpu,
        resident_before,
        cache_dropped,
        device: device_before.zip(device_after),
        below: below_before.zip(below_after),
        own_io: own_before.zip(own_after),
        pace,
    }
}

struct WorkerError {
    kind: String,
    /// The first error of this kind, with what was being done.
    message: String,
    count: u64,
}

impl WorkerError {
    fn new(error: &io::Error, what: String) -> WorkerError {
        // "No space left on device", without Rust's " (os error 28)": the kind names the errno.
        let text = error.to_string();
        let text = text.split(" (os error").next().unwrap_or(&text);
        WorkerError {
            kind: error_kind(error),
            message: format!("{what}: {text}"),
            count: 1,
        }
    }
}

struct WorkerResult {
    outcome: WorkerOutcome,
    /// Per [`Op::classes`] entry.
    classes: Vec<OpOutcome>,
    /// A paced worker's response times and backlog.
    pace: Option<PaceOutcome>,
}

impl WorkerResult {
    fn empty(now_ns: u64, phase: &Phase) -> WorkerResult {
        WorkerResult {
            outcome: WorkerOutcome::empty(now_ns, phase.interval),
            classes: OpOutcome::per_class(phase),
            pace: None,
        }
    }
}

/// Whether the phase's file writes are made durable only at the end (`--fsync end` or never,
/// buffered): an operation that returned has not reached the storage.
fn defers_flush(phase: &Phase) -> bool {
    // Creations of whole files have no flush left for the end of the phase.
    let file_write =
        phase.op.writes() && !matches!(phase.op, Op::Object(_) | Op::Meta(_) | Op::Create);
    file_write && !phase.direct && phase.fsync != crate::FsyncPolicy::Each
}

/// A worker's part in a stonewall: the phase's wall, and the agreement across ranks when the
/// worker runs alone on the coordinating thread.
#[derive(Clone, Copy)]
struct Walled<'a> {
    wall: Option<&'a Wall>,
    agree: Option<Agree<'a>>,
}

mod worker;

#[cfg(test)]
mod io500_tests;
#[cfg(test)]
mod meta_tests;
#[cfg(test)]
mod pace_tests;
#[cfg(test)]
mod steady_tests;
#[cfg(test)]
mod strided_tests;
#[cfg(test)]
mod tests;
