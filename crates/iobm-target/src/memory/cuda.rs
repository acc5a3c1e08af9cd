//! The CUDA driver, loaded at run time (`libcuda.so.1`, no toolkit at build time): only the
//! driver-API calls iobm makes, with the C signatures of NVIDIA's `cuda.h` (CUDA 12.6), and a
//! GPU's memory as a [`Memory`]: device buffers (`cuMemAlloc_v2`) reached by `cuMemcpyHtoD_v2`
//! and `cuMemcpyDtoH_v2` from pinned bounce buffers (`cuMemAllocHost_v2`). Unverified on a
//! GPU: no machine with one has run it.

use super::{Buffer, DeviceBuf, GpuInfo, HostBuf, Memory, ALIGN};
use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::io;
use std::ptr::NonNull;
use std::sync::OnceLock;

/// `CUresult`: an enum of `cuda.h`, an `int`; 0 is `CUDA_SUCCESS`.
type CuResult = c_int;
/// `CUdevice`: `typedef int CUdevice_v1`.
type CuDevice = c_int;
/// `CUdeviceptr`: `typedef unsigned long long CUdeviceptr_v2` on 64-bit hosts.
type CuDevicePtr = u64;
/// `CUcontext`: `typedef struct CUctx_st *CUcontext`.
type CuContext = *mut c_void;

/// `CU_DEVICE_ATTRIBUTE_PCI_BUS_ID`, `_PCI_DEVICE_ID`, `_PCI_DOMAIN_ID` of `CUdevice_attribute`.
const ATTR_PCI_BUS: c_int = 33;
const ATTR_PCI_DEVICE: c_int = 34;
const ATTR_PCI_DOMAIN: c_int = 50;

/// The library's name, as the driver installs it.
pub const LIBCUDA: &str = "libcuda.so.1";

/// The driver-API entry points iobm calls, each with its `cuda.h` declaration.
struct Driver {
    _lib: libloading::Library,
    /// `CUresult cuInit(unsigned int Flags)`
    init: unsafe extern "C" fn(c_uint) -> CuResult,
    /// `CUresult cuDriverGetVersion(int *driverVersion)`
    driver_version: unsafe extern "C" fn(*mut c_int) -> CuResult,
    /// `CUresult cuDeviceGetCount(int *count)`
    device_count: unsafe extern "C" fn(*mut c_int) -> CuResult,
    /// `CUresult cuDeviceGet(CUdevice *device, int ordinal)`
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    /// `CUresult cuDeviceGetName(char *name, int len, CUdevice dev)`
    device_name: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    /// `CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)`
    total_mem: unsafe extern "C" fn(*mut usize, CuDevice) -> CuResult,
    /// `CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)`
    attribute: unsafe extern "C" fn(*mut c_int, c_int, CuDevice) -> CuResult,
    /// `CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)`
    ctx_retain: unsafe extern "C" fn(*mut CuContext, CuDevice) -> CuResult,
    /// `CUresult cuCtxSetCurrent(CUcontext ctx)`
    ctx_set_current: unsafe extern "C" fn(CuContext) -> CuResult,
    /// `CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)`
    mem_alloc: unsafe extern "C" fn(*mut CuDevicePtr, usize) -> CuResult,
    /// `CUresult cuMemFree_v2(CUdeviceptr dptr)`
    mem_free: unsafe extern "C" fn(CuDevicePtr) -> CuResult,
    /// `CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)`
    host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> CuResult,
    /// `CUresult cuMemFreeHost(void *p)`
    host_free: unsafe extern "C" fn(*mut c_void) -> CuResult,
    /// `CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)`
    htod: unsafe extern "C" fn(CuDevicePtr, *const c_void, usize) -> CuResult,
    /// `CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)`
    dtoh: unsafe extern "C" fn(*mut c_void, CuDevicePtr, usize) -> CuResult,
    /// `CUresult cuGetErrorName(CUresult error, const char **pStr)`
    error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
}

// SAFETY: the driver API is thread-safe; the struct holds only the library and its functions.
unsafe impl Send for Driver {}
// SAFETY: as above.
unsafe impl Sync for Driver {}

