//! The flags of `iobm io500`: the sizes of the suite's phases (ior-easy's file and transfer,
//! ior-hard's segments, mdtest's files per worker), the workers and the write phases' stonewall.

use super::units::parse_size;
use super::{OutputArgs, SeriesArgs, ServerArgs};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

pub(super) const IO500_EXAMPLES: &str = "\
Examples:
  iobm io500 /mnt/lustre                        the suite with the rules' 300 s stonewall
  mpirun -np 16 iobm io500 -j 4 --easy-size 200G --segments 1000000 --items 2000000 /mnt/lustre
  iobm io500 --stonewall 10s --items 1000 --json r.json /scratch   a short try: NOT a valid submission
  iobm io500 --easy-items 50000 --hard-items 5000 /scratch   mdtest-easy and -hard sized apart
  iobm report r.json                            the phases and the score lines again

The phases of the IO500 rules, in their order: ior-easy-write, mdtest-easy-write, ior-hard-write,
mdtest-hard-write, find, ior-easy-read, mdtest-easy-stat, ior-hard-read, mdtest-hard-stat,
mdtest-easy-delete, mdtest-hard-read, mdtest-hard-delete. ior-easy: a file per worker in large
transfers; ior-hard: 47008-byte transfers interleaved in one shared file; mdtest-easy: empty files
in a directory per worker; mdtest-hard: 3901-byte files in one shared directory; find: every
entry examined, the files named *01* of 3901 bytes counted. The write phases stop at the
stonewall and every worker then goes on to the most any worker did, so the reads read exactly
what was written. With several ranks each reads and looks up what the next rank made.
Scores: bandwidth = geometric mean of the four ior phases in GiB/s; metadata = geometric mean
of the other eight in kIOPS; total = sqrt(bandwidth x metadata). A valid submission needs the
300 s stonewall, and each write phase sized to run at least that long: the sizes are the most
each worker writes (IO500's defaults), the stonewall ends the writes before; sizes beyond the
free space are said, not refused, and a disk that fills first ends the run, not valid.";

#[derive(Debug, Args)]
pub struct Io500Args {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and works only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Worker threads per process
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,
    /// ior-easy: the most bytes each worker writes into its own file (its write stops earlier
    /// at the stonewall; IO500's blockSize, whose default this is)
    #[arg(long, value_name = "SIZE", default_value = "9920000MiB", value_parser = parse_size)]
    pub easy_size: u64,
    /// ior-easy: bytes per transfer (IO500's transferSize)
    #[arg(long, value_name = "SIZE", default_value = "2MiB", value_parser = parse_size)]
    pub easy_transfer: u64,
    /// ior-hard: the most 47008-byte transfers each worker writes into the shared file
    /// (IOR's segments; its write stops earlier at the stonewall; IO500's segmentCount)
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub segments: u64,
    /// mdtest-easy and mdtest-hard: the most files each worker creates (its creations stop
    /// earlier at the stonewall), unless --easy-items or --hard-items says otherwise (IO500's
    /// n, whose default this is)
    #[arg(short = 'n', long, value_name = "N", default_value_t = 1_000_000)]
    pub items: u64,
    /// mdtest-easy: the most files each worker creates (IO500's [mdtest-easy] n); --items
    /// when not given
    #[arg(long, value_name = "N")]
    pub easy_items: Option<u64>,
    /// mdtest-hard: the most files each worker creates (IO500's [mdtest-hard] n); --items
    /// when not given
    #[arg(long, value_name = "N")]
    pub hard_items: Option<u64>,
    /// The write phases' stonewall: each ends for every worker once the first reaches this
    /// time, then each goes on to the most any worker of any rank did. Other than 300s (the
    /// rules'), the result is NOT a valid IO500 submission
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = parse_stonewall)]
    pub stonewall: Duration,
    /// Keep the run's directory and what the phases left in it instead of removing it
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub server: ServerArgs,
    /// The suite runs once, as the rules have it: no --repeat, and no --until-stable (its
    /// phases run to their stonewall, not for a duration).
    #[command(flatten)]
    pub series: SeriesArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// A duration, any: `io500` says in one line why 0 is refused.
fn parse_stonewall(s: &str) -> Result<Duration, String> {
    iobm_stats::parse_duration(s).map_err(|e| e.to_string())
}

impl Io500Args {
    /// mdtest-easy's files per worker: --easy-items, else --items.
    pub fn easy_items(&self) -> u64 {
        self.easy_items.unwrap_or(self.items)
    }

    /// mdtest-hard's files per worker: --hard-items, else --items.
    pub fn hard_items(&self) -> u64 {
        self.hard_items.unwrap_or(self.items)
    }
}
