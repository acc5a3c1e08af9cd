//! The aggregate bandwidth definitions of DESIGN.md, each computed from per-worker spans alone
//! and carrying its formula, so a report can always say which "aggregate" it means.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Bytes and operations a worker had completed at some instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Progress {
    /// Bytes completed.
    pub bytes: u64,
    /// Operations completed.
    pub ops: u64,
}

/// One worker's activity in one phase, with stamps in nanoseconds on the run's common clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WorkerSpan {
    /// When the worker began its first operation (after the phase barrier), ns since run start.
    pub start_ns: u64,
    /// When the worker finished its last operation, final fsync and close, ns since run start.
    pub end_ns: u64,
    /// Bytes the worker moved in the phase.
    pub bytes: u64,
    /// Operations the worker completed in the phase.
    pub ops: u64,
    /// What the worker had done when the last worker started (to within a millisecond).
    pub at_all_started: Progress,
    /// What the worker had done when the first worker finished (to within a millisecond).
    pub at_first_done: Progress,
    /// When the worker's first counted operation ended (0: none, not recorded because the phase
    /// defers its flush to the end, and in documents from before).
    #[serde(default)]
    pub first_op_end_ns: u64,
    /// When the worker's last counted operation began.
    #[serde(default)]
    pub last_op_start_ns: u64,
    /// What the worker had done at the start of warp's window, the latest first-operation end
    /// over all workers (to within a millisecond).
    #[serde(default)]
    pub at_window_start: Progress,
    /// What the worker had done at the end of warp's window, the earliest last-operation start
    /// over all workers.
    #[serde(default)]
    pub at_window_end: Progress,
}

/// A worker's progress over time: (stamp in ns, progress by then), sampled at most every
/// [`TRACE_INTERVAL_NS`] and at the end. Kept in memory, on the worker's own rank, to take the
/// snapshots the aggregates need once every worker (of every rank) has finished; bounded by
/// [`TraceBuilder`] whatever the phase's length.
pub type Trace = Vec<(u64, Progress)>;

/// Sampling interval of a [`Trace`], as long as it holds fewer than [`TRACE_POINTS`].
pub const TRACE_INTERVAL_NS: u64 = 1_000_000;
/// Most points a trace holds: past it, the samples after the first [`TRACE_HEAD`] are thinned
/// to every other one and the interval doubles (2 ms after about 65 s, 128 ms for an hour).
pub const TRACE_POINTS: usize = 1 << 16;
/// Samples at the start of a trace never thinned: the first 16 s keep their millisecond, where
/// the last start and warp's window start fall.
pub const TRACE_HEAD: usize = 1 << 14;

/// Builds a worker's [`Trace`] as it goes, in bounded memory.
#[derive(Debug, Clone)]
pub struct TraceBuilder {
    trace: Trace,
    interval_ns: u64,
}

impl Default for TraceBuilder {
    fn default() -> Self {
        TraceBuilder {
            trace: Vec::with_capacity(1024),
            interval_ns: TRACE_INTERVAL_NS,
        }
    }
}

impl TraceBuilder {
    /// Records `progress` at `t_ns` if the last sample is at least one interval older.
    #[inline]
    pub fn sample(&mut self, t_ns: u64, progress: Progress) {
        if self
            .trace
            .last()
            .is_none_or(|&(t, _)| t_ns.saturating_sub(t) >= self.interval_ns)
        {
            if self.trace.len() == TRACE_POINTS {
                self.thin();
            }
            self.trace.push((t_ns, progress));
        }
    }

    /// Keeps the head and every other sample after it; later samples come half as often.
    fn thin(&mut self) {
        let mut kept = TRACE_HEAD;
        for i in (TRACE_HEAD..self.trace.len()).step_by(2) {
            self.trace[kept] = self.trace[i];
            kept += 1;
        }
        self.trace.truncate(kept);
        self.interval_ns *= 2;
    }

