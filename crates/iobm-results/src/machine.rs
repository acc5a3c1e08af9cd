//! What a result says of where a run ran: the machine, its network interfaces, the file
//! system and block device under the directory, and the clock its stamps are read from; and
//! what the checks and the verdict know of it ([`Machine`]).

use iobm_stats::names::{OpName, Picks};
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
    /// `--mem gpu`: the GPUs the run's buffers were on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<crate::device::Gpu>,
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
    /// The NUMA node of its device, as sysfs gives it (`device/numa_node`, or a device's above
    /// it); -1: none (a virtual interface, or the kernel says -1). Absent in documents from
    /// before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<i32>,
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
    /// The NUMA node of its controller, as sysfs gives it (the `numa_node` of the nearest
    /// device above the disk); -1: none (no device says, or the kernel says -1). Absent in
    /// documents from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<i32>,
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

/// What the checks know of the machine the data lived on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    pub ram_bytes: u64,
    /// The directory measured is in RAM (tmpfs, ramfs): every rate is a memory rate.
    pub memory_fs: bool,
    /// The network's speed to the storage (S3 endpoints, a network file system's servers) as
    /// stated with --line-rate or read from the link, bytes per second.
    pub line_rate_bytes_per_s: Option<u64>,
    /// The directory is on a network file system, whose server has a cache of its own.
    pub network_fs: bool,
    /// The server's memory as stated with --server-ram.
    pub server_ram_bytes: Option<u64>,
    /// The S3 endpoint was iobm's built-in gateway on this machine (its memory is `ram_bytes`).
    pub builtin_gateway: bool,
    /// CPUs iobm could use (0: not known).
    pub cpus: u32,
    /// The fastest PUT rate of the run (a put phase, the puts of a mixed one, or the upload of
    /// a GET's data set), bytes per second.
    pub put_bytes_per_s: Option<f64>,
    /// The data set read was kept by an earlier run (`--reuse`), not uploaded just before.
    pub reused_data_set: bool,
    /// How the GETs picked objects of the data set (`config.s3.picks`); None: not recorded.
    pub picks: Option<Picks>,
    /// A meta run's lookups were of entries made by whom (`--stride`); None: not a meta run.
    pub meta_made_by: Option<crate::metadata::MadeBy>,
}

/// File systems recognised by type as network file systems (a server cache is possible).
pub const NETWORK_FS_TYPES: [&str; 9] = [
    "nfs",
    "nfs4",
    "lustre",
    "beegfs",
    "gpfs",
    "ceph",
    "fuse.ceph",
    "fuse.glusterfs",
    "cifs",
];

impl Machine {
    /// A machine with this much RAM whose storage is not memory.
    pub fn with_ram(ram_bytes: u64) -> Machine {
        Machine {
            ram_bytes,
            memory_fs: false,
            line_rate_bytes_per_s: None,
            network_fs: false,
            server_ram_bytes: None,
            builtin_gateway: false,
            cpus: 0,
            put_bytes_per_s: None,
            reused_data_set: false,
            picks: None,
            meta_made_by: None,
        }
    }

    /// The memory of the server behind the storage, and where that figure comes from: stated
    /// with --server-ram, this machine's for the built-in gateway, twice this client's for a
    /// network file system; None for local storage.
    pub fn server_cache(&self) -> Option<(u64, &'static str)> {
        match (self.server_ram_bytes, self.builtin_gateway, self.network_fs) {
            (Some(stated), _, _) => Some((stated, "--server-ram")),
            (None, true, _) => Some((self.ram_bytes, "the built-in gateway's, this machine's RAM")),
            (None, false, true) => Some((
                2 * self.ram_bytes,
                "assumed twice this client's RAM; state it with --server-ram",
            )),
            (None, false, false) => None,
        }
    }

    /// The machine of a run: its environment, and what the user stated about its network.
    pub fn of(run: &crate::RunResult) -> Machine {
        let environment = &run.environment;
        let fs_type = environment.storage.as_ref().map(|s| s.fs_type.as_str());
        Machine {
            network_fs: fs_type.is_some_and(|t| NETWORK_FS_TYPES.contains(&t)),
            server_ram_bytes: run.config.server_ram_bytes,
            // The built-in gateway's bytes cross no network; documents from before kept an
            // S3 run's line rate among its S3 settings.
            line_rate_bytes_per_s: match run.config.s3.as_ref() {
                Some(s) if s.builtin_gateway => None,
                s3 => run
                    .config
                    .line_rate_bytes_per_s
                    .or(s3.and_then(|s| s.line_rate_bytes_per_s)),
            },
            builtin_gateway: run.config.s3.as_ref().is_some_and(|s| s.builtin_gateway),
            reused_data_set: run.config.s3.as_ref().is_some_and(|s| s.reused.is_some()),
            picks: run.config.s3.as_ref().and_then(|s| s.picks),
            // mdtest's lookups in `meta` and in `io500` alike.
            meta_made_by: (run.config.meta.as_ref().map(|m| m.stride))
                .or(run.config.io500.as_ref().map(|c| c.stride))
                .map(|stride| crate::metadata::made_by(stride, &run.ranks)),
            cpus: environment.cpus,
            put_bytes_per_s: run
                .phases
                .iter()
                .flat_map(|p| &p.operations)
                .filter(|o| matches!(o.op, OpName::Put | OpName::Multipart))
                .map(|o| o.bytes_per_s)
                .chain(run.config.s3.as_ref().and_then(|s| s.upload_bytes_per_s))
                .filter(|r| *r > 0.0)
                .reduce(f64::max),
            ram_bytes: environment.ram_bytes,
            memory_fs: environment
                .storage
                .as_ref()
                .is_some_and(|s| matches!(s.fs_type.as_str(), "tmpfs" | "ramfs")),
        }
    }
}
