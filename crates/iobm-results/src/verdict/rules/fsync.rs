//! Writes without device counters, judged by the flush policy: an fsync inside the time makes
//! them the storage's; without one they may still be in the page cache.

use crate::verdict::rule::{Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};
use iobm_stats::names::FsyncPolicy;

/// `--fsync each` or `--fsync end`: the flushes are inside the time.
pub struct Fsync;

/// Writes neither flushed nor O_DIRECT.
pub struct Unflushed;

impl Rule for Fsync {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Write && e.storage.device.is_none()).then_some(())?;
        let evidence = match e.phase.settings.fsync {
            FsyncPolicy::Each => "every write was followed by fsync inside its time (no device counters to confirm)",
            FsyncPolicy::End => "each worker's final fsync is inside its time and the makespan (no device counters to confirm)",
            FsyncPolicy::Never => return None,
        };
        Some(e.below(Verdict::Uncached, evidence.into()))
    }
}

impl Rule for Unflushed {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Write).then_some(())?;
        Some(e.below(
            Verdict::PossiblyCached,
            "without fsync or O_DIRECT the written data may still be in the page cache when the phase ends (no device counters)".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use iobm_stats::names::OpName;

    #[test]
    fn fsync_fires_on_flushed_writes() {
        let m = Machine::with_ram(RAM);
        let mut write = phase(OpName::Write, [MIB, MIB], [1; 2]);
        assert!(Fsync.judge(&Evidence::of(&write, &m)).is_none());
        write.settings.fsync = FsyncPolicy::End;
        let v = Fsync.judge(&Evidence::of(&write, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached);
    }

    #[test]
    fn unflushed_fires_on_every_write_and_no_read() {
        let m = Machine::with_ram(RAM);
        let write = phase(OpName::Write, [MIB, MIB], [1; 2]);
        let v = Unflushed.judge(&Evidence::of(&write, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::PossiblyCached);
        let read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(Unflushed.judge(&Evidence::of(&read, &m)).is_none());
    }
}
