//! Loop devices made for one test on image files in a temporary directory (root only), each
//! detached when dropped; their bytes read and filled directly, to show what a run touched.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over an image file of its own.
pub struct LoopDevice {
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDevice {
    /// A loop device of `bytes`, filled with `fill` so that untouched bytes can be told.
    pub fn new(bytes: u64, fill: u8) -> LoopDevice {
        LoopDevice::with_image(&vec![fill; bytes as usize], &[])
    }

    /// A loop device over an image file holding `bytes`, made with `losetup` and `options`.
    fn with_image(bytes: &[u8], options: &[&str]) -> LoopDevice {
        super::assert_root("this test makes loop devices and needs root");
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("disk.img");
        std::fs::write(&image, bytes).unwrap();
        let out = Command::new("losetup")
            .args(["-f", "--show"])
            .args(options)
            .arg(&image)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        LoopDevice { path, _dir: dir }
    }

    /// A loop device of `bytes` zeros with an MBR partition table of one partition, from
    /// sector 2048 to the end; its partitions scanned (`losetup -P`).
    pub fn partitioned(bytes: u64) -> LoopDevice {
        let mut image = vec![0u8; bytes as usize];
        let entry = &mut image[446..462];
        entry[4] = 0x83;
        entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
        entry[12..16].copy_from_slice(&((bytes / 512 - 2048) as u32).to_le_bytes());
        image[510] = 0x55;
        image[511] = 0xAA;
        LoopDevice::with_image(&image, &["-P"])
    }

    /// Partition `n`'s device, once it has appeared.
    pub fn partition(&self, n: u32) -> PathBuf {
        let path = PathBuf::from(format!("{}p{n}", self.path.display()));
        for _ in 0..100 {
            if path.exists() {
                return path;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("{} never appeared", path.display());
    }

    /// Every byte of the device.
    pub fn bytes(&self) -> Vec<u8> {
        let mut file = std::fs::File::open(&self.path).unwrap();
        let mut all = Vec::new();
        file.read_to_end(&mut all).unwrap();
        all
    }

    /// A checksum of every byte of the device, to tell it untouched.
    pub fn checksum(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.bytes().hash(&mut hasher);
        hasher.finish()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}
