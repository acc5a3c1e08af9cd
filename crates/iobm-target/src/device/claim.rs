//! The checks before iobm writes to a raw block device: the target and the device named to
//! destroy are the same device (by `st_rdev`, after symlinks), neither it nor a partition of it
//! is mounted, swap, or held by md/dm/LVM, and no one else has it open exclusively (`O_EXCL`,
//! which iobm then keeps for the whole run, so nothing can mount it meanwhile). The checks are
//! made on the device the exclusive open reached, not on what the path names later: a symlink
//! swapped meanwhile cannot send the run elsewhere.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// `BLKGETSIZE64`: `_IOR(0x12, 114, size_t)`, the device's size in bytes.
const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
/// `BLKSSZGET`: `_IO(0x12, 104)`, the logical block size.
const BLKSSZGET: libc::c_ulong = 0x1268;

/// A block device iobm may destroy: opened exclusively until dropped.
#[derive(Debug)]
pub struct Claim {
    /// The device as the target named it.
    pub path: PathBuf,
    /// Its `major:minor`.
    pub device: String,
    /// Its device number, as the exclusive open found it.
    pub rdev: u64,
    /// Bytes (`BLKGETSIZE64`).
    pub size: u64,
    /// The logical block (`BLKSSZGET`): `O_DIRECT` offsets and sizes are multiples of it.
    pub logical_block: u64,
    /// The exclusive open (`O_EXCL`) that holds the device for the run.
    pub(crate) file: File,
}

/// Why a device was refused, in one line naming `--destroy-data-on`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The device number of a block device at `path` (symlinks followed).
fn block_rdev(path: &Path) -> Option<u64> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type().is_block_device().then(|| meta.rdev())
}

fn majmin(rdev: u64) -> String {
    format!("{}:{}", libc::major(rdev), libc::minor(rdev))
}

/// Claims `target` for destruction, named by `named` (`--destroy-data-on`'s value): the same
/// block device, unused by anything else. The device is opened exclusively first, and every
/// check is of the device that open reached.
pub fn claim(target: &Path, named: &Path) -> Result<Claim, Refused> {
    let shown = target.display();
    if block_rdev(target).is_none() {
        return Err(Refused(format!(
            "--destroy-data-on: {shown} is not a block device"
        )));
    }
    let Some(named_rdev) = block_rdev(named) else {
        return Err(Refused(format!(
            "--destroy-data-on {}: not a block device",
            named.display()
        )));
    };
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(target)
        .map_err(|e| match e.raw_os_error() {
            // Refused whatever holds it; the checks, where they find it, say what.
            Some(libc::EBUSY) => block_rdev(target)
                .and_then(|rdev| Family::of(rdev).unused(&shown.to_string()).err())
                .unwrap_or_else(|| Refused(format!(
                    "--destroy-data-on: {shown} is in use (held open exclusively by another program)"
                ))),
            _ => Refused(format!("--destroy-data-on: cannot open {shown}: {e}")),
        })?;
    let opened = file
        .metadata()
        .map_err(|e| Refused(format!("--destroy-data-on: {shown}: {e}")))?;
    if !opened.file_type().is_block_device() {
        return Err(Refused(format!(
            "--destroy-data-on: {shown} is not a block device"
        )));
    }
    let rdev = opened.rdev();
    if named_rdev != rdev {
        return Err(Refused(format!(
            "--destroy-data-on {} is device {}, not {shown} ({}): iobm writes only to the device named exactly",
            named.display(),
            majmin(named_rdev),
            majmin(rdev)
        )));
    }
    Family::of(rdev).unused(&shown.to_string())?;
    let size = ioctl_u64(&file, BLKGETSIZE64)
        .map_err(|e| Refused(format!("--destroy-data-on: {shown}: no size: {e}")))?;
    let logical_block = ioctl_int(&file, BLKSSZGET)
        .map_err(|e| Refused(format!("--destroy-data-on: {shown}: no block size: {e}")))?;
    Ok(Claim {
        path: target.to_path_buf(),
        device: majmin(rdev),
        rdev,
        size,
        logical_block,
        file,
    })
}

