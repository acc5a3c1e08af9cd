//! Unit tests of following a file system's layers down a fake sysfs, and of this process's I/O from
//! /proc.

use super::*;
use std::os::unix::fs::symlink;

/// A fake sysfs: a device directory under `devices/...` for each name, linked from
/// `dev/block/M:m` and `class/block/NAME`; beside it a fake `/proc/devices` at `proc/devices`.
struct Sys(tempfile::TempDir);

/// The character majors of a fake `/proc/devices`: their numbers are not block majors.
const CHARACTER_MAJORS: &str = "Character devices:\n  1 mem\n  4 tty\n252 zram\n";

impl Sys {
    fn new() -> Sys {
        let s = Sys(tempfile::tempdir().unwrap());
        fs::create_dir_all(s.0.path().join("dev/block")).unwrap();
        fs::create_dir_all(s.0.path().join("class/block")).unwrap();
        fs::create_dir_all(s.0.path().join("proc")).unwrap();
        s.block_majors("  7 loop\n  8 sd\n  9 md\n253 device-mapper\n254 virtblk\n259 blkext");
        s
    }

    /// Writes the fake `/proc/devices` with these lines of block majors.
    fn block_majors(&self, lines: &str) {
        fs::write(
            self.0.path().join("proc/devices"),
            format!("{CHARACTER_MAJORS}\nBlock devices:\n{lines}\n"),
        )
        .unwrap();
    }

    /// Adds a device at `rel` (under `devices/`) numbered `dev`, with sectors read and
    /// written.
    fn device(&self, rel: &str, dev: &str, sectors: (u64, u64)) -> PathBuf {
        let dir = self.0.path().join("devices").join(rel);
        fs::create_dir_all(&dir).unwrap();
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
        fs::write(dir.join("uevent"), format!("MAJOR=0\nDEVNAME={name}\n")).unwrap();
        fs::write(
            dir.join("stat"),
            format!("1 0 {} 0 1 0 {} 0 0 0 0\n", sectors.0, sectors.1),
        )
        .unwrap();
        symlink(&dir, self.0.path().join("dev/block").join(dev)).unwrap();
        symlink(&dir, self.0.path().join("class/block").join(&name)).unwrap();
        dir
    }

    fn walk(&self, on: FileOn, files: &dyn Fn(&Path) -> FileOn) -> Stack {
        let walker = Walker {
            sys: self.0.path().to_path_buf(),
            majors: self.0.path().join("proc/devices"),
            file_on: files,
            residency: &|p| {
                (p == Path::new("/img/disk.ext4")).then_some((3 << 20, 8 << 20, Some(1 << 20)))
            },
        };
        walker.stack(&on)
    }
}

#[test]
fn a_loop_device_is_followed_to_its_backing_file_and_the_disk_under_it() {
    let sys = Sys::new();
    let disk = sys.device("pci0/virtio1/block/vda", "254:0", (0, 0));
    let _part = sys.device("pci0/virtio1/block/vda/vda1", "254:1", (2048, 4096));
    fs::write(disk.join("vda1/partition"), "1").unwrap();
    let lo = sys.device("virtual/block/loop0", "7:0", (1 << 21, 0));
    fs::create_dir_all(lo.join("loop")).unwrap();
    fs::write(lo.join("loop/backing_file"), "/img/disk.ext4\n").unwrap();
    fs::write(lo.join("loop/dio"), "0\n").unwrap();
    let stack = sys.walk(FileOn::Device("7:0".into()), &|p| {
        assert_eq!(p, Path::new("/img/disk.ext4"));
        FileOn::Device("254:1".into())
    });
    assert_eq!(stack.top, "7:0");
    assert_eq!(
        stack.backing_files,
        vec![Backing {
            loop_device: "7:0".into(),
            path: "/img/disk.ext4".into(),
            direct_io: false,
            size_bytes: 8 << 20,
            resident_bytes: Some(3 << 20),
            dirty_bytes: Some(1 << 20),
        }]
    );
    assert!(stack.caching_layer());
    // The partition counts for itself; its disk says it is virtual.
    assert_eq!(stack.bottom.len(), 1, "{stack:?}");
    let b = &stack.bottom[0];
    assert_eq!((b.device.as_str(), b.name.as_str()), ("254:1", "vda1"));
    assert_eq!((b.read_bytes, b.written_bytes), (2048 * 512, 4096 * 512));
    assert_eq!(b.virtual_disk.as_deref(), Some("virtio"));
    assert!(
        stack.steps[0].starts_with("7:0 (loop0): a loop device over /img/disk.ext4 (through this machine's page cache) on 254:1"),
        "{:?}",
        stack.steps
    );
    assert_eq!(stack.steps[1], "254:1 (vda1): a partition of vda");
    assert!(
        stack.unfollowed[0].contains("a virtual disk (virtio)"),
        "{:?}",
        stack.unfollowed
    );
    // With dio the host's page cache is bypassed.
    fs::write(lo.join("loop/dio"), "1\n").unwrap();
    let stack = sys.walk(FileOn::Device("7:0".into()), &|_| {
        FileOn::Device("254:1".into())
    });
    assert!(!stack.caching_layer());
}

