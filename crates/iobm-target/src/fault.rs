//! A decorator that makes any target fail: after a byte budget is written, every further write
//! fails with a chosen errno (ENOSPC for a full file system, EIO for a dying disk).

use crate::{Capabilities, Capability, Handle, Leftover, OpenOptions, Target};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub struct FaultTarget<T> {
    inner: T,
    budget: Arc<AtomicU64>,
    errno: i32,
}

impl<T: Target> FaultTarget<T> {
    /// Writes succeed until `budget` bytes have been written in all, then fail with `errno`.
    pub fn fail_writes_after(inner: T, budget: u64, errno: i32) -> Self {
        FaultTarget {
            inner,
            budget: Arc::new(AtomicU64::new(budget)),
            errno,
        }
    }
}

/// Every method is written out (the lint says when one is not): a default would do the
/// default's thing instead of the inner target's.
#[deny(clippy::missing_trait_methods)]
impl<T: Target> Target for FaultTarget<T> {
    /// The inner target's, less what would go around the fault: a raw descriptor (io_uring
    /// would write past the budget), and listing and multipart, as objects go through handles.
    fn capabilities(&self) -> Capabilities {
        self.inner
            .capabilities()
            .without(Capability::RawFd)
            .without(Capability::Listing)
            .without(Capability::Multipart)
    }
    fn probe_direct(&self, probe: &str) -> io::Result<()> {
        self.inner.probe_direct(probe)
    }
    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        Ok(Box::new(FaultHandle {
            inner: self.inner.open(name, options)?,
            budget: self.budget.clone(),
            errno: self.errno,
        }))
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.inner.len(name)
    }
    /// Through this target's handles, so that puts spend the budget too.
    fn objects(&self, _worker: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
        Ok(Box::new(crate::objects::ViaHandles::new(self)))
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.inner.remove(name)
    }
    fn create_dir(&self, name: &str) -> io::Result<()> {
        self.inner.create_dir(name)
    }
    fn remove_dir(&self, name: &str) -> io::Result<()> {
        self.inner.remove_dir(name)
    }
    fn stat(&self, name: &str) -> io::Result<crate::Stat> {
        self.inner.stat(name)
    }
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn list_dir(&self, name: &str) -> io::Result<Vec<crate::DirEntry>> {
        self.inner.list_dir(name)
    }
    fn place(&self) -> crate::Place<'_> {
        self.inner.place()
    }
    fn prepare(&self) -> io::Result<bool> {
        self.inner.prepare()
    }
    fn remove_run_objects(&self, threads: usize) -> Result<u64, Leftover> {
        self.inner.remove_run_objects(threads)
    }
    fn remove_place(&self) -> io::Result<()> {
        self.inner.remove_place()
    }
    fn endpoint_of(&self, worker: usize) -> Option<&str> {
        self.inner.endpoint_of(worker)
    }
    fn server_counters(&self) -> Vec<Option<String>> {
        self.inner.server_counters()
    }
}

struct FaultHandle {
    inner: Box<dyn Handle>,
    budget: Arc<AtomicU64>,
    errno: i32,
}

impl FaultHandle {
    /// Spends `len` bytes of the write budget, or fails with the chosen errno.
    fn take_budget(&self, len: usize) -> io::Result<()> {
        let len = len as u64;
        self.budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(len)
            })
            .map(|_| ())
            .map_err(|_| io::Error::from_raw_os_error(self.errno))
    }
}

#[deny(clippy::missing_trait_methods)]
impl Handle for FaultHandle {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.take_budget(buf.len())?;
        self.inner.write_at(buf, offset)
    }
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_at(buf, offset)
    }
    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.inner.seek(offset)
    }
    fn write_next(&mut self, buf: &[u8]) -> io::Result<()> {
        self.take_budget(buf.len())?;
        self.inner.write_next(buf)
    }
    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_next(buf)
    }
    fn write_each_byte(&mut self, buf: &[u8]) -> io::Result<()> {
        self.take_budget(buf.len())?;
        self.inner.write_each_byte(buf)
    }
    fn read_each_byte(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_each_byte(buf)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.inner.sync()
    }
    /// None: requests submitted on the descriptor would not spend the budget.
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        self.inner.close()
    }
}
