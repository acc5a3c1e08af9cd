//! A raw block device as a target: its objects are regions of the device, one slot of a fixed
//! size each, taken in order as they are created and freed when removed; a region's length is
//! how far this process wrote into it. The device was claimed first ([`claim`]: named
//! exactly, unused, held open with `O_EXCL` for as long as the target lives).

pub mod claim;

pub use claim::{claim, Claim, Refused};

use crate::posix::{all, sys};
use crate::{Access, Capabilities, Capability, Handle, OpenOptions, Place, Target};
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Each slot's object: its name and the bytes written into it; None where free.
type Slots = Arc<Mutex<Vec<Option<(String, u64)>>>>;

/// A claimed device, cut into slots of `slot` bytes.
#[derive(Debug)]
pub struct DeviceTarget {
    claim: Claim,
    slot: u64,
    slots: Slots,
}

impl DeviceTarget {
    /// The target on `claim`, whose objects each hold up to `slot` bytes (a multiple of the
    /// logical block); as many as fit on the device.
    pub fn new(claim: Claim, slot: u64) -> DeviceTarget {
        let count = claim.size.checked_div(slot).unwrap_or(0) as usize;
        DeviceTarget {
            claim,
            slot,
            slots: Arc::new(Mutex::new(vec![None; count])),
        }
    }

    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    fn find(&self, name: &str) -> io::Result<(usize, u64)> {
        let slots = self.slots.lock().unwrap();
        slots
            .iter()
            .enumerate()
            .find_map(|(i, s)| match s {
                Some((n, len)) if n == name => Some((i, *len)),
                _ => None,
            })
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no object {name}")))
    }

    /// Takes the first free slot for `name`, which must be new.
    fn create(&self, name: &str) -> io::Result<usize> {
        let mut slots = self.slots.lock().unwrap();
        if slots.iter().flatten().any(|(n, _)| n == name) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!("{name} exists"),
            ));
        }
        let free = slots.iter().position(Option::is_none).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::StorageFull,
                format!(
                    "{} has no room for another region of {} bytes",
                    self.claim.path.display(),
                    self.slot
                ),
            )
        })?;
        slots[free] = Some((name.to_string(), 0));
        Ok(free)
    }

    /// The claimed device opened again, through the claim's own descriptor
    /// (`/proc/self/fd/N` reaches the device it holds, whatever its path names now), and
    /// checked to be that device.
    fn open_device(&self, write: bool, direct: bool) -> io::Result<File> {
        let mut flags = libc::O_CLOEXEC;
        if direct {
            flags |= libc::O_DIRECT;
        }
        let held = format!("/proc/self/fd/{}", self.claim.file.as_raw_fd());
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(write)
            .custom_flags(flags)
            .open(held)?;
        let meta = file.metadata()?;
        if !meta.file_type().is_block_device() || meta.rdev() != self.claim.rdev {
            return Err(io::Error::other(format!(
                "{} is no longer the device claimed ({})",
                self.claim.path.display(),
                self.claim.device
            )));
        }
        Ok(file)
    }
}

impl Target for DeviceTarget {
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[
            Capability::Files,
            Capability::DirectIo,
            Capability::RangedReads,
        ])
    }

    fn probe_direct(&self, _probe: &str) -> io::Result<()> {
        self.open_device(false, true).map(drop)
    }

    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        let (slot, len) = match options.access {
            Access::Create => (self.create(name)?, 0),
            Access::Replace => {
                let _ = self.remove(name);
                (self.create(name)?, 0)
            }
            Access::Read | Access::Write => self.find(name)?,
        };
        let write = options.access != Access::Read;
        let file = match self.open_device(write, options.direct) {
            Ok(file) => file,
            Err(e) => {
                if matches!(options.access, Access::Create | Access::Replace) {
                    let _ = self.remove(name);
                }
                return Err(e);
            }
        };
        Ok(Box::new(Region {
            file,
            base: slot as u64 * self.slot,
            cap: self.slot,
            len,
            pos: 0,
            slot,
            name: name.to_string(),
            slots: self.slots.clone(),
        }))
    }

    fn len(&self, name: &str) -> io::Result<u64> {
        self.find(name).map(|(_, len)| len)
    }

    fn objects(&self, _worker: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
        Ok(Box::new(crate::objects::ViaHandles::new(self)))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let (slot, _) = self.find(name)?;
        self.slots.lock().unwrap()[slot] = None;
        Ok(())
    }

    /// Writes the device's cache back (`fsync` of the device).
    fn sync_all(&self) -> io::Result<()> {
        self.claim.file.sync_all()
    }

    fn place(&self) -> Place<'_> {
        Place::Device(&self.claim.path)
    }
}

/// An open slot: offsets are the object's, moved by `base`; writes stay below `cap`, reads
/// below what was written.
struct Region {
    file: File,
    base: u64,
    cap: u64,
    /// Bytes of the object: what it held when opened, and as far as this handle wrote.
    len: u64,
    pos: u64,
    slot: usize,
    name: String,
    slots: Slots,
}

impl Region {
    fn room(&mut self, offset: u64, n: usize) -> io::Result<u64> {
        let end = offset + n as u64;
        if end > self.cap {
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("a write to {end} passes the region's end ({})", self.cap),
            ));
        }
        self.len = self.len.max(end);
        Ok(self.base + offset)
    }

    fn within(&self, offset: u64, n: usize) -> io::Result<u64> {
        if offset + n as u64 > self.len {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(self.base + offset)
    }
}

impl Handle for Region {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let at = self.room(offset, buf.len())?;
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::WriteZero, |done| {
            sys::pwrite(fd, &buf[done..], at + done as u64)
        })
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let at = self.within(offset, buf.len())?;
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::UnexpectedEof, |done| {
            sys::pread(fd, &mut buf[done..], at + done as u64)
        })
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.pos = offset;
        Ok(())
    }

    fn write_next(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_at(buf, self.pos)?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.read_at(buf, self.pos)?;
        self.pos += buf.len() as u64;
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    fn close(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Region {
    /// The object's length, as far as it was written, for later opens.
    fn drop(&mut self) {
        let mut slots = self.slots.lock().unwrap();
        if let Some(Some((name, len))) = slots.get_mut(self.slot) {
            if *name == self.name {
                *len = (*len).max(self.len);
            }
        }
    }
}

/// Whether `path` is a block device (symlinks followed).
pub fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device())
}
