//! iobm-results: the result contract. One versioned JSON document per run; every field is
//! documented here (these doc comments become the JSON Schema in `schema/`), and everything a
//! report shows can be recomputed from it.

pub mod access;
pub mod bonnie;
pub mod checks;
mod config;
pub mod detail;
pub mod device;
pub mod env;
mod evidence;
pub mod gds;
pub mod io500;
pub mod limits;
pub mod machine;
pub mod metadata;
pub mod pace;
mod phase;
pub mod prometheus;
pub mod remote;
pub mod repeats;
pub mod server;
pub mod server_series;
mod share;
pub mod spec;
pub mod storage;
pub mod verdict;
#[cfg(test)]
mod verdict_rules;
pub mod wire;

pub use bonnie::{BonnieSummary, BonnieTest};
pub use config::{
    config_hash, BonnieConfig, Config, Io500Config, MetaConfig, RateConfig, ReplayConfig, S3Config,
};
pub use evidence::{
    CacheEvidence, CacheVerdict, DeviceIo, NicIo, ServerEvidence, ServerSeries, Verdict,
};
use iobm_stats::names::RunKind;
pub use iobm_stats::time;
pub use iobm_stats::Series;
pub use machine::{BlockDevice, ClockInfo, Environment, Nic, StorageInfo};
pub use pace::PaceResult;
pub use phase::{
    CpuUsage, DataOffered, EndpointSeries, ErrorCount, Latency, OperationResult, PhaseResult,
    PhaseSettings, RankSeries, SteadyResult, SteadyUnit, StonewallResult, WorkerResult,
};
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
    /// The kind of run: the command that made it ("write", "read", "stream", "quick",
    /// "bonnie", "io500", "meta", "s3 get", ...); only runs of one kind (or S3 runs together)
    /// are compared.
    #[schemars(with = "String")]
    pub kind: RunKind,
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
    /// The run as data: its command and the options it was given, for `iobm rerun` (absent
    /// from documents of older versions, and of runs no command line started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<spec::RunSpec>,
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
    /// IO500's scores (runs of kind "io500"), derived from the phases: each scored phase's
    /// figure, the bandwidth score (GiB/s), the metadata score (kIOPS) and the total, each
    /// with its formula, and whether the run is a valid IO500 submission. Absent for other
    /// kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io500: Option<io500::Io500Summary>,
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
