//! `--iodepth N` through io_uring: a worker keeps N reads or writes of its region in flight,
//! each from a buffer of its own, registered with the ring with its file where the kernel
//! allows (fixed buffers and files: no page pinning or file lookup per request), plain where it
//! does not; an operation's latency runs from its submission to its completion. The order of
//! blocks, the data written and `--verify` are the synchronous path's ([`crate::tasks`]), so
//! both engines write and read the same bytes, and an error names the read or write that met it.

use crate::data::Generator;
use crate::task::{Completed, Task};
use crate::tasks::BlockTask;
use crate::workload::Op;
use io_uring::{opcode, types, IoUring};
use iobm_target::memory::HostBuf;
use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// Whether io_uring can be used here: a ring of two entries is made and dropped. The error
/// says why not (an old kernel, seccomp, the `io_uring_disabled` sysctl).
pub fn probe() -> io::Result<()> {
    IoUring::new(2).map(|_| ())
}

/// Completes a transfer with plain `pwrite`/`pread` calls from `offset`; a read that reaches
/// the end of the file is `UnexpectedEof`, a write that makes no progress `WriteZero`.
fn finish_sync(fd: RawFd, writes: bool, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let at = (offset + done as u64) as libc::off_t;
        let rest = &mut buf[done..];
        // SAFETY: `rest` is valid for its length; fd is the worker's open file.
        let n = unsafe {
            if writes {
                libc::pwrite(fd, rest.as_ptr().cast(), rest.len(), at)
            } else {
                libc::pread(fd, rest.as_mut_ptr().cast(), rest.len(), at)
            }
        };
        match n {
            n if n < 0 => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
            0 if writes => return Err(io::ErrorKind::WriteZero.into()),
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n => done += n as usize,
        }
    }
    Ok(())
}

struct Slot {
    buf: HostBuf,
    offset: u64,
    len: usize,
    /// A write (else a read).
    write: bool,
    /// When it was meant to start (paced).
    intended: Option<Instant>,
    submitted: Instant,
}

/// A worker's block task with up to `depth` operations in flight.
pub(crate) struct QueuedTask<'a> {
    /// The synchronous task: the open file, the order of blocks, the verifier, the final sync.
    inner: BlockTask<'a>,
    ring: IoUring,
    fd: RawFd,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// The slot of the operation prepared and not yet submitted, its buffer already filled.
    next: Option<usize>,
    in_flight: usize,
    /// What writes write (the same function of run, file and offset as the sync path's).
    generator: Option<Generator>,
    /// The class of the last completion (read-write phases: 0 read, 1 write).
    class: usize,
    verify_ns: u64,
    /// The offset of the operation whose completion was the last error.
    failed_at: Option<u64>,
    /// Whether the buffers and the file are registered with the ring.
    registered: bool,
}

impl<'a> QueuedTask<'a> {
    pub(crate) fn new(
        inner: BlockTask<'a>,
        depth: usize,
        generator: Option<Generator>,
    ) -> io::Result<QueuedTask<'a>> {
        // The target declares RAW_FD (checked before the run, `needs`), so its handles have one.
        let fd = inner
            .raw_fd()
            .ok_or(iobm_target::Unsupported(iobm_target::Capability::RawFd))?;
        let ring = IoUring::new(depth.next_power_of_two() as u32).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("io_uring is not available here ({e}): use --engine sync"),
            )
        })?;
        let block = inner.block_len();
        let slots = (0..depth)
            .map(|_| {
                Ok(Slot {
                    // Host memory: buffers on a device are refused with io_uring.
                    buf: crate::tasks::buffer(inner.phase(), 0, block)?,
                    offset: 0,
                    len: 0,
                    write: false,
                    intended: None,
                    submitted: Instant::now(),
                })
            })
            .collect::<io::Result<_>>()?;
        let mut task = QueuedTask {
            class: 0,
            inner,
            ring,
            fd,
            slots,
            free: (0..depth).rev().collect(),
            next: None,
            in_flight: 0,
            generator,
            verify_ns: 0,
            failed_at: None,
            registered: false,
        };
        task.registered = task.register();
        Ok(task)
    }

    /// Registers the file and the slots' buffers with the ring; false (nothing registered)
    /// where the kernel refuses, as under a small RLIMIT_MEMLOCK before Linux 5.12.
    fn register(&mut self) -> bool {
        let submitter = self.ring.submitter();
        if submitter.register_files(&[self.fd]).is_err() {
            return false;
        }
        let iovecs: Vec<libc::iovec> = self
            .slots
            .iter_mut()
            .map(|s| libc::iovec {
                iov_base: s.buf.as_mut_ptr().cast(),
                iov_len: s.buf.len(),
            })
            .collect();
        // SAFETY: the buffers are owned by `slots`, never moved or freed while the ring lives
        // (`ring` is declared, so dropped, before `slots`).
        if unsafe { submitter.register_buffers(&iovecs) }.is_err() {
            let _ = submitter.unregister_files();
            return false;
        }
        true
    }

    /// Takes the next completion, waiting for one when `wait`; None when none is there.
    fn reap(&mut self, wait: bool) -> Option<io::Result<Completed>> {
        if self.in_flight == 0 {
            return None;
        }
        if wait {
            if let Err(e) = self.ring.submit_and_wait(1) {
                return Some(Err(e));
            }
        }
        let cqe = self.ring.completion().next()?;
        let ended = Instant::now();
        let index = cqe.user_data() as usize;
        self.in_flight -= 1;
        self.free.push(index);
        let slot = &self.slots[index];
        let (offset, len, write) = (slot.offset, slot.len, slot.write);
        self.class = usize::from(write && matches!(self.inner.phase_op(), Op::ReadWrite { .. }));
        let done = if cqe.result() < 0 {
            Err(io::Error::from_raw_os_error(-cqe.result()))
        } else if (cqe.result() as usize) < len {
            // A short transfer: the rest synchronously, as the sync path would, so that what
            // stopped it (ENOSPC, EIO, the end of the file) is what is counted.
            let done = cqe.result() as usize;
            let slot = &mut self.slots[index];
            finish_sync(
                self.fd,
                write,
                &mut slot.buf[done..len],
                offset + done as u64,
            )
        } else {
            Ok(())
        };
        let done = done.and_then(|()| {
            if write {
                return Ok(());
            }
            // Outside the operation's latency, as in the synchronous path.
            let checking = Instant::now();
            let checked = self.inner.verify(&self.slots[index].buf[..len], offset);
            self.verify_ns += checking.elapsed().as_nanos() as u64;
            checked
        });
        // An error, of the transfer or of --verify, is named by the operation whose completion
        // found it (describe), not by the last one prepared.
        self.failed_at = done.is_err().then_some(offset);
        Some(done.map(|()| Completed {
            bytes: len as u64,
            intended: self.slots[index].intended,
            started: self.slots[index].submitted,
            ended,
        }))
    }
}

