//! One phase of a result: its settings, every worker's records, the series added up, the
//! latency, CPU time, errors and what a writing phase offered the storage.

use crate::{detail, CacheEvidence, RunStatus};
use iobm_stats::names::{CacheDropped, FsyncPolicy, OpName, PatternName};
use iobm_stats::{Aggregate, HistogramData, Series, WorkerSpan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One phase: every worker doing one operation over its region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseResult {
    /// Name of the phase ("write", "read", "random read", ...).
    pub name: String,
    /// Operation: "write", "read", "put", "get", "file-create", "find", ... (one word of
    /// `OpName`).
    #[schemars(with = "String")]
    pub op: OpName,
    /// How the phase ended.
    pub status: RunStatus,
    /// The phase's own settings.
    pub settings: PhaseSettings,
    /// When the barrier released the workers, ns since the clock origin.
    pub start_ns: u64,
    /// When the last worker finished, ns since the clock origin.
    pub end_ns: u64,
    /// One entry per worker.
    pub workers: Vec<WorkerResult>,
    /// Latency of single operations over all workers.
    pub latency: Latency,
    /// Every aggregate definition that applies, with its formula.
    pub aggregates: Vec<Aggregate>,
    /// iobm's own CPU time during the phase (all threads).
    pub cpu: CpuUsage,
    /// Evidence for or against a cache effect.
    pub cache: CacheEvidence,
    /// Failed operations by kind (empty when none failed).
    pub errors: Vec<ErrorCount>,
    /// Warnings about this phase's numbers: the checks on its records, then its notes.
    pub warnings: Vec<String>,
    /// What a writing phase offered the storage, measured on a sample of its data after the
    /// phase (null for phases that write nothing, and in documents from before).
    #[serde(default)]
    pub offered: Option<DataOffered>,
    /// What the run recorded about the phase that its records cannot show again (the built-in
    /// gateway's CPU told apart, data just written); `iobm report` keeps these and recomputes
    /// the other warnings.
    #[serde(default)]
    pub notes: Vec<String>,
    /// Object phases: each kind of operation apart (one entry, four in a mixed phase).
    #[serde(default)]
    pub operations: Vec<OperationResult>,
    /// What the phase's stonewall did. Absent: the phase had none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<StonewallResult>,
    /// What `--until-stable` saw of the phase's rate. Absent: the phase had no such rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<SteadyResult>,
    /// Under MPI: seconds rank 0 spent after the phase gathering the ranks' records and
    /// merging them (outside the phase and its rates); null for one process.
    #[serde(default)]
    pub gather_s: Option<f64>,
    /// Every worker's series added up, interval by interval, latency histograms merged (null in
    /// documents from before).
    #[serde(default)]
    pub series: Option<Series>,
    /// Under MPI: each rank's workers' series added up (bytes, operations and errors; the
    /// latency per interval is in `series`, over all ranks). Past 2,097,152 rank-intervals each
    /// entry adds up a whole number of the phase's intervals (its `interval_ns`), as `notes` say.
    #[serde(default)]
    pub rank_series: Vec<RankSeries>,
    /// Object phases against several endpoints: each endpoint's workers' series added up
    /// (bytes, operations and errors).
    #[serde(default)]
    pub endpoint_series: Vec<EndpointSeries>,
    /// The phase had more worker-intervals than a document keeps
    /// ([`detail::INLINE_WORKER_INTERVALS`]): `workers[].series` are empty here and the
    /// per-worker series are in the run's `worker_series_file`.
    #[serde(default)]
    pub worker_series_detached: bool,
    /// Open loop (`--rate`): the target and achieved rates, response time beside `latency`
    /// (service time), the backlog and when the phase fell behind. Absent: closed loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<crate::PaceResult>,
    /// With buffers on a device (`--mem gpu`): the share of the operations' time spent
    /// copying between the device and the host bounce buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_copy: Option<crate::device::DeviceCopy>,
    /// With `--gds`: what nvidia-fs counted over the phase and the path judged from it
    /// (GPU-direct, compatibility mode or unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gds: Option<crate::gds::GdsEvidence>,
    /// The detached per-worker series as zstd-compressed CSV rows, until they are saved.
    #[serde(skip)]
    pub detached: detail::Detached,
}

/// One endpoint's workers' series added up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointSeries {
    /// The endpoint's URL.
    pub endpoint: String,
    /// Its workers' series added up (no latency).
    pub series: Series,
}

