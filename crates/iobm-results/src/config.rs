//! The resolved options of a run (files, S3, the bonnie suite) and the hash of what it did.

use iobm_stats::access::AccessDist;
use iobm_stats::names::{
    Arrivals, Engine, Fadvise, LayoutName, Madvise, PatternName, Picks, RunFsync, RunKind,
};
use iobm_stats::sizes::SizeDist;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod replay;
pub use replay::ReplayConfig;

/// The [`RunResult::config_hash`] of a run of `kind` with `config`: FNV-1a (64 bits) of the
/// configuration's JSON without the fields that name where it ran or differ per run, nor those
/// that are null, empty or 0 (so a field added later, absent from older documents, leaves
/// their hash as it was).
pub fn config_hash(kind: &RunKind, config: &Config) -> String {
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
        if let Some(rate) = map.get_mut("rate").and_then(|s| s.as_object_mut()) {
            rate.remove("slo_ns");
        }
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
    /// "file_per_job" (one file per worker), "shared_file" (disjoint regions of one file) or
    /// "strided" (IOR's segmented shared file, `segments`).
    #[schemars(with = "String")]
    pub layout: LayoutName,
    /// Segments of IOR's segmented shared file (`--segments`, layout "strided"): each holds
    /// one `block_bytes` transfer of every worker of every rank in turn. Absent: another layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub segments: Option<u64>,
    /// "sequential" or "random" (every block once per pass, in random order).
    #[schemars(with = "String")]
    pub pattern: PatternName,
    /// "never", "end" (once per worker after its last write) or "each" (after every write) of
    /// the writing phases, or "per phase" when they differ.
    #[schemars(with = "String")]
    pub fsync: RunFsync,
    /// Whether files were opened with O_DIRECT.
    pub direct: bool,
    /// How reads and writes were submitted: "sync", "io_uring" or "mmap" (empty in documents
    /// from before: sync).
    #[serde(default, with = "iobm_stats::names::engine_word")]
    #[schemars(with = "String")]
    pub engine: Option<Engine>,
    /// `--fadvise`: the posix_fadvise advice given on each file after its open. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub fadvise: Option<Fadvise>,
    /// `--madvise` (`engine` "mmap"): the madvise advice given on each mapping. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub madvise: Option<Madvise>,
    /// `--cpus` (or the CPUs of `numa`): each worker's thread was pinned to one CPU of this
    /// list in turn ("0-3,8"); what each thread was then allowed is its record's `cpus`.
    /// Absent: not pinned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// `--numa N`: the workers were pinned to the CPUs of this NUMA node. Absent: not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa: Option<u32>,
    /// Requests each worker kept in flight (--iodepth; 0 in documents from before: 1).
    #[serde(default)]
    pub iodepth: u32,
    /// Time limit per phase in seconds, when the run stops by time instead of by size.
    pub duration_s: Option<f64>,
    /// Warm-up before each phase's duration, in seconds (--ramp): operations that ended in it
    /// are in no number of the document. Null: none.
    #[serde(default)]
    pub ramp_s: Option<f64>,
    /// `--until-stable`: each phase that stops by time ends once its rate is steady, as
    /// `[tolerance in percent, window in seconds]`. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<[f64; 2]>,
    /// Content written: "random", "zero" or "compressible:PCT".
    pub data: String,
    /// Whether the data was kept after the run.
    pub keep: bool,
    /// The bonnie-style suite's own settings (runs of kind "bonnie").
    pub bonnie: Option<BonnieConfig>,
    /// The S3 load's own settings (runs of kind "s3 put", "s3 get", ...).
    #[serde(default)]
    pub s3: Option<S3Config>,
    /// The metadata workload's own settings (runs of kind "meta"). Absent: another kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaConfig>,
    /// Settings of `iobm replay`: the trace (absent for other commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayConfig>,
    /// Settings of `iobm io500` (absent for other commands).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io500: Option<Io500Config>,
    /// Open loop (`--rate`): the rate the phases' operations were started at. Absent: closed
    /// loop, each worker's next operation as its last returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<RateConfig>,
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
    /// Each rank read the data the next rank wrote (`--reorder`, IOR -C). Absent: its own.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reorder: bool,
    /// `--mem gpu`: the devices whose memory held the workers' buffers (absent: host memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::device::MemoryConfig>,
    /// Every byte read back (or every GET's body and PUT's ETag) was checked against what was
    /// written (`--verify`), outside the timing. Absent: nothing was checked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
    /// Percent of the operations of the read-write phase that read and that write, [read,
    /// write] (`--rwmix READ_PCT`). Null: reads and writes in phases of their own.
    #[serde(default)]
    pub rwmix_pct: Option<[u8; 2]>,
    /// Operations in all after which the run stopped (`--ops`). Null: it stopped by time
    /// (`duration_s`) or after one pass.
    #[serde(default)]
    pub ops: Option<u64>,
    /// `--access`: how random reads picked their blocks or GETs and HEADs their objects, when
    /// skewed. Absent: uniformly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessDist>,
    /// `--think`: each worker's idle time after each operation, seconds, outside the
    /// latency. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_s: Option<f64>,
    /// `--burst ON/OFF`: load for ON seconds, idle for OFF, `[on, off]`. Absent: load all along.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_s: Option<[f64; 2]>,
}