fn ioctl_u64(file: &File, request: libc::c_ulong) -> io::Result<u64> {
    let mut value: u64 = 0;
    // SAFETY: the request writes one u64 into the value, valid for the call.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), request as _, &mut value as *mut u64) };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

fn ioctl_int(file: &File, request: libc::c_ulong) -> io::Result<u64> {
    let mut value: libc::c_int = 0;
    // SAFETY: the request writes one int into the value, valid for the call.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            request as _,
            &mut value as *mut libc::c_int,
        )
    };
    if rc == 0 {
        Ok(value as u64)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A device and its partitions, by `major:minor` and sysfs name.
struct Family {
    members: Vec<(u64, String)>,
}

impl Family {
    /// The device of `rdev` and the partitions sysfs lists beneath it.
    fn of(rdev: u64) -> Family {
        let sys = PathBuf::from(format!("/sys/dev/block/{}", majmin(rdev)));
        let name = fs::canonicalize(&sys)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| majmin(rdev));
        let mut members = vec![(rdev, name)];
        for entry in fs::read_dir(&sys).into_iter().flatten().flatten() {
            let path = entry.path();
            if !path.join("partition").exists() {
                continue;
            }
            let dev = fs::read_to_string(path.join("dev")).unwrap_or_default();
            if let Some((ma, mi)) = dev.trim().split_once(':') {
                if let (Ok(ma), Ok(mi)) = (ma.parse(), mi.parse()) {
                    let name = entry.file_name().to_string_lossy().into_owned();
                    members.push((libc::makedev(ma, mi), name));
                }
            }
        }
        Family { members }
    }

    fn member(&self, rdev: u64) -> Option<&str> {
        let found = self.members.iter().find(|(r, _)| *r == rdev);
        found.map(|(_, name)| name.as_str())
    }

    /// Refuses a family mounted, used as swap or held by another block device.
    fn unused(&self, shown: &str) -> Result<(), Refused> {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").map_err(|e| {
            Refused(format!(
                "--destroy-data-on: {shown}: cannot tell whether it is mounted (/proc/self/mountinfo: {e})"
            ))
        })?;
        if let Some((name, at)) = self.mounted(&mountinfo) {
            return Err(Refused(format!(
                "--destroy-data-on: {shown} is mounted ({name} at {at}): iobm never writes to a mounted device"
            )));
        }
        let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
        for line in swaps.lines().skip(1) {
            let file = line.split_whitespace().next().unwrap_or("");
            if let Some(name) = block_rdev(Path::new(file)).and_then(|r| self.member(r)) {
                return Err(Refused(format!(
                    "--destroy-data-on: {shown} is in use as swap ({name})"
                )));
            }
        }
        for (_, name) in &self.members {
            let holders = fs::read_dir(format!("/sys/class/block/{name}/holders"));
            let holders = holders.map_err(|e| {
                Refused(format!(
                    "--destroy-data-on: {shown}: cannot tell whether it is part of another device (/sys/class/block/{name}/holders: {e})"
                ))
            })?;
            let held: Vec<String> = holders
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            if !held.is_empty() {
                return Err(Refused(format!(
                    "--destroy-data-on: {shown} is part of another device ({name} held by {}: md, dm or LVM)",
                    held.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// The first member mounted, by `/proc/self/mountinfo`'s device number or its source.
    fn mounted(&self, mountinfo: &str) -> Option<(String, String)> {
        for line in mountinfo.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let (Some(dev), Some(at)) = (fields.get(2), fields.get(4)) else {
                continue;
            };
            let by_number = dev.split_once(':').and_then(|(ma, mi)| {
                let rdev = libc::makedev(ma.parse().ok()?, mi.parse().ok()?);
                self.member(rdev)
            });
            let source = fields
                .iter()
                .position(|f| *f == "-")
                .and_then(|i| fields.get(i + 2));
            let by_source = source
                .filter(|s| s.starts_with('/'))
                .and_then(|s| block_rdev(Path::new(s)))
                .and_then(|r| self.member(r));
            if let Some(name) = by_number.or(by_source) {
                return Some((name.to_string(), at.to_string()));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Family;

    /// A disk 259:0 (nvme0n1) with its partition 259:1 (nvme0n1p1).
    fn disk() -> Family {
        Family {
            members: vec![
                (libc::makedev(259, 0), "nvme0n1".into()),
                (libc::makedev(259, 1), "nvme0n1p1".into()),
            ],
        }
    }

    #[test]
    fn a_mounted_partition_is_found_by_its_device_number() {
        let mountinfo = "\
22 1 0:21 / / rw - overlay overlay rw
30 22 259:1 / /data rw,relatime - ext4 /dev/nvme0n1p1 rw
";
        let (name, at) = disk().mounted(mountinfo).expect("the partition is mounted");
        assert_eq!((name.as_str(), at.as_str()), ("nvme0n1p1", "/data"));
        let elsewhere = "30 22 259:2 / /data rw - ext4 /dev/nvme1n1 rw\n";
        assert_eq!(disk().mounted(elsewhere), None, "another device's mount");
    }
}
