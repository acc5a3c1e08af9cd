//! Where a worker's buffers live: host memory, host memory aligned for `O_DIRECT`, or the memory
//! of a device, reached only by explicit copies in and out. The run picks a [`Placement`]; a
//! target takes buffers outside host memory only when it declares
//! [`Capability::DeviceBuffers`]; through a host bounce buffer ([`DevicePath::Bounce`]) any
//! target serves them. A GPU's memory (`cuda.rs`) is one more [`Memory`], on the devices of
//! `devices.rs`.

use crate::{Capability, Unsupported};
use std::alloc::{self, Layout};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod cuda;
pub mod cufile;
mod devices;
pub mod nvfs;

pub use cuda::LIBCUDA;
pub use cufile::{CuFile, CuFileFile, FakeCuFile, LIBCUFILE};
pub use devices::{DeviceKind, DevicePath, Devices, FakeGpu, GpuInfo};

/// The alignment of [`AlignedHostMemory`]: a page, as `O_DIRECT` requires of buffers.
pub const ALIGN: usize = 4096;

/// Where a run's buffers are placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Placement {
    /// Plain host memory.
    Host,
    /// Host memory aligned to [`ALIGN`] (what `O_DIRECT` and registered io_uring buffers want).
    #[default]
    AlignedHost,
    /// Devices' memory, the workers spread over them.
    Device(Devices),
}

impl Placement {
    /// The memory that makes worker `worker`'s buffers.
    pub fn memory(&self, worker: usize) -> io::Result<Box<dyn Memory>> {
        match self {
            Placement::Host => Ok(Box::new(HostMemory)),
            Placement::AlignedHost => Ok(Box::new(AlignedHostMemory)),
            Placement::Device(devices) => devices.memory(worker),
        }
    }

    /// What a target must declare to take buffers placed here: nothing through a bounce
    /// buffer, which the engine fills; its files' descriptors for cuFile (GPUDirect Storage),
    /// which registers them.
    pub fn needs(&self) -> Option<Capability> {
        self.devices()
            .filter(|d| d.path == DevicePath::Direct)
            .map(|_| Capability::RawFd)
    }

    /// The devices, where buffers are on devices.
    pub fn devices(&self) -> Option<&Devices> {
        match self {
            Placement::Device(devices) => Some(devices),
            Placement::Host | Placement::AlignedHost => None,
        }
    }
}

/// Makes zeroed buffers of one placement.
pub trait Memory: Send + Sync {
    fn alloc(&self, len: usize) -> io::Result<Buffer>;
    /// A host buffer to move this memory's bytes through, aligned for `O_DIRECT` (pinned
    /// memory for a GPU).
    fn bounce(&self, len: usize) -> io::Result<HostBuf> {
        Ok(AlignedHostMemory.host(len))
    }
}

/// A buffer: host memory the engine reads and writes directly, or device memory it reaches only
/// through [`DeviceBuf`]'s copies.
pub enum Buffer {
    Host(HostBuf),
    Device(Box<dyn DeviceBuf>),
}

