//! `iobm replay TRACE DIR`: a recorded trace (fio's iolog v2/v3, blkparse's text) read and
//! checked, its files mapped to files of the run's own directory (sized to the largest offset
//! and length the trace touches, filled before the replay), and its reads and writes replayed
//! by the engine's replay task: each stream (an iolog's file, a blktrace's process) on one
//! worker, at its recorded times or as fast as it goes.

mod blkparse;
mod iolog;
mod trace;

use crate::cli::ReplayArgs;
use crate::files::keep_or_remove;
use crate::rundir::RunDir;
use crate::targets;
use iobm_engine::{
    prepare_objects, Arrivals, FileSpec, FsyncPolicy, Layout, Op, Pace, Phase, Region, Replay,
    ReplayIo, ReplayStream,
};
use iobm_results::{Config, ReplayConfig, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_command, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::format_bytes;
use iobm_stats::names::{ReplayTiming, RunKind, TraceFormat};
use iobm_target::Target;
use std::ffi::OsString;
use std::sync::Arc;
use trace::{BadLine, Kind, Trace};

/// Bytes per write of the fill before the replay.
const FILL_BLOCK: u64 = 1 << 20;

/// `iobm replay TRACE DIR`: the trace read and checked on every rank, then replayed.
pub fn replay(args: ReplayArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    let common = args.output.common(&args.measure);
    run_command(argv, &common, |ranks| {
        let checked = check(&args, ranks.size());
        let (trace, sha256) = ranks.agreed(checked)?;
        Ok(ReplayPlan {
            args: &args,
            trace,
            sha256,
        })
    })
}

/// The trace read and parsed, and its hash; the flags and the directory checked.
fn check(args: &ReplayArgs, ranks: u32) -> Result<(Trace, String), Failure> {
    args.output.check()?;
    args.measure.check_steady(None, "--duration")?;
    if ranks > 1 {
        return Err(Failure::input(
            "iobm replay runs on one process (no mpirun)",
        ));
    }
    let path = args.trace.display();
    let bytes = std::fs::read(&args.trace)
        .map_err(|e| Failure::input(format!("TRACE {path}: {}", describe_io(&e))))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| {
        Failure::input(format!(
            "TRACE {path}: not text (iobm reads blkparse's text output, not a binary blktrace)"
        ))
    })?;
    let trace = parse(text)
        .map_err(|e| Failure::input(format!("TRACE {path}: line {}: {}", e.line, e.why)))?;
    session::writable_dir(&args.dir)?;
    let total: u64 = trace.extents().iter().sum();
    let space = iobm_results::env::space(&args.dir).filter(|&(size, _)| size > 0);
    if let Some((_, avail)) = space.filter(|&(_, avail)| avail < total) {
        return Err(Failure::input(format!(
            "TRACE {path}: its files need {} (the largest offset + length in each) but {} has {} free",
            format_bytes(total),
            args.dir.display(),
            format_bytes(avail)
        )));
    }
    let digest = <sha2::Sha256 as sha2::Digest>::digest(&bytes);
    let sha256 = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((trace, sha256))
}

/// Parses a whole trace: fio's iolog by its header line, else blkparse's text; an error names
/// the line (from 1) and why.
fn parse(text: &str) -> Result<Trace, BadLine> {
    let first = text.lines().next().unwrap_or_default();
    if first.starts_with(iolog::V2) {
        iolog::parse(text, TraceFormat::Iolog2)
    } else if first.starts_with(iolog::V3) {
        iolog::parse(text, TraceFormat::Iolog3)
    } else if blkparse::looks_like(first) {
        blkparse::parse(text)
    } else {
        let why = "not a trace iobm knows: neither fio's iolog header ('fio version 2 iolog', 'fio version 3 iolog') nor a blkparse event (MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...)";
        Err(BadLine::new(1, why))
    }
}

/// A checked replay.
struct ReplayPlan<'a> {
    args: &'a ReplayArgs,
    trace: Trace,
    sha256: String,
}

