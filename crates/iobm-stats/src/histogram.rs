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
    count: u64,
    min: u64,
    max: u64,
    sum: u128,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Histogram")
            .field("count", &self.count)
            .field("min", &self.min)
            .field("max", &self.max)
            .finish()
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; BUCKETS],
            count: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
        }
    }
}

fn bucket_of(value: u64) -> usize {
    if value < SUB {
        return value as usize;
    }
    let exponent = 63 - value.leading_zeros();
    let shift = exponent - SUB_BITS;
    let top = value >> shift; // in [SUB, 2*SUB)
    (SUB + shift as u64 * SUB + (top - SUB)) as usize
}

/// The smallest value that falls in `bucket`, and the bucket's width.
fn bucket_bounds(bucket: usize) -> (u64, u64) {
    let b = bucket as u64;
    if b < SUB {
        return (b, 1);
    }
    let shift = (b - SUB) / SUB;
    let top = SUB + (b - SUB) % SUB;
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
        self.count += 1;
        self.min = self.min.min(value);
        self.max = self.max.max(value);
        self.sum += value as u128;
    }

    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn min(&self) -> Option<u64> {
        (self.count > 0).then_some(self.min)
    }
    pub fn max(&self) -> Option<u64> {
        (self.count > 0).then_some(self.max)
    }
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value below which `pct` percent of observations fall: the highest value of the bucket
    /// holding that rank, never above the recorded maximum.
    pub fn percentile(&self, pct: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((pct / 100.0) * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (bucket, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (low, width) = bucket_bounds(bucket);
                return Some((low + width - 1).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// The sparse, serialisable form.
    pub fn to_data(&self) -> HistogramData {
        HistogramData {
            count: self.count,
            min_ns: self.min().unwrap_or(0),
            max_ns: self.max,
            sum_ns: self.sum.min(u64::MAX as u128) as u64,
            buckets: self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(b, &n)| [bucket_bounds(b).0, n])
                .collect(),
        }
    }

    /// Rebuilds a histogram from its serialised form (for merging saved runs and ranks).
    pub fn from_data(data: &HistogramData) -> Histogram {
        let mut h = Histogram::default();
        for &[low, n] in &data.buckets {
            h.counts[bucket_of(low)] += n;
        }
        h.count = data.count;
        h.min = if data.count > 0 {
            data.min_ns
        } else {
            u64::MAX
        };
        h.max = data.max_ns;
        h.sum = data.sum_ns as u128;
        h
    }
}

impl std::ops::AddAssign<&Histogram> for Histogram {
    fn add_assign(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.count += other.count;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum += other.sum;
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
    /// [v, v + 2^(floor(log2 v) - 7)).
    pub buckets: Vec<[u64; 2]>,
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
