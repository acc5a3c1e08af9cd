//! iobm-stats: the measuring vocabulary shared by every part of iobm: units that parse and
//! format themselves, a mergeable latency histogram, series over fixed intervals, and the aggregate bandwidth definitions.

pub mod access;
pub mod aggregate;
pub mod histogram;
pub mod names;
pub mod series;
pub mod sizes;
pub mod time;
pub mod units;

pub use aggregate::{
    aggregates, disagreement, fill_snapshots, progress_at, Aggregate, AggregateKind, Disagreement,
    Progress, SnapshotInstants, Trace, TraceBuilder, WorkerSpan, STEADY_MIN_WINDOW_NS,
    TRACE_INTERVAL_NS,
};
pub use histogram::{CoarseHistogram, Histogram, HistogramData};
pub use series::{Interval, Series, SeriesRecorder};
pub use units::{
    format_bytes, format_duration, parse_bytes, parse_duration, parse_rate, Rate, UnitError,
};
