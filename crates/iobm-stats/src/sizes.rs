//! Sizes drawn per object from a distribution: fixed, uniform, log-uniform (warp's random
//! sizes), lognormal, or weighted buckets (fio's `bssplit`). A size is a function of one
//! uniform 64-bit number, which the caller derives from the object's number, so every reader
//! of a data set knows each object's size without being told.

use crate::units::{format_bytes, parse_bytes};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The largest size a lognormal draw is cut to: S3's largest single PUT.
pub const LOGNORMAL_MAX: u64 = 5 << 30;

/// How the sizes of objects are drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", deny_unknown_fields)]
#[schemars(transform = describe_kind)]
pub enum SizeDist {
    /// Every object this size.
    Fixed {
        /// The size, bytes.
        bytes: u64,
    },
    /// Uniform over min..=max bytes.
    Uniform {
        /// The smallest size, bytes.
        min: u64,
        /// The largest size, bytes.
        max: u64,
    },
    /// Log-uniform over min..=max: as many objects between 4 and 8 KiB as between 4 and 8 MiB.
    Log2 {
        /// The smallest size, bytes.
        min: u64,
        /// The largest size, bytes.
        max: u64,
    },
    /// Lognormal: the logarithm of the size normal around ln(median) with deviation sigma, cut
    /// to six deviations either side (one draw in 500 million is cut) and to 1
    /// byte..[`LOGNORMAL_MAX`].
    Lognormal {
        /// The median size, bytes.
        median: u64,
        /// The deviation of the size's natural logarithm.
        sigma: f64,
    },
    /// Each size with its weight (of the weights' sum).
    Buckets {
        /// The sizes, bytes.
        sizes: Vec<u64>,
        /// Each size's weight, in the same order.
        weights: Vec<u32>,
    },
}

/// The schema's word for the tag each variant carries.
fn describe_kind(schema: &mut schemars::Schema) {
    let variants = schema.get_mut("oneOf").and_then(|v| v.as_array_mut());
    for variant in variants.into_iter().flatten() {
        if let Some(kind) = variant.pointer_mut("/properties/kind") {
            kind["description"] =
                "The distribution: fixed, uniform, log2, lognormal or buckets.".into();
        }
    }
}

/// splitmix64: a fast, well-mixed 64-bit hash (the engine's too, for offsets and data).
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Equality is total: a sigma is never NaN (`parse` takes 0 to 10 only).
impl Eq for SizeDist {}

/// A uniform number in [0, 1) from the 53 high bits of `u`.
fn unit(u: u64) -> f64 {
    (u >> 11) as f64 / (1u64 << 53) as f64
}