/// One rank's workers' series added up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankSeries {
    /// The MPI rank.
    pub rank: u32,
    /// Its workers' series added up (no latency).
    pub series: Series,
}

/// How compressible and how duplicated the data a phase wrote was, measured on a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataOffered {
    /// Bytes sampled: the start of every file (or the first objects) written, regenerated.
    pub sample_bytes: u64,
    /// The sample's size over its size compressed by zstd at level 3 (1.0: incompressible).
    pub zstd3_ratio: f64,
    /// Share of the sample's 4 KiB blocks that repeat an earlier one (0: no duplicates).
    pub duplicate_4k_share: f64,
}

impl PhaseResult {
    /// Records a note, shown among the warnings.
    pub fn note(&mut self, text: &str) {
        self.notes.push(text.to_string());
        self.warnings.push(text.to_string());
    }
}

/// One kind of object operation within a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OperationResult {
    /// "put", "get", "head", "delete", "list" or "multipart".
    #[schemars(with = "String")]
    pub op: OpName,
    /// Operations that succeeded.
    pub ops: u64,
    /// Bytes they moved (bodies sent or received).
    pub bytes: u64,
    /// Operations that failed (in the phase's errors by kind; not in ops, bytes or latency).
    pub errors: u64,
    /// Failed attempts that were tried again (--retries), apart from errors.
    pub retried: u64,
    /// Keys the operations returned (list) or deleted in batches (delete --batch), or the
    /// files that matched (find); 0 for the others.
    #[serde(default)]
    pub keys: u64,
    /// ops / (phase end_ns - start_ns): over the phase's wall time, as every worker shares it.
    pub ops_per_s: f64,
    /// bytes / (phase end_ns - start_ns), in bytes per second.
    pub bytes_per_s: f64,
    /// Latency of one operation: from the request's first byte sent to the answer's last
    /// byte received.
    pub latency: Latency,
    /// Gets: time to first byte, from the request's first byte sent until the answer's status
    /// line and headers have arrived.
    pub ttfb: Option<Latency>,
    /// This kind's operations and bytes per second of the phase, over all workers.
    #[serde(default)]
    pub series: Option<Series>,
}

/// A phase's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseSettings {
    /// Bytes per operation.
    pub block_bytes: u64,
    /// "sequential" or "random".
    #[schemars(with = "String")]
    pub pattern: PatternName,
    /// "never", "end" or "each".
    #[schemars(with = "String")]
    pub fsync: FsyncPolicy,
    /// Whether O_DIRECT was used.
    pub direct: bool,
    /// How requests were submitted: "sync" (one pread/pwrite at a time), "io_uring" or "mmap"
    /// (copies to and from the file's mapping); empty in documents from before: sync.
    #[serde(default, with = "iobm_stats::names::engine_word")]
    #[schemars(with = "String")]
    pub engine: Option<iobm_stats::names::Engine>,
    /// Requests each worker kept in flight (--iodepth; 0 in documents from before: 1).
    #[serde(default)]
    pub iodepth: u32,
    /// Whether anything was dropped from the page cache before the phase (see
    /// `cache_dropped`).
    pub drop_cache: bool,
    /// What was dropped from the page cache before the phase: "system" (as root, the whole
    /// page cache: `--drop-caches`), "files" (the phase's files' pages), "servers" (the
    /// storage servers' caches, by `--server-drop-cmd`), "system+servers" or "files+servers"
    /// (both), or "nothing" (not asked, or nothing could be: a target without a page cache, or
    /// storage that is memory).
    #[serde(default)]
    #[schemars(with = "String")]
    pub cache_dropped: CacheDropped,
    /// Time limit in seconds; null when each worker made one pass over its region.
    pub duration_s: Option<f64>,
    /// Warm-up before the duration, in seconds, not counted (--ramp); null: none.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    /// Whether every 4 KiB read back was checked for its stamp (--verify), outside the timing.
    pub verify: bool,
    /// Bytes of the phase's data set.
    pub data_bytes: u64,
    /// The phase's stonewall in seconds (`--stonewall`): see the phase's `stonewall`. Absent:
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall_s: Option<f64>,
    /// A skewed `--access`: the share of operations on the hottest 1% and 10% of the data
    /// set; the cache verdict judges the hot set. Absent: picked uniformly, or in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<crate::access::AccessShare>,
}

