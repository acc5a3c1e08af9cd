//! `iobm read PATH`: a kept data set located by its manifest and checked against the flags,
//! then read by the run layer as often as `--repeat` says, never changed or removed.

use super::{check_block, phase};
use crate::cli::ReadArgs;
use crate::rundir::{locate, Manifest, GENERATOR};
use crate::servers::Storage as Servers;
use crate::targets::{self, Storage};
use iobm_engine::{DataKind, Interleave, Layout, Op, Phase};
use iobm_results::{Config, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_command, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, RunId};
use iobm_stats::names::RunKind;
use iobm_target::Target;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

/// `iobm read PATH`: reads a kept data set (on every rank); never changes or removes it.
pub fn read(mut args: ReadArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    // --gds implies --direct: cuFile reads and writes O_DIRECT files.
    args.io.direct |= args.io.gds;
    let common = args.io.output.common(&args.io.measure);
    run_command(argv, &common, |ranks| checked(&args, ranks))
}

/// Every check, on every rank: the flags, the data set located by its manifest and read as it
/// was written, `--direct` probed.
fn checked<'a>(args: &'a ReadArgs, ranks: &Ranks) -> Result<ReadPlan<'a>, Failure> {
    let io = &args.io;
    let located = check_flags(args).and_then(|_| locate(&args.path));
    let (data_dir, manifest) = ranks.agreed(located)?;
    let servers = ranks.agreed(io.server.check(Servers::Dir(&data_dir)))?;
    let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
    if manifest.ranks as usize != size {
        return Err(Failure::input(format!(
            "{}: written by {} rank(s); read it with as many (mpirun -np {})",
            data_dir.display(),
            manifest.ranks,
            manifest.ranks
        )));
    }
    let shared = manifest.layout.shared();
    let (jobs, per_job) = (manifest.jobs as usize, manifest.size_per_job_bytes);
    let reader = if io.reorder { (rank + 1) % size } else { rank };
    let block = io.block.unwrap_or(manifest.block_bytes);
    check_block("--block", block, per_job, "the size per job", io.direct)?;
    let plan = ReadPlan {
        args,
        interleave: interleave(&data_dir, &manifest, block, size * jobs)?,
        verify: verify(io.verify, &data_dir, &manifest)?,
        target: Arc::from(targets::open(Storage::Directory(&data_dir))),
        layout: Layout::for_rank(shared, reader, size, jobs, per_job),
        data_dir,
        manifest,
        block,
        servers,
        rank,
        ranks: size,
    };
    if ranks.rank() == 0 {
        super::warn_of_rate(io, &plan.phases(0));
    }
    if io.direct && !session::checking_only() {
        let probed = session::writable_dir(&plan.data_dir).and_then(|_| {
            session::probe_direct(plan.target.as_ref(), &plan.data_dir, ranks.rank())
        });
        ranks.agree(probed)?;
    }
    Ok(plan)
}

/// The flags' own checks: the outputs, `--until-stable`, the engine, no `--rwmix`.
fn check_flags(args: &ReadArgs) -> Result<(), Failure> {
    let io = &args.io;
    io.output.check()?;
    io.load.check_files(io.random)?;
    io.measure.check_steady(io.duration, "--duration")?;
    let (engine, _) = io.engine()?;
    crate::gpu::check(&io.mem, io.gds, engine)?;
    io.placement()?;
    match io.rwmix {
        // A kept data set is only read.
        Some(_) => Err(Failure::input(
            "--rwmix writes: iobm read never changes a kept data set (use iobm stream --rwmix)",
        )),
        None => Ok(()),
    }
}

/// Where a segmented file's transfers are: it is read in the transfers it was written in
/// (`--block` of `workers` in all), where they were placed.
fn interleave(
    data_dir: &Path,
    manifest: &Manifest,
    block: u64,
    workers: usize,
) -> Result<Option<Interleave>, Failure> {
    match manifest.segments {
        Some(_) if block != manifest.block_bytes => Err(Failure::input(format!(
            "--block {block}: {} holds transfers of {} bytes in {} segments (--segments); read it in those",
            data_dir.display(),
            manifest.block_bytes,
            manifest.segments.unwrap_or_default()
        ))),
        Some(segments) => Ok(Some(Interleave::of(workers, block, segments))),
        None => Ok(None),
    }
}

