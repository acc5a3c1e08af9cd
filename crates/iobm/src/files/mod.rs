//! `iobm write`, `iobm read` and `iobm stream`: the input checked, turned into a plan for the
//! run layer (`iobm_run::lifecycle`): the data set laid out in the run's own directory, the
//! phases, the data kept or removed. `iobm read` in `read`.

mod device;
mod read;

pub use read::read;

use crate::cli::{IoArgs, WriteArgs};
use crate::rundir::{Manifest, RunDir};
use crate::servers::Storage as Servers;
use crate::targets;
use iobm_engine::trial::ClientCost;
use iobm_engine::{
    prepare_objects, DataKind, Engine, FsyncPolicy, Interleave, Layout, Op, Pattern, Phase,
    StopRule,
};
use iobm_results::{env, Config, LeftBehind, RunResult, RunStatus};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{self, run_command, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::format_bytes;
use iobm_stats::names::{LayoutName, RunKind};
use iobm_target::Target;
use std::ffi::OsString;
use std::sync::Arc;

const DEFAULT_BLOCK: u64 = 1 << 20;
const DEFAULT_TOTAL: u64 = 1 << 30;
/// `O_DIRECT` needs block sizes and offsets aligned to the device's logical block; 4 KiB is
/// safe on every device.
const DIRECT_ALIGN: u64 = 4096;

/// Checks a block size (given with `flag`) against what it must fit in (`limit`, described as
/// `what`) and against `--direct`.
pub(crate) fn check_block(
    flag: &str,
    block: u64,
    limit: u64,
    what: &str,
    direct: bool,
) -> Result<(), Failure> {
    if block > limit {
        return Err(Failure::input(format!(
            "{flag} {} is larger than {what} ({})",
            format_bytes(block),
            format_bytes(limit)
        )));
    }
    if direct && !block.is_multiple_of(DIRECT_ALIGN) {
        return Err(Failure::input(format!(
            "{flag} {block}: --direct needs a multiple of 4 KiB (4096 bytes)"
        )));
    }
    Ok(())
}

/// The phases' common shape.
fn phase(name: &str, op: Op, io: &IoArgs, block: u64, seed: u64, layout: &Layout) -> Phase {
    let reads = matches!(op, Op::Read | Op::ReadWrite { .. });
    Phase {
        // A write makes the data set, every block once; reads (and --rwmix's writes) skew.
        pattern: match op {
            Op::Write if io.random => Pattern::Random { seed },
            _ => io.load.pattern(io.random, seed),
        },
        rhythm: io.load.rhythm(),
        direct: io.direct,
        drop_cache: reads && !io.direct && !io.keep_cache,
        drop_system_cache: reads && !io.direct && io.drop_caches,
        stop: io.duration.map_or(StopRule::Once, StopRule::Duration),
        ramp: io.ramp.unwrap_or_default(),
        interval: io
            .measure
            .interval_for(io.duration.map_or(StopRule::Once, StopRule::Duration)),
        steady: io
            .measure
            .steady_for(io.duration.map_or(StopRule::Once, StopRule::Duration)),
        engine: io.engine().map_or(Engine::Sync, |(engine, _)| engine),
        iodepth: io.iodepth,
        fadvise: io.fadvise,
        madvise: io.madvise,
        cpus: io.placement().ok().flatten(),
        memory: crate::gpu::placement(&io.mem, io.gds),
        ..Phase::new(name, op, block, layout.clone())
    }
}

/// Warns (on standard error, before the run) of a `--rate` the phases' workers cannot hold at
/// the cost per operation this client measures at their shape against no storage.
pub(crate) fn warn_of_rate(io: &IoArgs, phases: &[Phase]) {
    let measure = |phase: &Phase| ClientCost::measure(phase, iobm_engine::trial::TRIAL);
    if let Some(w) = (io.rate).check(phases, crate::cli::Against::NullTarget, measure) {
        eprintln!("iobm: warning: {w}");
    }
}

/// Whether the jobs share one file: `--shared-file`, or the segmented file of `--segments`.
fn shared(args: &WriteArgs) -> bool {
    args.shared_file || args.segments.is_some()
}

/// The sizes of a write, checked before anything is created.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    jobs: usize,
    block: u64,
    /// What --size or --size-per-job asked for each job, and that rounded down to whole blocks.
    asked_per_job: u64,
    per_job: u64,
}

