//! The phase runner: prepares every worker, releases them together through a barrier, times
//! each operation with the monotonic clock, and collects per-worker spans, per-second series,
//! latency histograms, errors by kind, iobm's CPU time and the cache evidence around the phase.

use crate::control::{Control, LivePhase};
use crate::cpu::CpuTimes;
use crate::data::Generator;
use crate::objects::ObjectTask;
use crate::outcome::{CacheDrop, ErrorCount, OpOutcome, PhaseEnd, PhaseOutcome, WorkerOutcome};
use crate::steady::{self, SteadyOutcome, SumRanks, Tally};
use crate::stonewall::{Agree, Wall};
use crate::task::Task;
use crate::tasks::file_task;
use crate::workload::{Layout, Op, Phase, StopRule};
use iobm_stats::{
    fill_snapshots, Histogram, Progress, SeriesRecorder, Trace, TraceBuilder, WorkerSpan,
};
use iobm_target::layers::ProcessIo;
use iobm_target::{error_kind, Access, OpenOptions, Target};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

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
    if phase.direct && !target.capabilities().direct_io {
        let e = io::Error::new(io::ErrorKind::Unsupported, "this target has no O_DIRECT");
        return PhaseOutcome::failed_before_start(phase, control, &e, "open with O_DIRECT");
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
            Ok(task) => run_worker(task, w, phase, control, &shared, origin, at),
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
    for (result, worker_errors) in results {
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
}

impl WorkerResult {
    fn empty(now_ns: u64, phase: &Phase) -> WorkerResult {
        WorkerResult {
            outcome: WorkerOutcome::empty(now_ns, phase.interval),
            classes: OpOutcome::per_class(phase),
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

/// Runs one worker's prepared task from the barrier to its stop rule, timing every operation.
fn run_worker(
    mut task: Box<dyn Task + '_>,
    index: usize,
    phase: &Phase,
    control: &Control,
    shared: &Shared,
    phase_origin: Instant,
    walled: Walled,
) -> (WorkerResult, Vec<WorkerError>) {
    let live = &control.live[index];
    // The warm-up comes before the phase's duration.
    let counted_from = phase_origin + phase.ramp;
    let deadline = match phase.stop {
        StopRule::Duration(d) => Some(counted_from + d),
        _ => None,
    };
    let wall_at = match phase.stop {
        StopRule::Stonewall(d) => walled.wall.map(|wall| (wall, counted_from + d)),
        _ => None,
    };
    // Once the wall stopped this worker: the operations it goes on to (wear-out).
    let mut wear_out: Option<u64> = None;
    let quota = match phase.stop {
        StopRule::Ops(total) => {
            let workers = shared.workers as u64;
            Some(total / workers + u64::from((index as u64) < total % workers))
        }
        _ => None,
    };
    let mut classes: Vec<OpOutcome> = OpOutcome::per_class(phase);
    let mut done = Progress::default();
    let mut trace = TraceBuilder::default();
    let mut series = SeriesRecorder::new(phase.interval);
    // Each kind of operation's own series where a phase has several; with one, it is the
    // worker's, recorded once.
    let several = classes.len() > 1;
    let mut class_series = vec![series.clone(); if several { classes.len() } else { 0 }];
    let mut errors: Vec<WorkerError> = Vec::new();
    let retries = phase.objects.as_ref().map_or(0, |o| o.retries);

    let start = Instant::now();
    let start_ns = control.ns(start.max(counted_from));
    // Stamps of the first counted operation's end and the last one's start (warp's window).
    let mut first_op_end: Option<Instant> = None;
    let mut last_op_start = start;

    let mut i: u64 = 0;
    let mut last_end = start;
    let mut verify_ns = 0u64;
    let queued = task.queued();
    // A queued task's operations complete after later ones were submitted: once no more are
    // submitted, the rest in flight are drained and counted like the others.
    let mut draining = false;
    loop {
        if let (Some((wall, at)), None, false) = (wall_at, wear_out, draining) {
            if wall.reached(last_end, at) {
                wear_out = Some(wall.stop(index, i, walled.agree));
            }
        }
        let ended = shared.abort.load(Ordering::Relaxed)
            || control.stop_requested()
            || shared.settled.load(Ordering::Relaxed)
            || deadline.is_some_and(|d| last_end >= d)
            || quota.is_some_and(|q| i >= q)
            || wear_out.is_some_and(|most| i >= most);
        if !draining && (ended || !task.prepare(i)) {
            if !queued {
                break;
            }
            draining = true;
        }
        let (t0, t1, result, tries, checked_inline) = if queued {
            let completed = if draining {
                match task.drain() {
                    None => break,
                    Some(c) => c,
                }
            } else {
                i += 1;
                match task.submit() {
                    None => continue,
                    Some(c) => c,
                }
            };
            // Checked as it completed, after its latency ended.
            verify_ns += task.take_verify_ns();
            match completed {
                Ok(c) => (c.started, c.ended, Ok(c.bytes), 0, 0),
                Err(e) => {
                    let now = Instant::now();
                    (now, now, Err(e), 0, 0)
                }
            }
        } else {
            let t0 = Instant::now();
            let mut result = task.execute();
            let mut tries = 0;
            while result.is_err() && tries < retries && !control.stop_requested() {
                tries += 1;
                result = task.execute();
            }
            let t1 = Instant::now();
            // A GET checked as it arrived: the check is verification time, not latency.
            let checked_inline = task.take_verify_ns();
            verify_ns += checked_inline;
            i += 1;
            (t0, t1, result, tries, checked_inline)
        };
        let class = &mut classes[task.class()];
        class.retried += u64::from(tries);
        let checked = result.and_then(|bytes| {
            if queued {
                return Ok(bytes);
            }
            let checking = Instant::now();
            let verdict = task.check().map(|_| bytes);
            verify_ns += checking.elapsed().as_nanos() as u64;
            verdict
        });
        let bytes = match checked {
            Ok(bytes) => bytes,
            Err(e) => {
                class.errors += 1;
                let since = t1.saturating_duration_since(counted_from);
                series.error(since);
                if let Some(own) = class_series.get_mut(task.class()) {
                    own.error(since);
                }
                let error = WorkerError::new(&e, task.describe());
                match errors.iter_mut().find(|e| e.kind == error.kind) {
                    Some(e) => e.count += 1,
                    None => errors.push(error),
                }
                let total = shared.errors.fetch_add(1, Ordering::SeqCst) + 1;
                if total > phase.max_errors {
                    shared.abort.store(true, Ordering::SeqCst);
                    if !queued {
                        break;
                    }
                }
                last_end = t1;
                continue;
            }
        };
        live.bytes.fetch_add(bytes, Ordering::Relaxed);
        live.ops.fetch_add(1, Ordering::Relaxed);
        if t1 < counted_from {
            // Warm-up (--ramp): done, not counted.
            last_end = t1;
            continue;
        }
        first_op_end.get_or_insert(t1);
        last_op_start = t0;
        let ns = (t1.duration_since(t0).as_nanos() as u64).saturating_sub(checked_inline);
        class.latency.record(ns);
        class.ops += 1;
        class.bytes += bytes;
        class.keys += task.keys();
        if let Some(first) = task.first_byte() {
            class
                .ttfb
                .record(first.saturating_duration_since(t0).as_nanos() as u64);
        }
        done.bytes += bytes;
        done.ops += 1;
        let since = t1.saturating_duration_since(counted_from);
        series.record(since, bytes, ns);
        if let Some(own) = class_series.get_mut(task.class()) {
            own.record(since, bytes, ns);
        }
        trace.sample(control.ns(t1), done);
        last_end = t1;
    }

    if let (Some((wall, _)), None) = (wall_at, wear_out) {
        wall.ended(index, i, walled.agree);
    }
    shared.left.fetch_add(1, Ordering::SeqCst);
    // The final fsync and close are inside the worker's interval, even after an error.
    let final_sync_ns = match task.finish() {
        Ok(ns) => ns,
        Err(e) => {
            errors.push(WorkerError::new(
                &e,
                format!("{} (final fsync or close)", task.describe()),
            ));
            shared.errors.fetch_add(1, Ordering::SeqCst);
            shared.abort.store(true, Ordering::SeqCst);
            0
        }
    };
    let end_ns = control.ns(Instant::now());
    let trace = trace.finish(end_ns, done);

    // The snapshots are taken from the traces once every worker has finished.
    let span = WorkerSpan {
        start_ns,
        end_ns: end_ns.max(start_ns),
        bytes: done.bytes,
        ops: done.ops,
        // warp's window drops the final flush: not for writes whose flush is deferred to it.
        first_op_end_ns: first_op_end
            .filter(|_| !defers_flush(phase))
            .map_or(0, |t| control.ns(t)),
        last_op_start_ns: control.ns(last_op_start),
        ..WorkerSpan::default()
    };
    let outcome = WorkerOutcome {
        span,
        series: series.finish(),
        final_sync_ns,
        verify_ns,
        trace,
        items: i,
    };
    if !several {
        classes[0].series = outcome.series.clone();
    }
    for (class, series) in classes.iter_mut().zip(class_series) {
        class.series = series.finish();
    }
    (WorkerResult { outcome, classes }, errors)
}

#[cfg(test)]
mod io500_tests;
#[cfg(test)]
mod meta_tests;
#[cfg(test)]
mod steady_tests;
#[cfg(test)]
mod strided_tests;
#[cfg(test)]
mod tests;
