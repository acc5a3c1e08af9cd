//! The seam for keeping every operation (`--requests`): a recorded worker appends one
//! [`Request`] per operation to a buffer of its own and hands it, [`CHUNK`] at a time and at its
//! end, to the run's [`RequestSink`] on its own thread: no lock or system call per operation.

use crate::task::Task;
use crate::workload::{Op, Phase};
use std::sync::Arc;
use std::time::Instant;

/// Records a worker buffers before it hands them over.
pub const CHUNK: usize = 4096;

/// A field a request has not: no intended start (closed loop), no time to first byte, no
/// object or offset known.
pub const NONE: u64 = u64::MAX;

/// One operation as it ended, its times in nanoseconds since the phase's counted start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub start_ns: u64,
    /// Its intended start under `--rate` ([`NONE`] in the closed loop).
    pub intended_ns: u64,
    /// Its latency as the result's histogram holds it.
    pub duration_ns: u64,
    /// Time to first byte (object GETs), else [`NONE`].
    pub ttfb_ns: u64,
    pub bytes: u64,
    /// The file or object number, and the offset in it ([`NONE`] where unknown).
    pub object: u64,
    pub offset: u64,
    /// Its kind: an index into the phase's [`Op::classes`].
    pub class: u8,
    /// 0 when it succeeded, else 1 + the index of its error kind in [`RequestChunk::errors`].
    pub error: u8,
}

/// What a worker hands over: its requests since the last hand-over.
pub struct RequestChunk<'a> {
    pub phase: &'a str,
    pub op: Op,
    pub worker: usize,
    /// The worker's error kinds so far, in order of first occurrence.
    pub errors: &'a [String],
    pub records: &'a [Request],
}

/// Takes each worker's chunks of requests, on the worker's thread (so it must be quick: one
/// chunk encoded and written).
pub trait RequestSink: Send + Sync {
    fn chunk(&self, chunk: &RequestChunk);
}

/// A worker's buffer of requests.
pub(crate) struct RequestBuf {
    pub(crate) sink: Arc<dyn RequestSink>,
    pub(crate) records: Vec<Request>,
}

impl RequestBuf {
    pub(crate) fn new(sink: Arc<dyn RequestSink>) -> RequestBuf {
        RequestBuf {
            sink,
            records: Vec::with_capacity(CHUNK),
        }
    }
}

impl RequestBuf {
    /// Keeps one operation that started at `times.1` (meant for `times.0`), times counted
    /// from `times.2`; true once the buffer holds a chunk.
    #[inline]
    pub(crate) fn keep(
        &mut self,
        task: &dyn Task,
        times: (Option<Instant>, Instant, Instant),
        duration_ns: u64,
        bytes: u64,
        error: u8,
    ) -> bool {
        let (intended, started, from) = times;
        let since = |t: Instant| t.saturating_duration_since(from).as_nanos() as u64;
        // A queued task has moved on to later operations by the time one completes.
        let (object, offset) = if task.queued() {
            (NONE, NONE)
        } else {
            task.at()
        };
        self.records.push(Request {
            start_ns: since(started),
            intended_ns: intended.map_or(NONE, since),
            duration_ns,
            ttfb_ns: (task.first_byte()).map_or(NONE, |f| {
                f.saturating_duration_since(started).as_nanos() as u64
            }),
            bytes,
            object,
            offset,
            class: task.class() as u8,
            error,
        });
        self.records.len() >= CHUNK
    }

    /// Hands the records buffered to the sink, as `worker`'s of `phase`.
    pub(crate) fn hand_over(&mut self, phase: &Phase, worker: usize, errors: &[String]) {
        self.sink.chunk(&RequestChunk {
            phase: &phase.name,
            op: phase.op,
            worker,
            errors,
            records: &self.records,
        });
        self.records.clear();
    }
}
