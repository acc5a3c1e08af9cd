//! The phase runner: prepares every worker, releases them together through a barrier, times
//! each operation with the monotonic clock, and collects per-worker spans, per-second series,
//! latency histograms, errors by kind, iobm's CPU time and the cache evidence around the phase.

use crate::cpu::CpuTimes;
use crate::data::{object_pool, AlignedBuf};
use crate::objects::ObjectTask;
use crate::task::Task;
use crate::tasks::file_task;
use crate::workload::{Layout, Op, Phase, StopRule};
use iobm_stats::{fill_snapshots, Histogram, Progress, Trace, WorkerSpan, TRACE_INTERVAL_NS};
use iobm_target::{error_kind, Access, DeviceCounters, OpenOptions, Target};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// A counter on its own cache line, so workers never contend for one.
#[derive(Default)]
#[repr(align(128))]
struct LiveCounter {
    bytes: AtomicU64,
    ops: AtomicU64,
}

/// Shared between the runner, the workers, a progress display and a Ctrl-C handler.
pub struct Control {
    /// The run's clock origin: every stamp is nanoseconds since this instant.
    pub origin: Instant,
    /// Seed of the run's data stamps and random orders.
    pub run_id: u64,
    stop: &'static AtomicBool,
    live: Vec<LiveCounter>,
    phase: Mutex<Option<LivePhase>>,
}

/// What a progress display needs to know about the phase in flight.
#[derive(Debug, Clone)]
pub struct LivePhase {
    pub name: String,
    pub started: Instant,
    /// Bytes the phase will move when it stops by size; None when it stops by time.
    pub planned_bytes: Option<u64>,
    pub duration: Option<Duration>,
}

impl Control {
    /// A control with a stop flag of its own (leaked: one small allocation per control, made
    /// once per run or test).
    pub fn new(run_id: u64, max_workers: usize) -> Control {
        Control::with_stop_flag(
            run_id,
            max_workers,
            Box::leak(Box::new(AtomicBool::new(false))),
        )
    }

    /// A control whose stop flag is `stop`: a signal handler sets it without needing a thread
    /// of its own (a second thread would make every system call of a one-worker phase pay for
    /// a shared file table; see [`run_phase`]).
    pub fn with_stop_flag(run_id: u64, max_workers: usize, stop: &'static AtomicBool) -> Control {
        Control {
            origin: Instant::now(),
            run_id,
            stop,
            live: (0..max_workers).map(|_| LiveCounter::default()).collect(),
            phase: Mutex::new(None),
        }
    }

    /// Asks every worker to stop after its current operation (Ctrl-C).
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Bytes moved so far in the phase in flight.
    pub fn live_bytes(&self) -> u64 {
        self.live
            .iter()
            .map(|c| c.bytes.load(Ordering::Relaxed))
            .sum()
    }

    /// Operations completed so far in the phase in flight.
    pub fn live_ops(&self) -> u64 {
        self.live
            .iter()
            .map(|c| c.ops.load(Ordering::Relaxed))
            .sum()
    }

    pub fn live_phase(&self) -> Option<LivePhase> {
        self.phase.lock().unwrap().clone()
    }

    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.origin).as_nanos() as u64
    }
}

/// How a phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseEnd {
    Completed,
    /// Stopped by [`Control::request_stop`] (Ctrl-C).
    Interrupted,
    /// Stopped because an operation failed (ENOSPC, EIO, ...).
    Failed,
}

/// Errors of one kind in a phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorCount {
    /// `ENOSPC`, `EIO`, `short read`, ...
    pub kind: String,
    pub count: u64,
    /// The first error of this kind, with its object and offset.
    pub first: String,
}

/// One worker's result for a phase.
#[derive(Debug, Clone)]
pub struct WorkerOutcome {
    pub span: WorkerSpan,
    /// Bytes completed per second of the phase (index k = ops ending in [k s, k+1 s) after the
    /// phase began).
    pub series_bytes: Vec<u64>,
    pub series_ops: Vec<u64>,
    /// Time spent in the final fsync (`--fsync end`), inside the span.
    pub final_sync_ns: u64,
    /// Progress over time, for the snapshots behind the aggregates.
    pub trace: Trace,
}

