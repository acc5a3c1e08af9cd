//! One worker's loop from the barrier to its stop rule: when it stops ([`Limits`]), each
//! operation issued as the last returns (closed loop) or at its intended start (paced, open
//! loop: [`crate::pace`]), timed on the worker's [`Clock`] and counted in its [`Books`].

use super::{defers_flush, Shared, Walled, WorkerError, WorkerResult};
use crate::control::{Control, LiveCounter};
use crate::live::{Closed, Gather};
use crate::outcome::{OpOutcome, WorkerOutcome};
use crate::pace::{Clock, PaceBooks, PaceOutcome};
use crate::requests::RequestBuf;
use crate::rhythm::{Rest, Resting, Restless};
use crate::stonewall::Wall;
use crate::task::{Completed, Task};
use crate::workload::{Phase, StopRule};
use iobm_stats::{Interval, Progress, SeriesRecorder, TraceBuilder, WorkerSpan};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;
use step::{execute, paced_start, rest_until};

mod step;

/// A worker: its index, phase, control, shared books, the phase's start and its wall.
type Worker<'a, 'w> = (
    usize,
    &'a Phase,
    &'a Control,
    &'a Shared,
    Instant,
    Walled<'w>,
);

/// When a worker stops: the phase's deadline, its wall, its share of a count of operations.
struct Limits<'a> {
    deadline: Option<Instant>,
    wall_at: Option<(&'a Wall, Instant)>,
    quota: Option<u64>,
    /// Once the wall stopped this worker: the operations it goes on to (wear-out).
    wear_out: Option<u64>,
    index: usize,
    walled: Walled<'a>,
}

impl<'a> Limits<'a> {
    fn new(
        phase: &Phase,
        shared: &Shared,
        walled: Walled<'a>,
        index: usize,
        counted_from: Instant,
    ) -> Self {
        Limits {
            deadline: match phase.stop {
                StopRule::Duration(d) => Some(counted_from + d),
                _ => None,
            },
            wall_at: match phase.stop {
                StopRule::Stonewall(d) => walled.wall.map(|wall| (wall, counted_from + d)),
                _ => None,
            },
            quota: match phase.stop {
                StopRule::Ops(total) => {
                    let workers = shared.workers as u64;
                    Some(total / workers + u64::from((index as u64) < total % workers))
                }
                _ => None,
            },
            wear_out: None,
            index,
            walled,
        }
    }

    /// Whether it is done before operation `i`, its last ended at `last_end` (or a wall).
    fn reached(
        &mut self,
        i: u64,
        last_end: Instant,
        draining: bool,
        shared: &Shared,
        control: &Control,
    ) -> bool {
        if let (Some((wall, at)), None, false) = (self.wall_at, self.wear_out, draining) {
            if wall.reached(last_end, at) {
                self.wear_out = Some(wall.stop(self.index, i, self.walled.agree));
            }
        }
        shared.abort.load(Ordering::Relaxed)
            || control.stop_requested()
            || shared.settled.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| last_end >= d)
            || self.quota.is_some_and(|q| i >= q)
            || self.wear_out.is_some_and(|most| i >= most)
    }

    /// Tells the wall this worker ended before it reached it.
    fn ended(&self, i: u64) {
        if let (Some((wall, _)), None) = (self.wall_at, self.wear_out) {
            wall.ended(self.index, i, self.walled.agree);
        }
    }
}

/// One operation as it ended: when it was meant to start (paced), started and ended.
struct Ended {
    intended: Option<Instant>,
    started: Instant,
    ended: Instant,
    result: io::Result<u64>,
    tries: u32,
    /// Time its task spent checking what arrived, taken out of its latency.
    checked_inline: u64,
    /// Time it spent copying to or from a device's buffer, inside its latency.
    copy_ns: u64,
}

impl Ended {
    fn completed(done: io::Result<Completed>, now: Instant) -> Ended {
        match done {
            Ok(c) => Ended {
                intended: c.intended,
                started: c.started,
                ended: c.ended,
                result: Ok(c.bytes),
                tries: 0,
                checked_inline: 0,
                copy_ns: 0,
            },
            Err(e) => Ended {
                intended: None,
                started: now,
                ended: now,
                result: Err(e),
                tries: 0,
                checked_inline: 0,
                copy_ns: 0,
            },
        }
    }
}

