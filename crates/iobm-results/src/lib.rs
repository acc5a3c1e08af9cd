//! iobm-results: the result contract. One versioned JSON document per run; every field is
//! documented here (these doc comments become the JSON Schema in `schema/`), and everything a
//! report shows can be recomputed from it.

pub mod bonnie;
pub mod checks;
pub mod server;
pub mod storage;
pub mod verdict;
#[cfg(test)]
mod verdict_rules;
pub mod wire;
pub use iobm_stats::time;
pub mod detail;
pub mod env;
pub mod limits;
pub mod prometheus;
pub mod remote;
pub mod repeats;

pub use iobm_stats::Series;
use iobm_stats::{Aggregate, HistogramData, WorkerSpan};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The value of [`RunResult::format`].
pub const FORMAT: &str = "iobm-result";
/// The current [`RunResult::schema_version`]: 2 added errors and a latency histogram per
/// interval to every series. Readers read every version up to theirs and refuse newer ones.
pub const SCHEMA_VERSION: u32 = 2;

/// One iobm run, as written by `--json FILE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunResult {
    /// Always "iobm-result".
    pub format: String,
    /// Version of this format; incremented on every incompatible change.
    pub schema_version: u32,
    /// The kind of run ("write", "read", "stream", "quick"); only runs of one kind are compared.
    pub kind: String,
    /// Identifier of the run; also names its directory `iobm-<run_id>`.
    pub run_id: String,
    /// A name for the run given with --label (comparisons and CSV lines use it).
    pub label: Option<String>,
    /// How the run ended.
    pub status: RunStatus,
    /// Wall-clock time the run began, RFC 3339 in UTC.
    pub started_at: String,
    /// The command line as given.
    pub command_line: Vec<String>,
    /// The resolved options of the run.
    pub config: Config,
    /// Where the run ran.
    pub environment: Environment,
    /// How stamps in this document relate to the wall clock.
    pub clock: ClockInfo,
    /// The phases in the order they ran.
    pub phases: Vec<PhaseResult>,
    /// The processes of the run: one without MPI, else one per MPI rank.
    pub ranks: Vec<RankInfo>,
    /// The bonnie++-shaped table (runs of kind "bonnie"), derived from the phases.
    pub bonnie: Option<BonnieSummary>,
    /// Run-wide warnings (each phase also has its own).
    pub warnings: Vec<String>,
    /// A hash of what the run did, not where: the kind and the configuration without the
    /// directory, endpoints, bucket, prefix and what differs per run ([`config_hash`]). Two
    /// runs with the same hash ran the same workload, on whatever storage.
    #[serde(default)]
    pub config_hash: String,
    /// `iobm merge`: the runs this one was merged from (their labels), each a "rank" of it;
    /// empty for a run that ran.
    #[serde(default)]
    pub merged_from: Vec<String>,
    /// `--repeat N`: every aggregate of every phase over the N repetitions (null for a run
    /// made once).
    #[serde(default)]
    pub repeats: Option<repeats::Repeats>,
    /// The file beside this document holding the per-worker series of the phases whose
    /// `worker_series_detached` is true: zstd-compressed CSV ([`detail::HEADER`]), named
    /// relative to this document. Null when every series is inline.
    #[serde(default)]
    pub worker_series_file: Option<String>,
    /// What the run created and its clean-up could not remove: still there, to be removed by
    /// hand. Empty when everything the run made is gone, or kept on purpose (`--keep`). A run
    /// with anything here exits with code 4.
    #[serde(default)]
    pub left_behind: Vec<LeftBehind>,
}

/// Something a run created that its clean-up could not remove.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LeftBehind {
    /// Where it is: `s3://BUCKET/PREFIX` of the run's objects, `s3://BUCKET` of a bucket the run
    /// created, or the run's directory.
    pub location: String,
    /// What is there: "objects", "multipart uploads", "bucket", "files" or "directory".
    pub what: String,
    /// How many remain, counted by the clean-up's last listing; null when it could not list
    /// them, and for a bucket or directory (the thing itself).
    pub count: Option<u64>,
    /// When `count` is null: how many the run stored there by its own books, the most that
    /// can remain.
    pub at_most: Option<u64>,
    /// Why they remain: the error of the clean-up's last try.
    pub error: String,
}

