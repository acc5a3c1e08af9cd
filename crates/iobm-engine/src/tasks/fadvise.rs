//! `--fadvise`: `posix_fadvise` on a block task's file right after its open, with every engine.

use crate::workload::Fadvise;
use std::io;
use std::os::fd::RawFd;

/// `posix_fadvise(fd, 0, 0, advice)`: the advice for the whole file.
pub(crate) fn fadvise(fd: RawFd, advice: Fadvise) -> io::Result<()> {
    let advice = match advice {
        Fadvise::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Fadvise::Random => libc::POSIX_FADV_RANDOM,
        Fadvise::Willneed => libc::POSIX_FADV_WILLNEED,
        Fadvise::Dontneed => libc::POSIX_FADV_DONTNEED,
        Fadvise::Noreuse => libc::POSIX_FADV_NOREUSE,
    };
    // SAFETY: a plain system call on the worker's open file; it returns the error number.
    match unsafe { libc::posix_fadvise(fd, 0, 0, advice) } {
        0 => Ok(()),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}
