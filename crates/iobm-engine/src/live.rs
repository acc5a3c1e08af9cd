//! The seam for watching a phase as it runs: each worker hands over the intervals of its series
//! it has closed (once per interval, never per operation), and once every worker of this
//! process has passed an interval it goes, summed, to the run's [`IntervalObserver`] (the
//! live file, the CSV rows as they come, a metrics endpoint).

use crate::workload::{Op, Phase};
use iobm_stats::names::OpName;
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
    pub by_op: &'a [(OpName, Interval)],
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
    by_op: Vec<(OpName, Interval)>,
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
            if closed.classes.is_empty() {
                pending.by_op[0].1.add(whole);
            }
            for (c, class) in closed.classes.iter().enumerate() {
                pending.by_op[c].1.add(&class[j]);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{Layout, ObjectOp};

    /// An interval as shown: (index, bytes, ops, each kind's ops, each worker's).
    type Seen = (usize, u64, u64, Vec<u64>, Vec<u64>);

    /// Notes each interval it is shown.
    #[derive(Default)]
    struct Noted(Mutex<Vec<Seen>>);

    impl IntervalObserver for Noted {
        fn interval(&self, i: &LiveInterval) {
            let total = i.total();
            let kinds = i.by_op.iter().map(|(_, k)| k.ops).collect();
            let workers = i.workers.iter().map(|w| w.ops).collect();
            let seen = (i.index, total.bytes, total.ops, kinds, workers);
            self.0.lock().unwrap().push(seen);
        }
    }

    fn amounts(ops: u64) -> Interval {
        Interval {
            bytes: ops * 10,
            ops,
            ..Interval::default()
        }
    }

    fn closed(worker: usize, first: usize, ops: &[u64], ended: bool) -> Closed {
        Closed {
            worker,
            first,
            whole: ops.iter().map(|&n| amounts(n)).collect(),
            classes: Vec::new(),
            ended,
        }
    }

    #[test]
    fn an_interval_goes_out_once_every_worker_has_passed_it() {
        let mut phase = Phase::new("p", Op::Write, 4096, Layout::file_per_worker(3, 1 << 20));
        phase.workers = 3;
        let noted = Arc::new(Noted::default());
        let target = iobm_target::null::NullTarget;
        let gather = Gather::new(&phase, &target, noted.clone());
        let mut gather = gather.lock().unwrap();
        gather.take(closed(0, 0, &[1, 2], false));
        gather.take(closed(1, 0, &[3], false));
        assert!(
            noted.0.lock().unwrap().is_empty(),
            "worker 2 has passed nothing"
        );
        gather.take(closed(2, 0, &[4, 5, 6], false));
        assert_eq!(
            *noted.0.lock().unwrap(),
            [(0, 80, 8, vec![8], vec![1, 3, 4])]
        );
        // Worker 1 ends with interval 1 and more: interval 1 waits for worker 0 no longer.
        gather.take(closed(1, 1, &[7, 8, 9], true));
        gather.take(closed(0, 2, &[], false));
        let seen = noted.0.lock().unwrap().clone();
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[1], (1, 140, 14, vec![14], vec![2, 7, 5]));
        // The rest once all have ended, an interval no one had anything in included.
        gather.ended(2);
        gather.take(closed(0, 2, &[0, 0, 0, 1], true));
        let seen = noted.0.lock().unwrap().clone();
        let indices: Vec<usize> = seen.iter().map(|s| s.0).collect();
        assert_eq!(indices, [0, 1, 2, 3, 4, 5]);
        assert_eq!(seen[2], (2, 140, 14, vec![14], vec![0, 8, 6]));
        assert_eq!(seen[3], (3, 90, 9, vec![9], vec![0, 9, 0]));
        assert_eq!(seen[5], (5, 10, 1, vec![1], vec![1, 0, 0]));
        let ops: u64 = seen.iter().map(|s| s.2).sum();
        assert_eq!(ops, 1 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 9 + 1);
    }

    #[test]
    fn each_kind_of_a_mixed_phase_gets_its_own_amounts() {
        let mut phase = Phase::new(
            "m",
            Op::Object(ObjectOp::Mixed),
            1,
            Layout::file_per_worker(1, 1),
        );
        phase.workers = 1;
        let noted = Arc::new(Noted::default());
        let target = iobm_target::null::NullTarget;
        let gather = Gather::new(&phase, &target, noted.clone());
        let kinds = Op::Object(ObjectOp::Mixed).classes().len();
        let mut c = closed(0, 0, &[6], true);
        c.classes = (0..kinds).map(|k| vec![amounts(k as u64)]).collect();
        gather.lock().unwrap().take(c);
        let seen = noted.0.lock().unwrap().clone();
        assert_eq!(seen[0].3, (0..kinds as u64).collect::<Vec<_>>());
    }
}