impl LeftBehind {
    /// One line for people: how many of what remain where, and why.
    pub fn describe(&self) -> String {
        let (what, place, why) = (&self.what, &self.location, &self.error);
        match (self.count, self.at_most) {
            (Some(n), _) => format!("{n} {what} left in {place}: {why}"),
            (None, Some(n)) => format!("up to {n} {what} left in {place}: {why}"),
            (None, None) => format!("{what} {place} left: {why}"),
        }
    }
}

/// The [`RunResult::config_hash`] of a run of `kind` with `config`: FNV-1a (64 bits) of the
/// configuration's JSON without the fields that name where it ran or differ per run, nor those
/// that are null, empty or 0 (so a field added later, absent from older documents, leaves
/// their hash as it was).
pub fn config_hash(kind: &str, config: &Config) -> String {
    let mut value = serde_json::to_value(config).expect("a config serialises");
    // The servers and the network name where the run ran, not what it did.
    let place = [
        "dir",
        "run_dir",
        "keep",
        "server_metrics",
        "server_devices",
        "server_drop_cmd",
        "line_rate_bytes_per_s",
        "line_rate_source",
    ];
    let s3_place = [
        "endpoints",
        "gateway_dir",
        "bucket",
        "bucket_created",
        "prefix",
        "max_new_objects",
        "upload_bytes_per_s",
    ];
    if let Some(map) = value.as_object_mut() {
        place.iter().for_each(|k| {
            map.remove(*k);
        });
        if let Some(s3) = map.get_mut("s3").and_then(|s| s.as_object_mut()) {
            s3_place.iter().for_each(|k| {
                s3.remove(*k);
            });
        }
    }
    fn unset_removed(value: &mut serde_json::Value) {
        if let Some(map) = value.as_object_mut() {
            map.retain(|_, v| !(v.is_null() || v == "" || v == 0));
            map.values_mut().for_each(unset_removed);
        }
    }
    unset_removed(&mut value);
    let text = format!("{kind}\n{value}");
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// One process of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankInfo {
    /// MPI rank (0 without MPI).
    pub rank: u32,
    /// Host the rank ran on.
    pub host: String,
    /// The rank's wall clock minus rank 0's, in ns, estimated by ping-pong after a barrier; its
    /// workers' stamps were moved onto rank 0's clock by it.
    pub clock_offset_ns: i64,
    /// The offset is right to within this many ns (half the shortest round trip).
    pub clock_uncertainty_ns: u64,
}

/// How a run or phase ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Every phase ran to its stop rule.
    Complete,
    /// Stopped by Ctrl-C (SIGINT) or SIGTERM; results are partial.
    Interrupted,
    /// An operation failed (ENOSPC, EIO, ...); results are partial.
    Failed,
    /// The run had not ended when this document was written: it is still going, or it was
    /// killed (power loss, the OOM killer, a batch system's time limit). The phases in it are
    /// complete; the document is rewritten after every phase.
    Running,
}

