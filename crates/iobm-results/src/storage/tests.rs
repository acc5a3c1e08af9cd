//! Unit tests of the storage evidence: layers below the file system, this run's block-layer bytes
//! and what they say about the cache.

use super::*;
use crate::checks::tests::{phase, MIB};
use crate::checks::{phase_warnings, Machine};
use crate::verdict::verdict;

const GIB: u64 = 1 << 30;

fn loop_over_file(resident: u64, dio: bool, bottom_read: u64, bottom_written: u64) -> Below {
    Below {
        host: "h".into(),
        top: "7:0".into(),
        steps: vec![format!(
            "7:0 (loop0): a loop device over /img/disk.ext4 (through this machine's page cache) on 254:1"
        )],
        devices: vec![BottomIo {
            device: "254:1".into(),
            name: "vda1".into(),
            read_bytes: bottom_read,
            written_bytes: bottom_written,
            virtual_disk: None,
            ram: None,
        }],
        backing_files: vec![BackingFile {
            loop_device: "7:0".into(),
            path: "/img/disk.ext4".into(),
            direct_io: dio,
            size_bytes: 2 * GIB,
            resident_before_bytes: Some(resident),
            resident_after_bytes: Some(resident),
            dirty_before_bytes: Some(0),
            dirty_after_bytes: Some(0),
        }],
        unfollowed: Vec::new(),
    }
}

fn top(read: u64, written: u64) -> Option<DeviceIo> {
    Some(DeviceIo {
        device: "7:0".into(),
        read_bytes: read,
        written_bytes: written,
    })
}

#[test]
fn a_loop_device_over_a_cached_file_is_judged_by_the_devices_under_it() {
    // 1 GiB read through a loop device whose backing file was in the page cache: the loop
    // device delivered all of it, the disk under it 3 MiB.
    let mut read = phase(OpName::Read, [GIB / 2, GIB / 2], [1_000_000_000; 2]);
    read.settings.direct = true;
    read.cache.device = top(GIB, 0);
    read.cache.own_io = Some(OwnIo {
        read_bytes: GIB,
        written_bytes: 0,
    });
    read.cache.below = vec![loop_over_file(2 * GIB, false, 3 * MIB, 0)];
    let v = verdict(&read, &Machine::with_ram(16 * GIB));
    assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    assert!(
        v.evidence.starts_with(
            "the block device 254:1 (vda1) below 7:0 delivered 3.00 MiB of the 1.00 GiB read (0%)"
        ),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence.contains("the backing file /img/disk.ext4"),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence.contains("2.00 GiB (100%) of the backing file"),
        "{}",
        v.evidence
    );
    // The same, its disk having delivered the gigabyte: uncached.
    read.cache.below = vec![loop_over_file(0, false, GIB, 0)];
    assert_eq!(
        verdict(&read, &Machine::with_ram(16 * GIB)).verdict,
        Verdict::Uncached
    );
    // A loop device with O_DIRECT on its backing file caches nothing: its own counters.
    read.cache.below = vec![loop_over_file(2 * GIB, true, 3 * MIB, 0)];
    assert_eq!(
        verdict(&read, &Machine::with_ram(16 * GIB)).verdict,
        Verdict::Uncached
    );
    // A --direct --fsync never write the host's page cache took: cached.
    let mut write = phase(OpName::Write, [GIB / 2, GIB / 2], [1_000_000_000; 2]);
    write.settings.direct = true;
    write.cache.device = top(0, GIB);
    write.cache.own_io = Some(OwnIo {
        read_bytes: 0,
        written_bytes: GIB,
    });
    write.cache.below = vec![loop_over_file(GIB, false, 0, 8 * MIB)];
    let v = verdict(&write, &Machine::with_ram(16 * GIB));
    assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    assert!(
        v.evidence
            .contains("took 8.00 MiB of the 1.00 GiB written during the phase (1%)"),
        "{}",
        v.evidence
    );
    // Other writers kept the disk under it busy, but the backing file's dirty pages grew by
    // what was written: it did not reach the disk.
    let mut busy = loop_over_file(GIB, false, 0, 2 * GIB);
    busy.backing_files[0].dirty_after_bytes = Some(GIB - MIB);
    write.cache.below = vec![busy];
    let v = verdict(&write, &Machine::with_ram(16 * GIB));
    assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    assert!(
        v.evidence.contains("took 1.00 MiB of the 1.00 GiB written"),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence
            .contains("1023.00 MiB more of the backing files was dirty"),
        "{}",
        v.evidence
    );
}

#[test]
fn a_backing_file_that_cannot_be_followed_or_is_memory_is_said() {
    let mut read = phase(OpName::Read, [GIB / 2, GIB / 2], [1_000_000_000; 2]);
    read.settings.direct = true;
    read.cache.device = top(GIB, 0);
    let mut below = loop_over_file(GIB, false, 0, 0);
    below.devices.clear();
    below.unfollowed = vec!["7:0 (loop0): its backing file /img/disk.ext4 is on overlay, whose device cannot be followed".into()];
    read.cache.below = vec![below.clone()];
    let v = verdict(&read, &Machine::with_ram(16 * GIB));
    assert_eq!(v.verdict, Verdict::PossiblyCached, "{}", v.evidence);
    assert!(v.evidence.contains("is on overlay"), "{}", v.evidence);
    below.unfollowed = vec!["7:0 (loop0): its backing file /img/disk.ext4 is in memory (tmpfs): every byte of it is a memory byte".into()];
    read.cache.below = vec![below];
    assert_eq!(
        verdict(&read, &Machine::with_ram(16 * GIB)).verdict,
        Verdict::Memory
    );
}

