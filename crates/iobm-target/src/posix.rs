//! The POSIX target: objects are files in one directory (the run's own), written and read with
//! `pwrite`/`pread`, optionally `O_DIRECT`; it can also report page-cache residency (`mincore`)
//! and the block device's counters, which is how iobm tells a cache effect from a disk rate.

use crate::{
    Access, Capabilities, Capability, DeviceCounters, DirEntry, Handle, OpenOptions, Stat, Target,
};
use std::cell::RefCell;
use std::fs::{self, File};
use std::io::{self, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::{AsRawFd, FromRawFd, IntoRawFd};
use std::path::{Path, PathBuf};

thread_local! {
    /// Each thread's buffers for the NUL-terminated paths of metadata calls, so that a stat,
    /// rename, unlink, mkdir or rmdir allocates nothing once they have grown.
    static PATHS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// Fails unless `name` is a relative path of plain components.
fn check_plain(name: &str) -> io::Result<()> {
    let plain = |c: &str| !c.is_empty() && c != "." && c != ".." && !c.contains('\0');
    if name.split('/').all(plain) {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("object name '{name}' is not a relative path of plain names"),
        ))
    }
}

/// -1 from a libc call as the thread's errno.
fn os_result(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Files under one directory. Object names are plain file names, never paths.
#[derive(Debug)]
pub struct PosixTarget {
    root: PathBuf,
}

impl PosixTarget {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        PosixTarget { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The path of an object: plain components only, so nothing resolves outside the root.
    fn path(&self, name: &str) -> io::Result<PathBuf> {
        check_plain(name)?;
        Ok(self.root.join(name))
    }

    /// Writes the NUL-terminated path of `name` into `out`.
    fn c_path(&self, name: &str, out: &mut Vec<u8>) -> io::Result<()> {
        check_plain(name)?;
        out.clear();
        out.extend_from_slice(self.root.as_os_str().as_bytes());
        out.push(b'/');
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        Ok(())
    }

    /// Calls `call` with the C path of `name`, made in this thread's buffer.
    fn with_path(
        &self,
        name: &str,
        call: impl FnOnce(*const libc::c_char) -> io::Result<()>,
    ) -> io::Result<()> {
        PATHS.with(|paths| {
            let (path, _) = &mut *paths.borrow_mut();
            self.c_path(name, path)?;
            call(path.as_ptr().cast())
        })
    }
}

impl Target for PosixTarget {
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[
            Capability::Files,
            Capability::DirectIo,
            Capability::RawFd,
            Capability::Directories,
            Capability::Rename,
            Capability::RangedReads,
        ])
    }

    fn probe_direct(&self, probe: &str) -> io::Result<()> {
        let options = OpenOptions {
            access: Access::Create,
            direct: true,
        };
        let opened = self.open(probe, options);
        let _ = self.remove(probe);
        opened?.close()
    }

    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        // The flags std's OpenOptions would pass, made here so that the path is built in the
        // thread's buffer: an open allocates only its handle.
        let create = libc::O_RDWR | libc::O_CREAT | libc::O_EXCL;
        let mut flags = libc::O_CLOEXEC
            | match options.access {
                Access::Create => create,
                Access::Read => libc::O_RDONLY,
                Access::Write => libc::O_RDWR,
                // A new file, as bonnie++ does (unlink, then O_EXCL), rather than a truncated one.
                Access::Replace => {
                    match self.remove(name) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                        _ => {}
                    }
                    create
                }
            };
        if options.direct {
            flags |= libc::O_DIRECT;
        }
        let mut fd = -1;
        self.with_path(name, |p| {
            loop {
                // SAFETY: a NUL-terminated path that lives through the call; the mode is read
                // only with O_CREAT.
                fd = unsafe { libc::open(p, flags, 0o666 as libc::c_uint) };
                match fd {
                    0.. => return Ok(()),
                    _ => match io::Error::last_os_error() {
                        e if e.kind() == io::ErrorKind::Interrupted => {}
                        e => return Err(e),
                    },
                }
            }
        })?;
        // SAFETY: a descriptor just opened, owned by nothing else.
        let file = unsafe { File::from_raw_fd(fd) };
        Ok(Box::new(PosixHandle { file }))
    }

    fn len(&self, name: &str) -> io::Result<u64> {
        Ok(self.stat(name)?.len)
    }

    fn objects(&self, _worker: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
        Ok(Box::new(crate::objects::ViaHandles::new(self)))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        // SAFETY: a NUL-terminated path that lives through the call.
        self.with_path(name, |p| os_result(unsafe { libc::unlink(p) }))
    }

    fn create_dir(&self, name: &str) -> io::Result<()> {
        // SAFETY: as remove.
        self.with_path(name, |p| os_result(unsafe { libc::mkdir(p, 0o777) }))
    }

    fn remove_dir(&self, name: &str) -> io::Result<()> {
        // SAFETY: as remove.
        self.with_path(name, |p| os_result(unsafe { libc::rmdir(p) }))
    }

    fn stat(&self, name: &str) -> io::Result<Stat> {
        let mut found = Stat { len: 0, dir: false };
        self.with_path(name, |p| {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            // SAFETY: a NUL-terminated path and a stat buffer, both valid for the call.
            os_result(unsafe { libc::stat(p, st.as_mut_ptr()) })?;
            // SAFETY: stat succeeded, so it filled the buffer.
            let st = unsafe { st.assume_init() };
            found = Stat {
                len: st.st_size as u64,
                dir: st.st_mode & libc::S_IFMT == libc::S_IFDIR,
            };
            Ok(())
        })?;
        Ok(found)
    }

    fn list_dir(&self, name: &str) -> io::Result<Vec<DirEntry>> {
        let path = match name {
            "" => self.root.clone(),
            _ => self.path(name)?,
        };
        fs::read_dir(path)?
            .map(|entry| {
                let entry = entry?;
                Ok(DirEntry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    // The type readdir gave, without a stat where the file system tells it.
                    dir: entry.file_type()?.is_dir(),
                })
            })
            .collect()
    }

    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        PATHS.with(|paths| {
            let (a, b) = &mut *paths.borrow_mut();
            self.c_path(from, a)?;
            self.c_path(to, b)?;
            // SAFETY: two NUL-terminated paths that live through the call.
            os_result(unsafe { libc::rename(a.as_ptr().cast(), b.as_ptr().cast()) })
        })
    }

    /// `syncfs(2)` of the file system the root is on: what `sync(1)` does for it, without
    /// flushing the machine's other file systems inside the phase's time.
    fn sync_all(&self) -> io::Result<()> {
        let dir = std::fs::File::open(&self.root)?;
        os_result(unsafe { libc::syncfs(dir.as_raw_fd()) })
    }

    fn place(&self) -> crate::Place<'_> {
        crate::Place::Dir(&self.root)
    }
}