/// What a phase's stonewall did: the phase ended for every worker once the first reached it,
/// then each stopped worker went on to `wear_out_items` (mdtest's stonewall with wear-out).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StonewallResult {
    /// Workers, of every rank, that the wall stopped before their share was done.
    pub stopped_workers: u64,
    /// The fewest operations a stopped worker had done when the wall stopped it. Null: none
    /// was stopped.
    pub fewest_at_wall: Option<u64>,
    /// The operations every stopped worker went on to, the most any worker of any rank had
    /// done: the items each worker made, which the later phases work on.
    pub wear_out_items: Option<u64>,
}

/// What `--until-stable` saw: the phase's rate (all workers of all ranks) sampled every tick;
/// it ended once each rate of the last window was within the tolerance of their mean.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SteadyResult {
    /// The tolerance, in percent of the window's mean rate.
    pub tolerance_pct: f64,
    /// The window, in seconds.
    pub window_s: f64,
    /// Seconds between two samples of the rate (a tenth of the window).
    pub tick_s: f64,
    /// When the phase was found steady and ended, in seconds since its counted start (after
    /// any warm-up). Null: it was not steady before it ended otherwise (its duration, an
    /// error, Ctrl-C).
    pub stable_at_s: Option<f64>,
    /// The unit of `rates`: "bytes/s", or "ops/s" when the phase moved no bytes.
    #[schemars(with = "String")]
    pub unit: SteadyUnit,
    /// The last window's rates, one per tick, oldest first (fewer than ten when the phase was
    /// shorter than a window).
    pub rates: Vec<f64>,
}

/// The unit of a phase's sampled rates under `--until-stable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SteadyUnit {
    #[serde(rename = "bytes/s")]
    BytesPerS,
    /// The phase moved no bytes (metadata, HEAD, LIST).
    #[serde(rename = "ops/s")]
    OpsPerS,
}

impl SteadyResult {
    /// The rates' mean (0 with none).
    pub fn mean(&self) -> f64 {
        self.rates.iter().sum::<f64>() / self.rates.len().max(1) as f64
    }

    /// The largest distance of a rate from the mean, in percent of it; None without a
    /// positive mean.
    pub fn most_off_pct(&self) -> Option<f64> {
        let mean = self.mean();
        (mean > 0.0).then(|| {
            self.rates
                .iter()
                .map(|r| (r - mean).abs() / mean * 100.0)
                .fold(0.0, f64::max)
        })
    }
}

/// One worker in one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerResult {
    /// Worker index within its rank.
    pub worker: u32,
    /// MPI rank (0 without MPI).
    pub rank: u32,
    /// Host the worker ran on.
    pub host: String,
    /// Start and end stamps, bytes and operations, and the snapshots behind the aggregates.
    pub span: WorkerSpan,
    /// Time spent in the final fsync (fsync "end"), included in the span, in ns.
    pub final_sync_ns: u64,
    /// Time spent checking every byte read back (`--verify`), in ns: included in the span (so
    /// in the phase's rates), not in any operation's latency.
    #[serde(default)]
    pub verify_ns: u64,
    /// Time its counted operations spent copying between its buffer on a device and the host
    /// bounce buffer (`--mem gpu`), inside their latency.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub copy_ns: u64,
    /// Throughput over time.
    pub series: Series,
    /// The S3 endpoint the worker sent its requests to (object phases).
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The global worker (`rank * jobs + worker`) whose items this worker looked up, renamed
    /// or removed in a metadata phase: another rank's with `--stride`. Absent: its own, or no
    /// metadata phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_of: Option<u32>,
    /// The CPUs its thread was allowed once pinned (`--cpus`, `--numa`), as the kernel said
    /// (`Cpus_allowed_list` of the thread: "3"). Absent: not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
}

