//! A mergeable log-linear latency histogram: exact below 128 ns, then 128 sub-buckets per power
//! of two (relative error under 0.8%). Merging is addition, so workers, ranks and saved runs
//! combine in any order with the same result.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Sub-buckets per power of two, as a power of two itself.
const SUB_BITS: u32 = 7;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = (SUB + (64 - SUB_BITS as u64) * SUB) as usize;

/// Latency counts by value (nanoseconds). Record with [`Histogram::record`], combine with `+=`.
#[derive(Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: Vec<u64>,
    totals: Totals,
}

/// How many values were recorded, the smallest, the largest and their sum.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Totals {
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl Totals {
    const NONE: Totals = Totals {
        count: 0,
        min: u64::MAX,
        max: 0,
        sum: 0,
    };

    #[inline]
    fn record(&mut self, value: u64) {
        self.count += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value as u128;
    }

    fn add(&mut self, other: &Totals) {
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
    }

    /// Into `data`'s count, min, max and sum (min 0 when nothing was recorded).
    fn fill(&self, data: &mut HistogramData) {
        data.count = self.count;
        data.min_ns = if self.count > 0 { self.min } else { 0 };
        data.max_ns = self.max;
        data.sum_ns = self.sum.min(u64::MAX as u128) as u64;
    }
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.totals.count)
            .field("min", &self.totals.min)
            .field("max", &self.totals.max)
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            totals: Totals::NONE,
        }
    }
}

fn bucket_of(value: u64) -> usize {
    bucket_with(value, SUB_BITS)
}

fn bucket_bounds(bucket: usize) -> (u64, u64) {
    bounds_with(bucket, SUB_BITS)
}

/// The bucket of `value` with 2^`bits` sub-buckets per power of two.
#[inline]
fn bucket_with(value: u64, bits: u32) -> usize {
    let sub = 1u64 << bits;
    if value < sub {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros();
    let shift = exponent - bits;
    let top = value >> shift; // in [sub, 2*sub)
    (sub + shift as u64 * sub + (top - sub)) as usize
}

/// The smallest value that falls in `bucket` (of 2^`bits` sub-buckets per power of two), and
/// the bucket's width.
fn bounds_with(bucket: usize, bits: u32) -> (u64, u64) {
    let (b, sub) = (bucket as u64, 1u64 << bits);
    if b < sub {
        return (b, 1);
    }
    let shift = (b - sub) / sub;
    let top = sub + (b - sub) % sub;
    (top << shift, 1 << shift)
}

impl Histogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one observation, in nanoseconds.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_of(value)] += 1;
        self.totals.record(value);
    }

    pub fn count(&self) -> u64 {
        self.totals.count
    }
    pub fn min(&self) -> Option<u64> {
        (self.count() > 0).then_some(self.totals.min)
    }
    pub fn max(&self) -> Option<u64> {
        (self.count() > 0).then_some(self.totals.max)
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count() > 0).then(|| self.totals.sum as f64 / self.count() as f64)
    }

    /// The value below which `pct` percent of observations fall: the highest value of the bucket
    /// holding that rank, never above the recorded maximum.
    pub fn percentile(&self, pct: f64) -> Option<u64> {
        let Totals {
            count, min, max, ..
        } = self.totals;
        if count == 0 {
            return None;
        }
        let rank = ((pct / 100.0) * count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (low, width) = bucket_bounds(bucket);
                return Some((low + width - 1).clamp(min, max));
            }
        }
        Some(max)
    }

    /// The sparse, serialisable form.
    pub fn to_data(&self) -> HistogramData {
        let mut data = HistogramData::empty(SUB_BITS);
        self.totals.fill(&mut data);
        data.buckets = self
            .counts
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(b, &n)| [bucket_bounds(b).0, n])
            .collect();
        data
    }

    /// Rebuilds a histogram from its serialised form (for merging saved runs and ranks). The
    /// counts of a coarser histogram go to the top of their buckets, so its percentiles are
    /// upper bounds.
    pub fn from_data(data: &HistogramData) -> Histogram {
        let mut h = Histogram::default();
        let bits = data.sub_bits();
        for &[low, n] in &data.buckets {
            let (low, width) = bounds_with(bucket_with(low, bits), bits);
            h.counts[bucket_of(low.saturating_add(width - 1))] += n;
        }
        h.totals = Totals {
            count: data.count,
            min: if data.count > 0 {
                data.min_ns
            } else {
                u64::MAX
            },
            max: data.max_ns,
            sum: data.sum_ns as u128,
        };
        h
    }
}