/// Every check of `write` and `stream`, on every rank, before anything is created: the flags
/// that only apply to reading, the directories, sizes against the block size, `--direct` and
/// the free space.
fn check_write(args: &WriteArgs, ranks: u64, stream: bool) -> Result<Sizes, Failure> {
    let io = &args.io;
    check_write_flags(args, stream)?;
    io.load.check_files(io.random)?;
    device::check_dir(args)?;
    io.output.check()?;
    io.measure.check_steady(io.duration, "--duration")?;
    let (engine, _) = io.engine()?;
    crate::gpu::check(&io.mem, io.gds, engine)?;
    io.placement()?;
    if engine == Engine::IoUring && args.fsync == FsyncPolicy::Each {
        return Err(Failure::input(
            "--fsync each with --engine io_uring: a request in flight is not followed by its own fsync (use --engine sync)",
        ));
    }
    let jobs = args.jobs as u64;
    let block = io.block.unwrap_or(DEFAULT_BLOCK);
    // --size is the total over every rank's jobs, as the workload line shows it.
    let asked_per_job = match (args.segments, args.size, args.size_per_job) {
        // One transfer of every job in each segment.
        (Some(segments), _, _) => block.checked_mul(segments).ok_or_else(|| {
            Failure::input(format!(
                "--segments {segments} of --block {block}: too large"
            ))
        })?,
        (None, _, Some(per_job)) => per_job,
        (None, Some(total), None) => total / (jobs * ranks),
        (None, None, None) => DEFAULT_TOTAL / (jobs * ranks),
    };
    check_block(
        "--block",
        block,
        asked_per_job,
        "the size per job",
        io.direct,
    )?;
    if io.verify && args.data == DataKind::Zero {
        return Err(Failure::input(
            "--verify needs stamped data: --data random or compressible:PCT",
        ));
    }
    let per_job = asked_per_job / block * block;
    // All ranks' data, as on a shared file system. File systems that report no size at all
    // (ramfs, some FUSE mounts) are not checked.
    let total = (per_job.checked_mul(jobs))
        .and_then(|n| n.checked_mul(ranks))
        .ok_or_else(|| Failure::input("--size: the data set is larger than 16 EiB"))?;
    let available = env::space(&args.dir)
        .filter(|_| args.destroy_data_on.is_none())
        .filter(|&(size, _)| size > 0)
        .map(|(_, avail)| avail);
    if let Some(avail) = available.filter(|&a| a < total && !args.ignore_free_space) {
        return Err(Failure::input(format!(
            "--size: the data set ({}) does not fit in the {} free at {} (--ignore-free-space to try anyway)",
            format_bytes(total),
            format_bytes(avail),
            args.dir.display()
        )));
    }
    Ok(Sizes {
        jobs: args.jobs as usize,
        block,
        asked_per_job,
        per_job,
    })
}

