//! The seam between the runner and what a worker does. The runner's loop owns timing, stop
//! rules and counting; a task only prepares operation i (untimed: choosing the offset, stamping
//! the data) and performs it (timed). File phases have block and metadata tasks
//! ([`crate::tasks`]), object phases object tasks ([`crate::objects`]).

use std::io;
use std::time::Instant;

/// An operation of a queued task that completed: its bytes, when it was meant to start
/// (paced), submitted and completed (its latency is the time between the last two).
pub(crate) struct Completed {
    pub bytes: u64,
    pub intended: Option<Instant>,
    pub started: Instant,
    pub ended: Instant,
}

/// A prepared worker's operations.
pub(crate) trait Task: Send {
    /// Opens what the worker works on inside its time, before its first operation, where
    /// the phase times its open ([`crate::Opening`]); nothing else to do by default.
    fn open(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Sets up operation `i` (counted from 0); false when the worker has no more to do.
    fn prepare(&mut self, i: u64) -> bool;
    /// Performs the prepared operation; returns the bytes it moved.
    fn execute(&mut self) -> io::Result<u64>;
    /// Checks what the operation read, untimed (`--verify`).
    fn check(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Names the prepared operation, for error messages.
    fn describe(&self) -> String;
    /// Which of the phase's [`Op::classes`] the prepared operation is.
    fn class(&self) -> usize {
        0
    }
    /// When the answer to the operation began to arrive (object gets: time to first byte).
    fn first_byte(&self) -> Option<Instant> {
        None
    }
    /// The file or object number of the prepared operation and its offset
    /// (all ones, `requests::NONE`, where the task does not know them).
    fn at(&self) -> (u64, u64) {
        (u64::MAX, u64::MAX)
    }
    /// Keys the operation returned (object listings).
    fn keys(&self) -> u64 {
        0
    }
    /// Time the operation spent checking what it read as it arrived (object GETs with
    /// `--verify`): taken out of its latency and counted as verification.
    fn take_verify_ns(&mut self) -> u64 {
        0
    }
    /// Time the operation spent copying between a device's buffer and its host bounce buffer
    /// (`--mem gpu`), inside its latency and counted apart.
    fn take_copy_ns(&mut self) -> u64 {
        0
    }
    /// Ends the worker's work inside its timed interval (final fsync, close); returns the
    /// nanoseconds spent in the final fsync.
    fn finish(&mut self) -> io::Result<u64>;
    /// Whether the task keeps several operations in flight ([`crate::queued`]): the runner
    /// then calls [`Task::submit`] instead of [`Task::execute`], and [`Task::drain`] at the end.
    fn queued(&self) -> bool {
        false
    }
    /// Submits the prepared operation, meant to start at `intended` when paced; returns one
    /// that completed meanwhile, waiting for one only when the queue is full.
    fn submit(&mut self, _intended: Option<Instant>) -> Option<io::Result<Completed>> {
        None
    }
    /// One of the operations in flight that completes by `until`, waiting for it until then;
    /// None when none did (or none is in flight).
    fn wait_until(&mut self, _until: Instant) -> Option<io::Result<Completed>> {
        None
    }
    /// One more of the operations still in flight, waiting for it; None when none is left.
    fn drain(&mut self) -> Option<io::Result<Completed>> {
        None
    }
}
