//! The phase runner: prepares every worker, releases them together through a barrier, times
//! each operation with the monotonic clock, and collects per-worker spans, per-second series,
//! latency histograms, errors by kind and iobm's CPU time; the evidence around a phase is
//! gathered by the run layer's probes.

use crate::control::{Control, LivePhase};
use crate::cpu::CpuTimes;
use crate::data::Generator;
use crate::live::Gather;
use crate::objects::object_task;
use crate::outcome::{ErrorCount, OpOutcome, PhaseEnd, PhaseOutcome, WorkerOutcome};
use crate::pace::{Monotonic, PaceOutcome};
use crate::steady::{self, SteadyOutcome, SumRanks, Tally};
use crate::stonewall::{Agree, Wall};
use crate::task::Task;
use crate::workload::{Layout, Op, Phase, StopRule};
use iobm_stats::{fill_snapshots, Histogram, Trace, WorkerSpan};
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
    /// Where workers hand over the intervals they closed, when the run is watched.
    gather: Option<Mutex<Gather>>,
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

/// What a phase shares with the other ranks of its run, called on the coordinating thread.
#[derive(Clone, Copy)]
pub struct Ranked<'a> {
    /// Called once every local worker is prepared and before the phase starts: the barrier
    /// across MPI ranks.
    pub gate: &'a dyn Fn(),
    /// A [`StopRule::Stonewall`] phase calls it once, when every local worker has been stopped
    /// by the wall or ended, with the most operations any of them did; it returns the most of
    /// every rank (an all-reduce with max, made by every rank in the same phase), which the
    /// stopped workers then go on to. A phase that fails before its workers start (as before
    /// its `gate`) makes no call.
    pub agree: Agree<'a>,
    /// The sum across ranks that a phase with [`Phase::steady`] makes at each of its ticks
    /// (every rank's coordinating thread calls it at the same ticks, until the phase is steady
    /// or every worker of every rank has ended).
    pub sum: SumRanks<'a>,
    /// Messages between any two ranks, for a find whose ranks steal work from each other;
    /// None in one process (or where MPI cannot take calls from every thread: each rank then
    /// walks its own starting directories).
    pub peers: Option<&'a dyn iobm_dist::Peers>,
}

impl Ranked<'static> {
    /// A phase of one process: no barrier, its own most and its own rate.
    pub const ALONE: Ranked<'static> = Ranked {
        gate: &|| {},
        agree: &|most| most,
        sum: &|mine| mine,
        peers: None,
    };
}

/// A worker's task, or why it could not be built.
type Prepared<'t> = Result<Box<dyn Task + 't>, WorkerError>;
/// What a worker leaves: its books and its errors.
type Left = (WorkerResult, Vec<WorkerError>);

/// What the workers of a phase left, and when the phase ran.
struct Ran {
    results: Vec<Left>,
    cpu: CpuTimes,
    start: Instant,
    end: Instant,
    steady: Option<SteadyOutcome>,
}

/// Pins worker `w`'s thread to its CPU of the phase's list (`--cpus`), where it has one.
fn pin_worker(phase: &Phase, w: usize) -> Result<(), WorkerError> {
    let Some(cpus) = &phase.cpus else {
        return Ok(());
    };
    let cpu = cpus.for_worker(w);
    crate::pin::pin(cpu).map_err(|e| WorkerError::new(&e, format!("pin worker {w} to CPU {cpu}")))
}

