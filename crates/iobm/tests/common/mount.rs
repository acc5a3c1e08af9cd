//! File systems mounted for one test (root only): a tmpfs or another kernel file system, ext4
//! on an image file through a loop device, and ext4 on a zram device of its own; each
//! unmounted (and its device removed) when dropped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small file system mounted for one test. Such tests need root and are marked ignored:
/// `scripts/test` runs them when it runs as root (as CI does) and counts them skipped otherwise.
pub struct Mount(tempfile::TempDir);

impl Mount {
    /// A tmpfs of this size.
    pub fn tmpfs(size: &str) -> Mount {
        Mount::new("tmpfs", &format!("size={size}"))
    }

    pub fn new(fs_type: &str, options: &str) -> Mount {
        super::assert_root(&format!("this test mounts a {fs_type} and needs root"));
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", fs_type, "-o", options, fs_type])
            .arg(dir.path())
            .status()
            .unwrap()
            .success();
        assert!(ok, "mount {fs_type} failed although running as root");
        Mount(dir)
    }
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

/// An ext4 file system on an image file of this size, mounted with `mount -o loop`.
pub struct LoopMount {
    pub dir: tempfile::TempDir,
    pub image: PathBuf,
    pub mnt: PathBuf,
}

impl LoopMount {
    pub fn new(size: &str) -> LoopMount {
        super::assert_root("this test mounts a loop device and needs root");
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.ext4");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let run = |cmd: &mut Command| {
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{cmd:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(Command::new("truncate").args(["-s", size]).arg(&image));
        run(Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image));
        run(Command::new("mount")
            .args(["-o", "loop"])
            .arg(&image)
            .arg(&mnt));
        LoopMount { dir, image, mnt }
    }

    /// The loop device, as /dev/loopN.
    pub fn device(&self) -> String {
        let out = Command::new("findmnt")
            .args(["-n", "-o", "SOURCE"])
            .arg(&self.mnt)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
    }
}

/// ext4 on a zram device added for one test (`/sys/class/zram-control/hot_add`): RAM that the
/// kernel calls a disk. Removed when dropped.
pub struct ZramMount {
    pub dir: tempfile::TempDir,
    pub mnt: PathBuf,
    /// The zram device's number (zramN).
    pub id: String,
}

impl ZramMount {
    pub fn new(size: &str) -> ZramMount {
        super::assert_root("this test adds a zram device and needs root");
        let id = std::fs::read_to_string("/sys/class/zram-control/hot_add")
            .expect("zram's hot_add (the kernel has zram here)")
            .trim()
            .to_string();
        let sys = format!("/sys/block/zram{id}");
        std::fs::write(format!("{sys}/disksize"), size).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let device = format!("/dev/zram{id}");
        for cmd in [
            Command::new("mkfs.ext4").args(["-q", "-F", &device]),
            Command::new("mount").arg(&device).arg(&mnt),
        ] {
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{cmd:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        ZramMount { dir, mnt, id }
    }
}

impl Drop for ZramMount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.mnt).status();
        let _ = std::fs::write(format!("/sys/block/zram{}/reset", self.id), "1");
        let _ = std::fs::write("/sys/class/zram-control/hot_remove", &self.id);
    }
}
