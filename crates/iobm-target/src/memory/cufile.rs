//! NVIDIA cuFile (GPUDirect Storage), loaded at run time (`libcufile.so.0`, no toolkit at build
//! time): only the calls iobm makes, with the C signatures of NVIDIA's `cufile.h` (the cuFile
//! API reference): the driver opened once (`cuFileDriverOpen`), each worker's device buffer
//! registered (`cuFileBufRegister`), each file's `O_DIRECT` descriptor registered
//! (`cuFileHandleRegister`), one `cuFileRead`/`cuFileWrite` per operation (gdsio's `-x 0`),
//! deregistered at the end. The same calls reach the fake cuFile of the tests
//! (`cufile/fake.rs`), whose table holds Rust functions of the same signatures. Unverified on a
//! GPU: no machine with one has run the real library.

use super::DeviceBuf;
use std::ffi::{c_int, c_void};
use std::io;
use std::os::fd::RawFd;
use std::sync::OnceLock;

mod fake;

pub use fake::FakeCuFile;

/// The library's name, as the GDS packages install it.
pub const LIBCUFILE: &str = "libcufile.so.0";

/// `CUfileError_t`: `struct { CUfileOpError err; CUresult cu_err; }`, both C enums; `err` 0
/// is `CU_FILE_SUCCESS`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct CuFileError {
    err: c_int,
    cu_err: c_int,
}

/// `CUfileHandle_t`: `typedef void *CUfileHandle_t`.
type CuFileHandle = *mut c_void;

/// The handle of `CUfileDescr_t`: `union { int fd; void *handle; }`.
#[repr(C)]
union DescrHandle {
    fd: c_int,
    handle: *mut c_void,
}

/// `CUfileDescr_t`: `struct { enum CUfileFileHandleType type; union handle; const
/// CUfileFSOps_t *fs_ops; }`.
#[repr(C)]
struct Descr {
    kind: c_int,
    handle: DescrHandle,
    fs_ops: *const c_void,
}

/// `CU_FILE_HANDLE_TYPE_OPAQUE_FD` of `CUfileFileHandleType`: a Linux descriptor.
const HANDLE_TYPE_OPAQUE_FD: c_int = 1;

/// The entry points iobm calls, each with its `cufile.h` declaration.
struct Api {
    /// `CUfileError_t cuFileDriverOpen(void)`
    driver_open: unsafe extern "C" fn() -> CuFileError,
    /// `CUfileError_t cuFileHandleRegister(CUfileHandle_t *fh, CUfileDescr_t *descr)`
    handle_register: unsafe extern "C" fn(*mut CuFileHandle, *mut Descr) -> CuFileError,
    /// `void cuFileHandleDeregister(CUfileHandle_t fh)`
    handle_deregister: unsafe extern "C" fn(CuFileHandle),
    /// `CUfileError_t cuFileBufRegister(const void *bufPtr_base, size_t length, int flags)`
    buf_register: unsafe extern "C" fn(*const c_void, usize, c_int) -> CuFileError,
    /// `CUfileError_t cuFileBufDeregister(const void *bufPtr_base)`
    buf_deregister: unsafe extern "C" fn(*const c_void) -> CuFileError,
    /// `ssize_t cuFileRead(CUfileHandle_t fh, void *bufPtr_base, size_t size, off_t
    /// file_offset, off_t bufPtr_offset)`
    read: unsafe extern "C" fn(CuFileHandle, *mut c_void, usize, i64, i64) -> isize,
    /// `ssize_t cuFileWrite(CUfileHandle_t fh, const void *bufPtr_base, size_t size, off_t
    /// file_offset, off_t bufPtr_offset)`
    write: unsafe extern "C" fn(CuFileHandle, *const c_void, usize, i64, i64) -> isize,
}

/// Looks a function up in `lib` as the type it is declared with above.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller gives the declared type.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{LIBCUFILE} has no {name} ({e}): cuFile is too old"))
}

/// The library, loaded and its driver opened once; it stays loaded for the process.
fn real() -> Result<&'static Api, String> {
    static REAL: OnceLock<Result<Api, String>> = OnceLock::new();
    REAL.get_or_init(|| {
        // SAFETY: loading cuFile runs its initialisers, which expect nothing of us.
        let lib = unsafe { libloading::Library::new(LIBCUFILE) }.map_err(|e| {
            format!("{LIBCUFILE} cannot be loaded ({e}): no cuFile (GPUDirect Storage) here")
        })?;
        // SAFETY: every type is the declaration of cufile.h quoted on its field.
        let api = unsafe {
            Api {
                driver_open: symbol(&lib, "cuFileDriverOpen")?,
                handle_register: symbol(&lib, "cuFileHandleRegister")?,
                handle_deregister: symbol(&lib, "cuFileHandleDeregister")?,
                buf_register: symbol(&lib, "cuFileBufRegister")?,
                buf_deregister: symbol(&lib, "cuFileBufDeregister")?,
                read: symbol(&lib, "cuFileRead")?,
                write: symbol(&lib, "cuFileWrite")?,
            }
        };
        // The functions live as long as the library: for the whole process.
        std::mem::forget(lib);
        open_driver(&api)?;
        Ok(api)
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn open_driver(api: &Api) -> Result<(), String> {
    // SAFETY: takes nothing.
    let status = unsafe { (api.driver_open)() };
    failed("cuFileDriverOpen", status).map_err(|e| {
        format!("{e}: the cuFile driver does not open here (its log, cufile.log, says why)")
    })
}

/// `what` failed with `status`; Ok for `CU_FILE_SUCCESS`.
fn failed(what: &str, status: CuFileError) -> Result<(), String> {
    match status.err {
        0 => Ok(()),
        err => Err(format!(
            "{what} failed: CUfileOpError {err}, CUresult {}",
            status.cu_err
        )),
    }
}

fn io_failed(what: &str, status: CuFileError) -> io::Result<()> {
    failed(what, status).map_err(io::Error::other)
}

/// cuFile, real or fake: what registers buffers and files and moves their bytes.
#[derive(Clone, Copy)]
pub struct CuFile {
    api: &'static Api,
}

impl std::fmt::Debug for CuFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CuFile")
    }
}

