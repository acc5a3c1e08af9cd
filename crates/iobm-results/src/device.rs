//! Buffers on devices (`--mem gpu`): where a run placed them (the config), the GPUs it used
//! (the environment), and how much of its operations' time went to copying between a device's
//! buffers and their host bounce buffer (a phase's `device_copy`).

use crate::PhaseResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The memory that stood for the devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceMemory {
    /// GPUs, through the CUDA driver.
    Gpu,
    /// iobm's fake GPU (tests): host memory reached only by copies.
    FakeGpu,
}

/// How bytes moved between storage and the devices' buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransferPath {
    /// Through a host bounce buffer, copied inside each operation (gdsio -x 2).
    Bounce,
    /// The target moved the device's buffers itself (GPUDirect Storage, gdsio -x 0).
    Direct,
}

/// Where a run's buffers lived (config; absent: host memory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// What memory held the buffers: gpu (CUDA) or fake-gpu (iobm's tests).
    pub memory: DeviceMemory,
    /// The device numbers the workers were spread over, worker i on the (i mod n)th.
    pub devices: Vec<u32>,
    /// How bytes moved between storage and the devices: bounce (through host memory).
    pub path: TransferPath,
}

impl MemoryConfig {
    /// As `--mem` takes it: `gpu:0,1`.
    pub fn flag(&self) -> String {
        let ids: Vec<String> = self.devices.iter().map(u32::to_string).collect();
        format!("gpu:{}", ids.join(","))
    }
}

/// A GPU the run used, as its driver describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Gpu {
    /// The GPU's number, as the driver counts them (`--mem gpu:N`).
    pub id: u32,
    /// Its model, as the driver names it.
    pub name: String,
    /// Its memory, in bytes.
    pub memory_bytes: u64,
    /// The CUDA version the driver supports (cuDriverGetVersion).
    pub driver: String,
    /// PCI domain:bus:device.function.
    pub pci_bus: String,
    /// The NUMA node the GPU hangs off, where the machine has NUMA.
    pub numa_node: Option<i32>,
}

/// The copies between devices' buffers and their bounce buffer in a phase's operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceCopy {
    /// The counted operations' copies, summed over the workers.
    pub copy_ns: u64,
    /// The counted operations' time (their latencies), summed over the workers.
    pub op_ns: u64,
    /// copy_ns of op_ns, in percent (0 to 100).
    pub share_pct: f64,
}

impl DeviceCopy {
    /// The copies of `phase`'s workers against its operations' time; None where no worker
    /// copied (buffers in host memory).
    pub fn of(phase: &PhaseResult) -> Option<DeviceCopy> {
        let copy_ns: u64 = phase.workers.iter().map(|w| w.copy_ns).sum();
        if copy_ns == 0 {
            return None;
        }
        let op_ns = phase.latency.histogram.sum_ns;
        let share_pct = if op_ns == 0 {
            100.0
        } else {
            (copy_ns as f64 * 100.0 / op_ns as f64).min(100.0)
        };
        Some(DeviceCopy {
            copy_ns,
            op_ns,
            share_pct,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::DeviceCopy;
    use crate::checks::tests::{phase, MIB};
    use iobm_stats::names::OpName;

    #[test]
    fn the_copy_share_is_of_the_counted_operations_time() {
        let mut p = phase(OpName::Read, [MIB, MIB], [10, 10]);
        assert_eq!(DeviceCopy::of(&p), None, "buffers in host memory");
        p.latency.histogram.sum_ns = 4000;
        p.workers[0].copy_ns = 1000;
        p.workers[1].copy_ns = 500;
        let copy = DeviceCopy::of(&p).unwrap();
        assert_eq!((copy.copy_ns, copy.op_ns), (1500, 4000));
        assert_eq!(copy.share_pct, 37.5);
        // Never above 100%, even where the latencies were not recorded.
        p.latency.histogram.sum_ns = 1000;
        assert_eq!(DeviceCopy::of(&p).unwrap().share_pct, 100.0);
    }
}