impl std::ops::AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.totals.add(&other.totals);
    }
}

/// A latency histogram as stored in results: only non-empty buckets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HistogramData {
    /// Number of operations recorded.
    pub count: u64,
    /// Smallest latency recorded, in nanoseconds (0 when count is 0).
    pub min_ns: u64,
    /// Largest latency recorded, in nanoseconds.
    pub max_ns: u64,
    /// Sum of all latencies, in nanoseconds (mean = sum_ns / count).
    pub sum_ns: u64,
    /// Non-empty buckets as [lowest value in ns, count]. Buckets are exact below 128 ns; above,
    /// each power of two is split into 128 equal buckets, so a bucket starting at v spans
    /// [v, v + 2^(floor(log2 v) - 7)) (with `sub_bits` b: 2^b buckets per power of two, exact
    /// below 2^b).
    pub buckets: Vec<[u64; 2]>,
    /// Sub-buckets per power of two as a power of two, when not 7 (the per-interval
    /// histograms of a series: 4, so each bucket spans 1/16 of its power of two).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub_bits: Option<u32>,
}

impl HistogramData {
    /// A histogram of nothing, with 2^`bits` sub-buckets per power of two.
    pub fn empty(bits: u32) -> HistogramData {
        HistogramData {
            count: 0,
            min_ns: 0,
            max_ns: 0,
            sum_ns: 0,
            buckets: Vec::new(),
            sub_bits: (bits != SUB_BITS).then_some(bits),
        }
    }

    pub fn sub_bits(&self) -> u32 {
        self.sub_bits.unwrap_or(SUB_BITS)
    }

    /// As [`Histogram::percentile`] of [`Histogram::from_data`] of this, without building the
    /// full histogram (a series has one of these per worker and interval).
    pub fn percentile(&self, pct: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((pct / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let bits = self.sub_bits();
        let mut seen = 0;
        for &[low, n] in &self.buckets {
            seen += n;
            if seen >= rank {
                let (low, width) = bounds_with(bucket_with(low, bits), bits);
                return Some((low + width - 1).clamp(self.min_ns, self.max_ns));
            }
        }
        Some(self.max_ns)
    }

    /// Adds `other`, of the same buckets, to this one (a merge of the two sorted bucket lists).
    pub fn merge(&mut self, other: &HistogramData) {
        debug_assert_eq!(self.sub_bits(), other.sub_bits());
        if other.count == 0 {
            return;
        }
        self.min_ns = if self.count == 0 {
            other.min_ns
        } else {
            self.min_ns.min(other.min_ns)
        };
        self.count += other.count;
        self.max_ns = self.max_ns.max(other.max_ns);
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        let (ours, theirs) = (&self.buckets, &other.buckets);
        let mut merged = Vec::with_capacity(ours.len() + theirs.len());
        let (mut i, mut j) = (0, 0);
        while i < ours.len() || j < theirs.len() {
            match (ours.get(i), theirs.get(j)) {
                (Some(x), Some(y)) if x[0] == y[0] => {
                    merged.push([x[0], x[1] + y[1]]);
                    (i, j) = (i + 1, j + 1);
                }
                (Some(x), Some(y)) if x[0] > y[0] => {
                    merged.push(*y);
                    j += 1;
                }
                (Some(x), _) => {
                    merged.push(*x);
                    i += 1;
                }
                (None, Some(y)) => {
                    merged.push(*y);
                    j += 1;
                }
                (None, None) => unreachable!("one list has more"),
            }
        }
        self.buckets = merged;
    }
}

/// A histogram with 16 sub-buckets per power of two (error under 1/16), small enough to clear
/// once per interval: the open interval of a [`crate::SeriesRecorder`].
#[derive(Clone)]
pub struct CoarseHistogram {
    counts: [u64; CoarseHistogram::BUCKETS],
    totals: Totals,
}

impl std::fmt::Debug for CoarseHistogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CoarseHistogram({} recorded)", self.totals.count)
    }
}