/// The flags a write refuses: `--keep` with `--repeat`, those of reading without `stream`,
/// `--rate-sweep`.
fn check_write_flags(args: &WriteArgs, stream: bool) -> Result<(), Failure> {
    let io = &args.io;
    let read_flags = [
        ("--verify", io.verify),
        ("--keep-cache", io.keep_cache),
        ("--drop-caches", io.drop_caches),
        ("--reorder", io.reorder),
        ("--rwmix", io.rwmix.is_some()),
        ("--access", !io.load.access().is_uniform()),
        ("--server-drop-cmd", io.server.server_drop_cmd.is_some()),
    ];
    if args.keep && io.measure.repeat > 1 {
        return Err(Failure::input(
            "--keep with --repeat: each repetition writes fresh data and removes it (keep one with --repeat 1)",
        ));
    }
    if let Some((flag, _)) = read_flags.iter().find(|(_, set)| *set && !stream) {
        return Err(Failure::input(format!(
            "{flag} applies to reading: iobm write only writes (use iobm stream, or iobm read on a kept data set)"
        )));
    }
    if io.rate.rate_sweep.is_some() {
        return Err(Failure::input(
            "--rate-sweep applies to iobm read, which reads a kept data set at each rate (write one with iobm write --keep)",
        ));
    }
    Ok(())
}

/// Keeps the run's directory `dir` and what the phases left in it with `--keep` (saying so),
/// else removes them with `remove`, recording what it could not remove.
pub(crate) fn keep_or_remove(
    dir: &RunDir,
    keep: bool,
    run: &mut RunResult,
    remove: impl FnOnce() -> Result<(), LeftBehind>,
) {
    if keep {
        let kept = dir.path.display();
        run.warnings.push(format!(
            "kept {kept} and what the phases left in it (--keep)"
        ));
    } else if let Err(left) = remove() {
        lifecycle::left_behind(run, left);
    }
}

/// `iobm write DIR` and `iobm stream DIR`, on one process or every MPI rank: flags checked,
/// then the run layer lays out the data set in the run's own directory, runs the phases and
/// keeps or removes the data.
pub fn write(mut args: WriteArgs, stream: bool, argv: &[OsString]) -> Result<Exit, Failure> {
    device::direct_by_default(&mut args);
    // --gds implies --direct: cuFile reads and writes O_DIRECT files.
    args.io.direct |= args.io.gds;
    let common = args.io.output.common(&args.io.measure);
    run_command(argv, &common, |ranks| {
        let sizes = ranks.agreed(check_write(&args, ranks.size() as u64, stream))?;
        let device = ranks.agreed(device::claim(&args, &sizes, ranks))?;
        let plan = WritePlan {
            args: &args,
            sizes,
            device,
            servers: args.io.server.check(Servers::Dir(&args.dir))?,
            stream,
        };
        if ranks.rank() == 0 {
            warn_of_rate(&args.io, &plan.phases(&plan.layout(ranks), 0, ranks));
        }
        Ok(plan)
    })
}

/// A checked `write` or `stream`.
struct WritePlan<'a> {
    args: &'a WriteArgs,
    sizes: Sizes,
    servers: crate::servers::Servers,
    stream: bool,
    /// The raw block device of `--destroy-data-on`, claimed; None for a directory.
    device: Option<device::Device>,
}

impl WritePlan<'_> {
    /// The result's config of a write or stream of these phases, run in `run_dir`.
    fn config(&self, phases: &[Phase], run_dir: String, ranks: &Ranks) -> Config {
        let args = self.args;
        let mut config = Config {
            reorder: args.io.reorder,
            numa: args.io.numa,
            ..plan::config(
                phases,
                Placement {
                    dir: args.dir.display().to_string(),
                    run_dir,
                    keep: args.keep,
                    ranks: ranks.size(),
                },
            )
        };
        self.servers.apply(&mut config);
        config
    }

    /// This rank's phases on `layout`, of a repetition whose run seed is `seed`.
    fn phases(&self, layout: &Layout, seed: u64, ranks: &Ranks) -> Vec<Phase> {
        let (args, sizes) = (self.args, self.sizes);
        write_phases(args, sizes, layout, self.stream, seed, ranks)
    }

    /// This rank's files.
    fn layout(&self, ranks: &Ranks) -> Layout {
        let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
        let (jobs, per_job) = (self.sizes.jobs, self.sizes.per_job);
        Layout::for_rank(shared(self.args), rank, size, jobs, per_job)
    }
}

