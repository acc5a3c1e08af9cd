//! Open-loop load (`--rate`): when each operation of a paced worker is meant to start
//! ([`Pacer`]: uniform or Poisson gaps at the worker's share of the rate), the clock that waits
//! for it ([`Clock`]: the monotonic one; a fake one in tests) and what a paced worker records
//! beside service time ([`PaceBooks`]): response time from the intended start, the client's
//! own lag in starting operations, and the operations behind schedule per interval. The
//! client's own cost per operation, measured before a paced run, is `crate::trial`'s.

use crate::rhythm::{Burst, Rhythm};
use iobm_stats::{Histogram, Series, SeriesRecorder};
use std::time::{Duration, Instant};

/// The time a worker reads and waits on.
pub trait Clock: Sync {
    fn now(&self) -> Instant;
    /// Returns at `t` or later (at once when `t` has passed).
    fn sleep_until(&self, t: Instant);
}

/// The monotonic clock.
pub struct Monotonic;

/// A sleep overshoots by tens of microseconds: the last of a wait is spun.
const SPIN: Duration = Duration::from_micros(60);

impl Clock for Monotonic {
    #[inline]
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, t: Instant) {
        loop {
            let now = Instant::now();
            if now >= t {
                return;
            }
            let left = t - now;
            if left > SPIN {
                std::thread::sleep(left - SPIN);
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

pub use iobm_stats::names::Arrivals;

/// A phase's target rate, shared by its workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Operations per second over every worker of every rank, in thousandths.
    pub milli_ops_per_s: u64,
    /// Workers of every rank sharing the rate (each gets an equal share).
    pub workers: u64,
    /// The global index of this rank's first worker (seeds and staggers its workers).
    pub first_worker: u64,
    pub arrivals: Arrivals,
    /// Seed of the Poisson gaps.
    pub seed: u64,
}

impl Pace {
    /// `ops_per_s` over `workers` workers of every rank.
    pub fn new(ops_per_s: f64, workers: u64, arrivals: Arrivals, seed: u64) -> Pace {
        Pace {
            milli_ops_per_s: ((ops_per_s * 1000.0).round() as u64).max(1),
            workers: workers.max(1),
            first_worker: 0,
            arrivals,
            seed,
        }
    }

    /// Operations per second over every worker of every rank.
    pub fn ops_per_s(&self) -> f64 {
        self.milli_ops_per_s as f64 / 1000.0
    }

    /// One worker's mean gap between intended starts, in ns.
    pub fn gap_ns(&self) -> f64 {
        self.workers as f64 * 1e12 / self.milli_ops_per_s as f64
    }
}

/// SplitMix64: a fast, seeded generator of 64-bit values (no crate).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Exponential with mean `mean`.
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -(1.0 - self.unit()).ln() * mean
    }
}

/// One worker's intended start times.
#[derive(Debug, Clone)]
pub struct Pacer {
    origin: Instant,
    /// The next intended start, ns after `origin`.
    next_ns: f64,
    gap_ns: f64,
    /// Poisson's generator; None: uniform.
    rng: Option<Rng>,
    /// `--burst`: the schedule counts time under load only, the idle periods let in.
    burst: Option<Burst>,
    /// A replayed trace's recorded starts (ns after `origin`) in the worker's order, and the
    /// next one's index: the schedule instead of the gaps.
    recorded: Option<(Vec<u64>, usize)>,
}

impl Pacer {
    /// The starts of local worker `index` of a phase that began at `origin`: uniform workers
    /// staggered over one gap, so that together they start evenly; Poisson ones from a draw.
    pub fn new(pace: &Pace, origin: Instant, index: usize) -> Pacer {
        let global = pace.first_worker + index as u64;
        let gap_ns = pace.gap_ns();
        let mut rng = match pace.arrivals {
            Arrivals::Uniform => None,
            Arrivals::Poisson => Some(Rng::new(
                pace.seed ^ global.wrapping_mul(0xa076_1d64_78bd_642f),
            )),
        };
        let next_ns = match rng.as_mut() {
            Some(rng) => rng.exponential(gap_ns),
            None => gap_ns * (global % pace.workers) as f64 / pace.workers as f64,
        };
        Pacer {
            origin,
            next_ns,
            gap_ns,
            rng,
            burst: None,
            recorded: None,
        }
    }

