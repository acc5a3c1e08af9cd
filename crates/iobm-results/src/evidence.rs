//! A phase's cache evidence: the page cache, the block devices and layers below, the servers'
//! counters, the wire, and the verdict derived from them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Measurements that tell a storage rate from a cache rate.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheEvidence {
    /// Bytes of the phase's files in the page cache just before it began (reads without
    /// O_DIRECT on file systems that can tell).
    pub resident_before_bytes: Option<u64>,
    /// What the block device under the file system moved during the phase, when there is one.
    pub device: Option<DeviceIo>,
    /// This run's own bytes at the block layer during the phase (`/proc/self/io`, every
    /// rank's): beside `device`, which counts every process's. Null: not measured.
    #[serde(default)]
    pub own_io: Option<OwnIo>,
    /// The layers below the file system's block device, followed down to the devices at the
    /// bottom, with what those moved (each host's once); empty when nothing lies below it.
    #[serde(default)]
    pub below: Vec<Below>,
    /// What each server counted during the phase: every S3 endpoint that is an iobm gateway,
    /// and every `--server-metrics` endpoint.
    #[serde(default)]
    pub servers: Vec<ServerEvidence>,
    /// Whether the phase's rate is the storage's or a cache's, with its evidence: derived
    /// from the rest of the document (recomputed by `iobm report`).
    #[serde(default)]
    pub verdict: Option<CacheVerdict>,
    /// What the clients' network interfaces moved during the phase (each host's once, under
    /// MPI too); interfaces that moved nothing are left out.
    #[serde(default)]
    pub wire: Vec<NicIo>,
}

/// This run's own I/O at the block layer during a phase (`/proc/self/io` before and after it,
/// every rank's added): no other process's bytes are in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OwnIo {
    /// Bytes the run's reads had a block device fetch (`read_bytes`: counted as they are asked
    /// of the file system's device, readahead included; nothing for what the page cache held).
    pub read_bytes: u64,
    /// Bytes the run dirtied in the page cache or wrote with O_DIRECT (`write_bytes`): what it
    /// handed towards the storage, whether or not it reached a device during the phase.
    pub written_bytes: u64,
}

/// The layers under a file system's block device over one phase, on one host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Below {
    /// The host.
    pub host: String,
    /// The file system's device as major:minor, or "btrfs UUID" (btrfs files report a device
    /// of no disk; its member devices are below it).
    pub top: String,
    /// The way down, one step per layer ("7:0 (loop0): a loop device over /img on 254:1").
    pub steps: Vec<String>,
    /// The devices at the bottom and what each moved during the phase.
    pub devices: Vec<BottomIo>,
    /// The loop devices' backing files on the way down.
    pub backing_files: Vec<BackingFile>,
    /// What could not be followed and why (a virtual disk whose host may cache, a backing file
    /// on a file system without a device).
    pub unfollowed: Vec<String>,
}

/// A device at the bottom of the stack, over one phase.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BottomIo {
    /// As major:minor.
    pub device: String,
    /// The kernel's name (sda1, vda, nvme0n1).
    pub name: String,
    /// Bytes read from it during the phase (every process's).
    pub read_bytes: u64,
    /// Bytes written to it during the phase (every process's).
    pub written_bytes: u64,
    /// The kind of virtual disk (virtio, xen, QEMU, ...) when it is one: its host may cache.
    pub virtual_disk: Option<String>,
    /// The RAM it is, found from its driver in sysfs or `/proc/devices` ("zram, compressed
    /// RAM", brd, pmem, null_blk): every byte it moves is a memory byte. Null: a device of
    /// storage of its own (and documents from before).
    #[serde(default)]
    pub ram: Option<String>,
}

/// A loop device's backing file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackingFile {
    /// The loop device, as major:minor.
    pub loop_device: String,
    /// The file.
    pub path: String,
    /// The loop device reads and writes it with O_DIRECT (`loop/dio`), bypassing the page
    /// cache; false: through it, so the file's pages there serve the loop device's reads.
    pub direct_io: bool,
    /// Its size in bytes.
    pub size_bytes: u64,
    /// Its bytes in the page cache when the phase began; null: not measured.
    pub resident_before_bytes: Option<u64>,
    /// Its bytes in the page cache when the phase ended; null: not measured.
    pub resident_after_bytes: Option<u64>,
    /// Its bytes dirty or under write-back (not yet on its device) when the phase began;
    /// null: not measured (cachestat needs Linux 6.5).
    #[serde(default)]
    pub dirty_before_bytes: Option<u64>,
    /// Its bytes dirty or under write-back when the phase ended.
    #[serde(default)]
    pub dirty_after_bytes: Option<u64>,
}

