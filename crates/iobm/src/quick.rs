//! `iobm quick [DIR]`: the main job on a built-in default. A tour of about 40 seconds in a
//! directory of its own (the system temp dir by default): sequential write and read, random
//! reads, durable random writes, a short bonnie step, and S3 PUT and GET through the built-in
//! gateway, ending in one summary table.

use crate::cli::QuickArgs;
use crate::rundir::RunDir;
use crate::targets;
use iobm_engine::suite::{self, BonnieSpec, MetaSpec};
use iobm_engine::PerChar;
use iobm_engine::{prepare_objects, DataKind, FsyncPolicy, Layout, Op, Pattern, Phase, StopRule};
use iobm_report::bonnie::render_tables;
use iobm_report::table::Table;
use iobm_results::bonnie::{is_bonnie_test, summarize};
use iobm_results::{env, Config, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{self, run_plan, Context, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::{format_bytes, format_duration, AggregateKind, Rate};
use std::ffi::OsString;
use std::path::Path;
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
                .map_or("-".into(), |v| v.verdict.clone()),
        ]);
    }
    t.render("")
}

pub fn quick(args: QuickArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    let ranks = Ranks::connect()?;
    if ranks.size() > 1 {
        return Err(Failure::input(
            "quick runs as one process; under mpirun use write, read, stream or bonnie",
        ));
    }
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    let (jobs, per_job) = checked(&dir, &args)?;
    let servers = args.server.check(crate::servers::Storage::Dir(&dir))?;
    let plan = Quick {
        args: &args,
        dir,
        jobs,
        per_job,
        servers,
    };
    run_plan(&plan, &args.output.outputs(), &ranks, argv)
}

/// A checked `quick`: the directory, its workers and the bytes each writes.
struct Quick<'a> {
    args: &'a QuickArgs,
    dir: std::path::PathBuf,
    jobs: usize,
    per_job: u64,
    servers: crate::servers::Servers,
}

impl RunPlan for Quick<'_> {
    fn kind(&self) -> String {
        "quick".to_string()
    }

    fn repetitions(&self) -> u32 {
        self.args.measure.repeat
    }

    fn checked_config(&self, _ranks: &Ranks) -> Option<Config> {
        // Whether the steps are direct is known once the run's own directory is probed.
        None
    }

    fn set_up<'a>(
        &'a self,
        run_id: &RunId,
        _ranks: &'a Ranks,
    ) -> Result<Box<dyn Stage + 'a>, Failure> {
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
        Ok(Box::new(QuickRun {
            plan: self,
            run_id: run_id.clone(),
            rundir,
            target,
            layout,
            phases,
            bonnie_spec,
            bonnie,
        }))
    }
}

/// One repetition of quick: its own directory, files and bonnie step.
struct QuickRun<'a> {
    plan: &'a Quick<'a>,
    run_id: RunId,
    rundir: RunDir,
    target: Box<dyn iobm_target::Target>,
    layout: Layout,
    phases: Vec<Phase>,
    bonnie_spec: BonnieSpec,
    bonnie: suite::BonniePlan,
}

impl Stage for QuickRun<'_> {
    fn target(&self) -> &dyn iobm_target::Target {
        self.target.as_ref()
    }

    fn phases(&self) -> Vec<Phase> {
        self.phases.clone()
    }

    fn workers(&self) -> usize {
        let (jobs, seekers) = (self.plan.jobs, self.bonnie_spec.seekers);
        jobs.max(seekers).max(crate::s3::QUICK_CONCURRENT)
    }

    fn config(&self) -> Config {
        let mut config = Config {
            bonnie: Some(crate::bonnie::bonnie_config(&self.bonnie_spec)),
            ..plan::config(
                &self.phases,
                Placement {
                    dir: self.plan.dir.display().to_string(),
                    run_dir: self.rundir.path.display().to_string(),
                    keep: false,
                    ranks: 1,
                },
            )
        };
        self.plan.servers.apply(&mut config);
        config
    }

    fn environment(&self) -> iobm_results::Environment {
        env::capture(Some(&self.plan.dir))
    }

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

    fn after_phases(&mut self, run: &mut RunResult, context: &mut Context) -> String {
        if run.status == iobm_results::RunStatus::Complete {
            let gateway_dir = self.rundir.path.join("s3");
            let s3 = crate::s3::quick_steps(
                run,
                (context.control, context.ranks),
                &gateway_dir,
                &self.run_id,
                self.plan.args,
                context.saved,
            );
            if let Err(e) = s3 {
                run.warnings.push(format!("S3 steps: {e}"));
            }
            // The gateway's directory holds nothing of anyone else's: it was made for this run.
            let _ = std::fs::remove_dir_all(&gateway_dir);
        }
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