/// Everything measured in one phase.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    pub name: String,
    pub op: Op,
    pub end: PhaseEnd,
    /// When the barrier released the workers, ns since the run's origin.
    pub start_ns: u64,
    pub end_ns: u64,
    pub workers: Vec<WorkerOutcome>,
    pub latency: Histogram,
    /// Per operation kind ([`Op::classes`]): one entry, or four for a mixed phase.
    pub by_op: Vec<OpOutcome>,
    pub errors: Vec<ErrorCount>,
    pub cpu: CpuTimes,
    /// Bytes of the phase's files in the page cache just before it began (targets that can tell).
    pub resident_before: Option<u64>,
    /// Device counters before and after the phase (targets backed by a block device).
    pub device: Option<(DeviceCounters, DeviceCounters)>,
}

/// One kind of operation within a phase.
#[derive(Debug, Clone)]
pub struct OpOutcome {
    pub name: &'static str,
    /// Operations that succeeded.
    pub ops: u64,
    pub bytes: u64,
    /// Operations that failed (not in `ops`, `bytes` or the latencies).
    pub errors: u64,
    /// Failed tries that were tried again (object phases with retries).
    pub retried: u64,
    /// Keys returned (listings).
    pub keys: u64,
    pub latency: Histogram,
    /// Time to first byte of the answer (object gets), else empty.
    pub ttfb: Histogram,
    /// Operations completed per second of the phase (as [`WorkerOutcome::series_ops`]).
    pub series_ops: Vec<u64>,
    /// Bytes completed per second of the phase.
    pub series_bytes: Vec<u64>,
}

impl OpOutcome {
    /// Empty books for each of `op`'s classes.
    fn per_class(op: Op) -> Vec<OpOutcome> {
        op.classes().iter().map(|c| OpOutcome::new(c)).collect()
    }

    fn new(name: &'static str) -> OpOutcome {
        OpOutcome {
            name,
            ops: 0,
            bytes: 0,
            errors: 0,
            retried: 0,
            keys: 0,
            latency: Histogram::new(),
            ttfb: Histogram::new(),
            series_ops: Vec::new(),
            series_bytes: Vec::new(),
        }
    }

    fn merge(&mut self, other: &OpOutcome) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.retried += other.retried;
        self.keys += other.keys;
        self.latency += &other.latency;
        self.ttfb += &other.ttfb;
        add_series(&mut self.series_ops, &other.series_ops);
        add_series(&mut self.series_bytes, &other.series_bytes);
    }
}

/// Adds `n` to second `at` of a per-second series (which grows once a second at most).
fn add_at(series: &mut Vec<u64>, at: usize, n: u64) {
    if at >= series.len() {
        series.resize(at + 1, 0);
    }
    series[at] += n;
}

/// Adds `other` to `into`, second by second.
fn add_series(into: &mut Vec<u64>, other: &[u64]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a += b;
    }
}

impl PhaseOutcome {
    pub fn bytes(&self) -> u64 {
        self.workers.iter().map(|w| w.span.bytes).sum()
    }

