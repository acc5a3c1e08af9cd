//! The fake cuFile of the tests: Rust functions with `cufile.h`'s signatures in the same table
//! the real library fills, so every call iobm makes runs on machines without a GPU. Buffers
//! are the fake GPU's host memory; a file must be opened `O_DIRECT` (as cuFile wants) and a
//! buffer registered before it is read or written; reads and writes are `pread`/`pwrite` into
//! the buffer. In [`FakeCuFile::Direct`] mode the bytes are added to the fake nvidia-fs
//! counters (`super::super::nvfs`) as each file is deregistered, as nvidia-fs counts GPU-direct
//! I/O; in [`FakeCuFile::Compat`] mode they are not, as in cuFile's compatibility mode.

use super::{Api, CuFileError, CuFileHandle, Descr, HANDLE_TYPE_OPAQUE_FD};
use crate::memory::nvfs;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// How the fake cuFile moves bytes, as nvidia-fs would count them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FakeCuFile {
    /// GPU-direct: nvidia-fs counts every byte.
    Direct,
    /// Compatibility mode: nvidia-fs counts nothing.
    Compat,
}

static DIRECT: AtomicBool = AtomicBool::new(false);
static READ: AtomicU64 = AtomicU64::new(0);
static WRITTEN: AtomicU64 = AtomicU64::new(0);
/// Registered buffers: base address to length.
static BUFFERS: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

static FAKE: Api = Api {
    driver_open,
    handle_register,
    handle_deregister,
    buf_register,
    buf_deregister,
    read,
    write,
};

/// The fake's table, moving bytes as `mode` says.
pub(super) fn api(mode: FakeCuFile) -> &'static Api {
    DIRECT.store(mode == FakeCuFile::Direct, Ordering::Relaxed);
    &FAKE
}

/// `CUFILEOP_BASE_ERR` and an error of the fake's own beyond it.
const FAKE_ERR: c_int = 5099;

fn status(ok: bool) -> CuFileError {
    CuFileError {
        err: if ok { 0 } else { FAKE_ERR },
        cu_err: 0,
    }
}

extern "C" fn driver_open() -> CuFileError {
    status(true)
}

unsafe extern "C" fn handle_register(fh: *mut CuFileHandle, descr: *mut Descr) -> CuFileError {
    // SAFETY: the caller passes valid pointers, as to cuFile.
    let descr = unsafe { &*descr };
    if descr.kind != HANDLE_TYPE_OPAQUE_FD {
        return status(false);
    }
    // SAFETY: an OPAQUE_FD descriptor holds its fd.
    let fd = unsafe { descr.handle.fd };
    // SAFETY: F_GETFL reads the descriptor's flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || flags & libc::O_DIRECT == 0 {
        return status(false);
    }
    // SAFETY: as above.
    unsafe { *fh = Box::into_raw(Box::new(fd)).cast() };
    status(true)
}

unsafe extern "C" fn handle_deregister(fh: CuFileHandle) {
    // SAFETY: a handle handle_register made, freed once.
    drop(unsafe { Box::from_raw(fh.cast::<c_int>()) });
    if DIRECT.load(Ordering::Relaxed) {
        // Whole MiB, as nvidia-fs's counters show them; the rest waits for the next file.
        let whole = |counter: &AtomicU64| {
            let moved = counter.swap(0, Ordering::Relaxed);
            counter.fetch_add(moved % (1 << 20), Ordering::Relaxed);
            moved - moved % (1 << 20)
        };
        let moved = nvfs::NvfsStats {
            read_bytes: whole(&READ),
            written_bytes: whole(&WRITTEN),
        };
        // The test reads the counters it set up; a failure shows as counters that did not move.
        let _ = nvfs::add_to_fake(moved);
    }
}

extern "C" fn buf_register(base: *const c_void, len: usize, _flags: c_int) -> CuFileError {
    let mut buffers = BUFFERS.lock().unwrap();
    let fresh = buffers
        .get_or_insert_with(HashMap::new)
        .insert(base as usize, len)
        .is_none();
    status(!base.is_null() && fresh)
}

extern "C" fn buf_deregister(base: *const c_void) -> CuFileError {
    let mut buffers = BUFFERS.lock().unwrap();
    let known = buffers
        .get_or_insert_with(HashMap::new)
        .remove(&(base as usize));
    status(known.is_some())
}

/// Whether `[at, at + len)` of the buffer at `base` lies in a registered buffer.
fn registered(base: *const c_void, at: i64, len: usize) -> bool {
    let buffers = BUFFERS.lock().unwrap();
    let Some(&size) = buffers.as_ref().and_then(|b| b.get(&(base as usize))) else {
        return false;
    };
    usize::try_from(at).is_ok_and(|at| at + len <= size)
}

unsafe extern "C" fn read(
    fh: CuFileHandle,
    base: *mut c_void,
    len: usize,
    offset: i64,
    at: i64,
) -> isize {
    if !registered(base, at, len) {
        return -(FAKE_ERR as isize);
    }
    // SAFETY: a handle of handle_register; the range lies in the registered buffer.
    let n = unsafe { libc::pread(*fh.cast::<c_int>(), base.add(at as usize), len, offset) };
    if n > 0 {
        READ.fetch_add(n as u64, Ordering::Relaxed);
    }
    n
}

unsafe extern "C" fn write(
    fh: CuFileHandle,
    base: *const c_void,
    len: usize,
    offset: i64,
    at: i64,
) -> isize {
    if !registered(base, at, len) {
        return -(FAKE_ERR as isize);
    }
    // SAFETY: as for reads.
    let n = unsafe { libc::pwrite(*fh.cast::<c_int>(), base.add(at as usize), len, offset) };
    if n > 0 {
        WRITTEN.fetch_add(n as u64, Ordering::Relaxed);
    }
    n
}