/// Latency of single operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// What one operation's latency covers.
    pub measures: String,
    /// Mean latency in ns.
    pub mean_ns: Option<f64>,
    /// 50th percentile in ns.
    pub p50_ns: Option<u64>,
    /// 90th percentile in ns.
    pub p90_ns: Option<u64>,
    /// 99th percentile in ns.
    pub p99_ns: Option<u64>,
    /// 99.9th percentile in ns.
    pub p999_ns: Option<u64>,
    /// Largest latency in ns.
    pub max_ns: Option<u64>,
    /// The full histogram, mergeable with other runs and ranks.
    pub histogram: HistogramData,
}

/// CPU time iobm itself used during a phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuUsage {
    /// User-mode CPU seconds, all threads.
    pub user_s: f64,
    /// Kernel-mode CPU seconds, all threads (includes the file system's own work for iobm).
    pub system_s: f64,
    /// (user_s + system_s) per GiB moved; null when nothing moved.
    pub cpu_s_per_gib: Option<f64>,
    /// CPU seconds of iobm's built-in S3 gateway, which served the phase's requests from
    /// threads of this process; not in user_s and system_s. Null without it.
    #[serde(default)]
    pub gateway_s: Option<f64>,
}

/// Failed operations of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorCount {
    /// ENOSPC, EIO, "short read", ...
    pub kind: String,
    /// How many operations failed this way.
    pub count: u64,
    /// The first such failure, with object and offset.
    pub first: String,
}

impl PhaseResult {
    /// Moves every stamp of the phase (its span, each worker's, the operation stamps where they
    /// were recorded, the servers' readings) by `to`, onto another clock.
    pub fn move_stamps(&mut self, to: impl Fn(u64) -> u64) {
        self.start_ns = to(self.start_ns);
        self.end_ns = to(self.end_ns);
        for w in &mut self.workers {
            w.span.move_stamps(&to);
        }
        for s in self
            .cache
            .servers
            .iter_mut()
            .filter_map(|e| e.series.as_mut())
        {
            s.before_ns = to(s.before_ns);
            s.at_ns.iter_mut().for_each(|t| *t = to(*t));
        }
    }

    pub fn bytes(&self) -> u64 {
        self.workers.iter().map(|w| w.span.bytes).sum()
    }

    /// Whether the phase's operations move file data (rated in bytes per second) rather than
    /// being counted (seeks, creates, stats, deletes: rated in operations per second).
    pub fn moves_data(&self) -> bool {
        self.op.moves_data()
    }

    /// Bytes of these kinds of operation ([`PhaseResult::operations`]; a read-write phase's
    /// reads or writes, an object phase's GETs or PUTs).
    pub fn bytes_of(&self, ops: &[OpName]) -> u64 {
        (self.operations.iter())
            .filter(|o| ops.contains(&o.op))
            .map(|o| o.bytes)
            .sum()
    }

    pub fn spans(&self) -> Vec<WorkerSpan> {
        self.workers.iter().map(|w| w.span).collect()
    }

    pub fn aggregate(&self, kind: iobm_stats::AggregateKind) -> Option<&Aggregate> {
        self.aggregates.iter().find(|a| a.kind == kind)
    }
}

/// Whether a count is zero (left out of the document).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use crate::checks::tests::phase;
    use crate::{ServerEvidence, ServerSeries};
    use iobm_stats::names::OpName;

    #[test]
    fn the_servers_readings_move_with_the_phase_onto_another_clock() {
        let mut p = phase(OpName::Read, [1, 1], [100, 200]);
        p.cache.servers = vec![ServerEvidence {
            series: Some(ServerSeries {
                before_ns: 5,
                at_ns: vec![50, 150],
                ..ServerSeries::default()
            }),
            ..ServerEvidence::default()
        }];
        p.move_stamps(|t| t + 1000);
        let s = p.cache.servers[0].series.as_ref().unwrap();
        assert_eq!((s.before_ns, s.at_ns.clone()), (1005, vec![1050, 1150]));
    }
}
