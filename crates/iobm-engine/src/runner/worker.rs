//! One worker's loop from the barrier to its stop rule: when it stops ([`Limits`]), each
//! operation issued as the last returns (closed loop) or at its intended start (paced, open
//! loop: [`crate::pace`]), timed on the worker's [`Clock`] and counted in its [`Books`].

use super::{defers_flush, Shared, Walled, WorkerError, WorkerResult};
use crate::control::{Control, LiveCounter};
use crate::live::{Closed, Gather};
use crate::outcome::{OpOutcome, WorkerOutcome};
use crate::pace::{Clock, PaceBooks, PaceOutcome};
use crate::requests::RequestBuf;
use crate::stonewall::Wall;
use crate::task::{Completed, Task};
use crate::workload::{Phase, StopRule};
use iobm_stats::{Interval, Progress, SeriesRecorder, TraceBuilder, WorkerSpan};
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

    /// Whether the worker is done before its operation `i`, its last having ended at
    /// `last_end` (the wall, when reached, stops it here).
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
    /// Each kind of operation's own series where a phase has several; with one, it is the
    /// worker's, recorded once.
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
    fn new(phase: &'a Phase, live: &'a LiveCounter, counted_from: Instant, start: Instant) -> Self {
        let classes = OpOutcome::per_class(phase);
        let series = SeriesRecorder::new(phase.interval);
        let several = classes.len() > 1;
        Books {
            phase,
            live,
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
            pace: None,
            feed: None,
            requests: None,
            index: 0,
        }
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

    /// Hands over the intervals closed since the last hand-over (all of them once `ended`):
    /// once per interval at most, never per operation.
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

/// Waits for `intended` on `clock`, in steps short enough to see Ctrl-C; a queued task's
/// completions meanwhile are counted as they come. Returns when the wait ended, as the clock
/// read it.
fn wait_for(
    clock: &dyn Clock,
    intended: Instant,
    task: &mut dyn Task,
    books: &mut Books,
    shared: &Shared,
    control: &Control,
) -> Instant {
    const STEP: Duration = Duration::from_millis(20);
    let queued = task.queued();
    loop {
        let now = clock.now();
        if now >= intended || control.stop_requested() {
            return now;
        }
        let until = intended.min(now + STEP);
        match queued.then(|| task.wait_until(until)).flatten() {
            Some(done) => {
                let op = Ended::completed(done, clock.now());
                books.settle(task, op, true, shared, control);
            }
            None => clock.sleep_until(until),
        }
    }
}

/// Runs one worker's prepared task from the barrier to its stop rule, timing every operation.
#[allow(clippy::too_many_arguments)]
pub(super) fn run_worker<C: Clock>(
    mut task: Box<dyn Task + '_>,
    index: usize,
    phase: &Phase,
    control: &Control,
    shared: &Shared,
    phase_origin: Instant,
    walled: Walled,
    clock: &C,
) -> (WorkerResult, Vec<WorkerError>) {
    // The warm-up comes before the phase's duration.
    let counted_from = phase_origin + phase.ramp;
    let mut limits = Limits::new(phase, shared, walled, index, counted_from);
    let retries = phase.objects.as_ref().map_or(0, |o| o.retries);
    let start = clock.now();
    let start_ns = control.ns(start.max(counted_from));
    let mut books = Books::new(phase, &control.live[index], counted_from, start);
    books.feed = (shared.gather.as_ref()).map(|gather| Feed {
        gather,
        worker: index,
        passed: 0,
    });
    books.index = index;
    books.requests = control.requests.clone().map(RequestBuf::new);
    let queued = task.queued();
    // Paced: intended starts from the phase's start, so that every worker shares one schedule.
    books.pace = phase
        .pace
        .map(|pace| PaceBooks::new(&pace, phase_origin, index, phase.interval, queued));

    // A timed open (IOR's open and create) is inside the worker's span; failing, it ends the
    // phase as a failed operation would.
    if let Err(e) = task.open() {
        books.errors.push(WorkerError::new(&e, task.describe()));
        shared.errors.fetch_add(1, Ordering::SeqCst);
        shared.abort.store(true, Ordering::SeqCst);
    }
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
        // Closed loop: no pacing work at all.
        let intended = match (books.pace.as_mut(), draining) {
            (Some(pace), false) => {
                let at = pace.pacer.next_start();
                if let Some(end) = limits.deadline.filter(|&d| at >= d) {
                    // Meant to start after the phase ends: idle to its end, so that the
                    // worker's rate is over the phase's whole duration.
                    wait_for(clock, end, task.as_mut(), &mut books, shared, control);
                    if !queued {
                        break;
                    }
                    draining = true;
                    None
                } else {
                    let woke = wait_for(clock, at, task.as_mut(), &mut books, shared, control);
                    // The client's own lag: one histogram record, no clock read of its own.
                    if let Some(pace) = books.pace.as_mut() {
                        pace.lag(at, woke, books.last_end, counted_from);
                    }
                    Some(at)
                }
            }
            _ => None,
        };
        let op = if queued {
            let completed = if draining {
                match task.drain() {
                    None => break,
                    Some(c) => c,
                }
            } else {
                i += 1;
                match task.submit(intended) {
                    None => continue,
                    Some(c) => c,
                }
            };
            // Checked as it completed, after its latency ended.
            books.verify_ns += task.take_verify_ns();
            Ended::completed(completed, clock.now())
        } else {
            let t0 = clock.now();
            let mut result = task.execute();
            let mut tries = 0;
            while result.is_err() && tries < retries && !control.stop_requested() {
                tries += 1;
                result = task.execute();
            }
            let t1 = clock.now();
            // A GET checked as it arrived: the check is verification time, not latency.
            let checked_inline = task.take_verify_ns();
            books.verify_ns += checked_inline;
            i += 1;
            Ended {
                intended,
                started: t0,
                ended: t1,
                result,
                tries,
                checked_inline,
                copy_ns: task.take_copy_ns(),
            }
        };
        if !books.settle(task.as_mut(), op, queued, shared, control) {
            break;
        }
    }

    limits.ended(i);
    books.hand_over(true);
    books.hand_requests();
    shared.left.fetch_add(1, Ordering::SeqCst);
    // The final fsync and close are inside the worker's interval, even after an error.
    let final_sync_ns = match task.finish() {
        Ok(ns) => ns,
        Err(e) => {
            books.errors.push(WorkerError::new(
                &e,
                format!("{} (final fsync or close)", task.describe()),
            ));
            shared.errors.fetch_add(1, Ordering::SeqCst);
            shared.abort.store(true, Ordering::SeqCst);
            0
        }
    };
    let end_ns = control.ns(clock.now());
    finish(books, phase, control, start_ns, end_ns, final_sync_ns, i)
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
