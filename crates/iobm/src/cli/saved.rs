//! The flags of the commands over saved results (compare, report, merge) and of `iobm limits`.

use super::units::{parse_positive_duration, parse_positive_size};
use super::OutputArgs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

pub(super) const COMPARE_EXAMPLES: &str = "\
Examples:
  iobm compare nfs=nfs.json lustre=lustre.json gluster=gluster.json
  iobm compare --transpose --format markdown a.json b.json
  iobm compare --format csv *.json > all.csv
  iobm compare --html fs.html nfs.json lustre.json gluster.json   the table and a chart per test";

pub(super) const MERGE_EXAMPLES: &str = "\
Examples:
  iobm merge client1.json client2.json --json all.json   the window in which both ran
  iobm merge --whole a.json b.json c.json                 every run's whole phases";

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Saved results (--json) of the same workload, each optionally labelled: LABEL=RESULT.json
    #[arg(value_name = "[LABEL=]RESULT.json", required = true, num_args = 2..)]
    pub results: Vec<String>,
    /// Keep every run's whole phases instead of only the window in which all were active
    #[arg(long)]
    pub whole: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub(super) const LIMITS_EXAMPLES: &str = "\
Examples:
  iobm limits                                  memory, loopback TCP and checksums
  iobm limits /mnt/nvme --json limits.json     and the directory's O_DIRECT write and read
  iobm report run.json --limits limits.json    each rate as a share of the matching limit
  iobm limits --gpu 0 --json limits.json       and GPU 0's copies (pinned, pageable), for --mem gpu";

#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// Also measure this directory's sequential O_DIRECT write and read (a file of its own,
    /// removed afterwards)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Bytes the directory's measurement writes and reads
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_positive_size)]
    pub size: u64,
    /// How long each of the other measurements runs
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = parse_positive_duration)]
    pub time: Duration,
    /// Save the limits as JSON, for `iobm report --limits`
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also measure DIR at the block size and requests in flight of every phase of this saved
    /// run (--json), the run `iobm report --limits` is to judge
    #[arg(long, value_name = "RUN.json")]
    pub like: Option<PathBuf>,
    /// Also measure GPU N's copies, host to device and device to host, from pinned and pageable
    /// host memory (CUDA's driver, loaded at run time), for `--mem gpu` phases
    #[arg(long, value_name = "N")]
    pub gpu: Option<u32>,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Saved results (--json), each optionally labelled: LABEL=RESULT.json
    #[arg(value_name = "[LABEL=]RESULT.json", required = true, num_args = 1..)]
    pub results: Vec<String>,
    /// Runs as columns and tests as rows
    #[arg(long)]
    pub transpose: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// The aggregate each value is (see "Reading the output" in docs/results.md)
    #[arg(long, value_enum, default_value_t = AggregateArg::Makespan)]
    pub aggregate: AggregateArg,
    /// Also save the comparison as one self-contained HTML page: the table (with p99 latency
    /// and iobm's CPU) and one chart per test across the runs
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Unit of tests that move data: MiB/s, or bonnie++'s K/sec (KiB/s)
    #[arg(long, value_enum, default_value_t = UnitArg::Mib)]
    pub unit: UnitArg,
    /// One table however wide, instead of tables that fit 100 columns
    #[arg(long)]
    pub wide: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    /// MiB/s
    Mib,
    /// bonnie++'s K/sec (KiB/s)
    K,
}

impl From<UnitArg> for iobm_report::compare::Unit {
    fn from(arg: UnitArg) -> Self {
        match arg {
            UnitArg::Mib => iobm_report::compare::Unit::MiB,
            UnitArg::K => iobm_report::compare::Unit::KiB,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AggregateArg {
    Makespan,
    SumOfRates,
    FirstDone,
    SteadyState,
    WarpWindow,
}

impl From<AggregateArg> for iobm_stats::AggregateKind {
    fn from(arg: AggregateArg) -> Self {
        use iobm_stats::AggregateKind as K;
        match arg {
            AggregateArg::Makespan => K::Makespan,
            AggregateArg::SumOfRates => K::SumOfRates,
            AggregateArg::FirstDone => K::FirstDone,
            AggregateArg::SteadyState => K::SteadyState,
            AggregateArg::WarpWindow => K::WarpWindow,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Markdown,
    Csv,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result saved with --json
    #[arg(
        value_name = "RESULT.json",
        required_unless_present = "requests",
        conflicts_with = "requests"
    )]
    pub file: Option<PathBuf>,
    /// Re-analyse files written by --requests instead: per phase and kind of operation the
    /// count, bytes and exact latency percentiles, each host's, rank's and worker's, the slowest
    /// requests with their file or object and offset, and the rate over time. Several files
    /// are read together; one FILE of an MPI run brings its FILE.rank1, FILE.rank2, ... along
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub requests: Vec<PathBuf>,
    /// The interval of --requests' rate over time (warp analyze's --analyze.dur)
    #[arg(long, value_name = "DURATION", default_value = "1s", requires = "requests", value_parser = super::units::parse_interval)]
    pub interval: std::time::Duration,
    /// Only the requests that started in this window of their phase (2s..5s: from 2 s to 5 s
    /// after the phase began)
    #[arg(long, value_name = "FROM..TO", value_parser = super::units::parse_window)]
    pub window: Option<(std::time::Duration, std::time::Duration)>,
    /// Show each rate as a share of this machine's limits and flag those above one: a file
    /// saved by `iobm limits --json`, or `measure` to measure them now (quickly, without a
    /// device)
    #[arg(long, value_name = "FILE|measure")]
    pub limits: Option<String>,
    // The views saved again (`--csv`, `--html`, ...).
    #[command(flatten)]
    pub views: super::ViewArgs<super::Saved>,
}
