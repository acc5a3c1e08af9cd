//! What a phase measured: per-worker spans and series, per-operation books, errors by kind,
//! CPU time; the runner fills it in, the run layer records it.

use crate::control::Control;
use crate::cpu::CpuTimes;
use crate::pace::PaceOutcome;
use crate::stonewall::Stonewall;
use crate::workload::{Op, Phase};
use iobm_stats::{Histogram, Series, Trace, WorkerSpan};
use iobm_target::error_kind;
use std::io;
use std::time::{Duration, Instant};

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
    /// Bytes, operations, errors and latency per interval of the phase.
    pub series: Series,
    /// Time spent in the final fsync (`--fsync end`), inside the span.
    pub final_sync_ns: u64,
    /// Time spent checking what was read (`--verify`), inside the span, outside every
    /// operation's latency.
    pub verify_ns: u64,
    /// Time the counted operations spent copying between a device's buffers and their host
    /// bounce buffer (`--mem gpu`), inside their latency.
    pub copy_ns: u64,
    /// Progress over time, for the snapshots behind the aggregates.
    pub trace: Trace,
    /// Operations it performed, the failed ones too: the items of a metadata phase it made,
    /// statted or removed (0, 1, ... of its share: later phases work on that many).
    pub items: u64,
    /// The CPUs its thread was allowed once pinned (`--cpus`, `--numa`), as the kernel says
    /// (`Cpus_allowed_list`); None: not pinned.
    pub cpus: Option<String>,
}

/// Everything measured in one phase.
#[derive(Debug, Clone)]
pub struct PhaseOutcome {
    pub name: String,
    pub op: Op,
    pub end: PhaseEnd,
    /// What a [`crate::StopRule::Stonewall`] did: where it stopped each worker, the most any
    /// worker of any rank had done, which they then went on to.
    pub stonewall: Option<Stonewall>,
    /// What `--until-stable` saw ([`crate::Phase::steady`]): when the phase was found steady,
    /// and the last window's rates.
    pub steady: Option<crate::steady::SteadyOutcome>,
    /// When the barrier released the workers, ns since the run's origin.
    pub start_ns: u64,
    pub end_ns: u64,
    pub workers: Vec<WorkerOutcome>,
    pub latency: Histogram,
    /// Per operation kind ([`Op::classes`]): one entry, or four for a mixed phase.
    pub by_op: Vec<OpOutcome>,
    pub errors: Vec<ErrorCount>,
    pub cpu: CpuTimes,
    /// A paced phase's response times and backlog ([`crate::Phase::pace`]).
    pub pace: Option<PaceOutcome>,
}

/// One kind of operation within a phase.
#[derive(Debug, Clone)]
pub struct OpOutcome {
    pub name: iobm_stats::names::OpName,
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
    /// This kind's operations per interval of the phase (as [`WorkerOutcome::series`]).
    pub series: Series,
}

impl OpOutcome {
    /// Empty books for each of `op`'s classes.
    pub(crate) fn per_class(phase: &Phase) -> Vec<OpOutcome> {
        let classes = phase.op.classes().iter();
        classes
            .map(|&c| OpOutcome::new(c, phase.interval))
            .collect()
    }

    pub(crate) fn new(name: iobm_stats::names::OpName, interval: Duration) -> OpOutcome {
        OpOutcome {
            name,
            ops: 0,
            bytes: 0,
            errors: 0,
            retried: 0,
            keys: 0,
            latency: Histogram::new(),
            ttfb: Histogram::new(),
            series: Series::new(interval),
        }
    }

    pub(crate) fn merge(&mut self, other: &OpOutcome) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.errors += other.errors;
        self.retried += other.retried;
        self.keys += other.keys;
        self.latency += &other.latency;
        self.ttfb += &other.ttfb;
        self.series.merge(&other.series);
    }
}

impl WorkerOutcome {
    /// A worker that did nothing, at `now_ns`.
    pub(crate) fn empty(now_ns: u64, interval: Duration) -> WorkerOutcome {
        WorkerOutcome {
            span: WorkerSpan {
                start_ns: now_ns,
                end_ns: now_ns,
                ..WorkerSpan::default()
            },
            series: Series::new(interval),
            final_sync_ns: 0,
            verify_ns: 0,
            copy_ns: 0,
            trace: Vec::new(),
            items: 0,
            cpus: None,
        }
    }
}

impl PhaseOutcome {
    pub fn bytes(&self) -> u64 {
        self.workers.iter().map(|w| w.span.bytes).sum()
    }

    /// The items per worker a later phase works on ([`crate::TreeWork::limit`]): the most any
    /// worker of any rank did when a stonewall cut the phase short and every worker then went
    /// on to (or to the end of its share); None when no stonewall ran (every item was made).
    pub fn items_done(&self) -> Option<u64> {
        self.stonewall.as_ref().and_then(|s| s.wear_out)
    }

    /// A phase that could not begin: no worker ran, one error says why.
    pub fn failed_before_start(
        phase: &Phase,
        control: &Control,
        error: &io::Error,
        what: &str,
    ) -> Self {
        let now = control.ns(Instant::now());
        let empty = WorkerOutcome::empty(now, phase.interval);
        PhaseOutcome {
            name: phase.name.clone(),
            op: phase.op,
            end: PhaseEnd::Failed,
            stonewall: None,
            steady: None,
            start_ns: now,
            end_ns: now,
            workers: vec![empty; phase.workers],
            latency: Histogram::new(),
            by_op: OpOutcome::per_class(phase),
            errors: vec![ErrorCount {
                kind: error_kind(error),
                count: 1,
                first: format!("{what}: {error}"),
            }],
            cpu: CpuTimes::default(),
            pace: None,
        }
    }
}