/// What one worker counted.
struct Books<'a> {
    phase: &'a Phase,
    live: &'a LiveCounter,
    counted_from: Instant,
    classes: Vec<OpOutcome>,
    done: Progress,
    trace: TraceBuilder,
    series: SeriesRecorder,
    /// Each kind of operation's own series where a phase has several (one: the worker's).
    class_series: Vec<SeriesRecorder>,
    errors: Vec<WorkerError>,
    verify_ns: u64,
    /// The counted operations' copies to and from a device's buffer.
    copy_ns: u64,
    /// Stamps of the first counted operation's end and the last one's start (warp's window).
    first_op_end: Option<Instant>,
    last_op_start: Instant,
    last_end: Instant,
    pace: Option<PaceBooks>,
    /// Where the intervals closed go while the phase runs, when it is watched.
    feed: Option<Feed<'a>>,
    /// Every operation, when the run keeps them (`--requests`).
    requests: Option<RequestBuf>,
    index: usize,
}

/// A watched worker's hand-over of the intervals it closed.
struct Feed<'a> {
    gather: &'a Mutex<Gather>,
    worker: usize,
    /// Intervals before this one were handed over.
    passed: usize,
}

impl<'a> Books<'a> {
    /// The books of worker `index`, starting at `start`, counting from `counted_from`; paced
    /// from the phase's start (`phase_origin`), so that every worker shares one schedule.
    fn new(
        (phase, control, shared): (&'a Phase, &'a Control, &'a Shared),
        index: usize,
        (phase_origin, counted_from, start): (Instant, Instant, Instant),
        queued: bool,
    ) -> Self {
        let classes = OpOutcome::per_class(phase);
        let series = SeriesRecorder::new(phase.interval);
        let several = classes.len() > 1;
        Books {
            phase,
            live: &control.live[index],
            counted_from,
            class_series: vec![series.clone(); if several { classes.len() } else { 0 }],
            classes,
            done: Progress::default(),
            trace: TraceBuilder::default(),
            series,
            errors: Vec::new(),
            verify_ns: 0,
            copy_ns: 0,
            first_op_end: None,
            last_op_start: start,
            last_end: start,
            pace: (phase.pace).map(|pace| {
                let books = PaceBooks::new(&pace, phase_origin, index, phase.interval, queued);
                let starts = phase.replay.as_deref().and_then(|r| r.starts(index));
                books.rhythm(phase.rhythm).recorded(starts)
            }),
            feed: (shared.gather.as_ref()).map(|gather| Feed {
                gather,
                worker: index,
                passed: 0,
            }),
            requests: control.requests.clone().map(RequestBuf::new),
            index,
        }
    }

    /// A failure outside the operations (a timed open, the final fsync or close): counted,
    /// and the phase ends as after a failed operation.
    #[cold]
    fn fail(&mut self, e: &io::Error, what: String, shared: &Shared) {
        self.errors.push(WorkerError::new(e, what));
        shared.errors.fetch_add(1, Ordering::SeqCst);
        shared.abort.store(true, Ordering::SeqCst);
    }

    /// Hands the requests buffered over: once per chunk of them, and at the worker's end.
    #[cold]
    fn hand_requests(&mut self) {
        if let Some(buf) = self.requests.as_mut() {
            let errors: Vec<String> = self.errors.iter().map(|e| e.kind.clone()).collect();
            buf.hand_over(self.phase, self.index, &errors);
        }
    }

    /// Keeps one operation's record, when the run keeps them.
    #[inline]
    fn keep(&mut self, task: &dyn Task, op: &Ended, duration_ns: u64, bytes: u64, error: u8) {
        let Some(buf) = self.requests.as_mut() else {
            return;
        };
        let times = (op.intended, op.started, self.counted_from);
        if buf.keep(task, times, duration_ns, bytes, error) {
            self.hand_requests();
        }
    }

    /// Hands over the intervals closed since the last (all once `ended`): never per operation.
    #[cold]
    fn hand_over(&mut self, ended: bool) {
        let Some(feed) = self.feed.as_mut() else {
            return;
        };
        let upto = if ended {
            self.series.close();
            self.class_series.iter_mut().for_each(SeriesRecorder::close);
            (self.class_series.iter().map(SeriesRecorder::len)).fold(self.series.len(), usize::max)
        } else {
            let upto = self.series.closed();
            (self.class_series.iter_mut()).for_each(|s| s.close_before(upto));
            upto
        };
        let first = feed.passed.min(upto);
        let take = |s: &SeriesRecorder| -> Vec<Interval> {
            (first..upto).map(|k| s.interval(k)).collect()
        };
        let closed = Closed {
            worker: feed.worker,
            first,
            whole: take(&self.series),
            classes: self.class_series.iter().map(take).collect(),
            ended,
        };
        feed.passed = upto;
        feed.gather.lock().unwrap().take(closed);
    }

    /// Counts a failed operation; false when it stops the worker.
    #[cold]
    fn failed(
        &mut self,
        task: &dyn Task,
        op: &Ended,
        e: &io::Error,
        queued: bool,
        shared: &Shared,
    ) -> bool {
        self.classes[task.class()].errors += 1;
        let at = (self.series).error(op.ended.saturating_duration_since(self.counted_from));
        if let Some(own) = self.class_series.get_mut(task.class()) {
            own.error_at(at);
        }
        let error = WorkerError::new(e, task.describe());
        let at = match self.errors.iter().position(|e| e.kind == error.kind) {
            Some(at) => {
                self.errors[at].count += 1;
                at
            }
            None => {
                self.errors.push(error);
                self.errors.len() - 1
            }
        };
        let ns = op.ended.saturating_duration_since(op.started).as_nanos() as u64;
        self.keep(task, op, ns, 0, (at + 1).min(255) as u8);
        let total = shared.errors.fetch_add(1, Ordering::SeqCst) + 1;
        if total > self.phase.max_errors {
            shared.abort.store(true, Ordering::SeqCst);
            return queued;
        }
        true
    }

    /// Counts an operation of `task` that ended; false when its failure stops the worker.
    fn settle(
        &mut self,
        task: &mut dyn Task,
        op: Ended,
        queued: bool,
        shared: &Shared,
        control: &Control,
    ) -> bool {
        let (t0, t1) = (op.started, op.ended);
        self.classes[task.class()].retried += u64::from(op.tries);
        let op_times = Ended {
            result: Ok(0),
            ..op
        };
        let checked = op.result.and_then(|bytes| {
            if queued {
                return Ok(bytes);
            }
            let checking = Instant::now();
            let verdict = task.check().map(|_| bytes);
            self.verify_ns += checking.elapsed().as_nanos() as u64;
            verdict
        });
        self.last_end = t1;
        let bytes = match checked {
            Ok(bytes) => bytes,
            Err(e) => return self.failed(task, &op_times, &e, queued, shared),
        };
        self.live.bytes.fetch_add(bytes, Ordering::Relaxed);
        self.live.ops.fetch_add(1, Ordering::Relaxed);
        if t1 < self.counted_from {
            // Warm-up (--ramp): done, not counted.
            return true;
        }
        self.first_op_end.get_or_insert(t1);
        self.last_op_start = t0;
        self.copy_ns += op.copy_ns;
        let ns = (t1.duration_since(t0).as_nanos() as u64).saturating_sub(op.checked_inline);
        self.keep(task, &op_times, ns, bytes, 0);
        let class = &mut self.classes[task.class()];
        class.latency.record(ns);
        class.ops += 1;
        class.bytes += bytes;
        class.keys += task.keys();
        if let Some(first) = task.first_byte() {
            class
                .ttfb
                .record(first.saturating_duration_since(t0).as_nanos() as u64);
        }
        self.done.bytes += bytes;
        self.done.ops += 1;
        let since = t1.saturating_duration_since(self.counted_from);
        let at = self.series.record(since, bytes, ns);
        if let Some(own) = self.class_series.get_mut(task.class()) {
            own.record_at(at, bytes, ns);
        }
        if self.feed.as_ref().is_some_and(|f| at > f.passed) {
            self.hand_over(false);
        }
        if let (Some(pace), Some(intended)) = (self.pace.as_mut(), op.intended) {
            pace.record(intended, t0, t1, self.counted_from, bytes);
        }
        self.trace.sample(control.ns(t1), self.done);
        true
    }
}

/// Runs one worker's prepared task from the barrier to its stop rule, timing every operation,
/// with the phase's idle time (`--think`, `--burst`) or none: chosen once here, so a worker
/// without it runs a loop with nothing for it.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_worker<C: Clock>(
    task: Box<dyn Task + '_>,
    index: usize,
    phase: &Phase,
    control: &Control,
    shared: &Shared,
    phase_origin: Instant,
    walled: Walled,
    clock: &C,
) -> (WorkerResult, Vec<WorkerError>) {
    let at = (index, phase, control, shared, phase_origin, walled);
    match phase.rhythm {
        None => run_loop(task, at, (clock, &Restless)),
        Some(rhythm) => {
            let origin = phase_origin;
            run_loop(task, at, (clock, &Resting { rhythm, origin }))
        }
    }
}

