//! The command line: subcommands, flags, their defaults and help text. Values with units are
//! parsed here (`units`) so a bad one is reported with the flag that carries it; each family
//! of commands' flags in its own file: files (`files`), metadata (`meta`), S3 (`s3`), saved
//! results (`saved`); the views' flags made from their list (`views`).

mod files;
mod io500;
mod load;
mod meta;
mod plans;
mod rate;
mod replay;
mod s3;
mod saved;
#[cfg(test)]
mod tests;
mod units;
mod views;

pub use files::{per_char_name, BonnieArgs, FilesArg, IoArgs, ReadArgs, WriteArgs};
pub use io500::Io500Args;
pub use load::LoadArgs;
pub use meta::{MetaArgs, MetaPhase};
pub use plans::{RerunArgs, RunArgs};
pub use rate::{Against, Rate, RateArgs, Sweep};
pub use replay::ReplayArgs;
pub use s3::{S3Args, ServeArgs};
pub use saved::{AggregateArg, CompareArgs, FormatArg, LimitsArgs, MergeArgs, ReportArgs, UnitArg};
pub use units::{parse_data, parse_files};
pub use views::{Bonnie, Saved, ViewArgs, Workload};

use clap::{Args, Parser, Subcommand};
use files::{BONNIE_EXAMPLES, GPU_FLAGS_HELP};
use io500::IO500_EXAMPLES;
use iobm_run::exit::EXIT_CODES_HELP;
use meta::META_EXAMPLES;
use plans::RUN_EXAMPLES;
use replay::REPLAY_EXAMPLES;
use s3::{S3_EXAMPLES, SERVE_EXAMPLES};
use saved::{COMPARE_EXAMPLES, LIMITS_EXAMPLES, MERGE_EXAMPLES};
use std::path::PathBuf;
use std::time::Duration;
use units::{
    parse_any_duration, parse_interval, parse_line_rate, parse_positive_duration,
    parse_positive_size, parse_steady,
};

const EXAMPLES: &str = "\
Examples:
  iobm quick                                  a 40-second tour in the system temp directory
  iobm stream --jobs 4 --size 32G /mnt/nfs    write 32 GiB with 4 workers, then read it back
  iobm write -j 8 --size-per-job 4G --block 4MiB --direct /mnt/lustre
  iobm write --keep --json w.json /data && iobm read /data/iobm-<run id>
  iobm read --random --block 4k --duration 30s /data/iobm-<run id>
  iobm stream --duration 1m --interval 100ms --html r.html /mnt/x   charts to open offline
  iobm stream --size 8G /dev/nvme1n1 --destroy-data-on /dev/nvme1n1   a raw device: its data is lost
  iobm report w.json                          print a saved result again
  mpirun -np 4 iobm write -j 8 --size-per-job 4G /mnt/nfs   as MPI ranks (build with --features mpi)

Sizes take K, M, G, T (powers of 1024, also KiB, MiB, ...) or KB, MB, GB, TB (powers of 1000);
durations take ms, s, m, h (a plain number is seconds).";

#[derive(Debug, Parser)]
#[command(
    name = "iobm",
    version,
    about = "A storage benchmark whose numbers can be trusted",
    long_about = "iobm measures storage: parallel streaming file I/O with every aggregate \
                  definition printed and explained, per-operation latency, iobm's own CPU cost, \
                  and evidence for or against a cache effect.",
    after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"),
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print the command line as a plan entry (TOML, for `iobm run`) instead of running it
    #[arg(long, global = true)]
    pub print_spec: bool,
    /// Check the command's flags and target, then stop before anything is created (what
    /// `iobm run` has each run of a plan do before any starts)
    #[arg(long, global = true, hide = true)]
    pub check_only: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write files in parallel and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{GPU_FLAGS_HELP}\n\n{EXIT_CODES_HELP}"))]
    Write(WriteArgs),
    /// Read a data set left by `iobm write --keep` and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{GPU_FLAGS_HELP}\n\n{EXIT_CODES_HELP}"))]
    Read(ReadArgs),
    /// Write, then read back the same data, in one run
    #[command(after_help = format!("{EXAMPLES}\n\n{GPU_FLAGS_HELP}\n\n{EXIT_CODES_HELP}"))]
    Stream(WriteArgs),
    /// bonnie++-style characterisation: per-char, block, rewrite, seeks, metadata
    #[command(after_help = format!("{BONNIE_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Bonnie(BonnieArgs),
    /// Metadata at scale, mdtest's workload: directories and files created, stat'ed, read,
    /// renamed and removed in trees of a shape, by every worker of every rank
    #[command(after_help = format!("{META_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Meta(MetaArgs),
    /// The IO500 suite: ior-easy, ior-hard, mdtest-easy, mdtest-hard and find in the rules'
    /// order, the write phases stonewalled, with the bandwidth, metadata and total scores
    #[command(after_help = format!("{IO500_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Io500(Io500Args),
    /// Replay a recorded I/O trace (fio's iolog v2/v3, blkparse's text of a blktrace) against
    /// files of the run's own, timed as recorded or as fast as possible
    #[command(after_help = format!("{REPLAY_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Replay(ReplayArgs),
    /// Side-by-side table of saved results of one kind, with ratios to the first
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// An S3 gateway over a directory: buckets are its top-level directories
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// S3 load: put, get, head, delete, list, multipart or mixed, at high concurrency
    #[command(after_help = format!("{S3_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    S3(Box<S3Args>),
    /// A tour of about 40 seconds on a built-in default directory, with a summary table
    Quick(QuickArgs),
    /// Print a saved result (--json FILE) again, recomputing its aggregates
    Report(ReportArgs),
    /// Measure this machine's limits (memory copy, loopback TCP, MD5/SHA-256/CRC32C per core,
    /// a directory's O_DIRECT rates), which no storage rate can exceed without a cache
    #[command(after_help = LIMITS_EXAMPLES)]
    Limits(LimitsArgs),
    /// Combine results of one workload started by hand on several clients (without MPI) into
    /// one run, by their wall clocks, keeping the window in which all were active
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
    /// Run a plan file: runs of any command, expanded by a matrix, each saved by its label,
    /// compared at the end
    #[command(after_help = RUN_EXAMPLES)]
    Run(RunArgs),
    /// Run the workload of a saved result again (its recorded spec), optionally changed
    Rerun(RerunArgs),
    /// Write the man pages and shell completions made from these definitions
    #[command(hide = true)]
    Generate(GenerateArgs),
}