impl SizeDist {
    /// `8MiB`, `log2:4KiB..64MiB`, `lognormal:1MiB,0.5` or `4KiB:50,1MiB:40,64MiB:10`.
    pub fn parse(s: &str) -> Result<SizeDist, String> {
        let size = |s: &str| parse_bytes(s.trim()).map_err(|e| format!("{s:?}: {e}"));
        let positive = |s: &str| match size(s)? {
            0 => Err(format!("{s:?}: a size must be at least 1 byte")),
            n => Ok(n),
        };
        if let Some(range) = s.strip_prefix("log2:") {
            let (min, max) = range
                .split_once("..")
                .ok_or("log2: expected log2:MIN..MAX, e.g. log2:4KiB..64MiB")?;
            let (min, max) = (positive(min)?, positive(max)?);
            if min > max {
                return Err(format!("log2: MIN ({min}) is larger than MAX ({max})"));
            }
            return Ok(SizeDist::Log2 { min, max });
        }
        if let Some(args) = s.strip_prefix("lognormal:") {
            let (median, sigma) = args
                .split_once(',')
                .ok_or("lognormal: expected lognormal:MEDIAN,SIGMA, e.g. lognormal:1MiB,0.5")?;
            let sigma: f64 = (sigma.trim().parse().ok())
                .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s <= 10.0)
                .ok_or(format!(
                    "lognormal: SIGMA {sigma:?} is not a number from 0 to 10"
                ))?;
            let median = positive(median)?.min(LOGNORMAL_MAX);
            return Ok(SizeDist::Lognormal { median, sigma });
        }
        if s.contains(':') {
            let (mut sizes, mut weights) = (Vec::new(), Vec::new());
            for bucket in s.split(',') {
                let (b, w) = bucket.split_once(':').ok_or(format!(
                    "{bucket:?}: expected SIZE:WEIGHT, e.g. 4KiB:50,1MiB:50"
                ))?;
                sizes.push(positive(b)?);
                weights.push(
                    w.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("{bucket:?}: the weight is not a whole number"))?,
                );
            }
            if weights.iter().map(|&w| u64::from(w)).sum::<u64>() == 0 {
                return Err("the weights add up to 0".into());
            }
            return Ok(SizeDist::Buckets { sizes, weights });
        }
        Ok(SizeDist::Fixed { bytes: size(s)? })
    }

    /// The size drawn by the uniform 64-bit number `u`.
    pub fn draw(&self, u: u64) -> u64 {
        match self {
            SizeDist::Fixed { bytes } => *bytes,
            SizeDist::Uniform { min, max } if min >= max => *min,
            SizeDist::Uniform { min, max } => min + u % (max - min + 1),
            SizeDist::Log2 { min, max } => {
                let (lo, hi) = ((*min as f64).ln(), (*max as f64 + 1.0).ln());
                ((lo + unit(u) * (hi - lo)).exp() as u64).clamp(*min, *max)
            }
            SizeDist::Lognormal { median, sigma } => {
                // Box-Muller from the two halves of u.
                let u1 = ((u >> 32) as f64 + 0.5) / (1u64 << 32) as f64;
                let u2 = (u & 0xffff_ffff) as f64 / (1u64 << 32) as f64;
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let (low, high) = self.bounds();
                ((*median as f64 * (sigma * z).exp()).round() as u64).clamp(low, high)
            }
            SizeDist::Buckets { sizes, weights } => {
                let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
                let mut at = (unit(u) * total as f64) as u64;
                for (size, &w) in sizes.iter().zip(weights) {
                    if at < u64::from(w) {
                        return *size;
                    }
                    at -= u64::from(w);
                }
                *sizes.last().expect("buckets are never empty")
            }
        }
    }

    /// The size of object number `k` (every reader of a data set draws the same).
    pub fn of_object(&self, k: u64) -> u64 {
        self.draw(mix(k ^ 0x000b_1ec7))
    }

    /// The smallest and largest size it can draw.
    pub fn bounds(&self) -> (u64, u64) {
        match self {
            SizeDist::Fixed { bytes } => (*bytes, *bytes),
            SizeDist::Uniform { min, max } | SizeDist::Log2 { min, max } => (*min, *max),
            SizeDist::Lognormal { median, sigma } => {
                let at = |deviations: f64| (*median as f64 * (sigma * deviations).exp()).round();
                let cut = |x: f64| (x as u64).clamp(1, LOGNORMAL_MAX);
                (cut(at(-6.0)), cut(at(6.0)))
            }
            SizeDist::Buckets { sizes, .. } => (
                sizes.iter().copied().min().unwrap_or(0),
                sizes.iter().copied().max().unwrap_or(0),
            ),
        }
    }

    /// Whether it is one of the shapes a size range already says (fixed or uniform).
    pub fn is_range(&self) -> bool {
        matches!(self, SizeDist::Fixed { .. } | SizeDist::Uniform { .. })
    }

    /// For the workload line: "1.00 MiB", "4.00 KiB..1.00 MiB", "log2 4.00 KiB..64.00 MiB",
    /// "lognormal around 1.00 MiB (sigma 0.5)", "4.00 KiB 50%, 1.00 MiB 50%".
    pub fn describe(&self) -> String {
        match self {
            SizeDist::Fixed { bytes } => format_bytes(*bytes),
            SizeDist::Uniform { min, max } if min == max => format_bytes(*min),
            SizeDist::Uniform { min, max } => {
                format!("{}..{}", format_bytes(*min), format_bytes(*max))
            }
            SizeDist::Log2 { min, max } => {
                format!("log2 {}..{}", format_bytes(*min), format_bytes(*max))
            }
            SizeDist::Lognormal { median, sigma } => {
                format!("lognormal around {} (sigma {sigma})", format_bytes(*median))
            }
            SizeDist::Buckets { sizes, weights } => {
                let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
                let shares: Vec<String> = (sizes.iter().zip(weights))
                    .map(|(s, &w)| {
                        let pct = 100.0 * f64::from(w) / total as f64;
                        format!("{} {pct:.0}%", format_bytes(*s))
                    })
                    .collect();
                shares.join(", ")
            }
        }
    }
}

