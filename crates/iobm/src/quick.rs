//! `iobm quick [DIR]`: the main job on a built-in default. A tour of about 40 seconds in a
//! directory of its own (the system temp dir by default): sequential write and read, random
//! reads, durable random writes, a short bonnie step, and S3 PUT and GET through the built-in
//! gateway, ending in one summary table.

use crate::cli::QuickArgs;
use crate::rundir::RunDir;
use crate::s3::QuickS3;
use crate::targets;
use iobm_engine::suite::{self, BonnieSpec, MetaSpec};
use iobm_engine::PerChar;
use iobm_engine::{prepare_objects, DataKind, FsyncPolicy, Layout, Op, Pattern, Phase, StopRule};
use iobm_report::bonnie::render_tables;
use iobm_report::table::Table;
use iobm_results::bonnie::{is_bonnie_test, summarize};
use iobm_results::{env, Config, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{self, run_command, Context, Hooks, RunPlan, Stage, Step};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::names::RunKind;
use iobm_stats::{format_bytes, format_duration, AggregateKind, Rate};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

const MIB: u64 = 1 << 20;
const MAX_PER_JOB: u64 = 256 * MIB;
const MIN_PER_JOB: u64 = 8 * MIB;
const BONNIE_SIZE: u64 = 64 * MIB;

/// The summary table: one row per step, makespan bandwidth, IOPS and latency.
pub fn summary(run: &RunResult) -> String {
    let mut t = Table::new([
        "step",
        "MiB/s",
        "MB/s",
        "IOPS",
        "p50",
        "p99",
        "CPU-s/GiB",
        "cache",
    ])
    .left(7);
    for p in run.phases.iter().filter(|p| !is_bonnie_test(&p.name)) {
        let makespan = p.aggregate(AggregateKind::Makespan);
        let rate = Rate(makespan.map_or(0.0, |a| a.bytes_per_s));
        let lat =
            |v: Option<u64>| v.map_or("-".into(), |v| format_duration(Duration::from_nanos(v)));
        t.row([
            p.name.clone(),
            format!("{:.1}", rate.mib_s()),
            format!("{:.1}", rate.mb_s()),
            format!("{:.0}", makespan.map_or(0.0, |a| a.ops_per_s)),
            lat(p.latency.p50_ns),
            lat(p.latency.p99_ns),
            p.cpu
                .cpu_s_per_gib
                .map_or("-".into(), |c| format!("{c:.2}")),
            p.cache
                .verdict
                .as_ref()
                .map_or("-".into(), |v| v.verdict.to_string()),
        ]);
    }
    t.render("")
}

/// `iobm quick [DIR]`: checked in one process, then run by the run layer.
pub fn quick(args: QuickArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    let common = args.output.common(&args.measure);
    run_command(argv, &common, |ranks| {
        if ranks.size() > 1 {
            return Err(Failure::input(
                "quick runs as one process; under mpirun use write, read, stream or bonnie",
            ));
        }
        let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
        let (jobs, per_job) = checked(&dir, &args)?;
        let servers = args.server.check(crate::servers::Storage::Dir(&dir))?;
        Ok(Quick {
            args: &args,
            dir,
            jobs,
            per_job,
            servers,
        })
    })
}

/// A checked `quick`: the directory, its workers and the bytes each writes.
struct Quick<'a> {
    args: &'a QuickArgs,
    dir: std::path::PathBuf,
    jobs: usize,
    per_job: u64,
    servers: crate::servers::Servers,
}

impl Quick<'_> {
    fn config(&self, phases: &[Phase], run_dir: String, bonnie: &BonnieSpec) -> Config {
        let mut config = Config {
            bonnie: Some(crate::bonnie::bonnie_config(bonnie)),
            ..plan::config(
                phases,
                Placement {
                    dir: self.dir.display().to_string(),
                    run_dir,
                    keep: false,
                    ranks: 1,
                },
            )
        };
        self.servers.apply(&mut config);
        config
    }
}

