//! One step of a worker's loop outside its books: waiting for a paced start (and counting a
//! queued task's completions meanwhile), and one operation of a task that runs one at a time.

use super::{Books, Ended};
use crate::control::Control;
use crate::pace::Clock;
use crate::runner::Shared;
use crate::task::Task;
use std::time::{Duration, Instant};

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

/// Idles to `at` (`--think`, `--burst`), no later than the phase's `deadline`; true where it
/// reached the deadline, the worker then done (its span, and so its rate, over the phase's
/// whole duration, idle periods included).
pub(super) fn rest_until<C: Clock>(
    clock: &C,
    at: Instant,
    deadline: Option<Instant>,
    task: &mut dyn Task,
    books: &mut Books,
    (_, control, shared): (&crate::workload::Phase, &Control, &Shared),
) -> bool {
    let to = deadline.map_or(at, |d| d.min(at));
    let woke = wait_for(clock, to, task, books, shared, control);
    deadline.is_some_and(|d| woke >= d)
}

/// The start of the next paced operation, waited for (the client's own lag recorded: one
/// histogram record, no clock read of its own); None where it was meant to start after the
/// phase's `deadline`, the worker then idle to that end, so that its rate is over the phase's
/// whole duration.
#[inline]
pub(super) fn paced_start<C: Clock>(
    clock: &C,
    deadline: Option<Instant>,
    task: &mut dyn Task,
    books: &mut Books,
    shared: &Shared,
    control: &Control,
) -> Option<Instant> {
    let at = books.pace.as_mut()?.pacer.next_start();
    if let Some(end) = deadline.filter(|&d| at >= d) {
        wait_for(clock, end, task, books, shared, control);
        return None;
    }
    let woke = wait_for(clock, at, task, books, shared, control);
    let (last_end, counted_from) = (books.last_end, books.counted_from);
    if let Some(pace) = books.pace.as_mut() {
        pace.lag(at, woke, last_end, counted_from);
    }
    Some(at)
}

/// One operation of a task that runs one at a time, tried again up to `retries` times while
/// it fails, timed from before its first try to after its last. A GET checked as it arrived
/// (`checked_inline`): the check is verification time, not latency.
#[inline]
pub(super) fn execute<C: Clock>(
    task: &mut dyn Task,
    retries: u32,
    intended: Option<Instant>,
    clock: &C,
    control: &Control,
) -> Ended {
    let started = clock.now();
    let mut result = task.execute();
    let mut tries = 0;
    while result.is_err() && tries < retries && !control.stop_requested() {
        tries += 1;
        result = task.execute();
    }
    let ended = clock.now();
    Ended {
        intended,
        started,
        ended,
        result,
        tries,
        checked_inline: task.take_verify_ns(),
        copy_ns: task.take_copy_ns(),
    }
}
