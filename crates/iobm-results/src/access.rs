//! How a skewed `--access` spread a phase's operations over its data set: the share on its
//! hottest 1% and 10%, and the hot set the cache verdict judges in place of the whole.

use iobm_stats::access::AccessDist;
use iobm_stats::format_bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The share of operations a hot set must take for the cache verdict to judge it alone.
pub const HOT_SHARE: f64 = 0.8;

/// A skewed phase's picks over its data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessShare {
    /// The distribution the blocks or objects were picked by.
    pub dist: AccessDist,
    /// The blocks (of each worker's region) or objects picked among.
    pub picked_among: u64,
    /// The share of operations on the hottest 1% of them, by the distribution's definition
    /// (the picks follow it: a goodness-of-fit test checks them).
    pub hottest_1pct: f64,
    /// The share of operations on the hottest 10% of them.
    pub hottest_10pct: f64,
}

/// The part of the data set the cache verdict judges.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub bytes: u64,
    /// The part of the data set (1.0: the whole) and the share of the operations on it.
    pub part: f64,
    pub share: f64,
}

impl Judged {
    /// "the data set (10.0 GiB)", or "the hot set (1.00 GiB, the hottest 10% of the data set,
    /// 91% of the operations)".
    pub fn describe(&self) -> String {
        if self.part >= 1.0 {
            return format!("the data set ({})", format_bytes(self.bytes));
        }
        format!(
            "the hot set ({}, the hottest {:.0}% of the data set, {:.0}% of the operations)",
            format_bytes(self.bytes),
            100.0 * self.part,
            100.0 * self.share
        )
    }
}

impl AccessShare {
    /// The shares of `dist` picking among `n`.
    pub fn of(dist: AccessDist, n: u64) -> AccessShare {
        AccessShare {
            dist,
            picked_among: n,
            hottest_1pct: dist.hot_share(n, 0.01),
            hottest_10pct: dist.hot_share(n, 0.1),
        }
    }

    /// What the cache verdict judges of a data set of `data_bytes`: the smallest of the
    /// hottest 1% and 10% that takes [`HOT_SHARE`] of the operations, else the whole.
    pub fn judged(share: Option<&AccessShare>, data_bytes: u64) -> Judged {
        let whole = Judged {
            bytes: data_bytes,
            part: 1.0,
            share: 1.0,
        };
        let Some(s) = share else { return whole };
        [(0.01, s.hottest_1pct), (0.1, s.hottest_10pct)]
            .into_iter()
            .find(|&(_, share)| share >= HOT_SHARE)
            .map_or(whole, |(part, share)| Judged {
                bytes: (data_bytes as f64 * part).ceil() as u64,
                part,
                share,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hot_set_is_the_smallest_part_that_takes_most_operations() {
        let gib = 1u64 << 30;
        let zipf = AccessShare::of(AccessDist::Zipf { theta: 1.2 }, 10_000);
        let judged = AccessShare::judged(Some(&zipf), 100 * gib);
        assert!(
            zipf.hottest_1pct < HOT_SHARE && zipf.hottest_10pct >= HOT_SHARE,
            "{zipf:?}"
        );
        assert_eq!((judged.bytes, judged.part), (10 * gib, 0.1));
        assert!(judged
            .describe()
            .starts_with("the hot set (10.00 GiB, the hottest 10%"));
        let steep = AccessShare::of(AccessDist::Zipf { theta: 2.0 }, 10_000);
        assert_eq!(AccessShare::judged(Some(&steep), 100 * gib).part, 0.01);
        let flat = AccessShare::of(AccessDist::Uniform, 10_000);
        let whole = AccessShare::judged(Some(&flat), 100 * gib);
        assert_eq!((whole.bytes, whole.part), (100 * gib, 1.0));
        assert_eq!(whole.describe(), "the data set (100.00 GiB)");
        assert_eq!(AccessShare::judged(None, gib).bytes, gib);
    }
}