/// The resolved options of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The directory given on the command line.
    pub dir: String,
    /// The directory the run created inside `dir` (or, for `read`, the data set it read).
    pub run_dir: String,
    /// Worker threads.
    pub jobs: u32,
    /// Bytes each worker owns.
    pub size_per_job_bytes: u64,
    /// Bytes of the whole data set (jobs x size_per_job_bytes).
    pub total_bytes: u64,
    /// Bytes per operation.
    pub block_bytes: u64,
    /// "file_per_job" (one file per worker) or "shared_file" (disjoint regions of one file).
    pub layout: String,
    /// "sequential" or "random" (every block once per pass, in random order).
    pub pattern: String,
    /// "never", "end" (once per worker after its last write) or "each" (after every write).
    pub fsync: String,
    /// Whether files were opened with O_DIRECT.
    pub direct: bool,
    /// How reads and writes were submitted: "sync" or "io_uring" (empty in documents from
    /// before: sync).
    #[serde(default)]
    pub engine: String,
    /// Requests each worker kept in flight (--iodepth; 0 in documents from before: 1).
    #[serde(default)]
    pub iodepth: u32,
    /// Time limit per phase in seconds, when the run stops by time instead of by size.
    pub duration_s: Option<f64>,
    /// Warm-up before each phase's duration, in seconds (--ramp): operations that ended in it
    /// are in no number of the document. Null: none.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    /// Content written: "random", "zero" or "compressible:PCT".
    pub data: String,
    /// Whether the data was kept after the run.
    pub keep: bool,
    /// The bonnie-style suite's own settings (runs of kind "bonnie").
    pub bonnie: Option<BonnieConfig>,
    /// The S3 load's own settings (runs of kind "s3 put", "s3 get", ...).
    #[serde(default)]
    pub s3: Option<S3Config>,
    /// Memory of the server behind the storage (NFS server, S3 server) as the user stated it
    /// with --server-ram, in bytes: a data set smaller than it can be served from that cache.
    /// Null: not stated (network file systems then assume twice this client's RAM).
    #[serde(default)]
    pub server_ram_bytes: Option<u64>,
    /// The storage servers' Prometheus text endpoints (`--server-metrics`), read before and
    /// after every phase.
    #[serde(default)]
    pub server_metrics: Vec<String>,
    /// The servers' data devices named with `--server-devices` (empty: every disk).
    #[serde(default)]
    pub server_devices: Vec<String>,
    /// The command run (`sh -c`) before every read or GET phase to drop the servers' caches
    /// (`--server-drop-cmd`).
    #[serde(default)]
    pub server_drop_cmd: Option<String>,
    /// The network's speed between this client and the storage (`--line-rate`), bytes per
    /// second: a rate above it cannot have crossed that network. Null: not stated.
    #[serde(default)]
    pub line_rate_bytes_per_s: Option<u64>,
    /// Where `line_rate_bytes_per_s` comes from: "stated", or "auto: IFACE's link, N Mbit/s".
    #[serde(default)]
    pub line_rate_source: Option<String>,
}

/// Settings of `iobm s3`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// Endpoint URLs; worker w talks to endpoint w mod len.
    pub endpoints: Vec<String>,
    /// Whether the endpoint was iobm's own gateway started in-process over `gateway_dir`.
    pub builtin_gateway: bool,
    /// Directory the built-in gateway served (null with external endpoints).
    pub gateway_dir: Option<String>,
    /// The bucket the objects were in.
    pub bucket: String,
    /// Whether this run created the bucket (it then deletes it, unless --keep).
    pub bucket_created: bool,
    /// Every object of the run is under this key prefix (unique per run).
    pub prefix: String,
    /// Region the requests were signed for.
    pub region: String,
    /// "unsigned" (x-amz-content-sha256: UNSIGNED-PAYLOAD) or "sha256" (every body hashed
    /// inside the operation's time); "none" when requests were not signed at all.
    pub payload_signing: String,
    /// Concurrent requests (one connection and worker thread each).
    pub concurrent: u32,
    /// Objects of the data set that get, head, delete, list and mixed work on (uploaded first,
    /// not counted).
    pub objects: u64,
    /// Smallest object size in bytes.
    pub obj_size_min: u64,
    /// Largest object size in bytes (equal to the smallest: fixed size; else uniform).
    pub obj_size_max: u64,
    /// Bytes per ranged GET, null for whole objects.
    pub range_bytes: Option<u64>,
    /// Multipart part size in bytes.
    pub part_size: u64,
    /// Parts in flight per multipart upload.
    pub part_concurrency: u32,
    /// Weights of get, head, put and delete in a mixed run.
    pub mix: Vec<u32>,
    /// Times a failed request was tried again (0: failures are only counted).
    pub retries: u32,
    /// The run stops (failed) once more requests than this failed.
    pub max_errors: u64,
    /// Longest wait for a connection or for progress of a request, in seconds.
    pub timeout_s: f64,
    /// Whether every request had a connection of its own (--new-connection).
    pub new_connection: bool,
    /// The most new objects the run would store (the built-in gateway: half the free space of
    /// its directory); null: no limit.
    pub max_new_objects: Option<u64>,
    /// Whether the endpoints were https://.
    pub tls: bool,
    /// Whether any server certificate was accepted (--insecure).
    pub insecure: bool,
    /// The network's speed between client and endpoints as the user stated it (--line-rate),
    /// bytes per second; a GET rate above it cannot have crossed that network (not checked with the
    /// built-in gateway). Null: not stated.
    #[serde(default)]
    pub line_rate_bytes_per_s: Option<u64>,
    /// Objects per delete request: 1 sends one DELETE each, more one DeleteObjects each
    /// (--batch); 0 in documents from before.
    #[serde(default)]
    pub delete_batch: u32,
    /// The rate at which the data set of a get, head, delete, list or mixed run was uploaded
    /// before its phase (bytes over the upload's wall time, not counted in any phase): the
    /// PUT rate a GET is compared with. Null when nothing was uploaded.
    #[serde(default)]
    pub upload_bytes_per_s: Option<f64>,
    /// The data set read was kept by an earlier run (`--reuse`): where, and that run's id.
    /// Nothing was uploaded, and the run removed nothing. Null: the run made its own.
    #[serde(default)]
    pub reused: Option<String>,
}