impl ReplayPlan<'_> {
    /// The trace's files as the run's: `replay.N` for its Nth file, sized to cover every
    /// operation on it.
    fn files(&self) -> Vec<FileSpec> {
        let named = self.trace.extents().into_iter().enumerate();
        named
            .map(|(i, size)| FileSpec {
                name: format!("replay.{i}"),
                size,
            })
            .collect()
    }

    /// The streams in order of first appearance, dealt over `--jobs` workers.
    fn replay(&self) -> Replay {
        let mut keys: Vec<u64> = Vec::new();
        let jobs = self.args.jobs as usize;
        let speed = self.args.speed;
        let mut streams = Vec::new();
        for op in &self.trace.ops {
            let k = keys
                .iter()
                .position(|&s| s == op.stream)
                .unwrap_or_else(|| {
                    keys.push(op.stream);
                    keys.len() - 1
                });
            if streams.len() <= k % jobs {
                streams.push(ReplayStream::default());
            }
            let stream = &mut streams[k % jobs];
            match op.kind {
                Kind::Read | Kind::Write => stream.ios.push(ReplayIo {
                    at_ns: (op.at_ns as f64 / speed) as u64,
                    file: op.file,
                    write: op.kind == Kind::Write,
                    offset: op.offset,
                    len: op.len,
                }),
                Kind::Sync => stream.syncs.push((stream.ios.len(), op.file)),
                Kind::Trim => {}
            }
        }
        Replay {
            streams,
            recorded: self.args.timing == ReplayTiming::Recorded,
        }
    }

    /// The fill of every file (untimed for the replay: a phase of its own), then the replay.
    fn phases(&self) -> Vec<Phase> {
        let files = self.files();
        let regions = |files: &[FileSpec]| -> Vec<Region> {
            let each = files.iter().enumerate().filter(|(_, f)| f.size > 0);
            each.map(|(file, f)| Region {
                file,
                offset: 0,
                len: f.size,
                visit: None,
            })
            .collect()
        };
        let layout = Layout {
            regions: regions(&files),
            files,
            shared: false,
        };
        // Files smaller than the fill's block are written whole, in one write of their size.
        let largest = layout.files.iter().map(|f| f.size).max().unwrap_or(0);
        let fill_block = FILL_BLOCK.min(largest).max(1);
        let fill = Phase {
            fsync: FsyncPolicy::End,
            data: self.args.data,
            ..Phase::new("fill", Op::Write, fill_block, layout.clone())
        };
        let replay = self.replay();
        let (reads, writes) = (self.trace.count(Kind::Read), self.trace.count(Kind::Write));
        let read_pct = (reads * 100 / (reads + writes).max(1)) as u8;
        let workers = replay.streams.len();
        let pace = replay.recorded.then(|| {
            let span_s = (replay.span_ns() as f64 / 1e9).max(1e-3);
            Pace::new(
                replay.ios() as f64 / span_s,
                workers as u64,
                Arrivals::Uniform,
                0,
            )
        });
        let replay_phase = Phase {
            workers,
            pace,
            data: self.args.data,
            drop_cache: !self.args.keep_cache,
            interval: self.args.measure.interval_for(iobm_engine::StopRule::Once),
            ..Phase::new(
                "replay",
                Op::ReadWrite { read_pct },
                replay.largest(),
                layout,
            )
        };
        let replay_phase = Phase {
            replay: Some(Arc::new(replay)),
            ..replay_phase
        };
        vec![fill, replay_phase]
    }

    fn config(&self, phases: &[Phase], run_dir: String) -> Config {
        let args = self.args;
        let replay = &phases[1];
        let streams = {
            let mut s: Vec<u64> = self.trace.ops.iter().map(|op| op.stream).collect();
            s.sort_unstable();
            s.dedup();
            s.len() as u32
        };
        Config {
            jobs: replay.workers as u32,
            block_bytes: replay.block,
            replay: Some(ReplayConfig {
                trace: args.trace.display().to_string(),
                format: self.trace.format,
                sha256: self.sha256.clone(),
                timing: args.timing,
                speed: args.speed,
                files: self.trace.files.len() as u32,
                streams,
                reads: self.trace.count(Kind::Read),
                writes: self.trace.count(Kind::Write),
                syncs: self.trace.count(Kind::Sync),
                trims: self.trace.count(Kind::Trim),
            }),
            ..plan::config(
                phases,
                Placement {
                    dir: args.dir.display().to_string(),
                    run_dir,
                    keep: args.keep,
                    ranks: 1,
                },
            )
        }
    }
}

impl RunPlan for ReplayPlan<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Replay
    }

    fn checked_config(&self, _ranks: &Ranks) -> Option<Config> {
        Some(self.config(&self.phases(), String::new()))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let targets::InRunDir { dir, target } = targets::run_dir(&self.args.dir, run_id, ranks)?;
        let phases = self.phases();
        if let Err(e) = prepare_objects(target.as_ref(), &phases[0].layout) {
            let _ = dir.remove(&phases[0].layout);
            let path = dir.path.display();
            return Err(Failure::run(format!(
                "{path}: cannot create the files: {}",
                describe_io(&e)
            )));
        }
        let config = self.config(&phases, dir.path.display().to_string());
        let workers = phases[1].workers;
        let layout = phases[0].layout.clone();
        let stage = Stage::new(
            target.clone(),
            phases,
            workers,
            config,
            Some(&self.args.dir),
        );
        Ok(stage.with(ReplayRun {
            keep: self.args.keep,
            dir,
            layout,
            _target: target,
        }))
    }
}

/// One repetition of a replay: its files.
struct ReplayRun {
    keep: bool,
    dir: RunDir,
    layout: Layout,
    _target: Arc<dyn Target>,
}

impl Hooks for ReplayRun {
    fn tear_down(self: Box<Self>, run: &mut RunResult, _ranks: &Ranks) {
        keep_or_remove(&self.dir, self.keep, run, || self.dir.remove(&self.layout));
    }
}
