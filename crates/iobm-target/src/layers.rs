//! The layers below a file system: its block device followed down through partitions, loop
//! devices (to their backing files, whose pages sit in this machine's page cache, and those
//! files' own devices), device-mapper and md (to their members), and btrfs (to its member
//! devices), to the devices at the bottom; what could not be followed and why (a virtual disk
//! whose host may cache, a backing file on a file system without a device). Also this
//! process's own bytes at the block layer (`/proc/self/io`), which no other process adds to.
//! Read from sysfs, so tests walk a tree of their own.

mod ram;

pub use ram::Ram;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One device at the bottom of the stack, with its counters when read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bottom {
    /// As `major:minor`.
    pub device: String,
    /// The kernel's name (`sda1`, `vda`, `nvme0n1`).
    pub name: String,
    /// Bytes read so far (sectors of `stat` times 512).
    pub read_bytes: u64,
    /// Bytes written so far.
    pub written_bytes: u64,
    /// What kind of virtual disk it is ("virtio", "xen", "QEMU", ...) when it is one: its host
    /// may cache what it reads and writes, which no counter of this machine shows.
    pub virtual_disk: Option<String>,
    /// The RAM it is, by its driver (zram, brd, pmem, null_blk): every byte it moves is a
    /// memory byte.
    pub ram: Option<Ram>,
}

/// A loop device's backing file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Backing {
    /// The loop device, as `major:minor`.
    pub loop_device: String,
    /// The backing file's path as the kernel has it.
    pub path: String,
    /// The loop device reads and writes it with O_DIRECT (`loop/dio`): the host's page cache
    /// is bypassed.
    pub direct_io: bool,
    /// Its size in bytes (0 when it could not be opened).
    pub size_bytes: u64,
    /// Its bytes in this machine's page cache; None when it could not be measured.
    pub resident_bytes: Option<u64>,
    /// Of those, the bytes dirty or under write-back: not yet on the device below; None when
    /// it could not be measured.
    pub dirty_bytes: Option<u64>,
}

/// A file system's storage, followed down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stack {
    /// The file system's own device as `major:minor`, or `btrfs <uuid>` for btrfs (whose
    /// files report a device of no disk).
    pub top: String,
    /// The devices at the bottom, each once.
    pub bottom: Vec<Bottom>,
    /// The loop devices' backing files on the way down.
    pub backing_files: Vec<Backing>,
    /// The way down, one step per layer, for people.
    pub steps: Vec<String>,
    /// What could not be followed, and why.
    pub unfollowed: Vec<String>,
}

impl Stack {
    /// Whether anything lies below the top device, or the device is RAM (a stack of one disk
    /// or partition of storage of its own says nothing its own counters do not).
    pub fn has_layers(&self) -> bool {
        !self.steps.is_empty()
            || !self.unfollowed.is_empty()
            || self.bottom.iter().any(|b| b.ram.is_some())
    }

    /// A layer on the way down can serve from memory what the device above it was asked for:
    /// a loop device over a backing file read through the page cache.
    pub fn caching_layer(&self) -> bool {
        self.backing_files.iter().any(|b| !b.direct_io)
    }
}

/// What a backing file lies on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOn {
    /// A block device, as `major:minor`.
    Device(String),
    /// A btrfs file system of these member devices (`major:minor`), with its uuid.
    Btrfs(String, Vec<String>),
    /// Memory (tmpfs, ramfs).
    Memory(String),
    /// A file system without a block device iobm can follow (NFS, overlay, FUSE, ...).
    Other(String),
}

/// Where the walk reads: sysfs and how files map to devices (the real ones, or a test's).
pub struct Walker<'a> {
    /// Usually `/sys`.
    pub sys: PathBuf,
    /// Usually `/proc/devices`: which driver registered each major number.
    pub majors: PathBuf,
    /// What a file lies on.
    pub file_on: &'a dyn Fn(&Path) -> FileOn,
    /// Bytes of a file in the page cache, its size, and its bytes not yet written back.
    pub residency: &'a dyn Fn(&Path) -> Option<Residency>,
}

/// A file's bytes in the page cache, its size, and its bytes not yet written back.
pub type Residency = (u64, u64, Option<u64>);

/// Layers deeper than this are not followed (a cycle, or a stack nobody builds).
const MAX_DEPTH: usize = 16;

