//! Buffers in devices' memory: which devices a run's workers spread over (elbencho's
//! `--gpuids`), which memory stands for them (a GPU through the CUDA driver, or the fake device
//! of the tests), how bytes reach storage (through a host bounce buffer, or straight from the
//! device), and what each device is.

use super::{cuda, no_such_gpu, CuFile, FakeCuFile, FakeDeviceMemory, Memory};
use std::io;
use std::time::Duration;

/// The devices a run's buffers live on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Devices {
    pub kind: DeviceKind,
    /// Device numbers; worker i's buffers are on `ids[i % ids.len()]`.
    pub ids: Vec<u32>,
    pub path: DevicePath,
}

/// What memory stands for the devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// GPUs, through the CUDA driver loaded at run time ([`cuda`]).
    Cuda,
    /// [`FakeDeviceMemory`] posing as this many GPUs, for tests of the whole path.
    Fake(FakeGpu),
}

/// The fake GPUs of the tests: how many, how long each copy takes, whether copies into a
/// device flip its first byte (so a check that reads the device, not the bounce buffer, fails),
/// and the fake cuFile that reaches them (None: the real library, which cannot reach a fake
/// GPU's memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FakeGpu {
    pub count: u32,
    pub copy_delay: Duration,
    pub corrupt: bool,
    pub cufile: Option<FakeCuFile>,
}

/// How bytes move between storage and device buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DevicePath {
    /// Through a host bounce buffer, the copy timed inside each operation (gdsio's `-x 2`).
    Bounce,
    /// cuFile reads and writes the device buffers from the files' descriptors (GPUDirect
    /// Storage, gdsio's `-x 0`, [`Devices::cufile`]); the target must declare
    /// [`crate::Capability::RawFd`].
    Direct,
}

/// A device as the environment records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuInfo {
    pub id: u32,
    pub name: String,
    pub memory_bytes: u64,
    /// The driver's version as the driver reports it.
    pub driver: String,
    /// PCI domain:bus:device.function.
    pub pci_bus: String,
    /// The NUMA node the device hangs off (sysfs), where the machine has NUMA.
    pub numa_node: Option<i32>,
}

impl Devices {
    /// The device worker `worker`'s buffers are on.
    pub fn of_worker(&self, worker: usize) -> u32 {
        self.ids[worker % self.ids.len()]
    }

    /// Worker `worker`'s memory.
    pub fn memory(&self, worker: usize) -> io::Result<Box<dyn Memory>> {
        let id = self.of_worker(worker);
        match self.kind {
            DeviceKind::Cuda => Ok(Box::new(cuda::CudaMemory::open(id)?)),
            DeviceKind::Fake(fake) => Ok(Box::new(FakeDeviceMemory::posing(fake))),
        }
    }

    /// The cuFile that moves these devices' bytes on the direct path: the real library (its
    /// driver opened), or the fake GPU's fake; the error says what is missing, in one line.
    pub fn cufile(&self) -> Result<CuFile, String> {
        match self.kind {
            DeviceKind::Cuda => CuFile::load(),
            DeviceKind::Fake(FakeGpu {
                cufile: Some(fake), ..
            }) => Ok(CuFile::fake(fake)),
            DeviceKind::Fake(_) => CuFile::load().and_then(|_| {
                Err("a fake GPU's memory is host memory, which the real cuFile cannot reach: set IOBM_TEST_FAKE_CUFILE".to_string())
            }),
        }
    }

    /// The devices, checked before anything is created: cuFile loads and its driver opens
    /// (on the direct path), the GPU driver loads and every number is a device here; the
    /// error says what is missing, in one line.
    pub fn check(&self) -> Result<Vec<GpuInfo>, String> {
        if self.path == DevicePath::Direct {
            self.cufile()?;
        }
        match self.kind {
            DeviceKind::Cuda => cuda::gpus(&self.ids),
            DeviceKind::Fake(fake) => self
                .ids
                .iter()
                .map(|&id| {
                    if id >= fake.count {
                        return Err(no_such_gpu(id, fake.count));
                    }
                    Ok(GpuInfo {
                        id,
                        name: "iobm fake GPU".to_string(),
                        memory_bytes: 1 << 30,
                        driver: "none (fake)".to_string(),
                        pci_bus: format!("0000:{:02x}:00.0", 0x80 + id),
                        numa_node: None,
                    })
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(ids: Vec<u32>, count: u32) -> Devices {
        let fake = FakeGpu {
            count,
            ..FakeGpu::default()
        };
        Devices {
            kind: DeviceKind::Fake(fake),
            ids,
            path: DevicePath::Bounce,
        }
    }

    #[test]
    fn workers_spread_over_the_devices_listed() {
        let devices = fake(vec![1, 0, 3], 4);
        let spread: Vec<u32> = (0..5).map(|w| devices.of_worker(w)).collect();
        assert_eq!(spread, [1, 0, 3, 1, 0]);
        let infos = devices.check().unwrap();
        assert_eq!(infos.iter().map(|i| i.id).collect::<Vec<_>>(), [1, 0, 3]);
    }

    #[test]
    fn a_device_that_is_not_there_is_named_with_those_that_are() {
        assert_eq!(
            fake(vec![0, 2], 2).check().unwrap_err(),
            "GPU 2: this machine has 2 GPUs, numbered 0 to 1"
        );
        assert_eq!(
            fake(vec![1], 1).check().unwrap_err(),
            "GPU 1: this machine has one GPU, number 0"
        );
    }

    #[test]
    fn no_driver_is_one_line_naming_the_library() {
        // This machine has no NVIDIA driver: the library itself is what is missing.
        assert!(libloading_fails(), "an NVIDIA driver is installed here");
        let cuda = Devices {
            kind: DeviceKind::Cuda,
            ids: vec![0],
            path: DevicePath::Bounce,
        };
        let error = cuda.check().unwrap_err();
        assert!(
            error.starts_with("libcuda.so.1 cannot be loaded ("),
            "{error}"
        );
        assert!(error.ends_with("): no NVIDIA driver here"), "{error}");
        assert!(!error.contains('\n'));
        assert!(cuda.memory(0).is_err());
    }

    fn libloading_fails() -> bool {
        // SAFETY: only tried, as the driver would be.
        unsafe { libloading::Library::new(cuda::LIBCUDA) }.is_err()
    }
}
