//! What a result says of where a run ran: the machine, its network interfaces, the file
//! system and block device under the directory, and the clock its stamps are read from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The machine and storage the run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Environment {
    /// Host name of the machine that ran the workers.
    pub hostname: String,
    /// Operating system (PRETTY_NAME from /etc/os-release).
    pub os: String,
    /// Kernel release (uname -r).
    pub kernel: String,
    /// Kernel build (uname -v).
    pub kernel_version: String,
    /// Machine architecture (uname -m).
    pub arch: String,
    /// CPUs available to iobm: its affinity mask (under mpirun often fewer than the machine has).
    pub cpus: u32,
    /// CPUs the machine has online (0 in documents from before).
    #[serde(default)]
    pub cpus_online: u32,
    /// NUMA nodes (0 where the kernel does not say, and in documents from before).
    #[serde(default)]
    pub numa_nodes: u32,
    /// CPU model name, when /proc/cpuinfo tells.
    pub cpu_model: Option<String>,
    /// Physical memory in bytes (MemTotal).
    pub ram_bytes: u64,
    /// iobm version.
    pub iobm_version: String,
    /// The file system holding the run's directory.
    pub storage: Option<StorageInfo>,
    /// The CPUs of iobm's affinity mask as a list ("0-3,8"); `cpus` counts them.
    #[serde(default)]
    pub affinity: String,
    /// The network interfaces (not loopback), as sysfs describes them.
    #[serde(default)]
    pub nics: Vec<Nic>,
    /// The MPI library under MPI (its own version string, e.g. "Open MPI v4.1.4, ..."); null
    /// without MPI.
    #[serde(default)]
    pub mpi: Option<String>,
}

/// A network interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nic {
    /// Its name (eth0, ib0, ...).
    pub name: String,
    /// Link speed in Mbit/s, when the driver says (not for virtual interfaces).
    pub speed_mbit: Option<u64>,
    /// MTU in bytes.
    pub mtu: Option<u32>,
    /// Operational state ("up", "down", "unknown").
    pub state: String,
}

/// The file system under test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageInfo {
    /// The directory measured.
    pub path: String,
    /// File system type (ext4, xfs, nfs4, tmpfs, lustre, ...), from /proc/self/mountinfo.
    pub fs_type: String,
    /// Mount point holding the directory.
    pub mount_point: String,
    /// What is mounted there (device, server:/export, ...).
    pub mount_source: String,
    /// Mount options, per-mount then per-superblock.
    pub mount_options: String,
    /// Device number as major:minor.
    pub device: String,
    /// Size of the file system in bytes (statvfs).
    pub total_bytes: u64,
    /// Bytes available to iobm before the run (statvfs f_bavail).
    pub available_bytes: u64,
    /// The block device behind it, when there is one (not for network or memory file systems).
    #[serde(default)]
    pub block_device: Option<BlockDevice>,
}

/// A block device as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockDevice {
    /// The disk's name (`nvme0n1`, `sda`, `vda`), the whole disk for a partition.
    pub name: String,
    /// Its model, when the driver says (`device/model`).
    pub model: Option<String>,
    /// Whether it is rotational (a spinning disk), when the kernel says.
    pub rotational: Option<bool>,
    /// The I/O scheduler in use (`mq-deadline`, `none`, ...).
    pub scheduler: Option<String>,
}

/// How stamps relate to the wall clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClockInfo {
    /// The clock all *_ns stamps and durations are read from.
    pub source: String,
    /// Wall-clock time of stamp 0, in nanoseconds since the Unix epoch.
    pub origin_unix_ns: u64,
    /// How well the wall clock was kept when the run began, as the kernel says (`adjtimex`):
    /// "synchronized, estimated error N us, at most M us" or "not synchronized"; runs merged
    /// by their wall clocks (`iobm merge`) line up only this well. Null in documents from
    /// before, or where the kernel does not say.
    #[serde(default)]
    pub wall_clock: Option<String>,
}