impl Task for QueuedTask<'_> {
    /// Prepares operation `i` in a free slot, its bytes made (a paced write's before its
    /// intended start, as the synchronous path makes them, so neither time counts them).
    fn prepare(&mut self, i: u64) -> bool {
        if !self.inner.prepare(i) {
            return false;
        }
        let index = match self.next {
            Some(index) => index,
            None => self
                .free
                .pop()
                .expect("a free slot: one is reaped before each submit"),
        };
        self.next = Some(index);
        let (offset, len) = self.inner.prepared();
        let write = self.inner.prepared_writes();
        let file = self.inner.file_id();
        let slot = &mut self.slots[index];
        slot.offset = offset;
        slot.len = len;
        slot.write = write;
        if let (Some(generator), true) = (&self.generator, write) {
            generator.fill(&mut slot.buf[..len], file, offset);
        }
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        unreachable!("a queued task is driven by submit")
    }

    fn queued(&self) -> bool {
        true
    }

    fn submit(&mut self, intended: Option<Instant>) -> Option<io::Result<Completed>> {
        let index = self
            .next
            .take()
            .expect("an operation prepared before it is submitted");
        let slot = &mut self.slots[index];
        let (offset, len, write) = (slot.offset, slot.len, slot.write);
        slot.intended = intended;
        let (ptr, len32) = (slot.buf.as_mut_ptr(), len as u32);
        // Registered: file 0 of the ring, buffer `index` (one per slot).
        let (file, buffer) = (types::Fixed(0), index as u16);
        let entry = match (self.registered, write) {
            (true, true) => opcode::WriteFixed::new(file, ptr, len32, buffer)
                .offset(offset)
                .build(),
            (true, false) => opcode::ReadFixed::new(file, ptr, len32, buffer)
                .offset(offset)
                .build(),
            (false, true) => opcode::Write::new(types::Fd(self.fd), ptr, len32)
                .offset(offset)
                .build(),
            (false, false) => opcode::Read::new(types::Fd(self.fd), ptr, len32)
                .offset(offset)
                .build(),
        }
        .user_data(index as u64);
        slot.submitted = Instant::now();
        // SAFETY: the buffer lives in `slots` until its completion is reaped (Drop waits for
        // every operation in flight), and the ring has a free entry: at most `depth` are out.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Some(Err(io::Error::other("io_uring submission queue full")));
        }
        self.in_flight += 1;
        // A full queue submits and waits for a completion in one system call; otherwise the
        // request is submitted and a completion taken if one is there.
        if self.free.is_empty() {
            return self.reap(true);
        }
        if let Err(e) = self.ring.submit() {
            return Some(Err(e));
        }
        self.reap(false)
    }

    fn drain(&mut self) -> Option<io::Result<Completed>> {
        self.reap(true)
    }

    fn wait_until(&mut self, until: Instant) -> Option<io::Result<Completed>> {
        if self.in_flight == 0 {
            return None;
        }
        if let Some(done) = self.reap(false) {
            return Some(done);
        }
        let left = until.saturating_duration_since(Instant::now());
        let ts = types::Timespec::from(left);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => self.reap(false),
            // ETIME: none completed by then.
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => None,
            // EINVAL: a kernel without timed waits (before 5.11); the runner sleeps instead.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EINVAL)) => None,
            Err(e) => Some(Err(e)),
        }
    }

    fn class(&self) -> usize {
        self.class
    }

    fn take_verify_ns(&mut self) -> u64 {
        std::mem::take(&mut self.verify_ns)
    }

    fn describe(&self) -> String {
        match self.failed_at {
            Some(offset) => self.inner.describe_at(offset),
            None => self.inner.describe(),
        }
    }

    fn finish(&mut self) -> io::Result<u64> {
        while self.in_flight > 0 {
            let _ = self.reap(true);
        }
        self.inner.finish()
    }
}

impl Drop for QueuedTask<'_> {
    fn drop(&mut self) {
        // The kernel may still use the buffers of operations in flight.
        while self.in_flight > 0 {
            if self.reap(true).is_none() && self.ring.submit_and_wait(1).is_err() {
                break;
            }
        }
    }
}
