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

    /// Calls made on the recorder, by method name.
    type Log = Arc<std::sync::Mutex<Vec<&'static str>>>;

    /// A target and handle that say which of their methods were called.
    struct Recorder(Log);

    impl Recorder {
        fn saw(&self, method: &'static str) {
            self.0.lock().unwrap().push(method);
        }
    }

    #[deny(clippy::missing_trait_methods)]
    impl Target for Recorder {
        fn capabilities(&self) -> Capabilities {
            self.saw("capabilities");
            Capabilities::NONE
        }
        fn probe_direct(&self, _: &str) -> io::Result<()> {
            self.saw("probe_direct");
            Ok(())
        }
        fn open(&self, _: &str, _: OpenOptions) -> io::Result<Box<dyn Handle>> {
            self.saw("open");
            Ok(Box::new(Recorder(self.0.clone())))
        }
        fn len(&self, _: &str) -> io::Result<u64> {
            self.saw("len");
            Ok(0)
        }
        fn objects(&self, _: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
            self.saw("objects");
            Err(io::ErrorKind::Unsupported.into())
        }
        fn remove(&self, _: &str) -> io::Result<()> {
            self.saw("remove");
            Ok(())
        }
        fn create_dir(&self, _: &str) -> io::Result<()> {
            self.saw("create_dir");
            Ok(())
        }
        fn remove_dir(&self, _: &str) -> io::Result<()> {
            self.saw("remove_dir");
            Ok(())
        }
        fn stat(&self, _: &str) -> io::Result<crate::Stat> {
            self.saw("stat");
            Ok(crate::Stat { len: 0, dir: true })
        }
        fn list_dir(&self, _: &str) -> io::Result<Vec<crate::DirEntry>> {
            self.saw("list_dir");
            Ok(Vec::new())
        }
        fn rename(&self, _: &str, _: &str) -> io::Result<()> {
            self.saw("rename");
            Ok(())
        }
        fn sync_all(&self) -> io::Result<()> {
            self.saw("sync_all");
            Ok(())
        }
        fn place(&self) -> crate::Place<'_> {
            self.saw("place");
            crate::Place::Elsewhere
        }
        fn prepare(&self) -> io::Result<bool> {
            self.saw("prepare");
            Ok(false)
        }
        fn remove_run_objects(&self, _: usize) -> Result<u64, Leftover> {
            self.saw("remove_run_objects");
            Ok(0)
        }
        fn remove_place(&self) -> io::Result<()> {
            self.saw("remove_place");
            Ok(())
        }
        fn endpoint_of(&self, _: usize) -> Option<&str> {
            self.saw("endpoint_of");
            None
        }
        fn server_counters(&self) -> Vec<Option<String>> {
            self.saw("server_counters");
            Vec::new()
        }
    }

    #[deny(clippy::missing_trait_methods)]
    impl Handle for Recorder {
        fn write_at(&mut self, _: &[u8], _: u64) -> io::Result<()> {
            self.saw("write_at");
            Ok(())
        }
        fn read_at(&mut self, _: &mut [u8], _: u64) -> io::Result<()> {
            self.saw("read_at");
            Ok(())
        }
        fn seek(&mut self, _: u64) -> io::Result<()> {
            self.saw("seek");
            Ok(())
        }
        fn write_next(&mut self, _: &[u8]) -> io::Result<()> {
            self.saw("write_next");
            Ok(())
        }
        fn read_next(&mut self, _: &mut [u8]) -> io::Result<()> {
            self.saw("read_next");
            Ok(())
        }
        fn write_each_byte(&mut self, _: &[u8]) -> io::Result<()> {
            self.saw("write_each_byte");
            Ok(())
        }
        fn read_each_byte(&mut self, _: &mut [u8]) -> io::Result<()> {
            self.saw("read_each_byte");
            Ok(())
        }
        fn sync(&mut self) -> io::Result<()> {
            self.saw("sync");
            Ok(())
        }
        fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
            self.saw("raw_fd");
            None
        }
        fn close(self: Box<Self>) -> io::Result<()> {
            self.saw("close");
            Ok(())
        }
    }

    /// The methods of `trait NAME` as lib.rs declares them.
    fn methods_of(name: &str) -> Vec<&'static str> {
        let lib = include_str!("lib.rs");
        let start = lib.find(&format!("pub trait {name}")).unwrap();
        let body = &lib[start..start + lib[start..].find("\n}\n").unwrap()];
        let mut names: Vec<&str> = (body.split("fn ").skip(1))
            .map(|rest| rest.split(['(', '<']).next().unwrap())
            .collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn the_decorator_hands_every_method_to_the_target_it_wraps() {
        let log = Log::default();
        let fault = FaultTarget::fail_writes_after(Recorder(log.clone()), 1 << 20, libc::EIO);
        // Every method but `objects`, which goes through this target's handles so that puts
        // spend the budget.
        fault.capabilities();
        fault.probe_direct("p").unwrap();
        fault.len("a").unwrap();
        fault.remove("a").unwrap();
        fault.create_dir("d").unwrap();
        fault.remove_dir("d").unwrap();
        fault.stat("d").unwrap();
        fault.list_dir("").unwrap();
        fault.rename("a", "b").unwrap();
        fault.sync_all().unwrap();
        fault.place();
        fault.prepare().unwrap();
        fault.remove_run_objects(1).unwrap();
        fault.remove_place().unwrap();
        fault.endpoint_of(0);
        fault.server_counters();
        let write = OpenOptions {
            access: crate::Access::Write,
            direct: false,
        };
        let mut handle = fault.open("a", write).unwrap();
        let mut seen: Vec<&str> = log.lock().unwrap().drain(..).collect();
        seen.sort_unstable();
        let mut expected = methods_of("Target");
        expected.retain(|&m| m != "objects");
        assert_eq!(seen, expected);
        // Every method of its handles but `raw_fd`, which would go around the budget.
        let mut buf = [0u8; 2];
        handle.write_at(&buf, 0).unwrap();
        handle.read_at(&mut buf, 0).unwrap();
        handle.seek(0).unwrap();
        handle.write_next(&buf).unwrap();
        handle.read_next(&mut buf).unwrap();
        handle.write_each_byte(&buf).unwrap();
        handle.read_each_byte(&mut buf).unwrap();
        handle.sync().unwrap();
        assert_eq!(handle.raw_fd(), None);
        handle.close().unwrap();
        let mut seen: Vec<&str> = log.lock().unwrap().drain(..).collect();
        seen.sort_unstable();
        let mut expected = methods_of("Handle");
        expected.retain(|&m| m != "raw_fd");
        assert_eq!(seen, expected);
    }
}
