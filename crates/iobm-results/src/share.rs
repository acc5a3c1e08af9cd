//! Shares of one byte count in another, and the verdict a share of bytes from the storage
//! gives: what the verdict's rules and the warnings both state. Also the one rule for a counter
//! of every process (a block device's, a server's devices', a gateway's storage): beyond what
//! this run can explain by more than its [`Margin`] the rest is other I/O, never a share above
//! 100%.

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

/// How far a counter of every process may go beyond the bytes this run can explain before the
/// rest is other I/O: a share of those bytes and a few MiB more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Margin {
    share: f64,
    bytes: u64,
}

impl Margin {
    /// This client's block device beside this run's own bytes (or what the phase moved), and
    /// its interfaces beside the bytes of the phase: readahead, a journal, metadata and
    /// protocol headers take up to a quarter and 4 MiB more.
    pub const CLIENT: Margin = Margin {
        share: 0.25,
        bytes: 4 << 20,
    };
    /// A server's devices (node_exporter's) beside what it served or took for the phase, a
    /// gateway's storage beside its own counters: whole objects have no readahead past their
    /// end, so only metadata and a journal, a tenth and 4 MiB more.
    pub const SERVER: Margin = Margin {
        share: 0.10,
        bytes: 4 << 20,
    };

    /// `counted` (every process's) as this run's share of `explained`, the bytes this run
    /// can explain, at most 100% (a journal's or readahead's few blocks more are all of it);
    /// None beyond the margin: other I/O moved the rest, and this run's share cannot be told.
    pub fn share(self, counted: u64, explained: u64) -> Option<f64> {
        let limit = explained + self.bytes + (explained as f64 * self.share) as u64;
        (counted <= limit).then(|| pct(counted.min(explained), explained))
    }

    /// The share for a line of evidence: a percentage up to 100%, or "more than all of it".
    pub fn share_text(self, counted: u64, explained: u64) -> String {
        self.share(counted, explained)
            .map_or("more than all of it".to_string(), |s| format!("{s:.0}%"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counter_beyond_the_margin_is_other_io_and_no_share_is_above_100_percent() {
        const MIB: u64 = 1 << 20;
        // The client: a quarter and 4 MiB.
        assert_eq!(Margin::CLIENT.share(1254 * MIB, 1000 * MIB), Some(100.0));
        assert_eq!(Margin::CLIENT.share(1255 * MIB, 1000 * MIB), None);
        assert_eq!(Margin::CLIENT.share(500 * MIB, 1000 * MIB), Some(50.0));
        // A server: a tenth and 4 MiB (246.57 MiB for 200 MiB served is other I/O).
        assert_eq!(Margin::SERVER.share(224 * MIB, 200 * MIB), Some(100.0));
        assert_eq!(Margin::SERVER.share(225 * MIB, 200 * MIB), None);
        assert_eq!(Margin::SERVER.share(4 * MIB, 0), Some(0.0));
        assert_eq!(
            Margin::SERVER.share_text(246 * MIB, 200 * MIB),
            "more than all of it"
        );
        assert_eq!(Margin::SERVER.share_text(201 * MIB, 200 * MIB), "100%");
    }
}