/// The sizes of `sizes` in powers of two: for each bucket [2^i, 2^(i+1)) that holds any, its
/// lower bound and the share of the sizes in it, in order ("the size histogram drawn").
pub fn log2_histogram(sizes: impl Iterator<Item = u64>) -> Vec<(u64, f64)> {
    let mut counts = [0u64; 65];
    let mut n = 0u64;
    for s in sizes {
        counts[64 - s.leading_zeros() as usize] += 1;
        n += 1;
    }
    (counts.iter().enumerate())
        .filter(|(_, &c)| c > 0)
        .map(|(i, &c)| {
            let low = if i == 0 { 0 } else { 1u64 << (i - 1) };
            (low, c as f64 / n as f64)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Draws of `dist` for numbers spread over the 64-bit range.
    fn draws(dist: &SizeDist, n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| dist.draw(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .collect()
    }

    #[test]
    fn each_form_parses_and_a_bad_one_names_what_is_wrong() {
        assert_eq!(
            SizeDist::parse("8MiB"),
            Ok(SizeDist::Fixed { bytes: 8 << 20 })
        );
        assert_eq!(
            SizeDist::parse("log2:4KiB..64MiB"),
            Ok(SizeDist::Log2 {
                min: 4 << 10,
                max: 64 << 20
            })
        );
        assert_eq!(
            SizeDist::parse("lognormal:1MiB,0.5"),
            Ok(SizeDist::Lognormal {
                median: 1 << 20,
                sigma: 0.5
            })
        );
        assert_eq!(
            SizeDist::parse("4KiB:50,1MiB:40,64MiB:10"),
            Ok(SizeDist::Buckets {
                sizes: vec![4 << 10, 1 << 20, 64 << 20],
                weights: vec![50, 40, 10]
            })
        );
        for (bad, says) in [
            ("log2:4KiB", "log2:MIN..MAX"),
            ("log2:8KiB..4KiB", "larger than MAX"),
            ("log2:0..4KiB", "at least 1 byte"),
            ("lognormal:1MiB", "MEDIAN,SIGMA"),
            ("lognormal:1MiB,-1", "SIGMA"),
            ("4KiB:50,1MiB:x", "weight"),
            ("4KiB:0", "add up to 0"),
            ("8XB", "8XB"),
        ] {
            let err = SizeDist::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn log2_puts_as_many_sizes_in_each_doubling() {
        let dist = SizeDist::Log2 {
            min: 4 << 10,
            max: (64 << 20) - 1,
        };
        let sizes = draws(&dist, 140_000);
        assert!(sizes.iter().all(|&s| (4 << 10..64 << 20).contains(&s)));
        // 14 doublings from 4 KiB to 64 MiB: a fourteenth each, within 5% of it.
        let histogram = log2_histogram(sizes.into_iter());
        assert_eq!(histogram.len(), 14, "{histogram:?}");
        assert_eq!(histogram[0].0, 4 << 10);
        for (low, share) in histogram {
            assert!((share - 1.0 / 14.0).abs() < 0.05 / 14.0, "{low}: {share}");
        }
    }

    #[test]
    fn lognormal_has_its_median_and_its_spread() {
        let dist = SizeDist::Lognormal {
            median: 1 << 20,
            sigma: 0.5,
        };
        let mut sizes = draws(&dist, 100_001);
        sizes.sort_unstable();
        let median = sizes[50_000] as f64 / (1 << 20) as f64;
        assert!((median - 1.0).abs() < 0.02, "{median}");
        // One sigma above: the 84.13th percentile at e^0.5 = 1.6487 MiB.
        let above = sizes[84_134] as f64 / (1 << 20) as f64;
        assert!((above - 1.6487).abs() < 0.03, "{above}");
        // Cut at six deviations: e^3 = 20.09 times the median, and its inverse.
        assert_eq!(dist.bounds(), (52_206, 21_061_212));
        assert!(sizes[0] >= 52_206 && sizes[100_000] <= 21_061_212);
    }

    #[test]
    fn buckets_keep_their_weights_and_uniform_its_old_draws() {
        let dist = SizeDist::parse("4KiB:50,1MiB:40,64MiB:10").unwrap();
        let sizes = draws(&dist, 100_000);
        let share = |s: u64| sizes.iter().filter(|&&x| x == s).count() as f64 / 1e5;
        assert!((share(4 << 10) - 0.5).abs() < 0.01);
        assert!((share(1 << 20) - 0.4).abs() < 0.01);
        assert!((share(64 << 20) - 0.1).abs() < 0.01);
        assert_eq!(dist.bounds(), (4 << 10, 64 << 20));
        assert_eq!(dist.describe(), "4.00 KiB 50%, 1.00 MiB 40%, 64.00 MiB 10%");
        // Uniform draws are what kept data sets were written with: min + u mod (max - min + 1).
        let uniform = SizeDist::Uniform { min: 10, max: 19 };
        assert_eq!(uniform.draw(123), 10 + 123 % 10);
        assert_eq!(SizeDist::Uniform { min: 7, max: 7 }.draw(5), 7);
    }
}
