//! What a run shares with its phases while they go: the clock origin, the seed, the stop flag
//! (Ctrl-C), and the live counters and phase a progress display reads.

use crate::live::IntervalObserver;
use crate::requests::RequestSink;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A counter on its own cache line, so workers never contend for one.
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct LiveCounter {
    pub(crate) bytes: AtomicU64,
    pub(crate) ops: AtomicU64,
}

/// Shared between the runner, the workers, a progress display and a Ctrl-C handler.
pub struct Control {
    /// The run's clock origin: every stamp is nanoseconds since this instant.
    pub origin: Instant,
    /// Seed of the run's data stamps and random orders.
    pub run_id: u64,
    stop: &'static AtomicBool,
    pub(crate) live: Vec<LiveCounter>,
    pub(crate) phase: Mutex<Option<LivePhase>>,
    /// Sees each interval of every phase as it is passed (`--live`, `--metrics-listen`).
    pub(crate) observer: Option<Arc<dyn IntervalObserver>>,
    /// Takes every operation of every phase, a chunk at a time (`--requests`).
    pub(crate) requests: Option<Arc<dyn RequestSink>>,
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
            observer: None,
            requests: None,
        }
    }

    /// This control, with `observer` shown each interval of every phase as it is passed.
    pub fn watched_by(self, observer: Option<Arc<dyn IntervalObserver>>) -> Control {
        Control { observer, ..self }
    }

    /// This control, with every operation of every phase handed to `sink` in chunks.
    pub fn recorded_by(self, requests: Option<Arc<dyn RequestSink>>) -> Control {
        Control { requests, ..self }
    }

    /// Zeroes the live counters before a phase.
    pub(crate) fn reset_live(&self) {
        for counter in &self.live {
            counter.bytes.store(0, std::sync::atomic::Ordering::Relaxed);
            counter.ops.store(0, std::sync::atomic::Ordering::Relaxed);
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

    pub(crate) fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.origin).as_nanos() as u64
    }
}