    /// Starts at the recorded times `starts` (ns after the phase's origin), in order; past
    /// the last, one mean gap apart.
    pub fn recorded(mut self, starts: Vec<u64>) -> Pacer {
        self.next_ns = 0.0;
        self.recorded = Some((starts, 0));
        self
    }

    /// The intended start of the next operation.
    #[inline]
    pub fn next_start(&mut self) -> Instant {
        if let Some((starts, next)) = self.recorded.as_mut() {
            let at = starts.get(*next).map_or(self.next_ns, |&ns| ns as f64);
            *next += 1;
            self.next_ns = at + self.gap_ns;
            return self.origin + Duration::from_nanos(at as u64);
        }
        let ns = match self.burst {
            Some(burst) => burst.stretch_ns(self.next_ns),
            None => self.next_ns,
        };
        let at = self.origin + Duration::from_nanos(ns as u64);
        self.next_ns += match self.rng.as_mut() {
            Some(rng) => rng.exponential(self.gap_ns),
            None => self.gap_ns,
        };
        at
    }

    /// Operations behind schedule when the one meant for `intended` starts at `started`: the
    /// later ones already due (one per mean gap of lateness).
    #[inline]
    pub fn behind(&self, intended: Instant, started: Instant) -> u64 {
        (started.saturating_duration_since(intended).as_nanos() as f64 / self.gap_ns) as u64
    }
}

/// What a paced phase recorded beside its service time.
#[derive(Debug, Clone)]
pub struct PaceOutcome {
    pub pace: Pace,
    /// Response time (from each operation's intended start to its end) of every counted
    /// operation.
    pub response: Histogram,
    /// Response time per interval (operations by the interval they ended in).
    pub series: Series,
    /// The client's own lag in starting each operation meant to start in the counted time:
    /// from when it could have started (its intended start, or the end of the operation before
    /// it when that ended later) to when the worker's wait for it ended. The rest of its
    /// lateness is the storage's queueing.
    pub lag: Histogram,
    /// Operations behind schedule per interval: each worker's most at an operation's start in
    /// that interval, added over the workers.
    pub backlog: Vec<u64>,
}

impl PaceOutcome {
    pub fn new(pace: Pace, interval: Duration) -> PaceOutcome {
        PaceOutcome {
            pace,
            response: Histogram::new(),
            series: Series::new(interval),
            lag: Histogram::new(),
            backlog: Vec::new(),
        }
    }

    /// Adds another worker's books.
    pub fn merge(&mut self, other: &PaceOutcome) {
        self.response += &other.response;
        self.lag += &other.lag;
        self.series.merge(&other.series);
        if self.backlog.len() < other.backlog.len() {
            self.backlog.resize(other.backlog.len(), 0);
        }
        for (a, b) in self.backlog.iter_mut().zip(&other.backlog) {
            *a += b;
        }
    }
}

/// A paced worker's pacer and books.
pub(crate) struct PaceBooks {
    pub(crate) pacer: Pacer,
    pace: Pace,
    response: Histogram,
    series: SeriesRecorder,
    lag: Histogram,
    /// When the operations so far would have ended had the client started each at once.
    unlagged_end: Instant,
    /// Several operations in flight (io_uring): the storage is busy until a slot frees.
    queued: bool,
    backlog: Vec<u64>,
    interval_ns: u64,
    /// `--think`: the idle time after each operation, which is not the client's lag.
    think: Duration,
}