#[test]
fn device_mapper_and_md_are_followed_to_every_member() {
    let sys = Sys::new();
    sys.device("pci0/ata1/block/sda", "8:0", (10, 20));
    sys.device("pci0/ata2/block/sdb", "8:16", (30, 40));
    let md = sys.device("virtual/block/md0", "9:0", (0, 0));
    fs::create_dir_all(md.join("md")).unwrap();
    fs::write(md.join("md/level"), "raid1\n").unwrap();
    fs::create_dir_all(md.join("slaves")).unwrap();
    for s in ["sda", "sdb"] {
        symlink(
            sys.0.path().join("class/block").join(s),
            md.join("slaves").join(s),
        )
        .unwrap();
    }
    let dm = sys.device("virtual/block/dm-0", "253:0", (0, 0));
    fs::create_dir_all(dm.join("dm")).unwrap();
    fs::write(dm.join("dm/name"), "vg-data\n").unwrap();
    fs::create_dir_all(dm.join("slaves")).unwrap();
    symlink(sys.0.path().join("class/block/md0"), dm.join("slaves/md0")).unwrap();
    let stack = sys.walk(FileOn::Device("253:0".into()), &|_| unreachable!());
    assert_eq!(
        stack.steps,
        vec![
            "253:0 (dm-0): device-mapper vg-data over md0 (9:0)".to_string(),
            "9:0 (md0): md raid1 over sda (8:0), sdb (8:16)".to_string(),
        ]
    );
    let bottom: Vec<_> = stack
        .bottom
        .iter()
        .map(|b| (b.device.as_str(), b.read_bytes, b.written_bytes))
        .collect();
    assert_eq!(bottom, vec![("8:0", 5120, 10240), ("8:16", 15360, 20480)]);
    assert!(stack.unfollowed.is_empty(), "{:?}", stack.unfollowed);
    assert!(!stack.caching_layer());
    // A plain disk: nothing below it.
    let plain = sys.walk(FileOn::Device("8:0".into()), &|_| unreachable!());
    assert!(!plain.has_layers());
    assert_eq!(plain.bottom.len(), 1);
}

#[test]
fn what_cannot_be_followed_is_said() {
    let sys = Sys::new();
    let lo = sys.device("virtual/block/loop1", "7:1", (0, 0));
    fs::create_dir_all(lo.join("loop")).unwrap();
    fs::write(lo.join("loop/backing_file"), "/img/disk.ext4 (deleted)\n").unwrap();
    let on_overlay = sys.walk(FileOn::Device("7:1".into()), &|_| {
        FileOn::Other("overlay".into())
    });
    assert_eq!(on_overlay.backing_files[0].path, "/img/disk.ext4");
    assert!(on_overlay.bottom.is_empty());
    assert_eq!(
        on_overlay.unfollowed,
        vec!["7:1 (loop1): its backing file /img/disk.ext4 is on overlay, whose device cannot be followed".to_string()]
    );
    let in_memory = sys.walk(FileOn::Device("7:1".into()), &|_| {
        FileOn::Memory("tmpfs".into())
    });
    assert!(in_memory.unfollowed[0].contains("is in memory (tmpfs)"));
    let missing = sys.walk(FileOn::Device("8:99".into()), &|_| unreachable!());
    assert!(missing.unfollowed[0].starts_with("8:99: not in"));
    // btrfs: its members' counters.
    sys.device("pci0/nvme/block/nvme0n1", "259:0", (8, 8));
    sys.device("pci0/nvme/block/nvme1n1", "259:1", (8, 8));
    let btrfs = sys.walk(
        FileOn::Btrfs("u-u-i-d".into(), vec!["259:0".into(), "259:1".into()]),
        &|_| unreachable!(),
    );
    assert_eq!(btrfs.top, "btrfs u-u-i-d");
    assert_eq!(btrfs.bottom.len(), 2);
    assert!(btrfs.has_layers());
}

