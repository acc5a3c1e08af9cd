//! A GPU's copy rates as `iobm limits --gpu N` measures them: host to device and device to
//! host, from pinned and from pageable host memory, so that a `--mem gpu` phase, whose bytes
//! each cross one such copy, is shown as a share of them.

use crate::device::DeviceMemory;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Which way a copy goes between host memory and a GPU's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CopyDirection {
    /// Host memory into the GPU's (what a read into GPU buffers ends with).
    HostToDevice,
    /// The GPU's memory into host memory (what a write from GPU buffers starts with).
    DeviceToHost,
}

/// The host side of a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HostMemoryKind {
    /// Page-locked memory the driver allocated (`cuMemAllocHost`): what iobm's bounce buffers
    /// are.
    Pinned,
    /// Ordinary (pageable) memory, which the driver stages through pinned memory of its own.
    Pageable,
}

impl CopyDirection {
    pub const ALL: [CopyDirection; 2] = [CopyDirection::HostToDevice, CopyDirection::DeviceToHost];
}

impl HostMemoryKind {
    pub const ALL: [HostMemoryKind; 2] = [HostMemoryKind::Pinned, HostMemoryKind::Pageable];
}

impl fmt::Display for CopyDirection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CopyDirection::HostToDevice => "host to device",
            CopyDirection::DeviceToHost => "device to host",
        })
    }
}

impl fmt::Display for HostMemoryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HostMemoryKind::Pinned => "pinned",
            HostMemoryKind::Pageable => "pageable",
        })
    }
}

/// One copy rate of a GPU.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuCopyRate {
    /// host-to-device or device-to-host.
    pub direction: CopyDirection,
    /// The host memory copied from or into: pinned or pageable.
    pub host: HostMemoryKind,
    /// Bytes per second of wall-clock time, copies of `copy_bytes` one after another.
    pub bytes_per_s: f64,
}

/// A GPU's copy rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GpuLimits {
    /// The GPU's number, as the driver counts them (`--gpu N`).
    pub id: u32,
    /// Its model, as the driver names it.
    pub name: String,
    /// What memory stood for it: gpu (CUDA) or fake-gpu (iobm's tests).
    pub memory: DeviceMemory,
    /// Bytes of each copy.
    pub copy_bytes: u64,
    /// Each direction from or into each kind of host memory.
    pub rates: Vec<GpuCopyRate>,
}

impl GpuLimits {
    /// The rate measured one way from or into one kind of host memory.
    pub fn rate(&self, direction: CopyDirection, host: HostMemoryKind) -> Option<f64> {
        self.rates
            .iter()
            .find(|r| r.direction == direction && r.host == host)
            .map(|r| r.bytes_per_s)
    }
}