/// A storage server's counters over one phase: an iobm gateway's own (for the run's bucket),
/// or node_exporter's (devices, page cache, memory, network, CPU).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerEvidence {
    /// The endpoint's URL.
    pub endpoint: String,
    /// Bytes of object bodies it sent.
    pub served_bytes: u64,
    /// Of the bytes GETs asked for, those in its page cache when it opened the object
    /// (cachestat or mincore).
    pub resident_bytes: u64,
    /// Bytes of object and part bodies it received.
    pub received_bytes: u64,
    /// Bytes read from the block device under its directory (all processes on that machine);
    /// null when there is none (tmpfs, network file systems).
    pub device_read_bytes: Option<u64>,
    /// Bytes written to that block device.
    pub device_written_bytes: Option<u64>,
    /// That block device, as major:minor: gateways of one host on one device count its bytes
    /// once.
    #[serde(default)]
    pub device: Option<String>,
    /// CPU seconds of its serving threads.
    pub cpu_s: f64,
    /// The endpoint is an address of the client's own machine (loopback or one of its
    /// interfaces): the gateway shared its CPUs, memory and page cache.
    #[serde(default)]
    pub same_host: bool,
    /// Who counted: "iobm gateway" (its own counters, read through the S3 port or
    /// `--server-metrics`) or "node_exporter" (Prometheus' agent on a storage server, read from
    /// `--server-metrics`); empty in documents from before: an iobm gateway.
    #[serde(default)]
    pub source: String,
    /// The endpoint did not answer before or after the phase (why): nothing else of this entry
    /// counts. Null: it answered both times.
    #[serde(default)]
    pub unavailable: Option<String>,
    /// node_exporter: each data device's bytes over the phase (`--server-devices`, else every
    /// disk but device-mapper, md, loop, ram and partitions, so a byte counts once), by the
    /// exporter's device name; `device_read_bytes` and `device_written_bytes` are their sums.
    #[serde(default)]
    pub devices: Vec<DeviceIo>,
    /// The server's page cache (node_memory_Cached_bytes) when the phase began, in bytes.
    #[serde(default)]
    pub page_cache_before_bytes: Option<u64>,
    /// The server's page cache when the phase ended, in bytes.
    #[serde(default)]
    pub page_cache_after_bytes: Option<u64>,
    /// The server's memory (node_memory_MemTotal_bytes): what its caches can hold, in place of
    /// a `--server-ram` guess.
    #[serde(default)]
    pub memory_bytes: Option<u64>,
    /// Bytes the server's network interfaces (all but loopback) received over the phase.
    #[serde(default)]
    pub net_received_bytes: Option<u64>,
    /// Bytes the server's network interfaces (all but loopback) sent over the phase.
    #[serde(default)]
    pub net_sent_bytes: Option<u64>,
    /// CPU seconds the server's CPUs were busy over the phase (every mode but idle and iowait,
    /// node_cpu_seconds_total), all CPUs together.
    #[serde(default)]
    pub cpu_busy_s: Option<f64>,
    /// CPU seconds the server's CPUs had over the phase (every mode), all CPUs together:
    /// `cpu_busy_s` over it is how busy they were.
    #[serde(default)]
    pub cpu_all_s: Option<f64>,
    /// `--server-metrics`: the endpoint read through the phase, once per interval. Null: not
    /// read during the phase (an iobm gateway read through its S3 port, documents from before).
    #[serde(default)]
    pub series: Option<ServerSeries>,
}

