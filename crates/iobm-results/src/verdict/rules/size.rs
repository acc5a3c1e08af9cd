//! The data set against the memory that could hold it: the server's for an object phase,
//! this machine's page cache for a file read.

use crate::access::{AccessShare, Judged};
use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};
use iobm_stats::format_bytes;

/// An object phase's data set fits in the server's memory.
pub struct ServerFits;

/// A file read's data set is over twice the RAM: most of it cannot be in the page cache.
pub struct OverRam;

/// A file read's data set fits in the page cache, and nothing else tells.
pub struct FitsRam;

/// What the rules judge: the data set, or under a skewed `--access` its hot set.
fn judged_set(e: &Evidence) -> Judged {
    let settings = &e.phase.settings;
    AccessShare::judged(settings.access.as_ref(), settings.data_bytes)
}

impl Rule for ServerFits {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let set = judged_set(e);
        (e.class == Class::Object).then_some(())?;
        let (ram, source) =
            (e.machine.server_cache()).filter(|&(ram, _)| set.bytes > 0 && set.bytes < ram)?;
        judged(
            Verdict::PossiblyCached,
            format!(
                "{} fits in the server's memory ({}, {source})",
                set.describe(),
                format_bytes(ram)
            ),
        )
    }
}

impl Rule for OverRam {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let (set, ram) = (judged_set(e), e.machine.ram_bytes);
        (e.class == Class::Read && set.bytes >= 2 * ram).then_some(())?;
        Some(e.client_read(
            Verdict::Uncached,
            format!(
                "{} is over twice the RAM ({}): most of it cannot be in the page cache",
                set.describe(),
                format_bytes(ram)
            ),
        ))
    }
}

impl Rule for FitsRam {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let (set, ram) = (judged_set(e), e.machine.ram_bytes);
        (e.class == Class::Read).then_some(())?;
        Some(e.client_read(
            Verdict::PossiblyCached,
            format!(
                "{} fits in the page cache (RAM {}) and nothing tells where the bytes came from",
                set.describe(),
                format_bytes(ram)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::verdict::rules::tests::operation;
    use iobm_stats::names::OpName;

    #[test]
    fn server_fits_fires_when_the_server_can_hold_the_data_set() {
        let mut get = phase(OpName::Get, [MIB, MIB], [1; 2]);
        get.operations = vec![operation(&get, OpName::Get, 2 * MIB)];
        let stated = Machine {
            server_ram_bytes: Some(RAM),
            ..Machine::with_ram(RAM)
        };
        let v = ServerFits.judge(&Evidence::of(&get, &stated)).unwrap();
        assert_eq!(v.verdict, Verdict::PossiblyCached);
        assert!(ServerFits
            .judge(&Evidence::of(&get, &Machine::with_ram(RAM)))
            .is_none());
    }

    #[test]
    fn over_ram_fires_on_a_data_set_over_twice_the_ram() {
        let read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1; 2]);
        let small = Machine::with_ram(100 * MIB);
        let v = OverRam.judge(&Evidence::of(&read, &small)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached);
        let large = Machine::with_ram(RAM);
        assert!(OverRam.judge(&Evidence::of(&read, &large)).is_none());
    }

    #[test]
    fn fits_ram_fires_on_every_read_and_no_write() {
        let m = Machine::with_ram(RAM);
        let read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        let v = FitsRam.judge(&Evidence::of(&read, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::PossiblyCached);
        let write = phase(OpName::Write, [MIB, MIB], [1; 2]);
        assert!(FitsRam.judge(&Evidence::of(&write, &m)).is_none());
    }

    #[test]
    fn a_skewed_read_is_judged_by_its_hot_set() {
        use crate::access::AccessShare;
        use iobm_stats::access::AccessDist;
        // 200 MiB read, RAM 60 MiB: over twice the RAM, uncached...
        let mut read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1; 2]);
        let m = Machine::with_ram(60 * MIB);
        assert!(OverRam.judge(&Evidence::of(&read, &m)).is_some());
        // ...but with zipf 1.2, 80% of the reads on its hottest 10% (20 MiB), which fits.
        read.settings.access = Some(AccessShare::of(AccessDist::Zipf { theta: 1.2 }, 10_000));
        assert!(OverRam.judge(&Evidence::of(&read, &m)).is_none());
        let v = FitsRam.judge(&Evidence::of(&read, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::PossiblyCached);
        assert!(
            v.evidence
                .starts_with("the hot set (20.00 MiB, the hottest 10%"),
            "{}",
            v.evidence
        );
        // A hot set over twice the RAM is still uncached, and said so.
        let tiny = Machine::with_ram(8 * MIB);
        let v = OverRam.judge(&Evidence::of(&read, &tiny)).unwrap();
        assert!(v.evidence.starts_with("the hot set"), "{}", v.evidence);
    }
}