    /// A phase that could not begin: no worker ran, one error says why.
    fn failed_before_start(
        phase: &Phase,
        control: &Control,
        error: &io::Error,
        what: &str,
    ) -> Self {
        let now = control.ns(Instant::now());
        let empty = WorkerResult::empty(now, phase).outcome;
        PhaseOutcome {
            name: phase.name.clone(),
            op: phase.op,
            end: PhaseEnd::Failed,
            start_ns: now,
            end_ns: now,
            workers: vec![empty; phase.workers],
            latency: Histogram::new(),
            by_op: OpOutcome::per_class(phase.op),
            errors: vec![ErrorCount {
                kind: error_kind(error),
                count: 1,
                first: format!("{what}: {error}"),
            }],
            cpu: CpuTimes::default(),
            resident_before: None,
            device: None,
        }
    }
}

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
            StopRule::Duration(d) => Some(d),
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
    let workers = phase.workers;
    assert!(
        workers <= control.live.len(),
        "Control sized for fewer workers"
    );
    for counter in &control.live {
        counter.bytes.store(0, Ordering::Relaxed);
        counter.ops.store(0, Ordering::Relaxed);
    }
    let dropped = if phase.drop_cache {
        phase
            .layout
            .files
            .iter()
            .filter_map(|f| target.drop_cache(&f.name))
            .collect::<io::Result<Vec<()>>>()
            .map(|_| ())
    } else {
        Ok(())
    };
    let resident_before = (phase.op == Op::Read && !phase.direct)
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

    let shared = Shared {
        workers,
        abort: AtomicBool::new(false),
        errors: AtomicU64::new(0),
    };
    // Object bodies are views of one pool shared by the workers (none is written to it).
    let pool = match phase.op {
        Op::Object(_) if phase.op.writes() => object_pool(phase.data, control.run_id),
        _ => AlignedBuf::zeroed(0),
    };
    let pool: &[u8] = &pool;
    // Building a worker's task (opening files, filling buffers) is untimed.
    let prepare = |w: usize| {
        let task = match phase.op {
            Op::Object(op) => ObjectTask::new(target, phase, op, control.run_id, w, pool)
                .map(|t| Box::new(t) as Box<dyn Task + '_>),
            _ => file_task(target, phase, control.run_id, w),
        };
        task.map_err(|(e, what)| WorkerError::new(&e, what))
    };
    let work = |w: usize, prepared: Result<Box<dyn Task + '_>, WorkerError>, origin: Instant| {
        match prepared {
            Ok(task) => run_worker(task, w, phase, control, &shared, origin),
            Err(error) => {
                shared.abort.store(true, Ordering::SeqCst);
                let now = control.ns(Instant::now());
                (WorkerResult::empty(now, phase), vec![error])
            }
        }
    };
    let (results, cpu, start, end) = if workers == 1 {
        // One worker runs on this thread: a process with a single thread keeps the kernel's
        // cheap path for file descriptors (no reference counting or position lock per call),
        // which is a tenth of a one-byte write(2) on tmpfs, as for single-threaded tools.
        let prepared = prepare(0);
        gate();
        let (cpu_before, start) = begin(phase, control);
        let result = work(0, prepared, start);
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
                        work(w, prepared, origin)
                    })
                })
                .collect();
            ready.wait();
            gate();
            let (cpu_before, start) = begin(phase, control);
            *phase_start.lock().unwrap() = start;
            go.wait();
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

    let mut latency = Histogram::new();
    let mut by_op: Vec<OpOutcome> = OpOutcome::per_class(phase.op);
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
        start_ns: control.ns(start),
        end_ns: control.ns(end),
        workers: outcomes,
        latency,
        by_op,
        errors,
        cpu,
        resident_before,
        device: device_before.zip(device_after),
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
            outcome: WorkerOutcome {
                span: WorkerSpan {
                    start_ns: now_ns,
                    end_ns: now_ns,
                    ..WorkerSpan::default()
                },
                series_bytes: Vec::new(),
                series_ops: Vec::new(),
                final_sync_ns: 0,
                trace: Vec::new(),
            },
            classes: OpOutcome::per_class(phase.op),
        }
    }
}

