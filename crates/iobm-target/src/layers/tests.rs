//! Unit tests of following a file system's layers down a fake sysfs, and of this process's I/O from
//! /proc.

use super::*;
use std::os::unix::fs::symlink;

/// A fake sysfs: a device directory under `devices/...` for each name, linked from
/// `dev/block/M:m` and `class/block/NAME`.
struct Sys(tempfile::TempDir);

impl Sys {
    fn new() -> Sys {
        let s = Sys(tempfile::tempdir().unwrap());
        fs::create_dir_all(s.0.path().join("dev/block")).unwrap();
        fs::create_dir_all(s.0.path().join("class/block")).unwrap();
        s
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