/// Settings of `iobm bonnie` beyond the file workload's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonnieConfig {
    /// Size of the file of the byte tests.
    pub file_bytes: u64,
    /// "buffered" (putc/getc through a user-space buffer, bonnie++ 1.0x) or "syscall" (one
    /// write(2)/read(2) per byte on 1/64 of the file, bonnie++ 1.92 and later).
    pub per_char: String,
    /// Bytes the per-char tests move.
    pub per_char_bytes: u64,
    /// Random seeks in all.
    pub seeks: u64,
    /// Workers doing the seeks.
    pub seekers: u32,
    /// Percentage of seeks whose block is changed and written back.
    pub seek_rewrite_pct: u8,
    /// Files of the metadata tests (0: no metadata tests).
    pub files: u64,
    /// Largest metadata test file, in bytes.
    pub max_file_bytes: u64,
    /// Smallest metadata test file, in bytes.
    pub min_file_bytes: u64,
    /// Directories the files are spread over (0: one directory).
    pub dirs: u64,
}

/// The bonnie++-shaped table of a bonnie run, derived from its phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonnieSummary {
    /// One row per test, in bonnie++'s order.
    pub tests: Vec<BonnieTest>,
}

/// One test of the bonnie table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonnieTest {
    /// The test ("per-char write", "block write", "rewrite", "per-char read", "block read",
    /// "random seeks", "sequential create", ...).
    pub test: String,
    /// Throughput in KiB/s (bonnie++'s K/sec) for tests that move data; null otherwise.
    pub kib_per_s: Option<f64>,
    /// Throughput in MiB/s for tests that move data; null otherwise.
    pub mib_per_s: Option<f64>,
    /// Operations per second: seeks/s, or files/s for the metadata tests.
    pub ops_per_s: f64,
    /// iobm's CPU time over the test's wall time, percent (over 100 with several workers).
    pub cpu_pct: f64,
    /// 99th percentile latency of one operation, ns.
    pub p99_ns: Option<u64>,
    /// Largest latency of one operation, ns.
    pub max_ns: Option<u64>,
    /// Wall time of the test in seconds.
    pub seconds: f64,
}

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

