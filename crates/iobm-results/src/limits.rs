//! What this machine can do at most, as `iobm limits` measures it (memory copy, loopback TCP,
//! the checksums S3 computes, a device's O_DIRECT rates, a GPU's copies), and each phase's rate
//! as a share of the matching limit: a rate above one cannot come from where it claims.

use crate::PhaseResult;
use iobm_stats::names::OpName;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod gpu;
mod judge;
pub mod sweep;
pub use gpu::{CopyDirection, GpuCopyRate, GpuLimits, HostMemoryKind};
pub use judge::{judge, Bound, Judged, Judgement, RULES};

/// The value of [`Limits::format`].
pub const FORMAT: &str = "iobm-limits";

/// One host's limits, as written by `iobm limits --json FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Always "iobm-limits".
    pub format: String,
    /// The host measured.
    pub hostname: String,
    /// When, RFC 3339 in UTC.
    pub measured_at: String,
    /// Threads of the all-threads figures (the CPUs iobm may use).
    pub threads: u32,
    /// Bytes one thread copies per CPU second (its CPU time) between two buffers larger than
    /// the CPU caches.
    pub memcpy_one_thread_bytes_per_s: f64,
    /// Bytes all threads together copy per second, each between buffers of its own, started
    /// together: the sum of each one's bytes over its CPU time (as the one-thread figure).
    pub memcpy_all_threads_bytes_per_s: f64,
    /// Bytes per second one TCP connection carries over loopback (127.0.0.1).
    pub loopback_tcp_bytes_per_s: f64,
    /// Bytes one core hashes per second with MD5 (S3's ETag), over the thread's CPU time (as
    /// all the per-core figures).
    pub md5_bytes_per_s_per_core: f64,
    /// Bytes one core hashes per second with SHA-256 (SigV4 payload signing).
    pub sha256_bytes_per_s_per_core: f64,
    /// Bytes one core checksums per second with CRC32C (S3's additional checksums).
    pub crc32c_bytes_per_s_per_core: f64,
    /// The directory's device, when one was given.
    pub device: Option<DeviceLimits>,
    /// How the memory copy was made: the fastest of the ways this CPU has (empty in documents
    /// from before: the C library's memcpy).
    #[serde(default)]
    pub memcpy_method: String,
    /// Loopback TCP connections of `loopback_tcp_many_bytes_per_s` (0 in documents from before).
    #[serde(default)]
    pub loopback_tcp_connections: u32,
    /// Bytes per second that many TCP connections carry together over loopback: the most of
    /// the counts tried.
    #[serde(default)]
    pub loopback_tcp_many_bytes_per_s: f64,
    /// The MD5 implementation of `md5_bytes_per_s_per_core`: the fastest of those iobm has.
    #[serde(default)]
    pub md5_implementation: String,
    /// Bytes one core hashes per second with multi-buffer MD5 (`md5-many`, as the gateway
    /// hashes concurrent uploads: several messages in the lanes of one SIMD register).
    #[serde(default)]
    pub md5_many_bytes_per_s_per_core: f64,
    /// Messages hashed together by `md5-many` (its SIMD lanes).
    #[serde(default)]
    pub md5_many_lanes: u32,
    /// The GPU of `iobm limits --gpu N`: its copy rates (null: none measured).
    #[serde(default)]
    pub gpu: Option<GpuLimits>,
}

/// Sequential O_DIRECT rates of a file in a directory: the storage without the page cache.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceLimits {
    /// The directory measured.
    pub dir: String,
    /// Its file system type.
    pub fs_type: String,
    /// Its device as major:minor (as the environment's storage.device), to match runs on it.
    pub device: String,
    /// Bytes written and read.
    pub bytes: u64,
    /// Block size of each request.
    pub block_bytes: u64,
    /// Sequential O_DIRECT writes (then one fsync), bytes per second.
    pub write_bytes_per_s: f64,
    /// Sequential O_DIRECT reads of what was written, bytes per second.
    pub read_bytes_per_s: f64,
    /// The device at other block sizes and queue depths (io_uring, O_DIRECT, sequential, one
    /// worker), each the most of repeats until two agree within 5%: 4 KiB, 64 KiB, 1 MiB and
    /// 4 MiB blocks at depths 1, 4, 16, ... until two deeper queues in a row read and write no
    /// more than 5% faster than the shallower ones (up to 256, and 64 MiB in flight), and at
    /// every block size of the phases of `judged_run` at each of these depths up to the
    /// phase's requests in flight and at that (within the file). A phase is judged only
    /// against a point of its block size at least as deep as its requests in flight.
    #[serde(default)]
    pub points: Vec<DevicePoint>,
    /// The saved run (`iobm limits --like RUN.json`: its run id) whose phases' block sizes and
    /// requests in flight ([`shapes`]) were measured too; null: none.
    #[serde(default)]
    pub judged_run: Option<String>,
}

/// A device's O_DIRECT rates at one block size and queue depth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DevicePoint {
    /// Bytes per request.
    pub block_bytes: u64,
    /// Requests in flight together.
    pub iodepth: u32,
    /// Reads, bytes per second.
    pub read_bytes_per_s: f64,
    /// Writes, bytes per second.
    pub write_bytes_per_s: f64,
}

/// The requests a phase keeps in flight: its workers (every rank's) times each one's
/// `--iodepth` (1 when not set).
pub fn in_flight(phase: &PhaseResult) -> u32 {
    (phase.workers.len() as u32).max(1) * phase.settings.iodepth.max(1)
}

/// The shapes the device is measured at to judge a run like with like: each file read or
/// write phase's block size (a multiple of 4 KiB, as O_DIRECT needs) and [`in_flight`], once
/// each, in the order of its phases.
pub fn shapes(phases: &[PhaseResult]) -> Vec<(u64, u32)> {
    let mut shapes = Vec::new();
    for p in phases.iter().filter(|p| {
        p.moves_data() && p.operations.is_empty() && matches!(p.op, OpName::Read | OpName::Write)
    }) {
        let shape = (p.settings.block_bytes, in_flight(p));
        // O_DIRECT moves whole 4 KiB blocks.
        if shape.0 > 0 && shape.0 % 4096 == 0 && !shapes.contains(&shape) {
            shapes.push(shape);
        }
    }
    shapes
}

/// The JSON Schema of [`Limits`], as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Limits)).expect("schema serialises")
}

impl Limits {
    /// Reads a saved limits document, refusing other formats.
    pub fn from_json(text: &str) -> Result<Limits, String> {
        let limits: Limits =
            serde_json::from_str(text).map_err(|e| format!("not an iobm limits document: {e}"))?;
        if limits.format != FORMAT {
            return Err(format!(
                "not an iobm limits document (format {:?})",
                limits.format
            ));
        }
        Ok(limits)
    }
}

/// Where a run ran, as far as its limits go.
#[derive(Debug, Clone, Copy, Default)]
pub struct Place {
    /// Its S3 endpoints were on loopback.
    pub loopback: bool,
    /// Its directory is on the device the limits measured.
    pub same_device: bool,
    /// The GPUs its buffers spread over (`--mem gpu`), where the GPU the limits measured is one
    /// of them, of the same kind; 0 otherwise.
    pub gpus: u32,
}