    /// The current interval between samples (after the head).
    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    /// The trace, with a last sample at `end_ns`.
    pub fn finish(mut self, end_ns: u64, progress: Progress) -> Trace {
        self.trace.push((end_ns, progress));
        self.trace
    }
}

/// Progress recorded at or before `t_ns` (zero before the first sample).
pub fn progress_at(trace: &[(u64, Progress)], t_ns: u64) -> Progress {
    let after = trace.partition_point(|&(t, _)| t <= t_ns);
    if after == 0 {
        Progress::default()
    } else {
        trace[after - 1].1
    }
}

/// The instants the snapshots are taken at, over all the spans given (all workers of all
/// ranks): the last start, the first end, and the ends of warp's window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotInstants {
    pub last_start_ns: u64,
    pub first_end_ns: u64,
    pub window_start_ns: u64,
    pub window_end_ns: u64,
}

impl SnapshotInstants {
    pub fn of(spans: &[WorkerSpan]) -> SnapshotInstants {
        let active = || spans.iter().filter(|s| s.end_ns > s.start_ns);
        let (window_start_ns, window_end_ns) = warp_window(spans);
        SnapshotInstants {
            last_start_ns: active().map(|s| s.start_ns).max().unwrap_or(0),
            first_end_ns: active().map(|s| s.end_ns).min().unwrap_or(0),
            window_start_ns,
            window_end_ns,
        }
    }

    /// The same instants moved by `to` (from rank 0's clock onto another rank's).
    pub fn moved(self, to: impl Fn(u64) -> u64) -> SnapshotInstants {
        SnapshotInstants {
            last_start_ns: to(self.last_start_ns),
            first_end_ns: to(self.first_end_ns),
            window_start_ns: to(self.window_start_ns),
            window_end_ns: to(self.window_end_ns),
        }
    }

    /// Takes a span's snapshots from its worker's trace.
    pub fn fill(&self, span: &mut WorkerSpan, trace: &[(u64, Progress)]) {
        span.at_all_started = progress_at(trace, self.last_start_ns);
        span.at_first_done = progress_at(trace, self.first_end_ns);
        span.at_window_start = progress_at(trace, self.window_start_ns);
        span.at_window_end = progress_at(trace, self.window_end_ns);
    }
}

/// Fills every span's snapshots from its trace, at the instants of all the spans given.
pub fn fill_snapshots(spans: &mut [WorkerSpan], traces: &[Trace]) {
    let at = SnapshotInstants::of(spans);
    for (span, trace) in spans.iter_mut().zip(traces) {
        at.fill(span, trace);
    }
}

/// warp's window: from the latest end of a worker's first operation to the earliest start of
/// a worker's last one, over the workers that did any.
fn warp_window(spans: &[WorkerSpan]) -> (u64, u64) {
    let counted = || spans.iter().filter(|s| s.ops > 0 && s.first_op_end_ns > 0);
    let start = counted().map(|s| s.first_op_end_ns).max().unwrap_or(0);
    let end = counted().map(|s| s.last_op_start_ns).min().unwrap_or(0);
    (start, end)
}

impl WorkerSpan {
    /// Moves every stamp with `to` (onto another clock).
    pub fn move_stamps(&mut self, to: impl Fn(u64) -> u64) {
        self.start_ns = to(self.start_ns);
        self.end_ns = to(self.end_ns);
        if self.first_op_end_ns > 0 {
            self.first_op_end_ns = to(self.first_op_end_ns);
            self.last_op_start_ns = to(self.last_op_start_ns);
        }
    }

    pub fn seconds(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }
    pub fn bytes_per_s(&self) -> f64 {
        per_second(self.bytes, self.seconds())
    }
}

/// Which aggregate definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AggregateKind {
    /// Sum over workers of each worker's own rate ("naive linear summation"; fio, iozone children).
    SumOfRates,
    /// All bytes over the whole wall time of the phase ("precise"; IOR, iozone parent).
    Makespan,
    /// Bytes done by all workers when the first one finished, over that time (stonewall; elbencho).
    FirstDone,
    /// Bytes done while every worker was active, over that window.
    SteadyState,
    /// Bytes done between the latest end of a worker's first operation and the earliest start
    /// of a worker's last one, over that window: warp's, without warm-up and tail.
    WarpWindow,
}