impl Walker<'_> {
    /// The stack under a file system whose files are on `on`.
    pub fn stack(&self, on: &FileOn) -> Stack {
        let mut stack = Stack::default();
        match on {
            FileOn::Device(dev) => {
                stack.top = dev.clone();
                self.follow(dev, 0, &mut stack);
            }
            FileOn::Btrfs(uuid, members) => {
                stack.top = format!("btrfs {uuid}");
                stack.steps.push(format!(
                    "btrfs {uuid}: {} member device(s) ({})",
                    members.len(),
                    members.join(", ")
                ));
                for m in members {
                    self.follow(m, 1, &mut stack);
                }
            }
            FileOn::Memory(what) | FileOn::Other(what) => {
                stack
                    .unfollowed
                    .push(format!("the file system is {what}: no block device"));
            }
        }
        stack
    }

    fn dev_dir(&self, dev: &str) -> PathBuf {
        self.sys.join("dev/block").join(dev)
    }

    fn read(&self, path: &Path) -> Option<String> {
        fs::read_to_string(path).ok().map(|s| s.trim().to_string())
    }

    /// The kernel's name of a device directory (`.../block/sda/sda1` is `sda1`).
    fn name_of(&self, dir: &Path) -> String {
        let real = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        self.read(&dir.join("uevent"))
            .and_then(|u| {
                u.lines()
                    .find_map(|l| l.strip_prefix("DEVNAME=").map(str::to_string))
            })
            .unwrap_or_else(|| {
                real.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            })
    }

    fn follow(&self, dev: &str, depth: usize, stack: &mut Stack) {
        if depth > MAX_DEPTH {
            stack
                .unfollowed
                .push(format!("{dev}: more than {MAX_DEPTH} layers deep"));
            return;
        }
        let dir = self.dev_dir(dev);
        if !dir.exists() {
            stack.unfollowed.push(format!(
                "{dev}: not in {}",
                self.sys.join("dev/block").display()
            ));
            return;
        }
        let name = self.name_of(&dir);
        if let Some(backing) = self.read(&dir.join("loop/backing_file")) {
            return self.follow_loop(dev, &dir, &name, &backing, depth, stack);
        }
        let slaves: Vec<String> = fs::read_dir(dir.join("slaves"))
            .map(|entries| {
                let mut names: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                names
            })
            .unwrap_or_default();
        if !slaves.is_empty() {
            return self.follow_members(dev, &dir, &name, &slaves, depth, stack);
        }
        if stack.bottom.iter().any(|b| b.device == dev) {
            return;
        }
        self.add_bottom(dev, &dir, name, stack);
    }

    /// A loop device: its backing file's residency, and the layers below the file.
    fn follow_loop(
        &self,
        dev: &str,
        dir: &Path,
        name: &str,
        backing: &str,
        depth: usize,
        stack: &mut Stack,
    ) {
        let direct_io = self.read(&dir.join("loop/dio")).as_deref() == Some("1");
        let path = backing
            .strip_suffix(" (deleted)")
            .unwrap_or(backing)
            .to_string();
        let measured = (self.residency)(Path::new(&path));
        stack.backing_files.push(Backing {
            loop_device: dev.to_string(),
            path: path.clone(),
            direct_io,
            size_bytes: measured.map_or(0, |(_, size, _)| size),
            resident_bytes: measured.map(|(resident, _, _)| resident),
            dirty_bytes: measured.and_then(|(_, _, dirty)| dirty),
        });
        let on = (self.file_on)(Path::new(&path));
        let cache = if direct_io {
            "with O_DIRECT"
        } else {
            "through this machine's page cache"
        };
        match on {
            FileOn::Device(below) => {
                stack.steps.push(format!(
                    "{dev} ({name}): a loop device over {path} ({cache}) on {below}"
                ));
                self.follow(&below, depth + 1, stack);
            }
            FileOn::Btrfs(uuid, members) => {
                stack.steps.push(format!(
                    "{dev} ({name}): a loop device over {path} ({cache}) on btrfs {uuid} ({})",
                    members.join(", ")
                ));
                for m in members {
                    self.follow(&m, depth + 1, stack);
                }
            }
            FileOn::Memory(what) => {
                stack.steps.push(format!(
                    "{dev} ({name}): a loop device over {path} ({cache}) in memory ({what})"
                ));
                stack.unfollowed.push(format!(
                    "{dev} ({name}): its backing file {path} is in memory ({what}): every byte of it is a memory byte"
                ));
            }
            FileOn::Other(what) => {
                stack.steps.push(format!(
                    "{dev} ({name}): a loop device over {path} ({cache}) on {what}"
                ));
                stack.unfollowed.push(format!(
                    "{dev} ({name}): its backing file {path} is on {what}, whose device cannot be followed"
                ));
            }
        }
    }

    /// A device over members (md, device-mapper): each member followed down.
    fn follow_members(
        &self,
        dev: &str,
        dir: &Path,
        name: &str,
        slaves: &[String],
        depth: usize,
        stack: &mut Stack,
    ) {
        let kind = if dir.join("md").exists() {
            format!(
                "md {}",
                self.read(&dir.join("md/level")).unwrap_or_default()
            )
        } else if dir.join("dm").exists() {
            format!(
                "device-mapper {}",
                self.read(&dir.join("dm/name")).unwrap_or_default()
            )
        } else {
            "a device".to_string()
        };
        let mut members = Vec::new();
        for s in slaves {
            let member_dir = self.sys.join("class/block").join(s);
            match self.read(&member_dir.join("dev")) {
                Some(d) => members.push(d),
                None => stack.unfollowed.push(format!(
                    "{dev} ({name}): its member {s} has no device number"
                )),
            }
        }
        stack.steps.push(format!(
            "{dev} ({name}): {kind} over {}",
            slaves
                .iter()
                .zip(&members)
                .map(|(s, d)| format!("{s} ({d})"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for m in members {
            self.follow(&m, depth + 1, stack);
        }
    }

    /// A bottom device: its counters, and whether it is a virtual disk.
    fn add_bottom(&self, dev: &str, dir: &Path, name: String, stack: &mut Stack) {
        // A partition counts for itself (its disk carries the other partitions' I/O too); its
        // disk says what kind of device it is.
        let partition = dir.join("partition").exists();
        let disk_dir = if partition {
            fs::canonicalize(dir)
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
                .unwrap_or_else(|| dir.to_path_buf())
        } else {
            dir.to_path_buf()
        };
        if partition {
            stack.steps.push(format!(
                "{dev} ({name}): a partition of {}",
                self.name_of(&disk_dir)
            ));
        }
        let (read_bytes, written_bytes) = self.counters(dev).unwrap_or_default();
        let virtual_disk = self.virtual_disk(&disk_dir, &name);
        let ram = Ram::of(&disk_dir, dev, self.read(&self.majors).as_deref());
        if let Some(kind) = &virtual_disk {
            stack.unfollowed.push(format!(
            "{dev} ({name}): a virtual disk ({kind}): its host may cache what it reads and writes, which no counter here shows"
        ));
        }
        stack.bottom.push(Bottom {
            device: dev.to_string(),
            name,
            read_bytes,
            written_bytes,
            virtual_disk,
            ram,
        });
    }

    /// Bytes read and written by a device so far.
    pub fn counters(&self, dev: &str) -> Option<(u64, u64)> {
        let stat = self.read(&self.dev_dir(dev).join("stat"))?;
        let fields: Vec<u64> = stat
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        Some((fields.get(2)? * 512, fields.get(6)? * 512))
    }

    /// What kind of virtual disk the device in `dir` is, if it is one: by the bus it hangs on
    /// (virtio, Xen, Hyper-V's VMBus) or by the model and vendor it reports.
    fn virtual_disk(&self, dir: &Path, name: &str) -> Option<String> {
        let real = fs::canonicalize(dir).ok()?.display().to_string();
        let by_bus = [
            ("/virtio", "virtio"),
            ("/vbd-", "xen"),
            ("VMBUS", "Hyper-V"),
        ];
        if let Some((_, kind)) = by_bus.iter().find(|(part, _)| real.contains(part)) {
            return Some(kind.to_string());
        }
        for prefix in ["nbd", "rbd", "drbd"] {
            if name.starts_with(prefix) {
                return Some(format!("{prefix}, over the network"));
            }
        }
        let reported = ["device/model", "device/vendor"]
            .iter()
            .filter_map(|f| self.read(&dir.join(f)))
            .collect::<Vec<_>>()
            .join(" ");
        let models = [
            "QEMU",
            "VMware",
            "VBOX",
            "Virtual",
            "PersistentDisk",
            "Amazon Elastic Block Store",
        ];
        models
            .iter()
            .find(|m| reported.contains(*m))
            .map(|m| m.to_string())
    }
}

/// The stack under the file system holding `path`, with every bottom device's counters and
/// every backing file's residency as they are now; None where `path` cannot be read.
pub fn below(path: &Path) -> Option<Stack> {
    let on = file_on(path);
    if matches!(on, FileOn::Other(_)) && fs::metadata(path).is_err() {
        return None;
    }
    let walker = Walker {
        sys: PathBuf::from("/sys"),
        majors: PathBuf::from("/proc/devices"),
        file_on: &file_on,
        residency: &|p| {
            let size = fs::metadata(p).ok()?.len();
            let resident = crate::posix::resident_bytes(p).ok()?;
            Some((resident, size, crate::posix::dirty_bytes(p)))
        },
    };
    Some(walker.stack(&on))
}

/// What the file at `path` lies on, by its device number and file system type.
pub fn file_on(path: &Path) -> FileOn {
    let Ok(meta) = fs::metadata(path) else {
        return FileOn::Other(format!("{} (unreadable)", path.display()));
    };
    let dev = meta.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let magic = fs_magic(path);
    const BTRFS: i64 = 0x9123_683e;
    const TMPFS: i64 = 0x0102_1994;
    const RAMFS: i64 = 0x8584_58f6;
    match magic {
        Some(BTRFS) => match btrfs_members(path) {
            Some((uuid, members)) if !members.is_empty() => return FileOn::Btrfs(uuid, members),
            _ => return FileOn::Other("btrfs (its member devices could not be read)".into()),
        },
        Some(TMPFS) => return FileOn::Memory("tmpfs".into()),
        Some(RAMFS) => return FileOn::Memory("ramfs".into()),
        _ => {}
    }
    if major != 0 {
        return FileOn::Device(format!("{major}:{minor}"));
    }
    let name = match magic {
        Some(0x6969) => "NFS".to_string(),
        Some(0x794c_7630) => "overlay".to_string(),
        Some(0x6573_5546) => "FUSE".to_string(),
        Some(0xff53_4d42) | Some(0xfe53_4d42) => "CIFS/SMB".to_string(),
        Some(m) => format!("a file system of type 0x{m:x}"),
        None => "an unknown file system".to_string(),
    };
    FileOn::Other(name)
}

fn fs_magic(path: &Path) -> Option<i64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statfs fills the struct it is given; the path is NUL-terminated.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    #[allow(clippy::unnecessary_cast)]
    Some(s.f_type as i64)
}

/// A btrfs file system's uuid (`BTRFS_IOC_FS_INFO`) and its member devices
/// (`/sys/fs/btrfs/<uuid>/devices/*`).
fn btrfs_members(path: &Path) -> Option<(String, Vec<String>)> {
    use std::os::unix::io::AsRawFd;
    #[repr(C)]
    struct FsInfo {
        max_id: u64,
        num_devices: u64,
        fsid: [u8; 16],
        rest: [u8; 1024 - 32],
    }
    /// `_IOR(0x94, 31, struct btrfs_ioctl_fs_info_args)`, a 1024-byte struct.
    const BTRFS_IOC_FS_INFO: libc::c_ulong = (2 << 30) | (1024 << 16) | (0x94 << 8) | 31;
    let file = fs::File::open(path).ok()?;
    let mut info = FsInfo {
        max_id: 0,
        num_devices: 0,
        fsid: [0; 16],
        rest: [0; 1024 - 32],
    };
    // SAFETY: the ioctl writes one btrfs_ioctl_fs_info_args (1024 bytes) into `info`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BTRFS_IOC_FS_INFO as _, &mut info) };
    if rc != 0 {
        return None;
    }
    let h: String = info.fsid.iter().map(|b| format!("{b:02x}")).collect();
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    );
    let mut members: Vec<String> = fs::read_dir(format!("/sys/fs/btrfs/{uuid}/devices"))
        .ok()?
        .flatten()
        .filter_map(|e| fs::read_to_string(e.path().join("dev")).ok())
        .map(|d| d.trim().to_string())
        .collect();
    members.sort();
    Some((uuid, members))
}

/// This process's bytes at the block layer so far (`/proc/self/io`): what its reads had
/// fetched from a block device (`read_bytes`, counted as they are submitted) and what it
/// dirtied or wrote directly (`write_bytes`); no other process's I/O is in them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessIo {
    pub read_bytes: u64,
    pub written_bytes: u64,
}

impl ProcessIo {
    /// Now, from `/proc/self/io`; None where the kernel does not keep it.
    pub fn now() -> Option<ProcessIo> {
        ProcessIo::parse(&fs::read_to_string("/proc/self/io").ok()?)
    }

    /// The counters of one `/proc/PID/io` text.
    pub fn parse(text: &str) -> Option<ProcessIo> {
        let field = |name: &str| {
            text.lines().find_map(|l| {
                l.strip_prefix(name)
                    .and_then(|v| v.strip_prefix(':'))
                    .and_then(|v| v.trim().parse::<u64>().ok())
            })
        };
        Some(ProcessIo {
            read_bytes: field("read_bytes")?,
            written_bytes: field("write_bytes")?,
        })
    }

    /// What moved from `self` to `later`.
    pub fn until(&self, later: &ProcessIo) -> ProcessIo {
        ProcessIo {
            read_bytes: later.read_bytes.saturating_sub(self.read_bytes),
            written_bytes: later.written_bytes.saturating_sub(self.written_bytes),
        }
    }
}

#[cfg(test)]
mod tests;