/// Flushes everything and drops the whole page cache; false where that is not allowed (not
/// root, or a container without write access to /proc/sys).
pub fn drop_system_cache() -> bool {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    fs::write("/proc/sys/vm/drop_caches", b"3\n").is_ok()
}

/// Writes back `path`'s dirty pages, then drops its clean ones (`posix_fadvise DONTNEED`), as
/// fio's `invalidate=1` does: later reads of it come from storage, not the client's memory.
pub fn drop_cache(path: &Path) -> io::Result<()> {
    let file = File::open(path)?;
    file.sync_all()?;
    // SAFETY: posix_fadvise on an open descriptor; offset 0, length 0 means the whole file.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

struct PosixHandle {
    file: File,
}

/// The four data calls, made straight to the kernel. glibc's wrappers are pthread cancellation
/// points: in a multi-threaded process (iobm's workers are threads) each call pays for enabling
/// and disabling asynchronous cancellation, about a tenth of a one-byte write on tmpfs. iobm
/// never cancels threads, so it skips that bookkeeping on the hot path.
pub(crate) mod sys {
    use std::io;
    use std::os::unix::io::RawFd;

    /// A system call with up to four arguments; negative results are -errno.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[inline(always)]
    unsafe fn call(nr: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        let ret: isize;
        // SAFETY: the caller passes arguments valid for system call `nr`; the kernel clobbers
        // only rcx and r11 besides rax.
        unsafe {
            std::arch::asm!(
                "syscall",
                inlateout("rax") nr as isize => ret,
                in("rdi") a,
                in("rsi") b,
                in("rdx") c,
                in("r10") d,
                lateout("rcx") _,
                lateout("r11") _,
                options(nostack),
            );
        }
        ret
    }

    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    #[inline(always)]
    unsafe fn call(nr: libc::c_long, a: usize, b: usize, c: usize, d: usize) -> isize {
        // SAFETY: as above; glibc's syscall() returns -1 and sets errno on failure.
        let rc = unsafe { libc::syscall(nr, a, b, c, d) };
        if rc < 0 {
            -(io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO) as isize)
        } else {
            rc as isize
        }
    }

    fn check(rc: isize) -> io::Result<usize> {
        if rc < 0 {
            Err(io::Error::from_raw_os_error(-rc as i32))
        } else {
            Ok(rc as usize)
        }
    }

    pub fn pwrite(fd: RawFd, buf: &[u8], offset: u64) -> io::Result<usize> {
        let (p, n) = (buf.as_ptr() as usize, buf.len());
        // SAFETY: buf is valid for buf.len() bytes; the kernel only reads it.
        check(unsafe { call(libc::SYS_pwrite64, fd as usize, p, n, offset as usize) })
    }

    pub fn pread(fd: RawFd, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        let (p, n) = (buf.as_mut_ptr() as usize, buf.len());
        // SAFETY: buf is valid for buf.len() writable bytes.
        check(unsafe { call(libc::SYS_pread64, fd as usize, p, n, offset as usize) })
    }

    pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
        let (p, n) = (buf.as_ptr() as usize, buf.len());
        // SAFETY: as pwrite.
        check(unsafe { call(libc::SYS_write, fd as usize, p, n, 0) })
    }

    pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
        let (p, n) = (buf.as_mut_ptr() as usize, buf.len());
        // SAFETY: as pread.
        check(unsafe { call(libc::SYS_read, fd as usize, p, n, 0) })
    }
}