impl AggregateKind {
    pub const ALL: [AggregateKind; 5] = [
        AggregateKind::SumOfRates,
        AggregateKind::Makespan,
        AggregateKind::FirstDone,
        AggregateKind::SteadyState,
        AggregateKind::WarpWindow,
    ];

    pub fn label(self) -> &'static str {
        match self {
            AggregateKind::SumOfRates => "sum of rates",
            AggregateKind::Makespan => "makespan",
            AggregateKind::FirstDone => "first done",
            AggregateKind::SteadyState => "steady state",
            AggregateKind::WarpWindow => "warp window",
        }
    }

    pub fn formula(self) -> &'static str {
        match self {
            AggregateKind::SumOfRates => "sum over workers of bytes_w / (end_w - start_w)",
            AggregateKind::Makespan => "sum of bytes_w / (max end_w - min start_w)",
            AggregateKind::FirstDone => {
                "sum of bytes_w done when the first worker finished / (min end_w - min start_w)"
            }
            AggregateKind::SteadyState => {
                "sum of bytes_w done between the last start and the first end / (min end_w - max start_w)"
            }
            AggregateKind::WarpWindow => {
                "sum of bytes_w done between the last first-operation end and the first last-operation start / (min last_op_start_w - max first_op_end_w)"
            }
        }
    }
}

/// One aggregate value with the formula that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Aggregate {
    /// Which definition.
    pub kind: AggregateKind,
    /// The formula, in words, over per-worker values.
    pub formula: String,
    /// Bytes counted by the formula.
    pub bytes: u64,
    /// Operations counted by the formula.
    pub ops: u64,
    /// Length of the time window in seconds; null for sum_of_rates, which has no single window.
    pub seconds: Option<f64>,
    /// The aggregate bandwidth, bytes per second.
    pub bytes_per_s: f64,
    /// Operations per second by the same formula.
    pub ops_per_s: f64,
}

fn per_second(amount: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        amount as f64 / seconds
    } else {
        0.0
    }
}

fn windowed(kind: AggregateKind, bytes: u64, ops: u64, from_ns: u64, to_ns: u64) -> Aggregate {
    let seconds = to_ns.saturating_sub(from_ns) as f64 / 1e9;
    Aggregate {
        kind,
        formula: kind.formula().to_string(),
        bytes,
        ops,
        seconds: Some(seconds),
        bytes_per_s: per_second(bytes, seconds),
        ops_per_s: per_second(ops, seconds),
    }
}

/// The shortest all-active window that gets a steady-state figure: ten trace intervals, so the
/// snapshots' millisecond error stays small against it.
pub const STEADY_MIN_WINDOW_NS: u64 = 10 * TRACE_INTERVAL_NS;