/// Runs one phase to its stop rule, Ctrl-C or the first failed operation, with the other ranks
/// of `ranked` ([`Ranked::ALONE`] in one process).
pub fn run_phase(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    ranked: &Ranked,
) -> PhaseOutcome {
    let (workers, pinned) = (phase.workers, phase.cpus.is_some());
    assert!(
        workers <= control.live.len(),
        "Control sized for fewer workers"
    );
    control.reset_live();
    // Runs are refused before they start (`needs::refusal`); a phase run on its own is too.
    if let Err(e) = target.capabilities().check(crate::needs(phase)) {
        return PhaseOutcome::failed_before_start(phase, control, &e.into(), "check the target");
    }
    let shared = Shared {
        workers,
        abort: AtomicBool::new(false),
        errors: AtomicU64::new(0),
        settled: AtomicBool::new(false),
        left: AtomicUsize::new(0),
        gather: (control.observer.clone()).map(|observer| Gather::new(phase, target, observer)),
    };
    // Object bodies are made by one generator shared by the workers (it is only read).
    let content = &Generator::new(phase.data, phase.verify.unwrap_or(control.run_id));
    // A find's workers share one walk of this rank's roots, and the ranks steal from each other.
    let walk = (phase.find.as_ref()).map(|work| crate::tasks::find::Walk::new(work, ranked.peers));
    // Building a worker's task (opening files, filling buffers) is untimed.
    let prepare = |w: usize| {
        pin_worker(phase, w)?;
        let task = match phase.op {
            Op::Object(op) => object_task(target, phase, op, (control.run_id, w), content),
            _ => choose::file_task(target, phase, control.run_id, w, walk.as_ref()),
        };
        task.map_err(|(e, what)| WorkerError::new(&e, what))
    };
    let wall = matches!(phase.stop, StopRule::Stonewall(_)).then(|| Wall::new(workers));
    let wall = wall.as_ref();
    // `agree` is given to a worker only when it runs alone on this thread.
    let work = |w: usize, prepared: Prepared, origin: Instant, agree: Option<Agree>| {
        let at = Walled { wall, agree };
        match prepared {
            Ok(task) => run_worker(task, w, phase, control, &shared, origin, at, &Monotonic),
            Err(error) => {
                shared.abort.store(true, Ordering::SeqCst);
                shared.left.fetch_add(1, Ordering::SeqCst);
                if let Some(gather) = &shared.gather {
                    gather.lock().unwrap().ended(w);
                }
                if let Some(wall) = wall {
                    wall.ended(w, 0, agree);
                }
                let now = control.ns(Instant::now());
                (WorkerResult::empty(now, phase), vec![error])
            }
        }
    };
    // Not alone: a steady rate to watch, or a worker pinned (on a thread of its own).
    let alone = workers == 1 && phase.ramp.is_zero() && phase.steady.is_none() && !pinned;
    let run = || match alone {
        true => on_this_thread(phase, control, ranked, &prepare, &work),
        false => {
            let on = Coordinated {
                phase,
                control,
                ranked,
                shared: &shared,
                wall,
            };
            on.threads(&prepare, &work)
        }
    };
    let ran = crate::tasks::find::serving(walk.as_ref(), run);
    *control.phase.lock().unwrap() = None;
    finish(phase, control, &shared, wall, ran)
}

/// One worker on this thread: a process with a single thread keeps the kernel's cheap path
/// for file descriptors (no reference counting or position lock per call), which is a tenth
/// of a one-byte write(2) on tmpfs, as for single-threaded tools.
fn on_this_thread<'t, P, W>(
    phase: &Phase,
    control: &Control,
    ranked: &Ranked,
    prepare: &P,
    work: &W,
) -> Ran
where
    P: Fn(usize) -> Prepared<'t>,
    W: Fn(usize, Prepared<'t>, Instant, Option<Agree>) -> Left,
{
    let prepared = prepare(0);
    (ranked.gate)();
    let (cpu_before, start) = begin(phase, control);
    let result = work(0, prepared, start, Some(ranked.agree));
    let end = Instant::now();
    Ran {
        results: vec![result],
        cpu: CpuTimes::now().since(cpu_before),
        start,
        end,
        steady: None,
    }
}

/// The coordinating thread of a phase whose workers run on threads of their own.
struct Coordinated<'a> {
    phase: &'a Phase,
    control: &'a Control,
    ranked: &'a Ranked<'a>,
    shared: &'a Shared,
    wall: Option<&'a Wall>,
}