impl RunPlan for Quick<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Quick
    }

    fn checked_config(&self, _ranks: &Ranks) -> Option<Config> {
        // Whether the steps are direct is known once the run's own directory is probed.
        None
    }

    fn set_up<'a>(&'a self, run_id: &RunId, _ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let targets::InRunDir {
            dir: rundir,
            target,
        } = targets::own_dir(&self.dir, run_id)?;
        let layout = Layout::file_per_worker(self.jobs, self.per_job);
        if let Err(e) = prepare_objects(target.as_ref(), &layout) {
            let _ = rundir.remove(&layout);
            return Err(Failure::run(format!(
                "{}: {}",
                rundir.path.display(),
                describe_io(&e)
            )));
        }
        // O_DIRECT where the file system has it, so every step measures the storage rather than the
        // page cache; elsewhere buffered, with the cache dropped before each read.
        let direct = session::probe_direct(target.as_ref(), &self.dir, 0).is_ok();
        let mut phases = steps(&layout, direct, self.args.step_time, run_id.seed);
        let bonnie_spec = bonnie_step(self.per_job, run_id.seed);
        let bonnie = suite::bonnie(&bonnie_spec);
        phases.extend(bonnie.phases.iter().cloned());
        self.args.measure.apply(&mut phases);
        let config = self.config(&phases, rundir.path.display().to_string(), &bonnie_spec);
        let workers = self
            .jobs
            .max(bonnie_spec.seekers)
            .max(crate::s3::QUICK_CONCURRENT);
        let stage = Stage::new(target, phases, workers, config, Some(&self.dir));
        Ok(stage.with(QuickRun {
            plan: self,
            run_id: run_id.clone(),
            rundir,
            layout,
            bonnie_spec,
            bonnie,
            s3: None,
        }))
    }
}

/// One repetition of quick: its own directory, files and bonnie step, then its S3 steps.
struct QuickRun<'a> {
    plan: &'a Quick<'a>,
    run_id: RunId,
    rundir: RunDir,
    layout: Layout,
    bonnie_spec: BonnieSpec,
    bonnie: suite::BonniePlan,
    /// The S3 steps once the file steps are done, or why they could not start.
    s3: Option<Result<QuickS3<'a>, String>>,
}

impl QuickRun<'_> {
    /// The built-in gateway's directory, inside the run's own.
    fn gateway_dir(&self) -> PathBuf {
        self.rundir.path.join("s3")
    }
}

impl Hooks for QuickRun<'_> {
    fn opening(&mut self, _run: &mut RunResult) -> String {
        format!(
            "\n4 steps of {} each, a bonnie step on a {} file, then S3 PUT and GET through the built-in gateway; full details with --json FILE and `iobm report FILE`\n\n",
            format_duration(self.plan.args.step_time),
            format_bytes(self.bonnie_spec.size)
        )
    }

    fn phase_done(&self, _run: &RunResult) -> Option<String> {
        // One summary table at the end.
        None
    }

    /// After the file steps, the S3 steps through the built-in gateway.
    fn next_step(&mut self, run: &mut RunResult, _context: &Context) -> Option<Step> {
        match &mut self.s3 {
            Some(Ok(s3)) => s3.get(run),
            Some(Err(_)) => None,
            None => {
                let (dir, args) = (self.gateway_dir(), self.plan.args);
                let started = QuickS3::start(&dir, &self.run_id, args, run);
                self.s3.insert(started).as_mut().ok()?.put()
            }
        }
    }

    fn after_phases(&mut self, run: &mut RunResult, _context: &Context) -> String {
        let finished = match self.s3.take() {
            Some(Ok(s3)) => s3.finish(run),
            Some(Err(e)) => Err(e),
            None => Ok(()),
        };
        if let Err(e) = finished {
            run.warnings.push(format!("S3 steps: {e}"));
        }
        // The gateway's directory holds nothing of anyone else's: it was made for this run.
        let _ = std::fs::remove_dir_all(self.gateway_dir());
        run.bonnie = Some(summarize(run));
        summary_text(run)
    }

    fn tear_down(self: Box<Self>, run: &mut RunResult, _ranks: &Ranks) {
        let mut ours: Vec<&str> = self.layout.files.iter().map(|f| f.name.as_str()).collect();
        ours.extend(self.bonnie.files.iter().map(String::as_str));
        if let Err(left) = self.rundir.remove_named(&ours, &self.bonnie.dirs) {
            lifecycle::left_behind(run, left);
        }
    }
}