impl RunPlan for WritePlan<'_> {
    fn kind(&self) -> RunKind {
        if self.stream {
            RunKind::Stream
        } else {
            RunKind::Write
        }
    }

    fn checked_config(&self, ranks: &Ranks) -> Option<Config> {
        let phases = self.phases(&self.layout(ranks), 0, ranks);
        Some(self.config(&phases, String::new(), ranks))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        if let Some(device) = &self.device {
            return device.set_up(self, run_id, ranks);
        }
        let data = DataSet::create(self.args, self.sizes, run_id, ranks)?;
        let phases = self.phases(&data.layout, run_id.seed, ranks);
        let config = self.config(&phases, data.dir.path.display().to_string(), ranks);
        let (target, jobs) = (data.target.clone(), self.sizes.jobs);
        let mut stage = Stage::new(target, phases, jobs, config, Some(&self.args.dir));
        stage.environment.gpus = crate::gpu::environment(&self.args.io.mem);
        Ok(stage.with(WriteStage { plan: self, data }))
    }
}

/// One repetition of a write or stream: its data set.
struct WriteStage<'a> {
    plan: &'a WritePlan<'a>,
    data: DataSet,
}

impl Hooks for WriteStage<'_> {
    fn phase_done(&self, run: &RunResult) -> Option<String> {
        crate::gpu::phase_done(run, self.plan.args.io.gdsio_line)
    }

    fn tear_down(self: Box<Self>, run: &mut RunResult, ranks: &Ranks) {
        let (keep, per_job) = (self.plan.args.keep, self.plan.sizes.per_job);
        self.data.keep_or_remove(run, ranks, keep, per_job);
    }
}

/// The write, then for `stream` the read of the same data (in the same order, so a
/// time-limited random write is read back exactly), or with --reorder the next rank's.
fn write_phases(
    args: &WriteArgs,
    sizes: Sizes,
    layout: &Layout,
    stream: bool,
    seed: u64,
    ranks: &Ranks,
) -> Vec<Phase> {
    let io = &args.io;
    let write = Phase {
        fsync: args.fsync,
        data: args.data,
        ..phase("write", Op::Write, io, sizes.block, seed, layout)
    };
    let mut phases = vec![write];
    if stream {
        let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
        let reader = if io.reorder {
            let next = (rank + 1) % size;
            Layout::for_rank(shared(args), next, size, sizes.jobs, sizes.per_job)
        } else {
            layout.clone()
        };
        let mut read = match io.rwmix {
            // Reads and writes together; what is written is what is there already.
            Some(read_pct) => Phase {
                fsync: args.fsync,
                ..phase(
                    &format!("read-write {read_pct}/{}", 100 - read_pct),
                    Op::ReadWrite { read_pct },
                    io,
                    sizes.block,
                    seed,
                    &reader,
                )
            },
            None => phase("read", Op::Read, io, sizes.block, seed, &reader),
        };
        read.verify = io.verify.then_some(seed);
        // What was written, for --verify to regenerate.
        read.data = args.data;
        phases.push(read);
    }
    let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
    io.rate.apply(&mut phases, rank, size, seed);
    // ior-hard's file: every job's transfers placed in turn in each segment.
    let workers = ranks.size() as usize * sizes.jobs;
    for p in &mut phases {
        p.interleave = args
            .segments
            .map(|segments| Interleave::of(workers, sizes.block, segments));
    }
    phases
}

/// A data set being written: the run's own directory and its target, this rank's files, and
/// the manifest that lets `iobm read` find it again.
struct DataSet {
    dir: RunDir,
    target: Arc<dyn Target>,
    layout: Layout,
    manifest: Manifest,
    /// This rank created files (all but rank 0 share rank 0's file with --shared-file).
    creates_files: bool,
}

