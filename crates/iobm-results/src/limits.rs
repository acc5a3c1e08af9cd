//! What this machine can do at most, as `iobm limits` measures it (memory copy, loopback TCP,
//! the checksums S3 computes, a device's O_DIRECT rates), and each phase's rate as a share of
//! the matching limit: a rate above one cannot come from where it claims.

use crate::PhaseResult;
use iobm_stats::format_bytes;
use iobm_stats::names::ops;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
    /// Bytes one thread copies per second between two buffers larger than the CPU caches.
    pub memcpy_one_thread_bytes_per_s: f64,
    /// Bytes all threads together copy per second, each between buffers of its own.
    pub memcpy_all_threads_bytes_per_s: f64,
    /// Bytes per second one TCP connection carries over loopback (127.0.0.1).
    pub loopback_tcp_bytes_per_s: f64,
    /// Bytes one core hashes per second with MD5 (S3's ETag).
    pub md5_bytes_per_s_per_core: f64,
    /// Bytes one core hashes per second with SHA-256 (SigV4 payload signing).
    pub sha256_bytes_per_s_per_core: f64,
    /// Bytes one core checksums per second with CRC32C (S3's additional checksums).
    pub crc32c_bytes_per_s_per_core: f64,
    /// The directory's device, when one was given.
    pub device: Option<DeviceLimits>,
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
}

/// A phase's makespan rate against the limits that bound it: one line of shares, and a
/// warning for each limit it exceeds.
pub fn against(phase: &PhaseResult, limits: &Limits, place: Place) -> (String, Vec<String>) {
    let Some(rate) = phase
        .aggregate(iobm_stats::AggregateKind::Makespan)
        .map(|a| a.bytes_per_s)
        .filter(|&r| r > 0.0 && phase.moves_data())
    else {
        return (String::new(), Vec::new());
    };
    let mut bounds: Vec<(&str, f64)> = vec![(
        "memory copy with all threads",
        limits.memcpy_all_threads_bytes_per_s,
    )];
    let op = phase.op.as_str();
    if let Some(d) = limits.device.as_ref().filter(|_| place.same_device) {
        if matches!(op, ops::READ | ops::GETC) {
            bounds.push(("the device's O_DIRECT read", d.read_bytes_per_s));
        }
        if matches!(op, ops::WRITE | ops::PUTC)
            && (phase.settings.direct || phase.settings.fsync != "never")
        {
            bounds.push(("the device's O_DIRECT write", d.write_bytes_per_s));
        }
    }
    if place.loopback && !phase.operations.is_empty() {
        bounds.push((
            "one loopback TCP connection per worker",
            limits.loopback_tcp_bytes_per_s * phase.workers.len() as f64,
        ));
    }
    let mut shares = Vec::new();
    let mut warnings = Vec::new();
    for (what, limit) in bounds.into_iter().filter(|(_, l)| *l > 0.0) {
        let share = 100.0 * rate / limit;
        shares.push(format!(
            "{share:.0}% of {what} ({}/s)",
            format_bytes(limit as u64)
        ));
        if share > 100.0 {
            warnings.push(format!(
                "impossible without a cache: {}/s is above {what} measured by iobm limits ({}/s)",
                format_bytes(rate as u64),
                format_bytes(limit as u64)
            ));
        }
    }
    (shares.join(", "), warnings)
}