/// One phase: every worker doing one operation over its region.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseResult {
    /// Name of the phase ("write", "read", "random read", ...).
    pub name: String,
    /// Operation: "write" or "read".
    pub op: String,
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
    /// Under MPI: seconds rank 0 spent after the phase gathering the ranks' records and
    /// merging them (outside the phase and its rates); null for one process.
    #[serde(default)]
    pub gather_s: Option<f64>,
    /// Every worker's series added up, interval by interval, latency histograms merged (null in
    /// documents from before).
    #[serde(default)]
    pub series: Option<Series>,
    /// Under MPI: each rank's workers' series added up (bytes, operations and errors; the
    /// latency per interval is in `series`, over all ranks).
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
    pub op: String,
    /// Operations that succeeded.
    pub ops: u64,
    /// Bytes they moved (bodies sent or received).
    pub bytes: u64,
    /// Operations that failed (in the phase's errors by kind; not in ops, bytes or latency).
    pub errors: u64,
    /// Failed attempts that were tried again (--retries), apart from errors.
    pub retried: u64,
    /// Keys the operations returned (list) or deleted in batches (delete --batch); 0 for the
    /// others.
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
    pub pattern: String,
    /// "never", "end" or "each".
    pub fsync: String,
    /// Whether O_DIRECT was used.
    pub direct: bool,
    /// How requests were submitted: "sync" (one pread/pwrite at a time) or "io_uring" (empty in
    /// documents from before: sync).
    #[serde(default)]
    pub engine: String,
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
    pub cache_dropped: String,
    /// Time limit in seconds; null when each worker made one pass over its region.
    pub duration_s: Option<f64>,
    /// Warm-up before the duration, in seconds, not counted (--ramp); null: none.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    /// Whether every 4 KiB read back was checked for its stamp (--verify), outside the timing.
    pub verify: bool,
    /// Bytes of the phase's data set.
    pub data_bytes: u64,
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
    /// Throughput over time.
    pub series: Series,
    /// The S3 endpoint the worker sent its requests to (object phases).
    #[serde(default)]
    pub endpoint: Option<String>,
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
    pub own_io: Option<storage::OwnIo>,
    /// The layers below the file system's block device, followed down to the devices at the
    /// bottom, with what those moved (each host's once); empty when nothing lies below it.
    #[serde(default)]
    pub below: Vec<storage::Below>,
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
    pub verdict: String,
    /// The evidence, in one line.
    pub evidence: String,
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
    /// Moves every stamp of the phase (its span, each worker's, and the operation stamps where
    /// they were recorded) by `to`, onto another clock.
    pub fn move_stamps(&mut self, to: impl Fn(u64) -> u64) {
        self.start_ns = to(self.start_ns);
        self.end_ns = to(self.end_ns);
        for w in &mut self.workers {
            w.span.move_stamps(&to);
        }
    }

    pub fn bytes(&self) -> u64 {
        self.workers.iter().map(|w| w.span.bytes).sum()
    }

    /// Whether the phase's operations move file data (rated in bytes per second) rather than
    /// being counted (seeks, creates, stats, deletes: rated in operations per second).
    pub fn moves_data(&self) -> bool {
        iobm_stats::names::ops::moves_data(&self.op)
    }

    pub fn spans(&self) -> Vec<WorkerSpan> {
        self.workers.iter().map(|w| w.span).collect()
    }

    pub fn aggregate(&self, kind: iobm_stats::AggregateKind) -> Option<&Aggregate> {
        self.aggregates.iter().find(|a| a.kind == kind)
    }
}

impl RunResult {
    /// Reads a saved result, refusing other formats and newer versions with a clear message.
    pub fn from_json(text: &str) -> Result<RunResult, String> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            return Err("not an iobm result (no \"format\": \"iobm-result\")".to_string());
        }
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if !version.is_some_and(|v| (1..=SCHEMA_VERSION as u64).contains(&v)) {
            return Err(format!(
                "schema_version {version:?} is not supported by this iobm (reads 1 to {SCHEMA_VERSION})"
            ));
        }
        serde_json::from_value(value).map_err(|e| format!("malformed iobm result: {e}"))
    }
}

/// The JSON Schema of [`RunResult`], as checked in under `schema/`.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RunResult)).expect("schema serialises")
}
