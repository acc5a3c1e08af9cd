//! Storage that is RAM (tmpfs, ramfs): every rate is a memory rate, O_DIRECT or not.

use crate::verdict::rule::{judged, Evidence, Rule};
use crate::{CacheVerdict, Verdict};

pub struct Memory;

impl Rule for Memory {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        e.machine.memory_fs.then_some(())?;
        judged(
            Verdict::Memory,
            "the storage is RAM (tmpfs or ramfs): every rate is a memory rate, O_DIRECT or not",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;

    #[test]
    fn fires_on_memory_only() {
        let p = phase("read", [MIB, MIB], [1_000_000_000; 2]);
        let memory = Machine {
            memory_fs: true,
            ..Machine::with_ram(RAM)
        };
        let v = Memory.judge(&Evidence::of(&p, &memory)).unwrap();
        assert_eq!(v.verdict, Verdict::Memory);
        assert!(Memory
            .judge(&Evidence::of(&p, &Machine::with_ram(RAM)))
            .is_none());
    }
}