impl DataSet {
    /// Makes the run's directory, probes `--direct`, and creates the (empty) files and the
    /// manifest; on failure removes what it made.
    fn create(
        args: &WriteArgs,
        sizes: Sizes,
        run_id: &RunId,
        ranks: &Ranks,
    ) -> Result<DataSet, Failure> {
        let targets::InRunDir { dir, target } = targets::run_dir(&args.dir, run_id, ranks)?;
        if args.io.direct {
            let probed = session::probe_direct(target.as_ref(), &args.dir, ranks.rank());
            if let Err(f) = ranks.agree(probed) {
                let _ = dir.remove_if_owned();
                return Err(f);
            }
        }
        let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
        let (jobs, per_job) = (sizes.jobs, sizes.per_job);
        let layout = Layout::for_rank(shared(args), rank, size, jobs, per_job);
        if per_job != sizes.asked_per_job && ranks.is_root() {
            eprintln!(
                "iobm: note: {} per job rounded down to {} (a whole number of {} blocks)",
                format_bytes(sizes.asked_per_job),
                format_bytes(per_job),
                format_bytes(sizes.block)
            );
        }
        // The files: each rank its own, or rank 0 the shared one; rank 0 the manifest.
        let all_files = Layout::for_rank(shared(args), 0, 1, jobs * size, per_job);
        let layout_name = match args.segments {
            Some(_) => LayoutName::Strided,
            None => LayoutName::of(args.shared_file),
        };
        let mut manifest = Manifest::new(
            &run_id.text,
            layout_name,
            &all_files,
            sizes.block,
            args.data.name(),
        );
        manifest.ranks = size as u32;
        manifest.jobs = args.jobs;
        manifest.stamp_seed = (args.data != DataKind::Zero).then_some(run_id.seed);
        manifest.segments = args.segments;
        let creates_files = !shared(args) || ranks.is_root();
        let prepared = if ranks.is_root() {
            dir.save_manifest(&manifest)
        } else {
            Ok(())
        }
        .and_then(|_| {
            if creates_files {
                prepare_objects(target.as_ref(), &layout)
            } else {
                Ok(())
            }
        })
        .map_err(|e| {
            Failure::run(format!(
                "{}: cannot create the data files: {}",
                dir.path.display(),
                describe_io(&e)
            ))
        });
        if let Err(f) = ranks.agree(prepared) {
            let _ = dir.remove(&layout);
            return Err(f);
        }
        Ok(DataSet {
            dir,
            target,
            layout,
            manifest,
            creates_files,
        })
    }

    /// With --keep, a complete write that covered the data set is kept and marked complete;
    /// anything else is removed: every rank its files, then the directory's owners it.
    fn keep_or_remove(mut self, run: &mut RunResult, ranks: &Ranks, keep: bool, per_job: u64) {
        let wrote_all = ranks.share(&run.phases.first().is_some_and(|p| {
            p.status == RunStatus::Complete && p.workers.iter().all(|w| w.span.bytes >= per_job)
        }));
        let path = self.dir.path.display().to_string();
        if keep && wrote_all {
            if ranks.is_root() {
                self.manifest.complete = true;
                if let Err(e) = self.dir.save_manifest(&self.manifest) {
                    run.warnings
                        .push(format!("could not mark the data set complete: {e}"));
                }
            }
            // Read back by as many ranks as wrote it.
            let launcher = match ranks.size() {
                1 => String::new(),
                n => format!("mpirun -np {n} "),
            };
            run.warnings.push(format!(
                "data kept in {path} (read it with: {launcher}iobm read {path})"
            ));
            return;
        }
        if keep {
            run.warnings.push(
                "--keep: the write did not complete or did not cover the data set, so it was removed"
                    .to_string(),
            );
        }
        let mine: Vec<&str> = if self.creates_files {
            self.layout.files.iter().map(|f| f.name.as_str()).collect()
        } else {
            Vec::new()
        };
        let files_gone = self.dir.remove_files(&mine);
        ranks.barrier();
        if let Err(left) = files_gone.and_then(|_| self.dir.remove_if_owned()) {
            lifecycle::left_behind(run, left);
        }
    }
}
