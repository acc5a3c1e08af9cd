//! Raw block devices as targets (root only: marked ignored, run by `scripts/test` as root):
//! a loop device written and read back with every byte verified, its own counters the
//! verdict's evidence and a second device untouched; and the refusals, each exit 2 with one
//! line and nothing written: no `--destroy-data-on`, another device named, the device mounted,
//! used as swap, or held open exclusively by another program.

mod common;

use common::loopdev::LoopDevice;
use common::{iobm, load};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// The `major:minor` of a block device.
fn majmin(path: &Path) -> String {
    let rdev = std::fs::metadata(path).unwrap().rdev();
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// `iobm ARGS`, which must be refused (exit 2) in one line; its standard error.
fn refused(args: &[&std::ffi::OsStr]) -> String {
    let out = iobm().args(args).assert().code(2).get_output().clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    err
}

#[test]
#[ignore = "needs root: makes loop devices (scripts/test runs it as root)"]
fn a_loop_device_is_written_and_read_back_with_every_byte_verified() {
    let dev = LoopDevice::new(16 * MIB, 0xA5);
    let other = LoopDevice::new(4 * MIB, 0x5A);
    let other_before = other.checksum();
    let dir = tempfile::tempdir().unwrap();
    // Named through a symlink to the same device: resolved, it is the device named.
    let link = dir.path().join("by-id");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    let json = dir.path().join("r.json");
    iobm()
        .args([
            "stream", "-j", "2", "--size", "12MiB", "--block", "64KiB", "--verify",
        ])
        .arg("--json")
        .arg(&json)
        .arg(dev.path())
        .arg("--destroy-data-on")
        .arg(&link)
        .assert()
        .code(0);
    let result = load(&json);
    let (write, read) = (&result["phases"][0], &result["phases"][1]);
    assert_eq!(write["settings"]["direct"], true, "O_DIRECT by default");
    assert_eq!(read["settings"]["verify"], true);
    assert_eq!(read["status"], "complete");
    // The device's own counters are the evidence.
    let device = &write["cache"]["device"];
    assert_eq!(device["device"], majmin(dev.path()));
    assert!(
        device["written_bytes"].as_u64().unwrap() >= 12 * MIB,
        "{device}"
    );
    assert!(read["cache"]["device"]["read_bytes"].as_u64().unwrap() >= 12 * MIB);
    // Each job's region holds its stamped blocks, at its offsets; beyond them, the old fill.
    let bytes = dev.bytes();
    for job in 0..2u64 {
        let region = &bytes[(job * 6 * MIB) as usize..((job + 1) * 6 * MIB) as usize];
        for (i, chunk) in region.chunks(4096).enumerate() {
            let offset = u64::from_le_bytes(chunk[16..24].try_into().unwrap());
            assert_eq!(offset, i as u64 * 4096, "job {job}, chunk {i}");
        }
    }
    assert!(
        bytes[(12 * MIB) as usize..].iter().all(|&b| b == 0xA5),
        "nothing past the regions was written"
    );
    assert_eq!(
        other.checksum(),
        other_before,
        "a device not named is untouched"
    );
}

/// `iobm write --size 4MiB EXTRA...`, which must be refused; its standard error.
fn write(extra: &[&Path]) -> String {
    let mut args: Vec<&std::ffi::OsStr> = vec!["write".as_ref(), "--size".as_ref()];
    args.push("4MiB".as_ref());
    args.extend(extra.iter().map(|p| p.as_os_str()));
    refused(&args)
}

#[test]
#[ignore = "needs root: makes loop devices (scripts/test runs it as root)"]
fn a_device_is_refused_unless_named_exactly_and_unused() {
    let dev = LoopDevice::new(8 * MIB, 0xA5);
    let other = LoopDevice::new(8 * MIB, 0x5A);
    let (before, other_before) = (dev.checksum(), other.checksum());
    let path = dev.path();
    let flag = Path::new("--destroy-data-on");
    let err = write(&[path]);
    assert!(
        err.contains("is a block device") && err.contains("--destroy-data-on"),
        "{err}"
    );
    let err = write(&[path, flag, other.path()]);
    assert!(
        err.contains("iobm writes only to the device named exactly"),
        "{err}"
    );
    let err = write(&[other.path(), flag, path]);
    assert!(err.contains("named exactly"), "{err}");
    // Held open exclusively by another program (here, this test).
    let held = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(path)
        .unwrap();
    let err = write(&[path, flag, path]);
    assert!(err.contains("is in use"), "{err}");
    drop(held);
    let err = write(&[path, flag, path, Path::new("--keep")]);
    assert!(err.contains("--keep with --destroy-data-on"), "{err}");
    assert_eq!(dev.checksum(), before, "nothing was written");
    assert_eq!(other.checksum(), other_before, "nothing was written");
}

#[test]
#[ignore = "needs root: makes a loop device and mounts it (scripts/test runs it as root)"]
fn a_mounted_device_is_refused() {
    let dev = LoopDevice::new(16 * MIB, 0);
    let run = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?}");
    run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(dev.path()));
    let mnt = tempfile::tempdir().unwrap();
    // Read-only, so that the file system itself writes nothing while mounted.
    run(Command::new("mount")
        .args(["-o", "ro,noload"])
        .arg(dev.path())
        .arg(mnt.path()));
    let before = dev.checksum();
    let path = dev.path().as_os_str();
    let err = refused(&[
        "write".as_ref(),
        "--size".as_ref(),
        "4MiB".as_ref(),
        path,
        "--destroy-data-on".as_ref(),
        path,
    ]);
    let after = dev.checksum();
    let _ = Command::new("umount").arg(mnt.path()).status();
    assert!(
        err.contains("is mounted") && err.contains("--destroy-data-on"),
        "{err}"
    );
    assert_eq!(after, before, "nothing was written");
}

/// Runs a command that must succeed, and `undo` when dropped.
struct Undo(Command);

impl Undo {
    fn after(cmd: &mut Command, undo: Command) -> Undo {
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{cmd:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Undo(undo)
    }
}

impl Drop for Undo {
    fn drop(&mut self) {
        let _ = self.0.status();
    }
}

#[test]
#[ignore = "needs root: makes a loop device and swaps on it (scripts/test runs it as root)"]
fn a_device_used_as_swap_is_refused() {
    let swap = LoopDevice::new(8 * MIB, 0);
    let run = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?}");
    run(Command::new("mkswap").arg(swap.path()));
    let mut swapoff = Command::new("swapoff");
    swapoff.arg(swap.path());
    let on = Undo::after(Command::new("swapon").arg(swap.path()), swapoff);
    let before = swap.checksum();
    let err = write(&[swap.path(), Path::new("--destroy-data-on"), swap.path()]);
    let after = swap.checksum();
    drop(on);
    assert!(err.contains("in use as swap"), "{err}");
    assert_eq!(after, before, "nothing was written");
}