impl Buffer {
    pub fn len(&self) -> usize {
        match self {
            Buffer::Host(b) => b.len(),
            Buffer::Device(b) => b.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The buffer as host memory; device memory is refused, naming the flag a target needs.
    pub fn into_host(self) -> Result<HostBuf, Unsupported> {
        match self {
            Buffer::Host(b) => Ok(b),
            Buffer::Device(_) => Err(Unsupported(Capability::DeviceBuffers)),
        }
    }
}

/// Memory outside the host's reach: bytes move only by explicit copies.
pub trait DeviceBuf: Send {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Copies `src` into the buffer at `at`.
    fn copy_in(&mut self, at: usize, src: &[u8]) -> io::Result<()>;
    /// Copies the buffer's bytes at `at` into `dst`.
    fn copy_out(&self, at: usize, dst: &mut [u8]) -> io::Result<()>;
    /// The buffer's address as its device's library knows it (a `CUdeviceptr`; the fake's
    /// host address), for cuFile, which reads and writes it itself.
    fn base(&self) -> *mut std::ffi::c_void;
    /// Makes the buffer's device current on this thread (a GPU's context), before a library
    /// reaches the buffer by its address.
    fn bind(&self) -> io::Result<()> {
        Ok(())
    }
}

/// How a foreign host buffer is given back (pinned memory to its driver).
type Free = Box<dyn Fn(NonNull<u8>) + Send + Sync>;

/// A zeroed host buffer with an alignment of its own, or memory another allocator gave.
pub struct HostBuf {
    ptr: NonNull<u8>,
    len: usize,
    align: usize,
    free: Option<Free>,
}

// SAFETY: HostBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for HostBuf {}
// SAFETY: shared access only reads, like a Vec<u8>.
unsafe impl Sync for HostBuf {}

impl HostBuf {
    fn zeroed(len: usize, align: usize) -> HostBuf {
        let layout = Layout::from_size_align(len.max(1), align).expect("buffer size");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        HostBuf {
            ptr,
            len,
            align,
            free: None,
        }
    }

    /// `len` bytes at `ptr` from another allocator, given back by `free` on drop.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` initialised bytes until `free` runs,
    /// and reached by nothing else meanwhile.
    pub unsafe fn foreign(ptr: NonNull<u8>, len: usize, free: Free) -> HostBuf {
        HostBuf {
            ptr,
            len,
            align: 1,
            free: Some(free),
        }
    }
}

impl std::ops::Deref for HostBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for as long as self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl std::ops::DerefMut for HostBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for HostBuf {
    fn drop(&mut self) {
        if let Some(free) = self.free.take() {
            return free(self.ptr);
        }
        let layout = Layout::from_size_align(self.len.max(1), self.align).expect("buffer size");
        // SAFETY: allocated in zeroed() with this same layout.
        unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) }
    }
}

/// Plain host memory (a byte's alignment).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostMemory;

impl Memory for HostMemory {
    fn alloc(&self, len: usize) -> io::Result<Buffer> {
        Ok(Buffer::Host(HostBuf::zeroed(len, 1)))
    }
}

/// Host memory aligned to [`ALIGN`].
#[derive(Debug, Clone, Copy, Default)]
pub struct AlignedHostMemory;

impl AlignedHostMemory {
    /// A zeroed aligned buffer, as host memory.
    pub fn host(self, len: usize) -> HostBuf {
        HostBuf::zeroed(len, ALIGN)
    }
}

impl Memory for AlignedHostMemory {
    fn alloc(&self, len: usize) -> io::Result<Buffer> {
        Ok(Buffer::Host(self.host(len)))
    }
}

/// The copies made to and from [`FakeDeviceMemory`]'s buffers.
#[derive(Debug, Default)]
pub struct Copies {
    into: AtomicU64,
    out_of: AtomicU64,
    bytes: AtomicU64,
}

impl Copies {
    /// Copies into buffers, copies out of them, and the bytes of both, so far.
    pub fn counts(&self) -> (u64, u64, u64) {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        (get(&self.into), get(&self.out_of), get(&self.bytes))
    }
}

/// A device's memory, for tests of the seam: host memory behind [`DeviceBuf`], so nothing
/// touches it but counted copies.
#[derive(Debug, Clone, Default)]
pub struct FakeDeviceMemory {
    copies: Arc<Copies>,
    fake: FakeGpu,
}

impl FakeDeviceMemory {
    /// A memory posing as a GPU of `fake`: each copy takes its delay, and with `corrupt` a
    /// copy in flips the first byte it stores.
    pub fn posing(fake: FakeGpu) -> FakeDeviceMemory {
        FakeDeviceMemory {
            copies: Arc::default(),
            fake,
        }
    }

    /// The copies made to and from every buffer this memory made.
    pub fn copies(&self) -> &Copies {
        &self.copies
    }
}

impl Memory for FakeDeviceMemory {
    fn alloc(&self, len: usize) -> io::Result<Buffer> {
        Ok(Buffer::Device(Box::new(FakeDeviceBuf {
            // Aligned, as the fake cuFile's O_DIRECT reads and writes into it need.
            bytes: AlignedHostMemory.host(len),
            copies: self.copies.clone(),
            fake: self.fake,
        })))
    }
}

struct FakeDeviceBuf {
    bytes: HostBuf,
    copies: Arc<Copies>,
    fake: FakeGpu,
}