impl PaceBooks {
    pub(crate) fn new(
        pace: &Pace,
        origin: Instant,
        index: usize,
        interval: Duration,
        queued: bool,
    ) -> Self {
        PaceBooks {
            pacer: Pacer::new(pace, origin, index),
            pace: *pace,
            response: Histogram::new(),
            series: SeriesRecorder::new(interval),
            lag: Histogram::new(),
            unlagged_end: origin,
            queued,
            backlog: Vec::new(),
            interval_ns: (interval.as_nanos() as u64).max(1),
            think: Duration::ZERO,
        }
    }

    /// Started at a replayed trace's recorded times (ns after the phase's origin), in order,
    /// where it has them.
    pub(crate) fn recorded(mut self, starts: Option<Vec<u64>>) -> Self {
        if let Some(starts) = starts {
            self.pacer = self.pacer.recorded(starts);
        }
        self
    }

    /// With the phase's idle times: its bursts in the schedule, its think time no lag.
    pub(crate) fn rhythm(mut self, rhythm: Option<Rhythm>) -> Self {
        if let Some(rhythm) = rhythm {
            self.pacer.burst = rhythm.burst;
            self.think = rhythm.think;
        }
        self
    }

    /// The client's lag in starting the operation meant for `intended`, whose wait ended at
    /// `woke`, the worker's last operation having ended at `last_end`; none before the counting
    /// began. It runs from when the operation could have started had the client been instant:
    /// its intended start, or later when the storage was still busy with the operations before
    /// it (one at a time: the end they would have had, each started at its intended time or
    /// when the one before would have ended; a queue of several: the end of the last one).
    #[inline]
    pub(crate) fn lag(
        &mut self,
        intended: Instant,
        woke: Instant,
        last_end: Instant,
        counted_from: Instant,
    ) {
        if intended >= counted_from {
            let busy = if self.queued {
                last_end
            } else {
                self.unlagged_end
            };
            let from = intended.max(busy + self.think);
            self.lag
                .record(woke.saturating_duration_since(from).as_nanos() as u64);
        }
    }

    /// An operation of `bytes` meant to start at `intended`, started at `started`, ended at
    /// `ended`, with its times since the counting began.
    #[inline]
    pub(crate) fn record(
        &mut self,
        intended: Instant,
        started: Instant,
        ended: Instant,
        counted_from: Instant,
        bytes: u64,
    ) {
        let behind = self.pacer.behind(intended, started);
        if behind > 0 {
            let at = (started.saturating_duration_since(counted_from).as_nanos() as u64
                / self.interval_ns) as usize;
            if at >= self.backlog.len() {
                self.backlog.resize(at + 1, 0);
            }
            self.backlog[at] = self.backlog[at].max(behind);
        }
        self.unlagged_end =
            intended.max(self.unlagged_end) + ended.saturating_duration_since(started);
        let response = ended.saturating_duration_since(intended).as_nanos() as u64;
        self.response.record(response);
        self.series.record(
            ended.saturating_duration_since(counted_from),
            bytes,
            response,
        );
    }

    pub(crate) fn finish(self) -> PaceOutcome {
        PaceOutcome {
            pace: self.pace,
            response: self.response,
            series: self.series.finish(),
            lag: self.lag,
            backlog: self.backlog,
        }
    }
}

/// A clock that moves only when told: waits return at once, at their time.
#[cfg(test)]
pub(crate) mod fake {
    use super::Clock;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    pub(crate) struct FakeClock {
        base: Instant,
        ns: AtomicU64,
    }

    impl FakeClock {
        pub(crate) fn new() -> FakeClock {
            FakeClock {
                base: Instant::now(),
                ns: AtomicU64::new(0),
            }
        }

        pub(crate) fn advance(&self, by: Duration) {
            self.ns.fetch_add(by.as_nanos() as u64, Ordering::SeqCst);
        }
    }

    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.base + Duration::from_nanos(self.ns.load(Ordering::SeqCst))
        }

        fn sleep_until(&self, t: Instant) {
            let target = t.saturating_duration_since(self.base).as_nanos() as u64;
            self.ns.fetch_max(target, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests;
