//! A file read without device counters, judged by the share of its data in the page cache
//! when it began.

use crate::share::{by_share, pct};
use crate::verdict::rule::{Class, Evidence, Rule};
use crate::CacheVerdict;
use iobm_stats::format_bytes;

pub struct Residency;

impl Rule for Residency {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Read && e.storage.device.is_none()).then_some(())?;
        let resident = e.phase.cache.resident_before_bytes?;
        let data = e.phase.settings.data_bytes;
        let share = pct(resident, data);
        Some(e.client_read(
            by_share(100.0 - share),
            format!(
                "{share:.0}% of the data ({} of {}) was in the page cache when the phase began (no device counters)",
                format_bytes(resident),
                format_bytes(data)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::Verdict;
    use iobm_stats::names::OpName;

    #[test]
    fn fires_when_residency_was_measured() {
        let m = Machine::with_ram(RAM);
        let mut read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(Residency.judge(&Evidence::of(&read, &m)).is_none());
        read.cache.resident_before_bytes = Some(2 * MIB);
        let v = Residency.judge(&Evidence::of(&read, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    }
}
