//! `--engine mmap`: a worker maps its whole file (`MAP_SHARED`, untimed, with `--madvise`'s
//! hint) and each operation copies its block to or from the mapping, so the page faults that
//! read the file in or make its pages are inside the operation's time. `msync` is the fsync
//! policy's flush: of the block after each write (`each`), of the mapping at the worker's end
//! (`end`). The order of blocks, the data written and `--verify` (of the copy a read made) are
//! the synchronous path's ([`crate::tasks`]), so every engine writes and reads the same bytes.

use crate::task::Task;
use crate::tasks::BlockTask;
use crate::workload::{FsyncPolicy, Madvise};
use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// A file mapped whole, unmapped when dropped.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by one worker's task, which moves to its thread once.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `fd` from its start, writable when `writes`.
    fn new(fd: RawFd, len: usize, writes: bool) -> io::Result<Mapping> {
        let prot = libc::PROT_READ | if writes { libc::PROT_WRITE } else { 0 };
        // SAFETY: a new shared mapping of an open file; the pointer is checked below.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            ptr: ptr.cast(),
            len,
        })
    }

    fn advise(&self, advice: Madvise) -> io::Result<()> {
        let advice = match advice {
            Madvise::Sequential => libc::MADV_SEQUENTIAL,
            Madvise::Random => libc::MADV_RANDOM,
            Madvise::Willneed => libc::MADV_WILLNEED,
            Madvise::Dontneed => libc::MADV_DONTNEED,
            Madvise::Hugepage => libc::MADV_HUGEPAGE,
        };
        // SAFETY: the range is this mapping.
        check(unsafe { libc::madvise(self.ptr.cast(), self.len, advice) })
    }

    /// `msync(MS_SYNC)` of the pages holding `at..at + len`.
    fn sync(&self, at: usize, len: usize) -> io::Result<()> {
        let start = at - at % page_size();
        // SAFETY: the pages lie inside this mapping (`at + len` was checked against it).
        check(unsafe { libc::msync(self.ptr.add(start).cast(), at + len - start, libc::MS_SYNC) })
    }

    /// The bytes `at..at + len`, or an error where they run past the mapping.
    fn range(&mut self, at: u64, len: usize) -> io::Result<&mut [u8]> {
        let at = usize::try_from(at).ok().filter(|&a| a + len <= self.len);
        let Some(at) = at else {
            let e = format!("beyond the {} bytes mapped", self.len);
            return Err(io::Error::new(io::ErrorKind::InvalidInput, e));
        };
        // SAFETY: inside the mapping, which lives as long as `self`; the worker alone uses it.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(at), len) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no slice of it outlives `self`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf reads a constant of the system.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A worker's block task through its file's mapping.
pub(crate) struct MappedTask<'a> {
    /// The synchronous task: the open file, the order of blocks, the data, the verifier.
    inner: BlockTask<'a>,
    map: Option<Mapping>,
}

impl<'a> MappedTask<'a> {
    /// Maps the task's file whole; a writer first makes the file as long as the data set says
    /// (the pages beyond its end cannot be mapped), a reader refuses a file shorter than that.
    pub(crate) fn new(inner: BlockTask<'a>) -> io::Result<MappedTask<'a>> {
        // The target declares RAW_FD (checked before the run, `needs`), so its handles have one.
        let fd = inner
            .raw_fd()
            .ok_or(iobm_target::Unsupported(iobm_target::Capability::RawFd))?;
        let (len, writes) = (inner.file_len(), inner.phase_op().writes());
        let mut stat = std::mem::MaybeUninit::<libc::stat>::uninit();
        // SAFETY: fstat fills `stat` on success, read only then.
        check(unsafe { libc::fstat(fd, stat.as_mut_ptr()) })?;
        let size = unsafe { stat.assume_init() }.st_size as u64;
        if size < len && writes {
            // SAFETY: a plain system call on the worker's open file.
            check(unsafe { libc::ftruncate(fd, len as libc::off_t) })?;
        } else if size < len {
            let e = format!("the file holds {size} bytes, fewer than the {len} of the data set");
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, e));
        }
        let map = Mapping::new(fd, len as usize, writes)?;
        if let Some(advice) = inner.phase().madvise {
            map.advise(advice)?;
        }
        Ok(MappedTask {
            inner,
            map: Some(map),
        })
    }
}

impl Task for MappedTask<'_> {
    fn open(&mut self) -> io::Result<()> {
        self.inner.open()
    }

    fn prepare(&mut self, i: u64) -> bool {
        self.inner.prepare(i)
    }

    fn execute(&mut self) -> io::Result<u64> {
        let sync_each = self.inner.phase().fsync == FsyncPolicy::Each;
        let map = self.map.as_mut().expect("mapped until finish");
        let (offset, data, buf) = self.inner.transfer();
        let len = buf.len();
        let mapped = map.range(offset, len)?;
        match data {
            Some(data) => {
                mapped.copy_from_slice(data);
                if sync_each {
                    map.sync(offset as usize, len)?;
                }
            }
            None => buf.copy_from_slice(mapped),
        }
        Ok(len as u64)
    }

    fn check(&mut self) -> io::Result<()> {
        self.inner.check()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn class(&self) -> usize {
        self.inner.class()
    }

    fn at(&self) -> (u64, u64) {
        self.inner.at()
    }

    fn finish(&mut self) -> io::Result<u64> {
        let mut sync_ns = 0;
        let phase = self.inner.phase();
        if let (Some(map), true) = (&self.map, phase.op.writes()) {
            if phase.fsync == FsyncPolicy::End {
                let t0 = Instant::now();
                map.sync(0, map.len)?;
                sync_ns = t0.elapsed().as_nanos() as u64;
            }
        }
        self.map = None;
        self.inner.close()?;
        Ok(sync_ns)
    }
}
