//! Storage that is RAM: a file system in memory (tmpfs, ramfs), or block devices that are RAM
//! by their driver (zram, brd, pmem, null_blk), whatever lies between: every rate is a memory
//! rate, O_DIRECT or not.

use crate::storage;
use crate::verdict::rule::{judged, Evidence, Rule};
use crate::{CacheVerdict, Verdict};

pub struct Memory;

impl Rule for Memory {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        if e.machine.memory_fs {
            return judged(
                Verdict::Memory,
                "the storage is RAM (tmpfs or ramfs): every rate is a memory rate, O_DIRECT or not",
            );
        }
        let ram = storage::ram(&e.phase.cache.below)?;
        judged(
            Verdict::Memory,
            format!("the storage is RAM, by its driver ({ram}): every rate is a memory rate, O_DIRECT or not"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::storage::{Below, BottomIo};
    use crate::verdict::verdict;
    use crate::{DeviceIo, PhaseResult};
    use iobm_stats::names::OpName;

    #[test]
    fn fires_on_memory_only() {
        let p = phase(OpName::Read, [MIB, MIB], [1_000_000_000; 2]);
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

    /// A phase on a device at the bottom of a layer, RAM by its driver or not.
    fn on(devices: &[(&str, &str, Option<&str>)]) -> PhaseResult {
        let mut p = phase(OpName::Read, [MIB, MIB], [1_000_000_000; 2]);
        p.settings.direct = true;
        p.cache.device = Some(DeviceIo {
            device: "253:1".into(),
            read_bytes: 2 * MIB,
            written_bytes: 0,
        });
        p.cache.below = vec![Below {
            host: "h".into(),
            top: "253:1".into(),
            devices: (devices.iter())
                .map(|&(device, name, ram)| BottomIo {
                    device: device.into(),
                    name: name.into(),
                    read_bytes: 2 * MIB,
                    ram: ram.map(str::to_string),
                    ..BottomIo::default()
                })
                .collect(),
            ..Below::default()
        }];
        p
    }

    #[test]
    fn fires_on_a_device_that_is_ram_by_its_driver() {
        let m = Machine::with_ram(RAM);
        let zram = on(&[("253:1", "zram1", Some("zram, compressed RAM"))]);
        let v = Memory.judge(&Evidence::of(&zram, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Memory);
        assert_eq!(v.evidence, "the storage is RAM, by its driver (253:1 (zram1) is zram, compressed RAM): every rate is a memory rate, O_DIRECT or not");
        // The whole verdict too: the device delivered every byte, which is no evidence of a
        // disk.
        assert_eq!(verdict(&zram, &m).verdict, Verdict::Memory);
        // A device of storage of its own, or a mirror of RAM and a disk, is not memory.
        let disk = on(&[("253:1", "ram0", None)]);
        assert!(Memory.judge(&Evidence::of(&disk, &m)).is_none());
        assert_eq!(verdict(&disk, &m).verdict, Verdict::Uncached);
        let both = on(&[
            ("1:0", "ram0", Some("brd, a RAM disk")),
            ("8:0", "sda", None),
        ]);
        assert!(Memory.judge(&Evidence::of(&both, &m)).is_none());
    }
}