impl Coordinated<'_> {
    /// Workers prepare, meet the coordinator at `ready`, which then stamps the phase start and
    /// releases them all at `go`: nothing of the preparation is timed or counted as CPU.
    fn threads<'t, P, W>(&self, prepare: &P, work: &W) -> Ran
    where
        P: Fn(usize) -> Prepared<'t> + Sync,
        W: Fn(usize, Prepared<'t>, Instant, Option<Agree>) -> Left + Sync,
    {
        let (phase, control) = (self.phase, self.control);
        let workers = phase.workers;
        let ready = Barrier::new(workers + 1);
        let go = Barrier::new(workers + 1);
        let phase_start = Mutex::new(Instant::now());
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|w| {
                    let (ready, go, phase_start) = (&ready, &go, &phase_start);
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
            (self.ranked.gate)();
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
            let steady = self.watch_steady(start);
            if let Some(wall) = self.wall {
                wall.resolve(self.ranked.agree);
            }
            let results: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("worker thread panicked"))
                .collect();
            let end = Instant::now();
            let cpu = CpuTimes::now().since(cpu_before);
            Ran {
                results,
                cpu,
                start,
                end,
                steady,
            }
        })
    }

    /// Watches a phase with [`Phase::steady`] from the end of its warm-up until it is steady or
    /// every worker has ended.
    fn watch_steady(&self, start: Instant) -> Option<SteadyOutcome> {
        let (phase, control, shared) = (self.phase, self.control, self.shared);
        let rule = phase.steady?;
        let local = || {
            let left = shared.left.load(Ordering::SeqCst);
            Tally {
                bytes: control.live_bytes(),
                ops: control.live_ops(),
                done: left == shared.workers,
                ending: left > 0,
            }
        };
        let from = start + phase.ramp;
        let sum = self.ranked.sum;
        Some(steady::watch(rule, from, &local, sum, &shared.settled))
    }
}

/// The phase's outcome from what its workers left.
fn finish(
    phase: &Phase,
    control: &Control,
    shared: &Shared,
    wall: Option<&Wall>,
    ran: Ran,
) -> PhaseOutcome {
    let books = Books::of(phase, ran.results);
    // Errors fail the phase when it stopped for them (over `max_errors`, or any with 0).
    let errors = &books.errors;
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
        steady: ran.steady,
        // After a warm-up, the phase is what was counted.
        start_ns: control.ns(ran.start + phase.ramp).min(control.ns(ran.end)),
        end_ns: control.ns(ran.end),
        workers: books.workers,
        latency: books.latency,
        by_op: books.by_op,
        errors: books.errors,
        cpu: ran.cpu,
        pace: books.pace,
    }
}

/// The workers' books added up.
struct Books {
    workers: Vec<WorkerOutcome>,
    latency: Histogram,
    by_op: Vec<OpOutcome>,
    errors: Vec<ErrorCount>,
    pace: Option<PaceOutcome>,
}

impl Books {
    fn of(phase: &Phase, results: Vec<Left>) -> Books {
        let mut books = Books {
            workers: Vec::with_capacity(results.len()),
            latency: Histogram::new(),
            by_op: OpOutcome::per_class(phase),
            errors: Vec::new(),
            pace: phase.pace.map(|p| PaceOutcome::new(p, phase.interval)),
        };
        for (result, worker_errors) in results {
            if let (Some(total), Some(own)) = (books.pace.as_mut(), &result.pace) {
                total.merge(own);
            }
            for (total, class) in books.by_op.iter_mut().zip(&result.classes) {
                books.latency += &class.latency;
                total.merge(class);
            }
            for error in worker_errors {
                match books.errors.iter_mut().find(|e| e.kind == error.kind) {
                    Some(e) => e.count += error.count,
                    None => books.errors.push(ErrorCount {
                        kind: error.kind,
                        count: error.count,
                        first: error.message,
                    }),
                }
            }
            books.workers.push(result.outcome);
        }
        let outcomes = &mut books.workers;
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
        books
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

mod choose;
mod worker;

#[cfg(test)]
mod device_tests;
#[cfg(test)]
mod find_ranks_tests;
#[cfg(test)]
mod io500_tests;
#[cfg(test)]
mod mapped_tests;
#[cfg(test)]
mod meta_order_tests;
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