/// The open-loop load of `--rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RateConfig {
    /// Operations per second started over every worker of every rank (a rate in bytes per
    /// second is converted with the phase's transfer size).
    pub ops_per_s: f64,
    /// How the starts were spaced: "uniform" or "poisson".
    #[schemars(with = "String")]
    pub arrivals: Arrivals,
    /// `--rate-sweep`: the last step's rate (`ops_per_s` is the first's). Absent: one rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_to_ops_per_s: Option<f64>,
    /// `--rate-sweep`: the steps, one phase each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sweep_steps: Option<u32>,
    /// `--slo`: the p99 response time a sweep's knee stays under, in ns (how the result is
    /// read, not what was run: not in the config hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo_ns: Option<u64>,
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
    /// `--checksum`: the additional checksum every whole-object PUT carried
    /// (`x-amz-checksum-ALGORITHM`, computed inside the operation's time): crc32, crc32c,
    /// crc64nvme, sha1 or sha256. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// Concurrent requests (one connection and worker thread each).
    pub concurrent: u32,
    /// Objects of the data set that get, head, delete, list and mixed work on (uploaded first,
    /// not counted).
    pub objects: u64,
    /// Smallest object size in bytes.
    pub obj_size_min: u64,
    /// Largest object size in bytes (equal to the smallest: fixed size; else uniform, or as
    /// `obj_sizes` draws them).
    pub obj_size_max: u64,
    /// How object sizes were drawn, where not fixed or uniform between the two above
    /// (`--obj-size log2:...`, `lognormal:...` or weighted sizes). Absent: fixed or uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub obj_sizes: Option<SizeDist>,
    /// Bytes per ranged GET, null for whole objects.
    pub range_bytes: Option<u64>,
    /// Multipart part size in bytes.
    pub part_size: u64,
    /// Parts in flight per multipart upload.
    pub part_concurrency: u32,
    /// Weights of get, head, put and delete in a mixed run, and of list where it had one.
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
    /// Keys per list request (`--page-keys`), for list runs. Null: the run listed nothing.
    #[serde(default)]
    pub page_keys: Option<u32>,
    /// How the GETs or HEADs of a phase by time or count picked the objects of the data set:
    /// "once" (each once per pass, shuffled; `--once`) or "random" (with replacement). Null:
    /// the run read no data set so, or its document is from before.
    #[serde(default)]
    pub picks: Option<Picks>,
}

/// Settings of `iobm meta`: the namespace's shape (mdtest's), whose items each worker works on,
/// and the phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MetaConfig {
    /// Levels of directories below each tree's root (mdtest -z).
    pub depth: u32,
    /// Directories in each directory of a tree above its last level (mdtest -b).
    pub branch: u32,
    /// Items (files, directories) per worker, or per directory of its tree (`items_per`).
    pub items: u64,
    /// What `items` counts: "worker" (mdtest -n) or "directory" (mdtest -I).
    pub items_per: String,
    /// Items each worker makes in each creating phase, as the shape gives them.
    pub items_per_worker: u64,
    /// Items only in the last level's directories (mdtest -L).
    pub leaves_only: bool,
    /// "unique": a tree per worker (mdtest -u); "shared": one tree for every worker of
    /// every rank.
    pub tree: String,
    /// Directories of one tree, its root included.
    pub tree_dirs: u64,
    /// Stats, reads, renames and removals worked on the items of the worker this many ranks
    /// on (mdtest -N); 0: each on its own.
    pub stride: u32,
    /// Bytes written into each file as it was created (mdtest -w).
    pub write_bytes: u64,
    /// Bytes read from each file by file-read (mdtest -e).
    pub read_bytes: u64,
    /// The phases run, in order (the tree's own creation and removal included).
    pub phases: Vec<String>,
    /// Each item phase's stonewall in seconds (null: none): the phase ended for every worker
    /// once the first reached it, then each went on to the most any had done.
    pub stonewall_s: Option<f64>,
    /// Whether the system's dentry, inode and page caches were dropped before each phase that
    /// looks at what was made (`--drop-caches`).
    pub drop_caches: bool,
}

/// Settings of `iobm io500`: the sizes of its phases and the stonewall of its write phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Io500Config {
    /// ior-easy: bytes of each worker's own file (its writes stop earlier at the stonewall).
    pub easy_bytes: u64,
    /// ior-easy: bytes per transfer.
    pub easy_transfer_bytes: u64,
    /// ior-hard: bytes per transfer, interleaved in one shared file (47008 by the rules).
    pub hard_transfer_bytes: u64,
    /// ior-hard: transfers of each worker (IOR's segments).
    pub hard_segments: u64,
    /// mdtest-easy: files each worker creates (its creations stop earlier at the stonewall);
    /// `items` in documents from before, where it served mdtest-hard too.
    #[serde(alias = "items")]
    pub easy_items: u64,
    /// mdtest-hard: files each worker creates (its creations stop earlier at the stonewall).
    /// Null in documents from before, where `easy_items` served both.
    #[serde(default)]
    pub hard_items: Option<u64>,
    /// mdtest-hard: bytes written into and read from each file (3901 by the rules).
    pub hard_file_bytes: u64,
    /// The write phases' stonewall in seconds (300 by the rules).
    pub stonewall_s: f64,
    /// Stats, reads and removals (and ior's reads) worked on what the worker this many ranks on
    /// made: 1 with several ranks, else 0.
    pub stride: u32,
    /// find: a file matched when its name contained this and it held `hard_file_bytes`.
    pub find_name: String,
    /// The phases run, in order.
    pub phases: Vec<String>,
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