/// Looks a function up in `lib` as the type it is declared with above.
///
/// # Safety
/// `T` must be the function's C signature.
unsafe fn symbol<T: Copy>(lib: &libloading::Library, name: &str) -> Result<T, String> {
    // SAFETY: the caller gives the declared type.
    unsafe { lib.get::<T>(name.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{LIBCUDA} has no {name} ({e}): the NVIDIA driver is too old"))
}

impl Driver {
    fn load() -> Result<Driver, String> {
        // SAFETY: loading the driver runs its initialisers, which expect nothing of us.
        let lib = unsafe { libloading::Library::new(LIBCUDA) }
            .map_err(|e| format!("{LIBCUDA} cannot be loaded ({e}): no NVIDIA driver here"))?;
        // SAFETY: every type below is the declaration of cuda.h quoted on its field.
        let driver = unsafe {
            Driver {
                init: symbol(&lib, "cuInit")?,
                driver_version: symbol(&lib, "cuDriverGetVersion")?,
                device_count: symbol(&lib, "cuDeviceGetCount")?,
                device_get: symbol(&lib, "cuDeviceGet")?,
                device_name: symbol(&lib, "cuDeviceGetName")?,
                total_mem: symbol(&lib, "cuDeviceTotalMem_v2")?,
                attribute: symbol(&lib, "cuDeviceGetAttribute")?,
                ctx_retain: symbol(&lib, "cuDevicePrimaryCtxRetain")?,
                ctx_set_current: symbol(&lib, "cuCtxSetCurrent")?,
                mem_alloc: symbol(&lib, "cuMemAlloc_v2")?,
                mem_free: symbol(&lib, "cuMemFree_v2")?,
                host_alloc: symbol(&lib, "cuMemAllocHost_v2")?,
                host_free: symbol(&lib, "cuMemFreeHost")?,
                htod: symbol(&lib, "cuMemcpyHtoD_v2")?,
                dtoh: symbol(&lib, "cuMemcpyDtoH_v2")?,
                error_name: symbol(&lib, "cuGetErrorName")?,
                _lib: lib,
            }
        };
        // SAFETY: cuInit takes flags 0.
        driver.check("cuInit", unsafe { (driver.init)(0) })?;
        Ok(driver)
    }

    /// `what` failed with `code`, named as cuda.h names it; Ok for `CUDA_SUCCESS`.
    fn check(&self, what: &str, code: CuResult) -> Result<(), String> {
        if code == 0 {
            return Ok(());
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorName writes a pointer to a static string, or fails.
        let named = unsafe { (self.error_name)(code, &mut name) } == 0 && !name.is_null();
        let name = if named {
            // SAFETY: the driver's static, NUL-terminated name.
            unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        } else {
            "an unknown error".to_string()
        };
        Err(format!("{what} failed: {name} ({code})"))
    }

    fn io(&self, what: &str, code: CuResult) -> io::Result<()> {
        self.check(what, code).map_err(io::Error::other)
    }

    fn int(&self, what: &str, call: impl FnOnce(*mut c_int) -> CuResult) -> Result<c_int, String> {
        let mut out: c_int = 0;
        self.check(what, call(&mut out))?;
        Ok(out)
    }

    /// Device `ordinal` and its primary context, made current on this thread.
    fn open(&self, ordinal: u32) -> Result<(CuDevice, CuContext), String> {
        let ordinal = c_int::try_from(ordinal).map_err(|e| e.to_string())?;
        // SAFETY: out-pointers to locals.
        let device = self.int("cuDeviceGet", |d| unsafe { (self.device_get)(d, ordinal) })?;
        let mut ctx: CuContext = std::ptr::null_mut();
        // SAFETY: as above.
        self.check("cuDevicePrimaryCtxRetain", unsafe {
            (self.ctx_retain)(&mut ctx, device)
        })?;
        // SAFETY: a context the driver gave.
        self.check("cuCtxSetCurrent", unsafe { (self.ctx_set_current)(ctx) })?;
        Ok((device, ctx))
    }
}

static DRIVER: OnceLock<Result<Driver, String>> = OnceLock::new();

/// The driver, loaded and initialised once; the error says what is missing.
fn driver() -> Result<&'static Driver, String> {
    DRIVER
        .get_or_init(Driver::load)
        .as_ref()
        .map_err(Clone::clone)
}

/// The GPUs `ids` name, checked: the driver loads, and each is a device of this machine.
pub fn gpus(ids: &[u32]) -> Result<Vec<GpuInfo>, String> {
    let driver = driver()?;
    // SAFETY: out-pointers to locals.
    let count = driver.int("cuDeviceGetCount", |c| unsafe { (driver.device_count)(c) })?;
    let version = driver.int("cuDriverGetVersion", |v| unsafe {
        (driver.driver_version)(v)
    })?;
    let mut infos = Vec::new();
    for &id in ids {
        if i64::from(id) >= i64::from(count) {
            return Err(super::no_such_gpu(id, count.max(0) as u32));
        }
        let (device, _) = driver.open(id)?;
        let mut name = [0 as c_char; 256];
        // SAFETY: the buffer's length is passed.
        driver.check("cuDeviceGetName", unsafe {
            (driver.device_name)(name.as_mut_ptr(), name.len() as c_int, device)
        })?;
        let mut total = 0usize;
        // SAFETY: out-pointer to a local.
        driver.check("cuDeviceTotalMem_v2", unsafe {
            (driver.total_mem)(&mut total, device)
        })?;
        // SAFETY: out-pointers to locals.
        let attr = |a: c_int| {
            driver.int("cuDeviceGetAttribute", |p| unsafe {
                (driver.attribute)(p, a, device)
            })
        };
        let pci_bus = format!(
            "{:04x}:{:02x}:{:02x}.0",
            attr(ATTR_PCI_DOMAIN)?,
            attr(ATTR_PCI_BUS)?,
            attr(ATTR_PCI_DEVICE)?
        );
        infos.push(GpuInfo {
            id,
            // SAFETY: the driver NUL-terminates the name within the buffer.
            name: unsafe { CStr::from_ptr(name.as_ptr()) }
                .to_string_lossy()
                .into_owned(),
            memory_bytes: total as u64,
            driver: driver_name(
                version,
                &std::fs::read_to_string(MODULE_VERSION).unwrap_or_default(),
            ),
            numa_node: super::numa_node_of(&pci_bus),
            pci_bus,
        });
    }
    Ok(infos)
}

/// Where the NVIDIA kernel module says its version.
const MODULE_VERSION: &str = "/proc/driver/nvidia/version";

/// The driver as the environment names it: the CUDA version it supports (cuDriverGetVersion:
/// 1000 x major + 10 x minor) and the kernel module's version from its `NVRM version:` line.
fn driver_name(cuda: c_int, module: &str) -> String {
    let words: Vec<&str> = module
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let release = words
        .iter()
        .position(|w| *w == "Module")
        .and_then(|i| words.get(i + 1));
    let cuda = format!("CUDA {}.{}", cuda / 1000, cuda % 1000 / 10);
    match release {
        Some(r) => format!("{cuda}, driver {r}"),
        None => cuda,
    }
}

/// GPU `id`'s memory: device buffers and pinned host bounce buffers.
pub struct CudaMemory {
    driver: &'static Driver,
    ctx: CuContext,
}

// SAFETY: a primary context may be made current on any thread; every call does so first.
unsafe impl Send for CudaMemory {}
// SAFETY: as above.
unsafe impl Sync for CudaMemory {}

impl CudaMemory {
    pub fn open(id: u32) -> io::Result<CudaMemory> {
        let driver = driver().map_err(io::Error::other)?;
        let (_, ctx) = driver.open(id).map_err(io::Error::other)?;
        Ok(CudaMemory { driver, ctx })
    }
}

/// Makes `ctx` current on this thread (a worker's copies run on its own thread).
fn current(driver: &Driver, ctx: CuContext) -> io::Result<()> {
    // SAFETY: a context the driver gave.
    driver.io("cuCtxSetCurrent", unsafe { (driver.ctx_set_current)(ctx) })
}

impl Memory for CudaMemory {
    fn alloc(&self, len: usize) -> io::Result<Buffer> {
        current(self.driver, self.ctx)?;
        let mut ptr: CuDevicePtr = 0;
        // SAFETY: out-pointer to a local.
        let code = unsafe { (self.driver.mem_alloc)(&mut ptr, len.max(1)) };
        self.driver.io("cuMemAlloc_v2", code)?;
        let mut buf = CudaBuf {
            driver: self.driver,
            ctx: self.ctx,
            ptr,
            len,
        };
        buf.copy_in(0, &vec![0; len])?;
        Ok(Buffer::Device(Box::new(buf)))
    }

    fn bounce(&self, len: usize) -> io::Result<HostBuf> {
        current(self.driver, self.ctx)?;
        let mut pinned: *mut c_void = std::ptr::null_mut();
        // A page more, so that the buffer starts on a page (O_DIRECT), whatever the driver's
        // alignment.
        // SAFETY: out-pointer to a local.
        let code = unsafe { (self.driver.host_alloc)(&mut pinned, len + ALIGN) };
        self.driver.io("cuMemAllocHost_v2", code)?;
        let skip = (pinned as usize).next_multiple_of(ALIGN) - pinned as usize;
        // SAFETY: skip < ALIGN, inside the allocation.
        let ptr = NonNull::new(unsafe { pinned.cast::<u8>().add(skip) })
            .ok_or_else(|| io::Error::other("cuMemAllocHost_v2 gave no memory"))?;
        // SAFETY: ptr holds len bytes of the allocation.
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
        let (driver, ctx, pinned) = (self.driver, self.ctx as usize, pinned as usize);
        let free = move |_: NonNull<u8>| {
            // SAFETY: pinned memory from cuMemAllocHost_v2, freed once, in its context.
            unsafe {
                (driver.ctx_set_current)(ctx as CuContext);
                (driver.host_free)(pinned as *mut c_void);
            }
        };
        // SAFETY: ptr is valid for len bytes until `free` runs.
        Ok(unsafe { HostBuf::foreign(ptr, len, Box::new(free)) })
    }
}

/// A buffer in a GPU's memory.
struct CudaBuf {
    driver: &'static Driver,
    ctx: CuContext,
    ptr: CuDevicePtr,
    len: usize,
}

// SAFETY: device memory is reached only through the driver's copies.
unsafe impl Send for CudaBuf {}

impl DeviceBuf for CudaBuf {
    fn len(&self) -> usize {
        self.len
    }

    fn copy_in(&mut self, at: usize, src: &[u8]) -> io::Result<()> {
        assert!(at + src.len() <= self.len, "copy past the buffer");
        current(self.driver, self.ctx)?;
        // SAFETY: the range lies inside the allocation; src is valid for its length.
        let code =
            unsafe { (self.driver.htod)(self.ptr + at as u64, src.as_ptr().cast(), src.len()) };
        self.driver.io("cuMemcpyHtoD_v2", code)
    }

    fn copy_out(&self, at: usize, dst: &mut [u8]) -> io::Result<()> {
        assert!(at + dst.len() <= self.len, "copy past the buffer");
        current(self.driver, self.ctx)?;
        // SAFETY: as above, dst valid for writes of its length.
        let code =
            unsafe { (self.driver.dtoh)(dst.as_mut_ptr().cast(), self.ptr + at as u64, dst.len()) };
        self.driver.io("cuMemcpyDtoH_v2", code)
    }

    fn base(&self) -> *mut c_void {
        self.ptr as *mut c_void
    }

    fn bind(&self) -> io::Result<()> {
        current(self.driver, self.ctx)
    }
}

impl Drop for CudaBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc_v2 in this context, freed once.
        unsafe {
            (self.driver.ctx_set_current)(self.ctx);
            (self.driver.mem_free)(self.ptr);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_driver_is_named_by_its_cuda_version_and_its_module() {
        let line = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version: gcc 12";
        assert_eq!(
            super::driver_name(12040, line),
            "CUDA 12.4, driver 550.54.15"
        );
        assert_eq!(super::driver_name(12060, ""), "CUDA 12.6");
    }
}