/// A `--server-metrics` endpoint read through a phase by a thread of rank 0 beside the workers,
/// one reading per interval, each a few numbers: the series of the server beside the client's.
/// Each entry is what the server did between the reading before it and this one; the first's
/// "before" is the reading before the phase and the last reading is the one after the phase, so
/// where no reading failed the entries add up to the phase's `device_read_bytes` and
/// `device_written_bytes`. A reading that failed is a gap: its entry and the next are null,
/// never a guess.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerSeries {
    /// Time between two readings, ns: the phase's series interval, or the least multiple of it
    /// of at least 100 ms.
    pub interval_ns: u64,
    /// When the reading before the phase had been answered, ns since the clock origin: where
    /// the first entry's time begins.
    pub before_ns: u64,
    /// When each reading's answer had been read (or its failure was known), ns since the clock
    /// origin, on the clock of the phase's start_ns.
    pub at_ns: Vec<u64>,
    /// Bytes the data devices read (as `devices`) since the reading before; null where this
    /// reading or that one did not answer, or a counter went back.
    pub device_read_bytes: Vec<Option<u64>>,
    /// Bytes the data devices wrote since the reading before; null as `device_read_bytes`.
    pub device_written_bytes: Vec<Option<u64>>,
    /// How busy the server's CPUs were since the reading before: busy CPU seconds over all CPU
    /// seconds (node_cpu_seconds_total, every CPU), 0 to 1; null as `device_read_bytes`, and
    /// for an iobm gateway.
    pub cpu_busy: Vec<Option<f64>>,
    /// The server's page cache (node_memory_Cached_bytes) at the reading, bytes; null where it
    /// did not answer.
    pub page_cache_bytes: Vec<Option<u64>>,
}

/// What one network interface of a client moved during a phase (/sys/class/net/*/statistics;
/// every process's traffic).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NicIo {
    /// The client host.
    pub host: String,
    /// The interface (eth0, ib0, lo).
    pub nic: String,
    /// Bytes it received.
    pub received_bytes: u64,
    /// Bytes it sent.
    pub sent_bytes: u64,
    /// The storage is reached through it (the route to the mount's server or to the S3
    /// endpoints); where that cannot be told, every interface but loopback is.
    pub towards_storage: bool,
}

/// Whether a phase's rate is the storage's or a cache's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheVerdict {
    /// "uncached" (the storage moved the bytes), "partly cached", "cached" (a cache moved
    /// most of them), "possibly cached" (no evidence either way, but a cache could hold the
    /// data set), "memory" (the storage is RAM: tmpfs, ramfs) or "unknown" (nothing to judge
    /// by, or no data moved).
    #[schemars(with = "String")]
    pub verdict: Verdict,
    /// The evidence, in one line.
    pub evidence: String,
}

/// A cache verdict's word, as results spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// The storage moved the bytes.
    #[serde(rename = "uncached")]
    Uncached,
    #[serde(rename = "partly cached")]
    PartlyCached,
    /// A cache moved most of the bytes.
    #[serde(rename = "cached")]
    Cached,
    /// No evidence either way, but a cache could hold the data set.
    #[serde(rename = "possibly cached")]
    PossiblyCached,
    /// The storage is RAM (tmpfs, ramfs).
    #[serde(rename = "memory")]
    Memory,
    /// Nothing to judge by, or no data moved.
    #[serde(rename = "unknown")]
    Unknown,
    /// A word this iobm does not know, from a document written by another: kept as it was.
    #[serde(untagged)]
    Other(String),
}

impl Verdict {
    /// The word, as results spell it.
    pub fn as_str(&self) -> &str {
        match self {
            Verdict::Uncached => "uncached",
            Verdict::PartlyCached => "partly cached",
            Verdict::Cached => "cached",
            Verdict::PossiblyCached => "possibly cached",
            Verdict::Memory => "memory",
            Verdict::Unknown => "unknown",
            Verdict::Other(word) => word,
        }
    }

    /// A cache may have served some of the bytes: cached, partly or possibly.
    pub fn maybe_cached(&self) -> bool {
        matches!(
            self,
            Verdict::Cached | Verdict::PartlyCached | Verdict::PossiblyCached
        )
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Block device traffic during a phase (from /sys/dev/block/*/stat; includes other processes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceIo {
    /// Device as major:minor.
    pub device: String,
    /// Bytes read from the device.
    pub read_bytes: u64,
    /// Bytes written to the device.
    pub written_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_keep_their_words_and_an_unknown_word_loads_as_it_was() {
        for (v, word) in [
            (Verdict::PartlyCached, "\"partly cached\""),
            (Verdict::PossiblyCached, "\"possibly cached\""),
            (Verdict::Other("cold".into()), "\"cold\""),
        ] {
            assert_eq!(serde_json::to_string(&v).unwrap(), word);
            assert_eq!(serde_json::from_str::<Verdict>(word).unwrap(), v);
        }
        assert_eq!(Verdict::PossiblyCached.to_string(), "possibly cached");
    }
}
