//! Amounts per fixed interval of a phase (bytes, operations, errors and a coarse latency
//! histogram per interval), recorded as operations end and merged by addition.

use crate::histogram::{CoarseHistogram, HistogramData};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Amounts per fixed interval since the phase began.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Series {
    /// Interval length in ns (--interval); entry k covers operations that ended in [k, k+1)
    /// intervals after the phase's start_ns.
    pub interval_ns: u64,
    /// Bytes completed in each interval.
    pub bytes: Vec<u64>,
    /// Operations completed in each interval.
    pub ops: Vec<u64>,
    /// Operations that failed in each interval (empty in documents from before: none counted).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<u64>,
    /// Latency of the operations completed in each interval, with 16 sub-buckets per power of
    /// two (`sub_bits` 4); count, min, max and sum are exact. Mergeable across workers, ranks
    /// and intervals, so percentiles over any window can be recomputed. Empty in documents
    /// from before.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency: Vec<HistogramData>,
}

impl Series {
    pub fn new(interval: Duration) -> Series {
        Series {
            interval_ns: (interval.as_nanos() as u64).max(1),
            bytes: Vec::new(),
            ops: Vec::new(),
            errors: Vec::new(),
            latency: Vec::new(),
        }
    }

    /// Adds `other` (of the same interval) interval by interval.
    pub fn merge(&mut self, other: &Series) {
        self.merge_counts(other);
        if self.latency.len() < other.latency.len() {
            let empty = HistogramData::empty(other.latency[0].sub_bits());
            self.latency.resize(other.latency.len(), empty);
        }
        for (a, b) in self.latency.iter_mut().zip(&other.latency) {
            a.merge(b);
        }
    }

    /// Adds `other`'s bytes, operations and errors, not its latency.
    pub fn merge_counts(&mut self, other: &Series) {
        add(&mut self.bytes, &other.bytes);
        add(&mut self.ops, &other.ops);
        add(&mut self.errors, &other.errors);
    }

    /// The bytes, operations and errors alone.
    pub fn counts(&self) -> Series {
        Series {
            interval_ns: self.interval_ns,
            bytes: self.bytes.clone(),
            ops: self.ops.clone(),
            errors: self.errors.clone(),
            latency: Vec::new(),
        }
    }
}

