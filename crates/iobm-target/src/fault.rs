//! A decorator that makes any target fail or stall: after a byte budget is written, every
//! further write fails with a chosen errno (ENOSPC for a full file system, EIO for a dying
//! disk), or the next write stalls once (a storage that stops for a while).

use crate::{Capabilities, Capability, Handle, Leftover, OpenOptions, Target};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a write past the budget meets.
#[derive(Debug, Clone, Copy)]
enum Fault {
    /// It fails with this errno, and every one after it.
    Fail(i32),
    /// It takes this long more, once; the writes after it do not.
    Stall(Duration),
}

pub struct FaultTarget<T> {
    inner: T,
    budget: Arc<AtomicU64>,
    fault: Fault,
}

impl<T: Target> FaultTarget<T> {
    /// Writes succeed until `budget` bytes have been written in all, then fail with `errno`.
    pub fn fail_writes_after(inner: T, budget: u64, errno: i32) -> Self {
        FaultTarget {
            inner,
            budget: Arc::new(AtomicU64::new(budget)),
            fault: Fault::Fail(errno),
        }
    }

    /// The first write past `budget` bytes written in all takes `stall` more.
    pub fn stall_write_after(inner: T, budget: u64, stall: Duration) -> Self {
        FaultTarget {
            inner,
            budget: Arc::new(AtomicU64::new(budget)),
            fault: Fault::Stall(stall),
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
            fault: self.fault,
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
    fn sync_all(&self) -> io::Result<()> {
        self.inner.sync_all()
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
    fault: Fault,
}

impl FaultHandle {
    /// Spends `len` bytes of the write budget, or meets the fault: fails with the chosen errno,
    /// or stalls (once: the budget is then unbounded).
    fn take_budget(&self, len: usize) -> io::Result<()> {
        let len = len as u64;
        let spent = self
            .budget
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(len)
            });
        match (spent, self.fault) {
            (Ok(_), _) => Ok(()),
            (Err(_), Fault::Fail(errno)) => Err(io::Error::from_raw_os_error(errno)),
            (Err(_), Fault::Stall(stall)) => {
                // Only the write that finds the budget spent first stalls.
                if self.budget.swap(u64::MAX, Ordering::SeqCst) != u64::MAX {
                    std::thread::sleep(stall);
                }
                Ok(())
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::MemTarget;
    use std::time::Instant;

    #[test]
    fn a_planted_stall_delays_the_first_write_past_the_budget_once() {
        let stall = Duration::from_millis(50);
        let target = FaultTarget::stall_write_after(MemTarget::new(), 4096, stall);
        let create = OpenOptions {
            access: crate::Access::Create,
            direct: false,
        };
        let mut file = target.open("f", create).unwrap();
        let block = [7u8; 4096];
        file.write_at(&block, 0).unwrap();
        let second = Instant::now();
        file.write_at(&block, 4096).unwrap();
        assert!(second.elapsed() >= stall);
        // Once: the budget is spent and nothing fails after it.
        assert_eq!(target.budget.load(Ordering::SeqCst), u64::MAX);
        file.write_at(&block, 8192).unwrap();
        assert_eq!(target.budget.load(Ordering::SeqCst), u64::MAX - 4096);
    }
}