impl CuFile {
    /// The real library, its driver open; the error says what is missing, in one line.
    pub fn load() -> Result<CuFile, String> {
        real().map(|api| CuFile { api })
    }

    /// The fake of the tests (`fake.rs`): buffers are host memory, reads and writes POSIX I/O
    /// into them, and nvidia-fs's counters move as `fake` says.
    pub fn fake(fake: FakeCuFile) -> CuFile {
        let api = fake::api(fake);
        open_driver(api).expect("the fake driver opens");
        CuFile { api }
    }

    /// Registers `buf` for I/O straight into it (`cuFileBufRegister`, flags 0), its device
    /// made current first.
    pub fn register_buf(self, buf: &dyn DeviceBuf) -> io::Result<()> {
        buf.bind()?;
        // SAFETY: the buffer's whole allocation, as its memory gave it.
        let status = unsafe { (self.api.buf_register)(buf.base(), buf.len(), 0) };
        io_failed("cuFileBufRegister", status)
    }

    /// Deregisters a buffer [`CuFile::register_buf`] registered.
    pub fn deregister_buf(self, buf: &dyn DeviceBuf) -> io::Result<()> {
        buf.bind()?;
        // SAFETY: a base registered before.
        let status = unsafe { (self.api.buf_deregister)(buf.base()) };
        io_failed("cuFileBufDeregister", status)
    }

    /// Registers an open file's descriptor (opened `O_DIRECT`), until the handle drops.
    pub fn register_file(self, fd: RawFd) -> io::Result<CuFileFile> {
        let mut descr = Descr {
            kind: HANDLE_TYPE_OPAQUE_FD,
            handle: DescrHandle { fd },
            fs_ops: std::ptr::null(),
        };
        let mut fh: CuFileHandle = std::ptr::null_mut();
        // SAFETY: out-pointer and descriptor are locals, valid through the call.
        let status = unsafe { (self.api.handle_register)(&mut fh, &mut descr) };
        io_failed("cuFileHandleRegister", status)?;
        Ok(CuFileFile { api: self.api, fh })
    }
}

/// A file registered with cuFile.
pub struct CuFileFile {
    api: &'static Api,
    fh: CuFileHandle,
}

// SAFETY: cuFile's calls are thread-safe; the handle is used by one worker at a time.
unsafe impl Send for CuFileFile {}

impl CuFileFile {
    /// Reads `len` bytes at `offset` of the file into the start of `buf` (`cuFileRead`), on
    /// until all are there; a short file is `UnexpectedEof`.
    pub fn read(&mut self, buf: &mut dyn DeviceBuf, len: usize, offset: u64) -> io::Result<()> {
        assert!(len <= buf.len(), "read past the buffer");
        buf.bind()?;
        let base = buf.base();
        self.each_part("cuFileRead", len, offset, |fh, left, at, done| {
            // SAFETY: [done, done + left) lies inside the registered buffer.
            unsafe { (self.api.read)(fh, base, left, at, done) }
        })
    }

    /// Writes the first `len` bytes of `buf` at `offset` of the file (`cuFileWrite`), on until
    /// all are written.
    pub fn write(&mut self, buf: &dyn DeviceBuf, len: usize, offset: u64) -> io::Result<()> {
        assert!(len <= buf.len(), "write past the buffer");
        buf.bind()?;
        let base = buf.base();
        self.each_part("cuFileWrite", len, offset, |fh, left, at, done| {
            // SAFETY: as for reads.
            unsafe { (self.api.write)(fh, base, left, at, done) }
        })
    }

    /// Calls `call(handle, bytes left, file offset, buffer offset)` until `len` bytes moved: a
    /// negative answer is an error (-1: errno's), 0 the end of the file.
    fn each_part(
        &self,
        what: &str,
        len: usize,
        offset: u64,
        mut call: impl FnMut(CuFileHandle, usize, i64, i64) -> isize,
    ) -> io::Result<()> {
        let mut done = 0usize;
        while done < len {
            let at = i64::try_from(offset + done as u64).map_err(io::Error::other)?;
            let moved = call(self.fh, len - done, at, done as i64);
            match moved {
                -1 => {
                    let e = io::Error::last_os_error();
                    return Err(io::Error::new(e.kind(), format!("{what}: {e}")));
                }
                n if n < 0 => {
                    return Err(io::Error::other(format!(
                        "{what} failed: CUfileOpError {}",
                        -n
                    )))
                }
                0 => {
                    let e = io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("{what}: 0 bytes at offset {at}"),
                    );
                    return Err(e);
                }
                n => done += n as usize,
            }
        }
        Ok(())
    }
}

impl Drop for CuFileFile {
    fn drop(&mut self) {
        // SAFETY: a handle cuFileHandleRegister gave, deregistered once.
        unsafe { (self.api.handle_deregister)(self.fh) }
    }
}

#[cfg(test)]
mod tests;
