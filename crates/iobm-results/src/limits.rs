//! What this machine can do at most, as `iobm limits` measures it (memory copy, loopback TCP,
//! the checksums S3 computes, a device's O_DIRECT rates), and each phase's rate as a share of
//! the matching limit: a rate above one cannot come from where it claims.

use crate::PhaseResult;
use iobm_stats::format_bytes;
use iobm_stats::names::ops;
use iobm_stats::names::FsyncPolicy;
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
    /// Bytes one thread copies per CPU second (its CPU time) between two buffers larger than
    /// the CPU caches.
    pub memcpy_one_thread_bytes_per_s: f64,
    /// Bytes all threads together copy per second, each between buffers of its own (the sum of
    /// each one's bytes over its wall time, started together; never below one thread's figure).
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
    /// worker): 4 KiB, 64 KiB, 1 MiB and 4 MiB blocks at depths 1, 4, 16, ... while the deeper
    /// queue reads or writes 5% faster than the shallower ones (up to 256, and 64 MiB in
    /// flight), then every block size and requests in flight of the phases of `judged_run`.
    /// What a phase is compared with is the point of its block size and requests in flight.
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

impl DeviceLimits {
    /// The device's rate (`read` or write) for requests of `block` bytes, `in_flight` at a
    /// time: among the points of that block size up to the least depth that is at least as
    /// deep (else up to the deepest measured), the fastest; with no point of that block size
    /// the fastest of all; and which point it is, for people.
    pub fn at(&self, block: u64, in_flight: u32, read: bool) -> (f64, String) {
        let rate = |p: &DevicePoint| {
            if read {
                p.read_bytes_per_s
            } else {
                p.write_bytes_per_s
            }
        };
        let same: Vec<&DevicePoint> = self
            .points
            .iter()
            .filter(|p| p.block_bytes == block)
            .collect();
        let depth = same
            .iter()
            .map(|p| p.iodepth)
            .filter(|&d| d >= in_flight)
            .min()
            .or_else(|| same.iter().map(|p| p.iodepth).max());
        let chosen = self
            .points
            .iter()
            .filter(|p| match depth {
                Some(depth) => p.block_bytes == block && p.iodepth <= depth,
                None => true,
            })
            .max_by(|a, b| rate(a).total_cmp(&rate(b)));
        match chosen {
            Some(p) => (
                rate(p),
                format!(
                    "{} blocks, {} in flight",
                    format_bytes(p.block_bytes),
                    p.iodepth
                ),
            ),
            None => (
                if read {
                    self.read_bytes_per_s
                } else {
                    self.write_bytes_per_s
                },
                format!("{} blocks, 1 in flight", format_bytes(self.block_bytes)),
            ),
        }
    }
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
        p.moves_data() && p.operations.is_empty() && matches!(p.op.as_str(), ops::READ | ops::WRITE)
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
    // Like with like: the device at the phase's block size and requests in flight.
    let in_flight = in_flight(phase);
    let mut named: Vec<(String, f64)> = Vec::new();
    if let Some(d) = limits.device.as_ref().filter(|_| place.same_device) {
        let block = phase.settings.block_bytes;
        if matches!(op, ops::READ | ops::GETC) {
            let (rate, at) = d.at(block, in_flight, true);
            named.push((format!("the device's O_DIRECT read ({at})"), rate));
        }
        if matches!(op, ops::WRITE | ops::PUTC)
            && (phase.settings.direct || phase.settings.fsync != FsyncPolicy::Never)
        {
            let (rate, at) = d.at(block, in_flight, false);
            named.push((format!("the device's O_DIRECT write ({at})"), rate));
        }
    }
    if place.loopback && !phase.operations.is_empty() {
        let workers = phase.workers.len().max(1);
        let many = limits.loopback_tcp_many_bytes_per_s;
        named.push(if workers > 1 && many > 0.0 {
            (
                format!(
                    "loopback TCP over {} connections",
                    limits.loopback_tcp_connections
                ),
                many.max(limits.loopback_tcp_bytes_per_s),
            )
        } else {
            (
                "one loopback TCP connection per worker".to_string(),
                limits.loopback_tcp_bytes_per_s * workers as f64,
            )
        });
    }
    bounds.extend(named.iter().map(|(what, rate)| (what.as_str(), *rate)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB};

    fn device(points: Vec<DevicePoint>) -> DeviceLimits {
        DeviceLimits {
            dir: "/d".into(),
            fs_type: "ext4".into(),
            device: "8:0".into(),
            bytes: 1 << 30,
            block_bytes: 4 * MIB,
            write_bytes_per_s: 400.0 * MIB as f64,
            read_bytes_per_s: 500.0 * MIB as f64,
            points,
            judged_run: None,
        }
    }

    fn point(block: u64, iodepth: u32, read_mib_s: u64) -> DevicePoint {
        DevicePoint {
            block_bytes: block,
            iodepth,
            read_bytes_per_s: (read_mib_s * MIB) as f64,
            write_bytes_per_s: (read_mib_s * MIB) as f64 / 2.0,
        }
    }

    #[test]
    fn the_device_is_compared_at_the_phases_block_size_and_depth() {
        let d = device(vec![
            point(4 * MIB, 1, 500),
            point(4 * MIB, 8, 900),
            point(4 * MIB, 32, 1200),
            point(64 << 10, 32, 700),
        ]);
        assert_eq!(d.at(4 * MIB, 1, true).0, (500 * MIB) as f64);
        // The least depth at least as deep as the phase's.
        assert_eq!(d.at(4 * MIB, 4, true).0, (900 * MIB) as f64);
        assert_eq!(d.at(4 * MIB, 32, true).0, (1200 * MIB) as f64);
        assert_eq!(d.at(4 * MIB, 32, true).1, "4.00 MiB blocks, 32 in flight");
        // Deeper than measured: the deepest.
        assert_eq!(d.at(4 * MIB, 128, true).0, (1200 * MIB) as f64);
        assert_eq!(d.at(64 << 10, 1, false).0, (350 * MIB) as f64);
        // A block size not measured: the best point.
        assert_eq!(d.at(MIB, 1, true).0, (1200 * MIB) as f64);
        // No points (documents from before): the sequential figures.
        assert_eq!(device(Vec::new()).at(MIB, 32, true).0, (500 * MIB) as f64);
        // A deeper queue that did not help: the fastest up to the depth compared with.
        let d = device(vec![
            point(MIB, 1, 300),
            point(MIB, 4, 800),
            point(MIB, 16, 780),
            point(MIB, 64, 2000),
        ]);
        assert_eq!(d.at(MIB, 16, true).0, (800 * MIB) as f64);
        assert_eq!(d.at(MIB, 16, true).1, "1.00 MiB blocks, 4 in flight");
        assert_eq!(d.at(MIB, 17, true).0, (2000 * MIB) as f64);
    }

    #[test]
    fn a_run_is_measured_at_each_phases_block_size_and_requests_in_flight() {
        let mut read = phase("read", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        read.settings.block_bytes = 128 << 10;
        read.settings.iodepth = 8;
        let mut write = read.clone();
        write.op = "write".into();
        let mut again = read.clone();
        again.name = "read again".into();
        let mut odd = read.clone();
        odd.settings.block_bytes = 1000;
        let mut seek = read.clone();
        seek.op = "seek".into();
        seek.settings.block_bytes = 8192;
        let mut phases = vec![read, write, again, odd, seek];
        // Two workers at depth 8: 16 in flight, once, and no block O_DIRECT cannot move.
        assert_eq!(shapes(&phases), vec![(128 << 10, 16)]);
        phases[1].workers.truncate(1);
        phases[1].settings.iodepth = 0;
        assert_eq!(shapes(&phases), vec![(128 << 10, 16), (128 << 10, 1)]);
    }

    #[test]
    fn a_deep_direct_read_is_not_impossible_against_a_single_stream() {
        // 1130 MiB/s of 4 MiB reads, one worker at --iodepth 32: 113% of the depth-1 rate.
        let mut read = phase("read", [1130 * MIB, 0], [1_000_000_000; 2]);
        read.workers.truncate(1);
        read.aggregates = iobm_stats::aggregates(&read.spans());
        read.settings.block_bytes = 4 * MIB;
        read.settings.direct = true;
        read.settings.iodepth = 32;
        let mut limits = Limits {
            format: FORMAT.into(),
            hostname: "h".into(),
            measured_at: String::new(),
            threads: 2,
            memcpy_one_thread_bytes_per_s: 1e10,
            memcpy_all_threads_bytes_per_s: 2e10,
            loopback_tcp_bytes_per_s: 1e9,
            md5_bytes_per_s_per_core: 6e8,
            sha256_bytes_per_s_per_core: 1e9,
            crc32c_bytes_per_s_per_core: 1e10,
            device: Some(device(Vec::new())),
            memcpy_method: String::new(),
            loopback_tcp_connections: 0,
            loopback_tcp_many_bytes_per_s: 0.0,
            md5_implementation: String::new(),
            md5_many_bytes_per_s_per_core: 0.0,
            md5_many_lanes: 0,
        };
        let place = Place {
            loopback: false,
            same_device: true,
        };
        let (_, warnings) = against(&read, &limits, place);
        assert!(
            warnings[0].starts_with("impossible without a cache"),
            "{warnings:?}"
        );
        limits.device = Some(device(vec![
            point(4 * MIB, 1, 1000),
            point(4 * MIB, 32, 1200),
        ]));
        let (shares, warnings) = against(&read, &limits, place);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(
            shares.contains("94% of the device's O_DIRECT read (4.00 MiB blocks, 32 in flight)"),
            "{shares}"
        );
    }
}
