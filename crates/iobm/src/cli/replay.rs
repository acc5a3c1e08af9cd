//! `iobm replay`'s flags: the trace, the directory, how it is timed and spread over workers.

use super::units::{named, parse_data};
use super::{MeasureArgs, OutputArgs};
use clap::Args;
use iobm_engine::DataKind;
use iobm_stats::names::ReplayTiming;
use std::path::PathBuf;

pub const REPLAY_EXAMPLES: &str = "\
Examples:
  iobm replay app.iolog /mnt/x                fio's iolog (v2 or v3), at its recorded times
  iobm replay --timing fast app.iolog /mnt/x  as fast as it goes (fio's replay_no_stall=1)
  blkparse -i sda > sda.txt && iobm replay -j 8 sda.txt /mnt/x   a blktrace, its processes on 8 workers

fio's equivalents: read_iolog=TRACE (the trace), replay_no_stall=1 (--timing fast),
replay_time_scale=100*N (--speed N), replay_redirect (every traced file or device goes to a
file of the run's own, never to the path the trace names).";

/// `iobm replay TRACE DIR`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace: fio's iolog version 2 or 3 (fio's read_iolog=), or the text blkparse prints
    /// of a blktrace (its queue events, Q); told apart by the first line
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    /// Directory to replay in; the run creates iobm-<run id>/ inside it, a file there for each
    /// file or device the trace names, and writes only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// When each operation starts: recorded (at its recorded time after the first, the
    /// client's lateness reported as --rate's) or fast (as the last returns: fio's
    /// replay_no_stall=1)
    #[arg(long, value_parser = named(&ReplayTiming::ALL, ReplayTiming::name, None), default_value = ReplayTiming::Recorded.name())]
    pub timing: ReplayTiming,
    /// The recorded times divided by N: 2 replays twice as fast (fio's replay_time_scale=200)
    #[arg(long, value_name = "N", default_value_t = 1.0, value_parser = parse_speed)]
    pub speed: f64,
    /// Workers: the trace's streams (an iolog's files, a blktrace's processes) dealt over them
    /// in order of first appearance, each stream's operations in trace order
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,
    /// Keep the run's directory and its files after the run
    #[arg(long)]
    pub keep: bool,
    /// Replay against what the page cache holds after the fill, instead of dropping the files'
    /// pages first
    #[arg(long)]
    pub keep_cache: bool,
    /// Content of the fill and the writes: random, zero, compressible:PCT or dedupe:PCT
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = parse_data)]
    pub data: DataKind,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_speed(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!("'{s}' is not a positive number")),
    }
}