/// Runs one worker's prepared task from the barrier to its stop rule, timing every operation.
fn run_worker(
    mut task: Box<dyn Task + '_>,
    index: usize,
    phase: &Phase,
    control: &Control,
    shared: &Shared,
    phase_origin: Instant,
) -> (WorkerResult, Vec<WorkerError>) {
    let live = &control.live[index];
    let deadline = match phase.stop {
        StopRule::Duration(d) => Some(phase_origin + d),
        _ => None,
    };
    let quota = match phase.stop {
        StopRule::Ops(total) => {
            let workers = shared.workers as u64;
            Some(total / workers + u64::from((index as u64) < total % workers))
        }
        _ => None,
    };
    let mut classes: Vec<OpOutcome> = OpOutcome::per_class(phase.op);
    let mut done = Progress::default();
    let mut trace: Trace = Vec::with_capacity(1024);
    let mut series_bytes: Vec<u64> = Vec::with_capacity(64);
    let mut series_ops: Vec<u64> = Vec::with_capacity(64);
    let mut errors: Vec<WorkerError> = Vec::new();
    let retries = phase.objects.as_ref().map_or(0, |o| o.retries);

    let start = Instant::now();
    let start_ns = control.ns(start);

    let mut i: u64 = 0;
    let mut last_end = start;
    loop {
        if shared.abort.load(Ordering::Relaxed) || control.stop_requested() {
            break;
        }
        if deadline.is_some_and(|d| last_end >= d) || quota.is_some_and(|q| i >= q) {
            break;
        }
        if !task.prepare(i) {
            break;
        }
        let t0 = Instant::now();
        let mut result = task.execute();
        let mut tries = 0;
        while result.is_err() && tries < retries && !control.stop_requested() {
            tries += 1;
            result = task.execute();
        }
        let t1 = Instant::now();
        let class = &mut classes[task.class()];
        class.retried += u64::from(tries);
        let bytes = match result.and_then(|bytes| task.check().map(|_| bytes)) {
            Ok(bytes) => bytes,
            Err(e) => {
                class.errors += 1;
                let error = WorkerError::new(&e, task.describe());
                match errors.iter_mut().find(|e| e.kind == error.kind) {
                    Some(e) => e.count += 1,
                    None => errors.push(error),
                }
                let total = shared.errors.fetch_add(1, Ordering::SeqCst) + 1;
                if total > phase.max_errors {
                    shared.abort.store(true, Ordering::SeqCst);
                    break;
                }
                last_end = t1;
                i += 1;
                continue;
            }
        };
        let ns = t1.duration_since(t0).as_nanos() as u64;
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
        live.bytes.fetch_add(bytes, Ordering::Relaxed);
        live.ops.fetch_add(1, Ordering::Relaxed);
        let second = t1.saturating_duration_since(phase_origin).as_secs() as usize;
        add_at(&mut series_bytes, second, bytes);
        add_at(&mut series_ops, second, 1);
        add_at(&mut class.series_bytes, second, bytes);
        add_at(&mut class.series_ops, second, 1);
        let t1_ns = control.ns(t1);
        if trace
            .last()
            .is_none_or(|&(t, _)| t1_ns - t >= TRACE_INTERVAL_NS)
        {
            trace.push((t1_ns, done));
        }
        last_end = t1;
        i += 1;
    }

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
    trace.push((end_ns, done));

    // The snapshots are taken from the traces once every worker has finished.
    let span = WorkerSpan {
        start_ns,
        end_ns,
        bytes: done.bytes,
        ops: done.ops,
        ..WorkerSpan::default()
    };
    let outcome = WorkerOutcome {
        span,
        series_bytes,
        series_ops,
        final_sync_ns,
        trace,
    };
    (WorkerResult { outcome, classes }, errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{stamp, STAMP_LEN};
    use crate::workload::{DataKind, FsyncPolicy, Pattern};
    use iobm_target::fault::FaultTarget;
    use iobm_target::mem::MemTarget;
    use iobm_target::null::NullTarget;

    fn phase(op: Op, layout: Layout, block: u64) -> Phase {
        Phase {
            fsync: FsyncPolicy::End,
            ..Phase::new(op.name(), op, block, layout)
        }
    }

    #[test]
    fn direct_io_on_a_target_without_it_fails_before_any_operation() {
        let target = MemTarget::new();
        let layout = Layout::file_per_worker(1, 4096);
        prepare_objects(&target, &layout).unwrap();
        let p = Phase {
            direct: true,
            ..phase(Op::Write, layout, 4096)
        };
        let out = run_phase(&target, &p, &Control::new(1, 1));
        assert_eq!(out.end, PhaseEnd::Failed);
        assert_eq!(out.bytes(), 0);
        assert!(out.errors[0].first.contains("O_DIRECT"), "{:?}", out.errors);
    }

    #[test]
    fn write_then_read_moves_every_byte_once() {
        let target = MemTarget::new();
        let layout = Layout::file_per_worker(3, 10 * 4096 + 100);
        let control = Control::new(99, 3);
        prepare_objects(&target, &layout).unwrap();
        let write = run_phase(&target, &phase(Op::Write, layout.clone(), 4096), &control);
        assert_eq!(write.end, PhaseEnd::Completed);
        assert_eq!(write.bytes(), 3 * (10 * 4096 + 100));
        assert_eq!(write.latency.count(), 3 * 11);
        for (w, worker) in write.workers.iter().enumerate() {
            let s = worker.span;
            assert_eq!(s.ops, 11);
            assert_eq!(worker.series_bytes.iter().sum::<u64>(), s.bytes);
            assert!(s.end_ns >= s.start_ns && s.start_ns >= write.start_ns);
            assert!(s.at_first_done.bytes <= s.bytes);
            let data = target.contents(&format!("data.{w}")).unwrap();
            assert_eq!(data.len() as u64, 10 * 4096 + 100);
            assert_eq!(&data[8192..8192 + STAMP_LEN], &stamp(99, w as u64, 8192));
        }
        let read = run_phase(&target, &phase(Op::Read, layout, 4096), &control);
        assert_eq!(read.end, PhaseEnd::Completed);
        assert_eq!(read.bytes(), write.bytes());
    }

    #[test]
    fn random_order_covers_each_block_of_a_shared_file_once() {
        let target = MemTarget::new();
        let layout = Layout::shared_file(4, 16 * 512);
        let control = Control::new(5, 4);
        prepare_objects(&target, &layout).unwrap();
        let mut p = phase(Op::Write, layout, 512);
        p.pattern = Pattern::Random { seed: 3 };
        let out = run_phase(&target, &p, &control);
        assert_eq!(out.bytes(), 4 * 16 * 512);
        let data = target.contents("data.shared").unwrap();
        for block in 0..64u64 {
            let at = (block * 512) as usize;
            // Each 512-byte block starts a 4 KiB chunk of its own data source, so carries a stamp.
            assert_eq!(&data[at + 16..at + 24], &(block * 512).to_le_bytes());
        }
    }

    #[test]
    fn duration_stop_wraps_and_stops_in_time() {
        let control = Control::new(1, 2);
        let mut p = phase(Op::Write, Layout::file_per_worker(2, 64 * 1024), 4096);
        p.stop = StopRule::Duration(Duration::from_millis(200));
        p.pattern = Pattern::Random { seed: 1 };
        let out = run_phase(&NullTarget, &p, &control);
        assert_eq!(out.end, PhaseEnd::Completed);
        assert!(out.bytes() > 2 * 64 * 1024, "should wrap: {}", out.bytes());
        let elapsed = (out.end_ns - out.start_ns) as f64 / 1e9;
        assert!((0.2..5.0).contains(&elapsed), "{elapsed}");
    }

    #[test]
    fn a_full_file_system_fails_the_phase_with_counted_errors() {
        let target = FaultTarget::fail_writes_after(MemTarget::new(), 5 * 4096, libc::ENOSPC);
        let layout = Layout::file_per_worker(2, 64 * 4096);
        prepare_objects(&target, &layout).unwrap();
        let control = Control::new(1, 2);
        let out = run_phase(&target, &phase(Op::Write, layout, 4096), &control);
        assert_eq!(out.end, PhaseEnd::Failed);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].kind, "ENOSPC");
        assert!(
            out.errors[0].first.contains("write data."),
            "{}",
            out.errors[0].first
        );
        assert_eq!(out.bytes(), 5 * 4096);
    }

    #[test]
    fn stop_request_interrupts() {
        let control = Control::new(1, 1);
        let mut p = phase(Op::Read, Layout::file_per_worker(1, 4096), 4096);
        p.stop = StopRule::Duration(Duration::from_secs(60));
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(100));
                control.request_stop();
            });
            let out = run_phase(&NullTarget, &p, &control);
            assert_eq!(out.end, PhaseEnd::Interrupted);
            assert!(out.bytes() > 0);
        });
    }

    #[test]
    fn the_bonnie_suite_runs_every_test() {
        use crate::suite::{bonnie, BonnieSpec, MetaSpec};
        use crate::workload::PerChar;
        for per_char in [PerChar::Buffered, PerChar::Syscall] {
            let target = MemTarget::new();
            let spec = BonnieSpec {
                size: 256 * 1024,
                chunk: 8192,
                per_char,
                fsync: FsyncPolicy::End,
                direct: false,
                drop_cache: true,
                data: DataKind::Random,
                seeks: 101,
                seekers: 5,
                seek_rewrite_pct: 10,
                files: Some(MetaSpec {
                    count: 40,
                    max_size: 3000,
                    min_size: 0,
                    dirs: 4,
                }),
                seed: 9,
                prefix: String::new(),
            };
            let plan = bonnie(&spec);
            let control = Control::new(3, 5);
            let mut outcomes = Vec::new();
            for phase in &plan.phases {
                let out = run_phase(&target, phase, &control);
                assert_eq!(
                    out.end,
                    PhaseEnd::Completed,
                    "{}: {:?}",
                    phase.name,
                    out.errors
                );
                outcomes.push(out);
            }
            let per_char_bytes = if per_char == PerChar::Buffered {
                256 * 1024
            } else {
                8192
            };
            assert_eq!(outcomes[0].bytes(), per_char_bytes);
            for i in [1, 2, 4] {
                assert_eq!(outcomes[i].bytes(), 256 * 1024, "{}", outcomes[i].name);
            }
            assert_eq!(outcomes[3].bytes(), per_char_bytes);
            let seeks: u64 = outcomes[5].workers.iter().map(|w| w.span.ops).sum();
            assert_eq!(seeks, 101);
            let files = &plan.phases[6].layout.files;
            let file_bytes: u64 = files.iter().map(|f| f.size).sum();
            for meta in &outcomes[6..12] {
                let ops: u64 = meta.workers.iter().map(|w| w.span.ops).sum();
                assert_eq!(ops, 40, "{}", meta.name);
            }
            assert_eq!(outcomes[6].bytes(), file_bytes);
            assert_eq!(outcomes[7].bytes(), file_bytes);
            // Both delete phases left nothing but the byte tests' file behind.
            assert_eq!(target.names(), ["bonnie.dat"]);
            // The block write replaced what the per-char write left: one file of full size.
            assert_eq!(target.contents("bonnie.dat").unwrap().len(), 256 * 1024);
        }
    }

    #[test]
    fn verify_finds_a_misplaced_block() {
        let target = MemTarget::new();
        let layout = Layout::file_per_worker(1, 8 * 4096);
        let control = Control::new(42, 1);
        prepare_objects(&target, &layout).unwrap();
        run_phase(&target, &phase(Op::Write, layout.clone(), 4096), &control);
        let mut read = phase(Op::Read, layout, 4096);
        read.verify = Some(42);
        assert_eq!(run_phase(&target, &read, &control).end, PhaseEnd::Completed);
        // Swap two blocks, as a broken storage might.
        let mut data = target.contents("data.0").unwrap();
        let (a, b) = data.split_at_mut(4096 * 4);
        a[..4096].swap_with_slice(&mut b[..4096]);
        let mut h = target
            .open(
                "data.0",
                OpenOptions {
                    access: Access::Write,
                    direct: false,
                },
            )
            .unwrap();
        h.write_at(&data, 0).unwrap();
        let out = run_phase(&target, &read, &control);
        assert_eq!(out.end, PhaseEnd::Failed);
        assert_eq!(out.errors[0].kind, "bad data");
        assert!(
            out.errors[0].first.contains("offset 0"),
            "{}",
            out.errors[0].first
        );
        // Another run's stamps are not this run's.
        read.verify = Some(43);
        assert_eq!(run_phase(&target, &read, &control).end, PhaseEnd::Failed);
    }

    #[test]
    fn missing_object_is_an_error_not_a_panic() {
        let control = Control::new(1, 1);
        let out = run_phase(
            &MemTarget::new(),
            &phase(Op::Read, Layout::file_per_worker(1, 4096), 4096),
            &control,
        );
        assert_eq!(out.end, PhaseEnd::Failed);
        assert!(out.errors[0].first.starts_with("open data.0"));
    }
}
