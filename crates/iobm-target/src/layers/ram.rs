//! Which block devices are RAM (zram, brd, pmem, null_blk), found from their drivers as sysfs
//! and `/proc/devices` name them, never from the device's own name: every byte such a device
//! moves is a memory byte, `O_DIRECT` or not.

use std::fs;
use std::path::Path;

/// A block device whose storage is this machine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ram {
    /// zram: compressed pages in RAM.
    Zram,
    /// brd: the RAM disk (`/dev/ramN`).
    Brd,
    /// Persistent memory (nd_pmem) or any DAX-capable disk: memory on the memory bus.
    Pmem,
    /// null_blk: no storage at all (or RAM, with `memory_backed`).
    NullBlk,
}

impl Ram {
    /// The driver and what it is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Ram::Zram => "zram, compressed RAM",
            Ram::Brd => "brd, a RAM disk",
            Ram::Pmem => "pmem, memory addressed as a disk (DAX)",
            Ram::NullBlk => "null_blk, a device of no storage",
        }
    }

    /// What the disk whose sysfs directory is `disk` (numbered `dev`, as `major:minor`) is, by
    /// its driver: the one its `device` is bound to (`device/driver`), a queue that maps its
    /// pages directly (`queue/dax`), or the one that registered its major number (`majors`,
    /// the text of `/proc/devices`). None: a device with storage of its own.
    pub fn of(disk: &Path, dev: &str, majors: Option<&str>) -> Option<Ram> {
        let bound = fs::read_link(disk.join("device/driver")).ok();
        let driver = bound
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        if driver.as_deref() == Some("nd_pmem") {
            return Some(Ram::Pmem);
        }
        let dax = fs::read_to_string(disk.join("queue/dax")).ok();
        if dax.as_deref().map(str::trim) == Some("1") {
            return Some(Ram::Pmem);
        }
        let major = dev.split(':').next()?;
        match block_driver(majors?, major)? {
            "zram" => Some(Ram::Zram),
            "ramdisk" => Some(Ram::Brd),
            "nullb" => Some(Ram::NullBlk),
            _ => None,
        }
    }
}

/// The driver that registered block major `major`, from the text of `/proc/devices` (its
/// "Block devices:" part only: character majors share the numbers).
fn block_driver<'a>(majors: &'a str, major: &str) -> Option<&'a str> {
    majors
        .lines()
        .skip_while(|l| l.trim() != "Block devices:")
        .skip(1)
        .find_map(|l| {
            let (number, name) = l.trim().split_once(' ')?;
            (number == major).then_some(name.trim())
        })
}