impl DeviceBuf for FakeDeviceBuf {
    fn len(&self) -> usize {
        self.bytes.len()
    }
    fn copy_in(&mut self, at: usize, src: &[u8]) -> io::Result<()> {
        self.bytes[at..at + src.len()].copy_from_slice(src);
        if self.fake.corrupt && !src.is_empty() {
            self.bytes[at] ^= 0xff;
        }
        self.copies.into.fetch_add(1, Ordering::Relaxed);
        self.copies
            .bytes
            .fetch_add(src.len() as u64, Ordering::Relaxed);
        std::thread::sleep(self.fake.copy_delay);
        Ok(())
    }
    fn copy_out(&self, at: usize, dst: &mut [u8]) -> io::Result<()> {
        dst.copy_from_slice(&self.bytes[at..at + dst.len()]);
        self.copies.out_of.fetch_add(1, Ordering::Relaxed);
        self.copies
            .bytes
            .fetch_add(dst.len() as u64, Ordering::Relaxed);
        std::thread::sleep(self.fake.copy_delay);
        Ok(())
    }
    fn base(&self) -> *mut std::ffi::c_void {
        self.bytes.as_ptr().cast_mut().cast()
    }
}

/// GPU `id` asked for where there are `count`.
fn no_such_gpu(id: u32, count: u32) -> String {
    match count {
        0 => format!("GPU {id}: the driver sees no GPU here"),
        1 => format!("GPU {id}: this machine has one GPU, number 0"),
        n => format!(
            "GPU {id}: this machine has {n} GPUs, numbered 0 to {}",
            n - 1
        ),
    }
}

/// The NUMA node of the PCI device `bus` (domain:bus:device.function), from sysfs; None
/// where it says -1 (no NUMA) or is not there.
fn numa_node_of(bus: &str) -> Option<i32> {
    let path = format!("/sys/bus/pci/devices/{bus}/numa_node");
    let node: i32 = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    (node >= 0).then_some(node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_buffers_are_zeroed_and_aligned_as_placed() {
        for (placement, align) in [(Placement::Host, 1), (Placement::AlignedHost, ALIGN)] {
            let memory = placement.memory(0).unwrap();
            let mut buf = memory.alloc(10_000).unwrap().into_host().unwrap();
            assert_eq!(buf.len(), 10_000);
            assert!(buf.iter().all(|&b| b == 0));
            assert_eq!(buf.as_ptr() as usize % align, 0, "{placement:?}");
            buf[9_999] = 1;
            assert_eq!(placement.needs(), None);
        }
        assert!(AlignedHostMemory.host(0).is_empty());
    }

    #[test]
    fn device_buffers_are_reached_only_by_counted_copies() {
        let memory = FakeDeviceMemory::default();
        let Buffer::Device(mut buf) = memory.alloc(8).unwrap() else {
            panic!("device memory is not host memory");
        };
        buf.copy_in(2, &[1, 2, 3]).unwrap();
        let mut out = [0u8; 5];
        buf.copy_out(1, &mut out).unwrap();
        assert_eq!(out, [0, 1, 2, 3, 0]);
        assert_eq!(memory.copies().counts(), (1, 1, 8));
        let refused = memory.alloc(1).unwrap().into_host().err();
        assert_eq!(refused, Some(Unsupported(Capability::DeviceBuffers)));
    }

    #[test]
    fn only_direct_device_buffers_need_a_target_that_gives_its_descriptors() {
        let on = |path| {
            Placement::Device(Devices {
                kind: DeviceKind::Fake(FakeGpu::default()),
                ids: vec![0],
                path,
            })
        };
        let direct = on(DevicePath::Direct).needs();
        assert_eq!(direct, Some(Capability::RawFd));
        assert_eq!(on(DevicePath::Bounce).needs(), None);
        let bounce = on(DevicePath::Bounce)
            .memory(0)
            .unwrap()
            .bounce(8192)
            .unwrap();
        assert_eq!(bounce.as_ptr() as usize % ALIGN, 0);
    }

    #[test]
    fn a_corrupting_fake_flips_the_first_byte_copied_in() {
        let fake = FakeGpu {
            corrupt: true,
            ..FakeGpu::default()
        };
        let Buffer::Device(mut buf) = FakeDeviceMemory::posing(fake).alloc(4).unwrap() else {
            panic!("device memory is not host memory");
        };
        buf.copy_in(1, &[7, 7]).unwrap();
        let mut out = [0u8; 4];
        buf.copy_out(0, &mut out).unwrap();
        assert_eq!(out, [0, 7 ^ 0xff, 7, 0]);
    }
}
