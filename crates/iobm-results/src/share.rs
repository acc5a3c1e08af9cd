//! Shares of one byte count in another, and the verdict a share of bytes from the storage
//! gives: what the verdict's rules and the warnings both state.

use crate::Verdict;

/// Shares at or above this say "uncached" (or "cached"), below it "partly cached".
pub const MOST: f64 = 90.0;

/// `part` as a percentage of `whole` (0 when `whole` is).
pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// The verdict of a phase whose bytes came this share (percent) from the storage.
pub(crate) fn by_share(share_from_storage: f64) -> Verdict {
    if share_from_storage >= MOST {
        Verdict::Uncached
    } else if share_from_storage <= 100.0 - MOST {
        Verdict::Cached
    } else {
        Verdict::PartlyCached
    }
}