/// What the user knows of the server behind the storage, which no client can see.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data
    /// set smaller than this is flagged as possibly served from its cache [default for network
    /// file systems: twice this machine's RAM]
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub server_ram: Option<u64>,
    /// The storage servers' Prometheus text endpoints (node_exporter's http://HOST:9100/metrics,
    /// or the gateway's of `iobm serve --metrics-listen`), read before and after every phase:
    /// what their devices, page cache, network and CPUs did goes into the cache verdict, and
    /// their memory replaces --server-ram. Each must answer before the run starts
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub server_metrics: Vec<String>,
    /// The servers' data devices, as node_exporter names them (sdb,nvme0n1) [default: every
    /// disk but device-mapper, md, loop, ram and partitions]
    #[arg(
        long,
        value_name = "DEV",
        value_delimiter = ',',
        requires = "server_metrics"
    )]
    pub server_devices: Vec<String>,
    /// A command that drops the storage servers' caches ("ssh nfs1 sudo sysctl
    /// vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time;
    /// if it fails the run ends there with what it measured
    #[arg(long, value_name = "CMD")]
    pub server_drop_cmd: Option<String>,
    /// The network's speed between this client and the storage: auto (the link speed of the
    /// interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A
    /// phase faster than this, one client's bytes over the phase's whole time, is flagged as
    /// served by a cache on this side of the network (not with the built-in gateway, whose
    /// bytes cross no network)
    #[arg(long, value_name = "auto|RATE", value_parser = parse_line_rate)]
    pub line_rate: Option<LineRate>,
}

/// `--line-rate`: read from the link, or stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRate {
    Auto,
    Rate(u64),
}

/// The output flags, shared by every command that runs a workload.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Save the full result document (versioned JSON, see schema/) to FILE, rewritten after
    /// every phase so a killed run keeps what it measured; - prints it to stdout at the end
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    // The views (`--csv`, `--html`, ...).
    #[command(flatten)]
    pub views: ViewArgs<Workload>,
    /// Append one JSON line per interval of each phase to FILE as the phase runs (its bytes,
    /// operations, errors and latency percentiles, and each kind of operation's), written as
    /// soon as every worker has passed the interval, so tail -f and jq can follow a run; under
    /// MPI each rank writes its own, FILE.rankN on rank N; with --html, that page shows the run
    /// so far and reloads itself until the report is written over it
    #[arg(long, value_name = "FILE")]
    pub live: Option<PathBuf>,
    /// Keep every operation in FILE as it goes (its start, intended start under --rate,
    /// duration, time to first byte, bytes, worker, file or object and offset, error kind),
    /// zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report
    /// --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N
    #[arg(long, value_name = "FILE")]
    pub requests: Option<PathBuf>,
    /// Serve the run's counters (bytes, operations, errors) and latency histograms by phase
    /// and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0
    /// picks a free one; under MPI rank 0 serves the sum over the ranks)
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// After the run, keep serving --metrics-listen until one scrape has read the final
    /// counters, for at most DURATION
    #[arg(long, value_name = "DURATION", default_value = "0s", requires = "metrics_listen", value_parser = parse_any_duration)]
    pub metrics_linger: Duration,
    /// Name of the run in the result, so comparisons (`iobm compare`) and bonnie's CSV line
    /// call it so [default: in comparisons the result's file name, in the CSV line the host
    /// name]
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
}

