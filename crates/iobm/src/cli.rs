//! The command line: subcommands, flags, their defaults and help text. Values with units are
//! parsed here so a bad one is reported with the flag that carries it.

use crate::exit::EXIT_CODES_HELP;
use clap::{Args, Parser, Subcommand, ValueEnum};
use iobm_engine::DataKind;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  iobm quick                                  a 30-second tour in the system temp directory
  iobm stream --jobs 4 --size 32G /mnt/nfs    write 32 GiB with 4 workers, then read it back
  iobm write -j 8 --size-per-job 4G --block 4MiB --direct /mnt/lustre
  iobm write --keep --json w.json /data && iobm read /data/iobm-<run id>
  iobm read --random --block 4k --duration 30s /data/iobm-<run id>
  iobm report w.json                          print a saved result again

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
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write files in parallel and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Write(WriteArgs),
    /// Read a data set left by `iobm write --keep` and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Read(ReadArgs),
    /// Write, then read back the same data, in one run
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Stream(WriteArgs),
    /// A tour of about 30 seconds on a built-in default directory, with a summary table
    Quick(QuickArgs),
    /// Print a saved result (--json FILE) again, recomputing its aggregates
    Report(ReportArgs),
}

/// Options shared by every file workload.
#[derive(Debug, Args)]
pub struct IoArgs {
    /// Bytes per operation [default: 1MiB; for read: the block the data was written with]
    #[arg(short, long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub block: Option<u64>,
    /// Visit blocks in random order (every block once per pass)
    #[arg(long)]
    pub random: bool,
    /// Bypass the page cache with O_DIRECT (aligned buffers; block must be a multiple of 4 KiB)
    #[arg(long)]
    pub direct: bool,
    /// Read what the page cache already holds, instead of flushing the data set and dropping
    /// its cached pages before each read phase (posix_fadvise DONTNEED, as fio's invalidate=1)
    #[arg(long)]
    pub keep_cache: bool,
    /// Stop each phase after this long instead of after one pass (wraps around the data)
    #[arg(short, long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub duration: Option<Duration>,
    /// Write the full result document (versioned JSON, see schema/) to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and writes only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Worker threads
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,
    /// Total bytes, split evenly over the jobs [default: 1GiB]
    #[arg(short, long, value_name = "SIZE", value_parser = parse_positive_size, conflicts_with = "size_per_job")]
    pub size: Option<u64>,
    /// Bytes per job (instead of --size)
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size_per_job: Option<u64>,
    /// One file per job (the default)
    #[arg(long, conflicts_with = "shared_file")]
    pub file_per_job: bool,
    /// One file shared by all jobs, each owning a disjoint region
    #[arg(long)]
    pub shared_file: bool,
    /// When to force written data to storage: never, end (once per job, timed) or each (after every write, like bonnie++ -b)
    #[arg(long, value_enum, default_value_t = FsyncArg::End)]
    pub fsync: FsyncArg,
    /// Content to write: random (stamped per 4 KiB, incompressible), zero, or compressible:PCT
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = parse_data)]
    pub data: DataKind,
    /// Keep the data after the run (read it later with `iobm read DIR/iobm-<run id>`)
    #[arg(long)]
    pub keep: bool,
    /// Run even when the data set is larger than the free space reported for DIR
    #[arg(long)]
    pub ignore_free_space: bool,
    #[command(flatten)]
    pub io: IoArgs,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// A data set kept by `iobm write --keep` (its iobm-<run id> directory, or the directory holding exactly one)
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    #[command(flatten)]
    pub io: IoArgs,
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Directory to measure [default: the system temp directory]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Time per step
    #[arg(long, value_name = "DURATION", default_value = "6s", value_parser = parse_positive_duration)]
    pub step_time: Duration,
    /// Write the full result document to FILE
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result saved with --json
    #[arg(value_name = "RESULT.json")]
    pub file: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FsyncArg {
    Never,
    End,
    Each,
}

fn parse_positive_size(s: &str) -> Result<u64, String> {
    match iobm_stats::parse_bytes(s) {
        Ok(0) => Err("must be greater than 0".to_string()),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match iobm_stats::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be greater than 0".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// `random`, `zero` or `compressible:PCT`.
pub fn parse_data(s: &str) -> Result<DataKind, String> {
    match s {
        "random" => Ok(DataKind::Random),
        "zero" => Ok(DataKind::Zero),
        _ => {
            let pct = s
                .strip_prefix("compressible:")
                .ok_or("expected random, zero or compressible:PCT")?;
            match pct.trim_end_matches('%').parse::<u8>() {
                Ok(p) if p <= 100 => Ok(DataKind::Compressible(p)),
                _ => Err(format!("'{pct}' is not a percentage from 0 to 100")),
            }
        }
    }
}

/// The name of a data kind, as `--data` takes it.
pub fn data_name(kind: DataKind) -> String {
    match kind {
        DataKind::Random => "random".into(),
        DataKind::Zero => "zero".into(),
        DataKind::Compressible(p) => format!("compressible:{p}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_kinds() {
        assert_eq!(parse_data("random"), Ok(DataKind::Random));
        assert_eq!(
            parse_data("compressible:40"),
            Ok(DataKind::Compressible(40))
        );
        assert!(parse_data("compressible:140").is_err());
        assert!(parse_data("ones").is_err());
        for k in [DataKind::Random, DataKind::Zero, DataKind::Compressible(5)] {
            assert_eq!(parse_data(&data_name(k)), Ok(k));
        }
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