/// The directory and `--json` checked; returns the workers and the bytes each writes (a
/// quarter of the free space at most, shared by the workers).
fn checked(dir: &Path, args: &QuickArgs) -> Result<(usize, u64), Failure> {
    session::writable_dir(dir)?;
    args.output.check()?;
    args.measure
        .check_steady(Some(args.step_time), "--step-time")?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = cpus.clamp(1, 4);
    let available = env::space(dir)
        .filter(|&(size, _)| size > 0)
        .map_or(u64::MAX, |(_, a)| a);
    let per_job = (available / 4 / jobs as u64).min(MAX_PER_JOB) / MIB * MIB;
    if per_job < MIN_PER_JOB {
        return Err(Failure::input(format!(
            "{}: only {} free; quick needs {} (pass another DIR)",
            dir.display(),
            format_bytes(available),
            format_bytes(4 * MIN_PER_JOB * jobs as u64)
        )));
    }
    Ok((jobs, per_job))
}

/// The four file steps, each for `t`.
fn steps(layout: &Layout, direct: bool, t: std::time::Duration, seed: u64) -> Vec<Phase> {
    let random = Pattern::Random { seed };
    let sequential = Pattern::Sequential;
    [
        (
            "sequential write 1MiB",
            Op::Write,
            MIB,
            sequential,
            FsyncPolicy::End,
        ),
        (
            "sequential read 1MiB",
            Op::Read,
            MIB,
            sequential,
            FsyncPolicy::Never,
        ),
        (
            "random read 4KiB",
            Op::Read,
            4096,
            random,
            FsyncPolicy::Never,
        ),
        (
            "random write 4KiB + fsync",
            Op::Write,
            4096,
            random,
            FsyncPolicy::Each,
        ),
    ]
    .into_iter()
    .map(|(name, op, block, pattern, fsync)| Phase {
        pattern,
        fsync,
        direct,
        drop_cache: !direct && op == Op::Read,
        stop: StopRule::Duration(t),
        ..Phase::new(name, op, block, layout.clone())
    })
    .collect()
}

/// A short bonnie step: every bonnie test on a small file and 1024 empty files.
fn bonnie_step(per_job: u64, seed: u64) -> BonnieSpec {
    BonnieSpec {
        size: (per_job / 4).min(BONNIE_SIZE),
        chunk: 8192,
        per_char: PerChar::Buffered,
        fsync: FsyncPolicy::End,
        direct: false,
        drop_cache: true,
        drop_system_cache: false,
        data: DataKind::Random,
        seeks: 2048,
        seekers: 5,
        seek_rewrite_pct: 10,
        files: Some(MetaSpec {
            count: 1024,
            max_size: 0,
            min_size: 0,
            dirs: 0,
        }),
        seed,
        prefix: String::new(),
    }
}

/// The summary table, bonnie's tables and every warning, by step.
fn summary_text(run: &RunResult) -> String {
    let mut text = summary(run);
    text.push('\n');
    text.push_str(&render_tables(run));
    text.push('\n');
    text.push_str(&iobm_report::render_verdicts(&run.phases));
    text.push_str(&iobm_report::render_steady(&run.phases));
    for p in &run.phases {
        for w in &p.warnings {
            text.push_str(&format!("  {}: {w}\n", p.name));
        }
    }
    text
}
