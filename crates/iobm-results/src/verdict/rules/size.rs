//! The data set against the memory that could hold it: the server's for an object phase,
//! this machine's page cache for a file read.

use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};
use iobm_stats::format_bytes;

/// An object phase's data set fits in the server's memory.
pub struct ServerFits;

/// A file read's data set is over twice the RAM: most of it cannot be in the page cache.
pub struct OverRam;

/// A file read's data set fits in the page cache, and nothing else tells.
pub struct FitsRam;

impl Rule for ServerFits {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let data = e.phase.settings.data_bytes;
        (e.class == Class::Object).then_some(())?;
        let (ram, source) =
            (e.machine.server_cache()).filter(|&(ram, _)| data > 0 && data < ram)?;
        judged(
            Verdict::PossiblyCached,
            format!(
                "the data set ({}) fits in the server's memory ({}, {source})",
                format_bytes(data),
                format_bytes(ram)
            ),
        )
    }
}

impl Rule for OverRam {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let (data, ram) = (e.phase.settings.data_bytes, e.machine.ram_bytes);
        (e.class == Class::Read && data >= 2 * ram).then_some(())?;
        Some(e.client_read(
            Verdict::Uncached,
            format!(
                "the data set ({}) is over twice the RAM ({}): most of it cannot be in the page cache",
                format_bytes(data),
                format_bytes(ram)
            ),
        ))
    }
}

impl Rule for FitsRam {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let (data, ram) = (e.phase.settings.data_bytes, e.machine.ram_bytes);
        (e.class == Class::Read).then_some(())?;
        Some(e.client_read(
            Verdict::PossiblyCached,
            format!(
                "the data set ({}) fits in the page cache (RAM {}) and nothing tells where the bytes came from",
                format_bytes(data),
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
}