/// With `--verify`, the data set's stamp seed and what it holds: each repetition reads the
/// same kept data set, as it was written.
fn verify(
    asked: bool,
    data_dir: &Path,
    manifest: &Manifest,
) -> Result<Option<(u64, DataKind)>, Failure> {
    match (asked, manifest.stamp_seed) {
        (false, _) => Ok(None),
        (true, None) => Err(Failure::input(format!(
            "--verify: {} holds no stamped data (written with --data zero, or by an older iobm)",
            data_dir.display()
        ))),
        (true, Some(_)) if manifest.generator != GENERATOR => Err(Failure::input(format!(
            "--verify: {} was written by an older iobm whose data this one cannot regenerate; write it again",
            data_dir.display()
        ))),
        (true, Some(seed)) => {
            let data = crate::cli::parse_data(&manifest.data).map_err(|e| {
                Failure::input(format!(
                    "{}: data '{}': {e}",
                    data_dir.display(),
                    manifest.data
                ))
            })?;
            Ok(Some((seed, data)))
        }
    }
}

/// A checked `read` of a kept data set.
struct ReadPlan<'a> {
    args: &'a ReadArgs,
    target: Arc<dyn Target>,
    data_dir: std::path::PathBuf,
    manifest: Manifest,
    layout: Layout,
    block: u64,
    /// Where a segmented file's transfers are (`--segments` when it was written).
    interleave: Option<Interleave>,
    /// With --verify, the data set's stamp seed and what it holds.
    verify: Option<(u64, DataKind)>,
    servers: crate::servers::Servers,
    /// This rank, of `ranks`: each worker's share of `--rate`.
    rank: usize,
    ranks: usize,
}

impl ReadPlan<'_> {
    /// The read phase of a repetition whose run seed (for --random) is `seed`: one, or one
    /// per rate of `--rate-sweep`.
    fn phases(&self, seed: u64) -> Vec<Phase> {
        let io = &self.args.io;
        let mut read = phase("read", Op::Read, io, self.block, seed, &self.layout);
        read.interleave = self.interleave;
        if let Some((stamps, data)) = self.verify {
            read.verify = Some(stamps);
            read.data = data;
        }
        io.rate.sweep(read, self.rank, self.ranks, seed)
    }

    fn config(&self, read: &[Phase]) -> Config {
        let mut config = Config {
            // What the data set holds is what was written, as its manifest says.
            data: self.manifest.data.clone(),
            reorder: self.args.io.reorder,
            numa: self.args.io.numa,
            ..plan::config(
                read,
                Placement {
                    dir: self.args.path.display().to_string(),
                    run_dir: self.data_dir.display().to_string(),
                    keep: true,
                    ranks: self.manifest.ranks,
                },
            )
        };
        self.servers.apply(&mut config);
        if let Some(rate) = config.rate.as_mut() {
            rate.slo_ns = self.args.io.rate.slo.map(|d| d.as_nanos() as u64);
        }
        config
    }
}

impl RunPlan for ReadPlan<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Read
    }

    fn checked_config(&self, _ranks: &Ranks) -> Option<Config> {
        Some(self.config(&self.phases(0)))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, _ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let read = self.phases(run_id.seed);
        let config = self.config(&read);
        let (target, workers) = (self.target.clone(), self.layout.workers());
        // The kept data set: never changed or removed.
        let mut stage = Stage::new(target, read, workers, config, Some(&self.data_dir));
        stage.environment.gpus = crate::gpu::environment(&self.args.io.mem);
        let gdsio_line = self.args.io.gdsio_line;
        Ok(stage.with(ReadStage { gdsio_line }))
    }
}

/// A read of a kept data set: its phases' text.
struct ReadStage {
    gdsio_line: bool,
}

impl Hooks for ReadStage {
    fn phase_done(&self, run: &RunResult) -> Option<String> {
        crate::gpu::phase_done(run, self.gdsio_line)
    }
}
