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