fn add(into: &mut Vec<u64>, other: &[u64]) {
    if into.len() < other.len() {
        into.resize(other.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(other) {
        *a += b;
    }
}

fn add_at(series: &mut Vec<u64>, at: usize, n: u64) {
    if at >= series.len() {
        series.resize(at + 1, 0);
    }
    series[at] += n;
}

/// One interval's amounts: what a series holds at one index.
#[derive(Debug, Clone, PartialEq)]
pub struct Interval {
    pub bytes: u64,
    pub ops: u64,
    pub errors: u64,
    /// The coarse histogram of the interval's latencies (empty when none ended in it).
    pub latency: HistogramData,
}

impl Default for Interval {
    fn default() -> Self {
        Interval {
            bytes: 0,
            ops: 0,
            errors: 0,
            latency: HistogramData::empty(CoarseHistogram::SUB_BITS),
        }
    }
}

impl Interval {
    /// Adds `other`'s amounts and latencies.
    pub fn add(&mut self, other: &Interval) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        self.errors += other.errors;
        self.latency.merge(&other.latency);
    }
}

impl Series {
    /// The amounts of interval `k` (zero past the end).
    pub fn interval(&self, k: usize) -> Interval {
        let at = |v: &[u64]| v.get(k).copied().unwrap_or(0);
        Interval {
            bytes: at(&self.bytes),
            ops: at(&self.ops),
            errors: at(&self.errors),
            latency: (self.latency.get(k).cloned())
                .unwrap_or_else(|| HistogramData::empty(CoarseHistogram::SUB_BITS)),
        }
    }

    /// How many intervals hold something.
    pub fn len(&self) -> usize {
        (self.bytes.len().max(self.ops.len()))
            .max(self.errors.len())
            .max(self.latency.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Builds a [`Series`] as operations end, without allocating except when an interval closes.
/// Intervals before the open one never change again: an operation that ends in one of them (a
/// queued one may) counts in the open one, so what a reader took of them while the phase ran
/// ([`SeriesRecorder::closed`]) is what the series holds at its end.
#[derive(Debug, Clone)]
pub struct SeriesRecorder {
    series: Series,
    open: CoarseHistogram,
    open_at: usize,
}

impl SeriesRecorder {
    pub fn new(interval: Duration) -> SeriesRecorder {
        SeriesRecorder {
            series: Series::new(interval),
            open: CoarseHistogram::default(),
            open_at: 0,
        }
    }

    fn interval_of(&self, since_start: Duration) -> usize {
        (since_start.as_nanos() / self.series.interval_ns as u128) as usize
    }

    /// Closes the open interval's histogram when `at` is later (an operation that ends in an
    /// interval already closed, as a queued one may, counts in the open one).
    fn roll_to(&mut self, at: usize) -> usize {
        if at > self.open_at {
            self.close_open();
            self.open_at = at;
        }
        self.open_at
    }

    fn close_open(&mut self) {
        if self.open.count() > 0 {
            let latency = &mut self.series.latency;
            latency.resize(
                self.open_at,
                HistogramData::empty(CoarseHistogram::SUB_BITS),
            );
            latency.push(self.open.take());
        }
    }

    /// An operation that ended `since_start` after the phase began, moved `bytes` and took
    /// `latency_ns`; returns the interval it counts in.
    #[inline]
    pub fn record(&mut self, since_start: Duration, bytes: u64, latency_ns: u64) -> usize {
        let at = self.interval_of(since_start);
        self.record_at(at, bytes, latency_ns)
    }

    /// An operation counted in interval `at` (or the open one, when later).
    #[inline]
    pub fn record_at(&mut self, at: usize, bytes: u64, latency_ns: u64) -> usize {
        let at = self.roll_to(at);
        add_at(&mut self.series.bytes, at, bytes);
        add_at(&mut self.series.ops, at, 1);
        self.open.record(latency_ns);
        at
    }

    /// An operation that failed `since_start` after the phase began; returns the interval it
    /// counts in.
    pub fn error(&mut self, since_start: Duration) -> usize {
        let at = self.interval_of(since_start);
        self.error_at(at)
    }

    /// A failed operation counted in interval `at` (or the open one, when later).
    pub fn error_at(&mut self, at: usize) -> usize {
        let at = at.max(self.open_at);
        add_at(&mut self.series.errors, at, 1);
        at
    }

    /// Closes every interval before `at`: what [`SeriesRecorder::interval`] gives of them is
    /// final.
    pub fn close_before(&mut self, at: usize) {
        self.roll_to(at);
    }

    /// The intervals before this one are closed.
    pub fn closed(&self) -> usize {
        self.open_at
    }

    /// Closes the open interval too (nothing is recorded after): every interval is final.
    pub fn close(&mut self) {
        self.close_open();
    }

    /// The amounts of interval `k`, which is final once closed.
    pub fn interval(&self, k: usize) -> Interval {
        self.series.interval(k)
    }

    /// How many intervals hold something.
    pub fn len(&self) -> usize {
        self.series.len()
    }

    pub fn is_empty(&self) -> bool {
        self.series.is_empty()
    }

    pub fn finish(mut self) -> Series {
        self.close_open();
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Histogram;

    #[test]
    fn intervals_hold_what_ended_in_them() {
        let mut r = SeriesRecorder::new(Duration::from_millis(100));
        r.record(Duration::from_millis(5), 10, 1_000);
        r.record(Duration::from_millis(99), 10, 3_000);
        r.error(Duration::from_millis(120));
        r.record(Duration::from_millis(350), 20, 2_000_000);
        let s = r.finish();
        assert_eq!(s.interval_ns, 100_000_000);
        assert_eq!(s.bytes, [20, 0, 0, 20]);
        assert_eq!(s.ops, [2, 0, 0, 1]);
        assert_eq!(s.errors, [0, 1]);
        assert_eq!(s.latency.len(), 4);
        assert_eq!((s.latency[0].count, s.latency[0].max_ns), (2, 3_000));
        assert_eq!(s.latency[1].count + s.latency[2].count, 0);
        assert_eq!(s.latency[3].min_ns, 2_000_000);
        let mut whole = s.latency[0].clone();
        s.latency[1..].iter().for_each(|h| whole.merge(h));
        assert_eq!((whole.count, whole.sum_ns), (3, 2_004_000));
    }

    #[test]
    fn an_operation_that_ends_in_a_closed_interval_counts_in_the_open_one() {
        let mut r = SeriesRecorder::new(Duration::from_millis(100));
        assert_eq!(r.record(Duration::from_millis(250), 10, 1_000), 2);
        let closed = (0..r.closed()).map(|k| r.interval(k)).collect::<Vec<_>>();
        // Late (as a queued completion may be): into the open interval, not interval 0.
        assert_eq!(r.record(Duration::from_millis(50), 5, 2_000), 2);
        assert_eq!(r.error(Duration::from_millis(10)), 2);
        assert_eq!(r.closed(), 2);
        r.close();
        assert_eq!((0..2).map(|k| r.interval(k)).collect::<Vec<_>>(), closed);
        let last = r.interval(2);
        assert_eq!((last.bytes, last.ops, last.errors), (15, 2, 1));
        assert_eq!(last.latency.count, 2);
        let s = r.finish();
        assert_eq!(
            (s.bytes, s.ops, s.errors),
            (vec![0, 0, 15], vec![0, 0, 2], vec![0, 0, 1])
        );
    }

    #[test]
    fn merged_series_equal_one_recorded_from_all_operations() {
        let interval = Duration::from_millis(10);
        let (mut a, mut b, mut all) = (
            SeriesRecorder::new(interval),
            SeriesRecorder::new(interval),
            SeriesRecorder::new(interval),
        );
        for i in 0..2_000u64 {
            let at = Duration::from_micros(i * 37);
            let latency = (i * 7919) % 5_000_000 + 100;
            let part = if i % 3 == 0 { &mut a } else { &mut b };
            part.record(at, i, latency);
            all.record(at, i, latency);
        }
        let mut merged = a.finish();
        merged.merge(&b.finish());
        let all = all.finish();
        assert_eq!(merged.bytes, all.bytes);
        assert_eq!(merged.ops, all.ops);
        assert_eq!(merged.latency, all.latency);
        // The coarse buckets give percentiles no lower than the exact ones, within 1/16.
        let mut exact = Histogram::new();
        (0..2_000u64).for_each(|i| exact.record((i * 7919) % 5_000_000 + 100));
        let mut merged = all.latency[0].clone();
        all.latency[1..].iter().for_each(|h| merged.merge(h));
        let coarse = Histogram::from_data(&merged);
        for pct in [50.0, 90.0, 99.0] {
            let (e, c) = (
                exact.percentile(pct).unwrap(),
                coarse.percentile(pct).unwrap(),
            );
            assert!(
                c >= e && (c - e) as f64 <= e as f64 / 16.0 + 1.0,
                "{pct}: {e} {c}"
            );
        }
        assert_eq!(coarse.max(), exact.max());
    }
}