/// [`run_worker`]'s loop, resting as `R` says.
fn run_loop<C: Clock, R: Rest>(
    mut task: Box<dyn Task + '_>,
    (index, phase, control, shared, phase_origin, walled): Worker,
    (clock, rest): (&C, &R),
) -> (WorkerResult, Vec<WorkerError>) {
    let parts = (phase, control, shared);
    let (mut limits, mut books, start_ns) =
        start(task.as_mut(), index, parts, (phase_origin, walled), clock);
    let retries = phase.objects.as_ref().map_or(0, |o| o.retries);
    let queued = task.queued();
    let mut i: u64 = 0;
    // A queued task's operations complete after later ones were submitted: once no more are
    // submitted, the rest in flight are drained and counted like the others.
    let mut draining = false;
    loop {
        let ended = limits.reached(i, books.last_end, draining, shared, control);
        if !draining && (ended || !task.prepare(i)) {
            if !queued {
                break;
            }
            draining = true;
        }
        // Idle before the operation (`--think`, `--burst`); nothing at all without them.
        if let Some(at) = rest.until(i, books.last_end).filter(|_| !draining) {
            if rest_until(clock, at, limits.deadline, task.as_mut(), &mut books, parts) {
                if !queued {
                    break;
                }
                draining = true;
            }
        }
        // Closed loop: no pacing work at all.
        let paced = books.pace.is_some() && !draining;
        let deadline = limits.deadline;
        let intended = paced
            .then(|| paced_start(clock, deadline, task.as_mut(), &mut books, shared, control))
            .flatten();
        if paced && intended.is_none() {
            if !queued {
                break;
            }
            draining = true;
        }
        let op = if queued {
            let completed = if draining {
                task.drain()
            } else {
                i += 1;
                task.submit(intended)
            };
            let Some(completed) = completed else {
                // Drained: the worker's end; submitted: nothing completed yet.
                if draining {
                    break;
                }
                continue;
            };
            // Checked as it completed, after its latency ended.
            books.verify_ns += task.take_verify_ns();
            Ended::completed(completed, clock.now())
        } else {
            i += 1;
            let op = execute(task.as_mut(), retries, intended, clock, control);
            books.verify_ns += op.checked_inline;
            op
        };
        if !books.settle(task.as_mut(), op, queued, shared, control) {
            break;
        }
    }

    limits.ended(i);
    wind_up(task.as_mut(), books, parts, start_ns, i, clock)
}