/// How finely a workload's time series is recorded.
#[derive(Debug, Args)]
pub struct SeriesArgs {
    /// Length of one interval of the time series (bytes, operations, errors and a latency
    /// histogram per interval, per worker) [default: for a phase of known length (--duration)
    /// the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Option<Duration>,
}

impl SeriesArgs {
    /// The series interval of a phase that stops by `stop`: --interval, else one giving a
    /// phase of known length enough points.
    pub fn interval_for(&self, stop: iobm_engine::StopRule) -> Duration {
        self.interval.unwrap_or_else(|| stop.default_interval())
    }
}

/// How a workload is measured: how finely its time series is recorded, how many times it runs.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Run the whole workload N times, each on fresh data, and report each aggregate's median,
    /// range and 95% confidence interval over the N
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// End each phase that runs for a --duration early once its rate is steady: every rate of
    /// the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of
    /// their mean (fio's steadystate, warp's autoterm) [default without a value: 7.5%/15s]
    #[arg(long, value_name = "TOL/WINDOW", num_args = 0..=1, require_equals = true, default_missing_value = "7.5%/15s", value_parser = parse_steady)]
    pub until_stable: Option<iobm_engine::Steady>,
}

impl MeasureArgs {
    /// Every phase's series at the chosen interval, and --until-stable's rule where it applies.
    pub fn apply(&self, phases: &mut [iobm_engine::Phase]) {
        for p in phases {
            p.interval = self.interval_for(p.stop);
            p.steady = self.steady_for(p.stop);
        }
    }

    /// The series interval of a phase that stops by `stop` ([`SeriesArgs::interval_for`]).
    pub fn interval_for(&self, stop: iobm_engine::StopRule) -> Duration {
        self.series.interval_for(stop)
    }

    /// `--until-stable`'s rule for a phase that stops by `stop`: only one that runs for a
    /// duration ends when steady.
    pub fn steady_for(&self, stop: iobm_engine::StopRule) -> Option<iobm_engine::Steady> {
        matches!(stop, iobm_engine::StopRule::Duration(_))
            .then_some(self.until_stable)
            .flatten()
    }

    /// Refuses `--until-stable` where no phase runs for a duration (`duration`: the run's
    /// phases', set by the flag `by`) or its window is not shorter than the duration.
    pub fn check_steady(
        &self,
        duration: Option<Duration>,
        by: &str,
    ) -> Result<(), iobm_run::exit::Failure> {
        use iobm_run::exit::Failure;
        let Some(rule) = self.until_stable else {
            return Ok(());
        };
        let secs = |d: Duration| format!("{}s", d.as_secs_f64());
        let given = format!(
            "--until-stable={}%/{}",
            rule.tolerance() * 100.0,
            secs(rule.window)
        );
        match duration {
            None => Err(Failure::input(format!(
                "{given}: ends a phase that runs for a --duration early, and no phase of this run does"
            ))),
            Some(d) if rule.window >= d => Err(Failure::input(format!(
                "{given}: the window is not shorter than the phase's {by} {}",
                secs(d)
            ))),
            Some(_) => Ok(()),
        }
    }
}

impl OutputArgs {
    pub fn json(&self) -> Option<&std::path::Path> {
        self.json.as_deref()
    }

    /// Checks the output paths before a run starts.
    pub fn check(&self) -> Result<(), iobm_run::exit::Failure> {
        iobm_run::session::json_path_ok(self.json())?;
        if let Some(live) = &self.live {
            iobm_run::session::output_path_ok("--live", live)?;
        }
        if let Some(requests) = &self.requests {
            iobm_run::session::output_path_ok("--requests", requests)?;
        }
        self.views.check()
    }

    /// Where the run's result and views go: the one place the output flags become the run
    /// layer's outputs.
    pub fn outputs(&self) -> iobm_run::outputs::Outputs {
        iobm_run::outputs::Outputs {
            json: self.json.clone(),
            label: self.label.clone(),
            views: self.views.chosen.clone(),
            live: self.live.clone(),
            requests: self.requests.clone(),
            metrics_listen: self.metrics_listen,
            metrics_linger: self.metrics_linger,
        }
    }

    /// What the run layer is given of every workload command: these outputs, and the
    /// repetitions of `measure`.
    pub fn common(&self, measure: &MeasureArgs) -> iobm_run::lifecycle::Common {
        iobm_run::lifecycle::Common {
            outputs: self.outputs(),
            repetitions: measure.repeat,
        }
    }
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Directory to measure [default: the system temp directory]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Time per step
    #[arg(long, value_name = "DURATION", default_value = "6s", value_parser = parse_positive_duration)]
    pub step_time: Duration,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// The repository's root: the man pages go to DIR/docs/man, the completions (bash, zsh,
    /// fish) to DIR/completions
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}