/// What RAM the stack under `dev` ends in, one entry per bottom device.
fn ram_below(sys: &Sys, dev: &str) -> Vec<Option<Ram>> {
    let stack = sys.walk(FileOn::Device(dev.into()), &|_| {
        FileOn::Device("252:1".into())
    });
    stack.bottom.iter().map(|b| b.ram).collect()
}

#[test]
fn ram_devices_are_found_by_their_driver_not_their_name() {
    let sys = Sys::new();
    sys.block_majors("  1 ramdisk\n  8 sd\n250 nullb\n252 zram\n259 blkext");
    sys.device("virtual/block/zram1", "252:1", (8, 8));
    // brd's disks by its major, whatever they are called; a partition by its disk's driver.
    let disk = sys.device("virtual/block/disk7", "1:7", (0, 0));
    sys.device("virtual/block/disk7/disk7p1", "1:8", (0, 0));
    fs::write(disk.join("disk7p1/partition"), "1").unwrap();
    sys.device("virtual/block/nullb0", "250:0", (0, 0));
    // pmem by the driver its namespace is bound to, and any disk whose queue maps its pages
    // (DAX).
    let drivers = sys.0.path().join("bus/nd/drivers");
    fs::create_dir_all(drivers.join("nd_pmem")).unwrap();
    let pmem = sys.device(
        "platform/ndbus0/region0/namespace0.0/block/pmem0",
        "259:0",
        (0, 0),
    );
    fs::create_dir_all(pmem.join("device")).unwrap();
    symlink(drivers.join("nd_pmem"), pmem.join("device/driver")).unwrap();
    let dax = sys.device("platform/dcss/block/dcssblk0", "259:1", (0, 0));
    fs::create_dir_all(dax.join("queue")).unwrap();
    fs::write(dax.join("queue/dax"), "1\n").unwrap();
    // Disks of storage of their own, however they are called.
    sys.device("pci0/ata1/block/ram0", "8:0", (0, 0));
    sys.device("pci0/ata1/block/zram5", "8:16", (0, 0));
    let sd = sys.device("pci0/ata1/block/sdc", "8:32", (0, 0));
    fs::create_dir_all(sd.join("queue")).unwrap();
    fs::write(sd.join("queue/dax"), "0\n").unwrap();
    for (dev, ram) in [
        ("252:1", Some(Ram::Zram)),
        ("1:7", Some(Ram::Brd)),
        ("1:8", Some(Ram::Brd)),
        ("250:0", Some(Ram::NullBlk)),
        ("259:0", Some(Ram::Pmem)),
        ("259:1", Some(Ram::Pmem)),
        ("8:0", None),
        ("8:16", None),
        ("8:32", None),
    ] {
        assert_eq!(ram_below(&sys, dev), vec![ram], "{dev}");
    }
    // A RAM disk alone is a stack worth recording; a disk of storage of its own is not.
    let zram = sys.walk(FileOn::Device("252:1".into()), &|_| unreachable!());
    assert!(zram.has_layers() && zram.steps.is_empty(), "{zram:?}");
    let plain = sys.walk(FileOn::Device("8:0".into()), &|_| unreachable!());
    assert!(!plain.has_layers());
    // A loop device over a file on zram ends in RAM.
    let lo = sys.device("virtual/block/loop3", "7:3", (0, 0));
    fs::create_dir_all(lo.join("loop")).unwrap();
    fs::write(lo.join("loop/backing_file"), "/zram/disk.img\n").unwrap();
    assert_eq!(ram_below(&sys, "7:3"), vec![Some(Ram::Zram)]);
    // Only block majors count: 1 and 252 are character majors too.
    sys.block_majors("  8 sd\n");
    assert_eq!(ram_below(&sys, "252:1"), vec![None]);
    assert_eq!(ram_below(&sys, "1:7"), vec![None]);
}

#[test]
fn this_processes_io_is_read_from_proc() {
    let text = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n";
    let io = ProcessIo::parse(text).unwrap();
    assert_eq!((io.read_bytes, io.written_bytes), (4096, 8192));
    let later = ProcessIo {
        read_bytes: 5000,
        written_bytes: 8192,
    };
    assert_eq!(io.until(&later).read_bytes, 904);
    assert!(ProcessIo::parse("rchar: 1\n").is_none());
    assert!(ProcessIo::now().is_some());
}

#[test]
fn the_real_root_file_system_is_followed() {
    // Wherever the tests run, / is on something the walk can name.
    let stack = below(Path::new("/")).unwrap();
    assert!(
        !stack.bottom.is_empty() || !stack.unfollowed.is_empty(),
        "{stack:?}"
    );
}