/// Worker `index`'s start: its limits, its books and its start on the run's clock (the
/// warm-up comes before the phase's duration); a timed open (IOR's open and create) is inside
/// its span, and failing, it ends the phase as a failed operation would.
fn start<'a, C: Clock>(
    task: &mut dyn Task,
    index: usize,
    (phase, control, shared): (&'a Phase, &'a Control, &'a Shared),
    (phase_origin, walled): (Instant, Walled<'a>),
    clock: &C,
) -> (Limits<'a>, Books<'a>, u64) {
    let counted_from = phase_origin + phase.ramp;
    let limits = Limits::new(phase, shared, walled, index, counted_from);
    let start = clock.now();
    let start_ns = control.ns(start.max(counted_from));
    let times = (phase_origin, counted_from, start);
    let mut books = Books::new((phase, control, shared), index, times, task.queued());
    if let Err(e) = task.open() {
        books.fail(&e, task.describe(), shared);
    }
    (limits, books, start_ns)
}

/// The worker's end after its `items` operations: what it buffered handed over, the final
/// fsync and close inside its interval (even after an error), and its result.
fn wind_up<C: Clock>(
    task: &mut dyn Task,
    mut books: Books,
    (phase, control, shared): (&Phase, &Control, &Shared),
    start_ns: u64,
    items: u64,
    clock: &C,
) -> (WorkerResult, Vec<WorkerError>) {
    books.hand_over(true);
    books.hand_requests();
    shared.left.fetch_add(1, Ordering::SeqCst);
    let final_sync_ns = task.finish().unwrap_or_else(|e| {
        let what = format!("{} (final fsync or close)", task.describe());
        books.fail(&e, what, shared);
        0
    });
    let end_ns = control.ns(clock.now());
    finish(
        books,
        phase,
        control,
        start_ns,
        end_ns,
        final_sync_ns,
        items,
    )
}

/// The worker's result from its books.
fn finish(
    books: Books,
    phase: &Phase,
    control: &Control,
    start_ns: u64,
    end_ns: u64,
    final_sync_ns: u64,
    items: u64,
) -> (WorkerResult, Vec<WorkerError>) {
    let Books {
        mut classes,
        class_series,
        done,
        trace,
        series,
        errors,
        verify_ns,
        copy_ns,
        first_op_end,
        last_op_start,
        pace,
        ..
    } = books;
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
        copy_ns,
        trace,
        items,
        cpus: phase.cpus.as_ref().and_then(|_| crate::pin::allowed_here()),
    };
    if class_series.is_empty() {
        classes[0].series = outcome.series.clone();
    }
    for (class, series) in classes.iter_mut().zip(class_series) {
        class.series = series.finish();
    }
    let pace: Option<PaceOutcome> = pace.map(PaceBooks::finish);
    (
        WorkerResult {
            outcome,
            classes,
            pace,
        },
        errors,
    )
}
