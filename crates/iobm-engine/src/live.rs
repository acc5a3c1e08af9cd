//! The seam for watching a phase as it runs: each worker hands over the intervals of its series
//! it has closed (once per interval, never per operation), and once every worker of this
//! process has passed an interval it goes, summed, to the run's [`IntervalObserver`] (the
//! live file, the CSV rows as they come, a metrics endpoint).

use crate::workload::{Op, Phase};
use iobm_stats::Interval;
use iobm_target::Target;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One interval of a phase on this process, once every worker has passed it: what the series
/// of the result will hold at this index.
pub struct LiveInterval<'a> {
    pub phase: &'a str,
    pub op: Op,
    /// Index k: operations that ended in [k, k+1) intervals after the phase's (counted) start.
    pub index: usize,
    pub interval_ns: u64,
    /// Each kind of operation of the phase ([`Op::classes`]), over every worker.
    pub by_op: &'a [(&'static str, Interval)],
    /// Each worker's, every kind together, by worker index.
    pub workers: &'a [Interval],
    /// Where each worker's requests go (an S3 endpoint), by worker index.
    pub endpoints: &'a [Option<String>],
}

impl LiveInterval<'_> {
    /// Every kind and worker together.
    pub fn total(&self) -> Interval {
        let mut total = Interval::default();
        self.by_op.iter().for_each(|(_, i)| total.add(i));
        total
    }
}

/// Sees each interval of each phase as soon as every worker of this process has passed it,
/// in order of index, called on whichever worker thread completed it (so it must be quick: a
/// line written, counters added).
pub trait IntervalObserver: Send + Sync {
    fn interval(&self, interval: &LiveInterval);
}

/// What a worker hands over: intervals `first..` of its series, and whether it has ended.
pub(crate) struct Closed {
    pub(crate) worker: usize,
    pub(crate) first: usize,
    /// The worker's series, every kind together.
    pub(crate) whole: Vec<Interval>,
    /// Each kind's, where the phase has several (else the whole is the one kind's).
    pub(crate) classes: Vec<Vec<Interval>>,
    pub(crate) ended: bool,
}

/// One interval's sums, while some worker has not passed it.
struct Pending {
    by_op: Vec<(&'static str, Interval)>,
    workers: Vec<Interval>,
}

/// The intervals of a phase not yet handed on, and how far each worker has gone.
pub(crate) struct Gather {
    phase: String,
    op: Op,
    interval_ns: u64,
    endpoints: Vec<Option<String>>,
    /// The interval each worker has not closed yet; None once it ended.
    passed: Vec<Option<usize>>,
    /// Intervals `emitted..`.
    pending: VecDeque<Pending>,
    emitted: usize,
    observer: Arc<dyn IntervalObserver>,
}

impl Gather {
    pub(crate) fn new(
        phase: &Phase,
        target: &dyn Target,
        observer: Arc<dyn IntervalObserver>,
    ) -> Mutex<Gather> {
        Mutex::new(Gather {
            endpoints: (0..phase.workers)
                .map(|w| target.endpoint_of(w).map(str::to_string))
                .collect(),
            phase: phase.name.clone(),
            op: phase.op,
            interval_ns: (phase.interval.as_nanos() as u64).max(1),
            passed: vec![Some(0); phase.workers],
            pending: VecDeque::new(),
            emitted: 0,
            observer,
        })
    }

    fn empty(&self) -> Pending {
        Pending {
            by_op: self
                .op
                .classes()
                .iter()
                .map(|&c| (c, Interval::default()))
                .collect(),
            workers: vec![Interval::default(); self.passed.len()],
        }
    }

    /// Adds what a worker closed, then hands on every interval all workers have passed.
    pub(crate) fn take(&mut self, closed: Closed) {
        for (j, whole) in closed.whole.iter().enumerate() {
            let k = closed.first + j;
            debug_assert!(
                k >= self.emitted,
                "a worker's closed interval was handed on"
            );
            let at = k.saturating_sub(self.emitted);
            while self.pending.len() <= at {
                let empty = self.empty();
                self.pending.push_back(empty);
            }
            let pending = &mut self.pending[at];
            pending.workers[closed.worker].add(whole);
            match closed.classes.is_empty() {
                true => pending.by_op[0].1.add(whole),
                false => {
                    for (c, class) in closed.classes.iter().enumerate() {
                        pending.by_op[c].1.add(&class[j]);
                    }
                }
            }
        }
        self.passed[closed.worker] = (!closed.ended).then_some(closed.first + closed.whole.len());
        let bound = (self.passed.iter().flatten().min().copied())
            .unwrap_or(self.emitted + self.pending.len());
        while self.emitted < bound {
            let pending = self.pending.pop_front().unwrap_or_else(|| self.empty());
            self.observer.interval(&LiveInterval {
                phase: &self.phase,
                op: self.op,
                index: self.emitted,
                interval_ns: self.interval_ns,
                by_op: &pending.by_op,
                workers: &pending.workers,
                endpoints: &self.endpoints,
            });
            self.emitted += 1;
        }
    }

    /// A worker that never ran (its task could not be built).
    pub(crate) fn ended(&mut self, worker: usize) {
        self.take(Closed {
            worker,
            first: self.passed[worker].unwrap_or(0),
            whole: Vec::new(),
            classes: Vec::new(),
            ended: true,
        });
    }
}