/// Every aggregate definition that is defined for these spans. First done is left out when the
/// first worker finished less than [`STEADY_MIN_WINDOW_NS`] after the start (its bytes come
/// from progress snapshots a trace interval apart, stale against so short a window), steady
/// state when the workers were all active at once for less than that (or never), and warp's
/// window when it is that short.
pub fn aggregates(spans: &[WorkerSpan]) -> Vec<Aggregate> {
    let active: Vec<&WorkerSpan> = spans.iter().filter(|s| s.end_ns > s.start_ns).collect();
    if active.is_empty() {
        return Vec::new();
    }
    let bytes: u64 = active.iter().map(|s| s.bytes).sum();
    let ops: u64 = active.iter().map(|s| s.ops).sum();
    let min_start = active.iter().map(|s| s.start_ns).min().unwrap_or(0);
    let max_start = active.iter().map(|s| s.start_ns).max().unwrap_or(0);
    let min_end = active.iter().map(|s| s.end_ns).min().unwrap_or(0);
    let max_end = active.iter().map(|s| s.end_ns).max().unwrap_or(0);

    let mut out = vec![
        Aggregate {
            kind: AggregateKind::SumOfRates,
            formula: AggregateKind::SumOfRates.formula().to_string(),
            bytes,
            ops,
            seconds: None,
            bytes_per_s: active.iter().map(|s| s.bytes_per_s()).sum(),
            ops_per_s: active.iter().map(|s| per_second(s.ops, s.seconds())).sum(),
        },
        windowed(AggregateKind::Makespan, bytes, ops, min_start, max_end),
    ];
    if min_end >= min_start + STEADY_MIN_WINDOW_NS {
        let first_bytes = active.iter().map(|s| s.at_first_done.bytes).sum();
        let first_ops = active.iter().map(|s| s.at_first_done.ops).sum();
        out.push(windowed(
            AggregateKind::FirstDone,
            first_bytes,
            first_ops,
            min_start,
            min_end,
        ));
    }
    if min_end >= max_start + STEADY_MIN_WINDOW_NS {
        let steady_bytes = active
            .iter()
            .map(|s| s.at_first_done.bytes.saturating_sub(s.at_all_started.bytes))
            .sum();
        let steady_ops = active
            .iter()
            .map(|s| s.at_first_done.ops.saturating_sub(s.at_all_started.ops))
            .sum();
        out.push(windowed(
            AggregateKind::SteadyState,
            steady_bytes,
            steady_ops,
            max_start,
            min_end,
        ));
    }
    let (window_start, window_end) = warp_window(spans);
    if window_end >= window_start + STEADY_MIN_WINDOW_NS && window_start > 0 {
        let in_window = |f: fn(&Progress) -> u64| -> u64 {
            active
                .iter()
                .map(|s| f(&s.at_window_end).saturating_sub(f(&s.at_window_start)))
                .sum()
        };
        out.push(windowed(
            AggregateKind::WarpWindow,
            in_window(|p| p.bytes),
            in_window(|p| p.ops),
            window_start,
            window_end,
        ));
    }
    out
}

/// Definitions that disagree: a warning that carries its figures, its text its `Display`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Disagreement {
    /// One definition is zero while another is not.
    Zero {
        zero: AggregateKind,
        other: AggregateKind,
    },
    /// The highest is more than the tolerance above the lowest (`spread`: 0.5 = 50%).
    Apart {
        spread: f64,
        highest: AggregateKind,
        lowest: AggregateKind,
    },
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Disagreement::Zero { zero, other } => write!(
                f,
                "aggregates disagree: {} is zero while {} is not",
                zero.label(),
                other.label()
            ),
            Disagreement::Apart {
                spread,
                highest,
                lowest,
            } => write!(
                f,
                "aggregates differ by {:.0}% ({} is highest, {} lowest): workers did not run evenly; \
                 quote the definition with the number",
                spread * 100.0,
                highest.label(),
                lowest.label()
            ),
        }
    }
}

/// A warning when the definitions disagree by more than `tolerance` (0.10 = 10%), naming the
/// highest and lowest.
pub fn disagreement(aggregates: &[Aggregate], tolerance: f64) -> Option<Disagreement> {
    let hi = aggregates
        .iter()
        .max_by(|a, b| a.bytes_per_s.total_cmp(&b.bytes_per_s))?;
    let lo = aggregates
        .iter()
        .min_by(|a, b| a.bytes_per_s.total_cmp(&b.bytes_per_s))?;
    if lo.bytes_per_s <= 0.0 {
        return (hi.bytes_per_s > 0.0).then_some(Disagreement::Zero {
            zero: lo.kind,
            other: hi.kind,
        });
    }
    let spread = hi.bytes_per_s / lo.bytes_per_s - 1.0;
    (spread > tolerance).then_some(Disagreement::Apart {
        spread,
        highest: hi.kind,
        lowest: lo.kind,
    })
}

#[cfg(test)]
mod tests;