#[test]
fn a_virtual_disk_is_named_and_btrfs_is_judged_by_its_members() {
    let mut read = phase(OpName::Read, [GIB / 2, GIB / 2], [1_000_000_000; 2]);
    read.settings.direct = true;
    read.cache.below = vec![Below {
        host: "h".into(),
        top: "btrfs u".into(),
        steps: vec!["btrfs u: 2 member device(s) (254:0, 254:16)".into()],
        devices: ["254:0", "254:16"]
            .iter()
            .map(|d| BottomIo {
                device: d.to_string(),
                name: "vd".into(),
                read_bytes: GIB / 2,
                written_bytes: 0,
                virtual_disk: Some("virtio".into()),
                ram: None,
            })
            .collect(),
        ..Below::default()
    }];
    let v = verdict(&read, &Machine::with_ram(16 * GIB));
    assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
    assert!(
        v.evidence
            .contains("delivered 1.00 GiB of the 1.00 GiB read (100%)"),
        "{}",
        v.evidence
    );
    assert!(
        v.evidence.contains("254:0 (vd) is a virtual disk (virtio), 254:16 (vd) is a virtual disk (virtio): its host may cache"),
        "{}",
        v.evidence
    );
    read.cache.below[0].devices[1].read_bytes = 0;
    assert_eq!(
        verdict(&read, &Machine::with_ram(16 * GIB)).verdict,
        Verdict::PartlyCached
    );
}

#[test]
fn other_io_on_the_device_is_never_this_runs_evidence() {
    // 777.92 MiB read of a resident 64 MiB data set while two dd read the disk: the device
    // delivered 2.12 GiB, this run's reads had nothing fetched.
    let moved = 778 * MIB;
    let mut read = phase(OpName::Read, [moved / 2, moved / 2], [1_000_000_000; 2]);
    read.settings.data_bytes = 64 * MIB;
    read.cache.resident_before_bytes = Some(64 * MIB);
    read.cache.device = Some(DeviceIo {
        device: "254:0".into(),
        read_bytes: 2171 * MIB,
        written_bytes: 0,
    });
    read.cache.own_io = Some(OwnIo::default());
    let machine = Machine::with_ram(16 * GIB);
    let v = verdict(&read, &machine);
    assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    assert!(
        v.evidence.starts_with("this run's reads had 0 B fetched from storage for the 778.00 MiB read (0%; /proc/self/io), while other I/O ran on the device (254:0 delivered 2.12 GiB)"),
        "{}",
        v.evidence
    );
    assert!(!v.evidence.contains("279%") && !v.evidence.contains("delivered 2.12 GiB of"));
    let w = phase_warnings(&read, &machine);
    assert!(
        w.iter()
            .any(|w| w.starts_with("other I/O ran on the device: 254:0 delivered 2.12 GiB")),
        "{w:?}"
    );
    // This run's own bytes as the device's: uncached, no other I/O.
    read.cache.own_io = Some(OwnIo {
        read_bytes: 2171 * MIB,
        written_bytes: 0,
    });
    read.cache.resident_before_bytes = Some(0);
    let v = verdict(&read, &machine);
    assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
    // More than was read (readahead) is never printed as a share above 100%.
    assert!(
        v.evidence.contains("(more than all of it)"),
        "{}",
        v.evidence
    );
    assert_eq!(share_text(100 * MIB + 1, 100 * MIB), "100%");
    assert!(!phase_warnings(&read, &machine)
        .iter()
        .any(|w| w.contains("other I/O")));
    // Just within the margin (a quarter and 4 MiB) is this run's.
    read.cache.own_io = Some(OwnIo {
        read_bytes: 1000 * MIB,
        written_bytes: 0,
    });
    read.cache.device.as_mut().unwrap().read_bytes = 1254 * MIB;
    assert!(!phase_warnings(&read, &machine)
        .iter()
        .any(|w| w.contains("other I/O")));
    read.cache.device.as_mut().unwrap().read_bytes = 1255 * MIB;
    assert!(phase_warnings(&read, &machine)
        .iter()
        .any(|w| w.contains("other I/O")));
    // Without own bytes (documents from before), more than was read is flagged and set
    // aside: the verdict falls back to residency.
    read.cache.own_io = None;
    read.cache.resident_before_bytes = Some(64 * MIB);
    let v = verdict(&read, &machine);
    assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    assert!(
        v.evidence.contains("was in the page cache"),
        "{}",
        v.evidence
    );
    assert!(phase_warnings(&read, &machine)
        .iter()
        .any(|w| w.contains("more than the phase read")));
}

#[test]
fn writes_beyond_what_this_run_wrote_are_set_aside() {
    let mut write = phase(OpName::Write, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    write.settings.fsync = FsyncPolicy::End;
    write.cache.own_io = Some(OwnIo {
        read_bytes: 0,
        written_bytes: 100 * MIB,
    });
    write.cache.device = Some(DeviceIo {
        device: "8:0".into(),
        read_bytes: 0,
        written_bytes: 400 * MIB,
    });
    let machine = Machine::with_ram(16 * GIB);
    let v = verdict(&write, &machine);
    // The device's counters are set aside; the final fsync is the evidence left.
    assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
    assert!(v.evidence.contains("final fsync"), "{}", v.evidence);
    assert!(phase_warnings(&write, &machine)
        .iter()
        .any(|w| w.contains("more than this run wrote")));
    write.cache.device.as_mut().unwrap().written_bytes = 100 * MIB;
    let v = verdict(&write, &machine);
    assert!(
        v.evidence
            .starts_with("the block device 8:0 took 100.00 MiB"),
        "{}",
        v.evidence
    );
}