impl Default for CoarseHistogram {
    fn default() -> Self {
        CoarseHistogram {
            counts: [0; CoarseHistogram::BUCKETS],
            totals: Totals::NONE,
        }
    }
}

impl CoarseHistogram {
    pub const SUB_BITS: u32 = 4;
    const BUCKETS: usize = ((1 << Self::SUB_BITS) * (65 - Self::SUB_BITS)) as usize;

    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_with(value, Self::SUB_BITS)] += 1;
        self.totals.record(value);
    }

    pub fn count(&self) -> u64 {
        self.totals.count
    }

    /// The sparse form of what was recorded, leaving this one empty.
    pub fn take(&mut self) -> HistogramData {
        let mut data = HistogramData::empty(Self::SUB_BITS);
        self.totals.fill(&mut data);
        for (b, n) in self.counts.iter_mut().enumerate() {
            if *n > 0 {
                data.buckets.push([bounds_with(b, Self::SUB_BITS).0, *n]);
                *n = 0;
            }
        }
        self.totals = Totals::NONE;
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift, so the tests need no random crate and repeat exactly.
    fn values(seed: u64, n: usize) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % (1 << (x % 40))
            })
            .collect()
    }

    #[test]
    fn buckets_round_trip_and_bound_error() {
        for v in values(7, 20_000)
            .into_iter()
            .chain([0, 1, 127, 128, 255, 256, u64::MAX])
        {
            let (low, width) = bucket_bounds(bucket_of(v));
            assert!(low <= v && v - low < width, "v={v} low={low} width={width}");
            assert!(width == 1 || (width as f64) / (low as f64) <= 1.0 / 128.0);
            assert_eq!(bucket_of(low), bucket_of(v));
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn percentiles_of_a_known_distribution() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p50 = h.percentile(50.0).unwrap();
        assert!((p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.01, "{p50}");
        let p99 = h.percentile(99.0).unwrap();
        assert!((p99 as f64 - 990_000.0).abs() / 990_000.0 < 0.01, "{p99}");
        assert_eq!(h.percentile(100.0), Some(1_000_000));
        assert_eq!(h.min(), Some(1000));
        assert_eq!(h.mean(), Some(500_500.0));
        assert_eq!(Histogram::new().percentile(50.0), None);
    }

    #[test]
    fn merging_in_any_order_gives_the_same_histogram() {
        let parts: Vec<Histogram> = (0..6)
            .map(|seed| {
                let mut h = Histogram::new();
                for v in values(seed + 1, 500 * (seed as usize + 1)) {
                    h.record(v);
                }
                h
            })
            .collect();
        let mut all = Histogram::new();
        for v in (0..6).flat_map(|seed| values(seed + 1, 500 * (seed as usize + 1))) {
            all.record(v);
        }
        for order in [[0, 1, 2, 3, 4, 5], [5, 4, 3, 2, 1, 0], [2, 5, 0, 3, 1, 4]] {
            let mut merged = Histogram::new();
            for i in order {
                merged += &parts[i];
            }
            assert_eq!(merged, all);
        }
    }

    #[test]
    fn percentiles_of_the_sparse_form_are_those_of_the_histogram() {
        let mut full = Histogram::new();
        let mut coarse = CoarseHistogram::default();
        for v in values(11, 5000) {
            full.record(v);
            coarse.record(v);
        }
        let coarse = coarse.take();
        for data in [full.to_data(), coarse] {
            let rebuilt = Histogram::from_data(&data);
            for pct in [1.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
                assert_eq!(data.percentile(pct), rebuilt.percentile(pct), "{pct}");
            }
        }
        assert_eq!(HistogramData::empty(4).percentile(50.0), None);
    }

    #[test]
    fn serialised_form_round_trips() {
        let mut h = Histogram::new();
        for v in values(3, 5000) {
            h.record(v);
        }
        let data = h.to_data();
        let json = serde_json::to_string(&data).unwrap();
        let back: HistogramData = serde_json::from_str(&json).unwrap();
        assert_eq!(Histogram::from_data(&back), h);
        let empty = Histogram::from_data(&Histogram::new().to_data());
        assert_eq!(empty, Histogram::new());
    }
}