/// Repeats `call` until all of `len` bytes are done, retrying EINTR; `call` gets the bytes
/// done so far. Zero progress is `WriteZero` or, for reads, `UnexpectedEof`.
pub(crate) fn all(
    len: usize,
    eof: io::ErrorKind,
    mut call: impl FnMut(usize) -> io::Result<usize>,
) -> io::Result<()> {
    let mut done = 0;
    while done < len {
        match call(done) {
            Ok(0) => return Err(eof.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Handle for PosixHandle {
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        Some(self.file.as_raw_fd())
    }

    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::WriteZero, |done| {
            sys::pwrite(fd, &buf[done..], offset + done as u64)
        })
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::UnexpectedEof, |done| {
            sys::pread(fd, &mut buf[done..], offset + done as u64)
        })
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.file.seek(SeekFrom::Start(offset)).map(|_| ())
    }

    fn write_next(&mut self, buf: &[u8]) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::WriteZero, |done| {
            sys::write(fd, &buf[done..])
        })
    }

    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        all(buf.len(), io::ErrorKind::UnexpectedEof, |done| {
            sys::read(fd, &mut buf[done..])
        })
    }

    fn write_each_byte(&mut self, buf: &[u8]) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        for byte in buf.chunks(1) {
            all(1, io::ErrorKind::WriteZero, |_| sys::write(fd, byte))?;
        }
        Ok(())
    }

    fn read_each_byte(&mut self, buf: &mut [u8]) -> io::Result<()> {
        let fd = self.file.as_raw_fd();
        for byte in buf.chunks_mut(1) {
            all(1, io::ErrorKind::UnexpectedEof, |_| sys::read(fd, byte))?;
        }
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }

    fn close(self: Box<Self>) -> io::Result<()> {
        let fd = self.file.into_raw_fd();
        // SAFETY: fd was just released by File and is closed exactly once here.
        if unsafe { libc::close(fd) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// Bytes of `path` in the page cache.
pub fn resident_bytes(path: &Path) -> io::Result<u64> {
    let file = File::open(path)?;
    let len = file.metadata()?.len();
    resident_range(&file, 0, len)
}

/// Bytes of `file`'s range `[offset, offset + len)` in the page cache: `cachestat(2)` where the
/// kernel has it (Linux 6.5, no memory needed), else `mmap` and `mincore`, a window at a time
/// so huge ranges need no huge mapping.
pub fn resident_range(file: &File, offset: u64, len: u64) -> io::Result<u64> {
    if len == 0 {
        return Ok(0);
    }
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    match cachestat_pages(file, offset, len) {
        Some(pages) => Ok((pages * page).min(len)),
        None => mincore_bytes(file, offset, len, page),
    }
}

/// [`resident_range`] by `mmap` and `mincore`.
fn mincore_bytes(file: &File, offset: u64, len: u64, page: u64) -> io::Result<u64> {
    const WINDOW: u64 = 1 << 30;
    let end = offset + len;
    // Mappings start on a page.
    let mut at = offset / page * page;
    let mut resident_pages = 0u64;
    let mut vec = Vec::new();
    while at < end {
        let span = (end - at).min(WINDOW);
        // SAFETY: a fresh read-only shared mapping of an open file, unmapped below; we never
        // dereference it, only pass it to mincore.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                at as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let pages = span.div_ceil(page) as usize;
        vec.clear();
        vec.resize(pages, 0u8);
        // SAFETY: vec holds one byte per page of the mapping, as mincore requires.
        let rc = unsafe { libc::mincore(addr, span as usize, vec.as_mut_ptr()) };
        let err = io::Error::last_os_error();
        // SAFETY: unmapping exactly the mapping made above.
        unsafe { libc::munmap(addr, span as usize) };
        if rc != 0 {
            return Err(err);
        }
        resident_pages += vec.iter().filter(|&&b| b & 1 == 1).count() as u64;
        at += span;
    }
    Ok((resident_pages * page).min(len))
}

/// Pages of the range in the page cache by `cachestat(2)`; None where the kernel lacks it.
fn cachestat_pages(file: &File, offset: u64, len: u64) -> Option<u64> {
    cachestat(file, offset, len).map(|(cached, _)| cached)
}

/// Bytes of `path` that are dirty or under write-back in the page cache (not yet on its
/// device), by `cachestat(2)`; None where the kernel lacks it (before Linux 6.5).
pub fn dirty_bytes(path: &Path) -> Option<u64> {
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    // SAFETY: sysconf has no memory-safety preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    cachestat(&file, 0, len.max(1)).map(|(_, dirty)| (dirty * page).min(len))
}

/// Pages of the range cached, and dirty or under write-back, by `cachestat(2)`.
fn cachestat(file: &File, offset: u64, len: u64) -> Option<(u64, u64)> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        /// The syscall's number in the generic and x86-64 tables (Linux 6.5).
        const SYS_CACHESTAT: libc::c_long = 451;
        #[repr(C)]
        struct Range {
            off: u64,
            len: u64,
        }
        #[repr(C)]
        #[derive(Default)]
        struct Stat {
            nr_cache: u64,
            nr_dirty: u64,
            nr_writeback: u64,
            nr_evicted: u64,
            nr_recently_evicted: u64,
        }
        let range = Range { off: offset, len };
        let mut stat = Stat::default();
        // SAFETY: cachestat reads one range and writes one stat, both valid for the call.
        let rc = unsafe {
            libc::syscall(
                SYS_CACHESTAT,
                file.as_raw_fd(),
                &range as *const Range,
                &mut stat as *mut Stat,
                0u32,
            )
        };
        (rc == 0).then_some((stat.nr_cache, stat.nr_dirty + stat.nr_writeback))
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (file, offset, len);
        None
    }
}

/// Sectors read and written by the block device holding `path` (or `path` itself, a block
/// device), from `/sys/dev/block/MAJOR:MINOR/stat`. None for file systems without one (tmpfs,
/// NFS, overlay).
pub fn device_counters(path: &Path) -> Option<DeviceCounters> {
    use std::os::unix::fs::FileTypeExt;
    let meta = fs::metadata(path).ok()?;
    let dev = match meta.file_type().is_block_device() {
        true => meta.rdev(),
        false => meta.dev(),
    };
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    if major == 0 {
        return None;
    }
    let device = format!("{major}:{minor}");
    let stat = fs::read_to_string(format!("/sys/dev/block/{device}/stat")).ok()?;
    let fields: Vec<u64> = stat
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    Some(DeviceCounters {
        device,
        read_bytes: fields.get(2)? * 512,
        written_bytes: fields.get(6)? * 512,
    })
}

#[cfg(test)]
mod tests;
