//! `iobm bonnie DIR`: the bonnie-style characterisation. Checks the input and hands the run
//! layer the suite: its phases run in the run's own directory, a line printed per test and then
//! bonnie++'s tables; the JSON result and bonnie++'s CSV line saved as outputs.

use crate::cli::{per_char_name, BonnieArgs};
use crate::files::check_block;
use crate::rundir::RunDir;
use crate::targets;
use iobm_engine::suite::{self, BonniePlan, BonnieSpec, MetaSpec};
use iobm_engine::PerChar;
use iobm_report::bonnie::{render_tables, size_label};
use iobm_results::bonnie::summarize;
use iobm_results::{env, BonnieConfig, Config, LeftBehind, PhaseResult, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{self, run_command, Context, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, RunId};
use iobm_stats::names::RunKind;
use iobm_stats::{format_bytes, format_duration, AggregateKind, Rate};
use iobm_target::Target;
use std::ffi::OsString;
use std::sync::Arc;
use std::time::Duration;

/// One line per finished test.
fn test_line(p: &PhaseResult) -> String {
    let makespan = p.aggregate(AggregateKind::Makespan);
    let rate = if p.moves_data() {
        let r = Rate(makespan.map_or(0.0, |a| a.bytes_per_s));
        format!("{:.0} K/sec = {r}", r.0 / 1024.0)
    } else {
        format!("{:.1}/s", makespan.map_or(0.0, |a| a.ops_per_s))
    };
    let wall = p.end_ns.saturating_sub(p.start_ns);
    let cpu = p.cpu.user_s + p.cpu.system_s;
    let p99 = p
        .latency
        .p99_ns
        .map_or("-".into(), |v| format_duration(Duration::from_nanos(v)));
    let errors: String = p
        .errors
        .iter()
        .map(|e| format!("; {} x {} (first: {})", e.count, e.kind, e.first))
        .collect();
    let verdict = p
        .cache
        .verdict
        .as_ref()
        .map_or(String::new(), |v| format!(", {}", v.verdict));
    format!(
        "{:<18} {rate}, CPU {:.0}%, p99 {p99}, {} in {}{verdict}{errors}\n",
        format!("{}:", p.name),
        if wall > 0 {
            100.0 * cpu * 1e9 / wall as f64
        } else {
            0.0
        },
        format_bytes(p.bytes()),
        format_duration(Duration::from_nanos(wall)),
    )
}

/// Checks the input against the file system; returns the file size and the RAM.
fn check(args: &BonnieArgs) -> Result<(u64, u64), Failure> {
    session::writable_dir(&args.dir)?;
    args.output.check()?;
    args.measure.check_steady(None, "--duration")?;
    args.views.check()?;
    let ram = env::ram_bytes();
    let size = args.size.unwrap_or(2 * ram);
    let chunk = args.chunk;
    check_block("--chunk", chunk, size, "the file (--size)", args.direct)?;
    let size = size / chunk * chunk;
    let files = args.files;
    let needed = size + files.count * files.max_size;
    let space = env::space(&args.dir).filter(|&(total, _)| total > 0);
    if let Some((_, avail)) = space.filter(|&(_, a)| a < needed && !args.ignore_free_space) {
        return Err(Failure::input(format!(
            "--size: the test needs {} but {} has {} free (--ignore-free-space to try anyway)",
            format_bytes(needed),
            args.dir.display(),
            format_bytes(avail)
        )));
    }

    Ok((size, ram))
}

/// `iobm bonnie DIR` on one process or every MPI rank: input checked, then the run layer
/// plans the suite, makes its directories, runs every test and prints bonnie++'s tables.
pub fn bonnie(args: BonnieArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    // Each repetition a fresh suite, as bonnie++ -x: its own line in --bonnie-csv.
    let mut common = args.output.common(&args.measure);
    common
        .outputs
        .views
        .extend(args.views.chosen.iter().cloned());
    run_command(argv, &common, |ranks| {
        let (size, ram) = ranks.agreed(check(&args))?;
        Ok(Suite {
            args: &args,
            size,
            ram,
            servers: args.server.check(crate::servers::Storage::Dir(&args.dir))?,
        })
    })
}

/// A checked `bonnie`: the file's size and the machine's RAM.
struct Suite<'a> {
    args: &'a BonnieArgs,
    size: u64,
    ram: u64,
    servers: crate::servers::Servers,
}

impl RunPlan for Suite<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Bonnie
    }

    fn checked_config(&self, ranks: &Ranks) -> Option<Config> {
        let spec = suite_spec(self.args, self.size, 0, ranks);
        let phases = suite::bonnie(&spec).phases;
        Some(suite_config(
            self.args,
            &spec,
            &phases,
            String::new(),
            &self.servers,
        ))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let args = self.args;
        let spec = suite_spec(args, self.size, run_id.seed, ranks);
        let suite = suite::bonnie(&spec);
        let files = SuiteFiles::create(args, &suite, run_id, ranks)?;
        let mut phases = suite.phases.clone();
        args.measure.apply(&mut phases);
        let run_dir = files.dir.path.display().to_string();
        let config = suite_config(args, &spec, &suite.phases, run_dir, &self.servers);
        let workers = args.seekers.max(1) as usize;
        let target = files.target.clone();
        let stage = Stage::new(target, phases, workers, config, Some(&args.dir));
        Ok(stage.with(SuiteRun {
            plan: self,
            spec,
            suite,
            files,
        }))
    }
}

/// One repetition of the suite: its files and directories.
struct SuiteRun<'a> {
    plan: &'a Suite<'a>,
    spec: BonnieSpec,
    suite: BonniePlan,
    files: SuiteFiles,
}

impl Hooks for SuiteRun<'_> {
    fn opening(&mut self, run: &mut RunResult) -> String {
        let (size, ram, spec) = (self.plan.size, self.plan.ram, &self.spec);
        if size < 2 * ram {
            run.warnings.push(format!(
                "the file ({}) is smaller than twice the RAM ({}): the page cache can hold much of it, so rates may include cache effects (bonnie++'s rule is 2x RAM; omit --size)",
                format_bytes(size),
                format_bytes(2 * ram)
            ));
        }
        format!(
            "  bonnie   file {} in {} chunks, per-char {} ({}), {} seeks by {} workers, {} files\n\n",
            size_label(size),
            format_bytes(spec.chunk),
            per_char_words(spec.per_char),
            format_bytes(suite::per_char_bytes(spec)),
            spec.seeks,
            spec.seekers,
            self.plan.args.files.count
        )
    }

    fn phase_done(&self, run: &RunResult) -> Option<String> {
        run.phases.last().map(test_line)
    }

    fn after_phases(&mut self, run: &mut RunResult, _context: &Context) -> String {
        run.bonnie = Some(summarize(run));
        format!(
            "\n{}\n{}",
            render_tables(run),
            iobm_report::render_verdicts(&run.phases)
        )
    }

    fn tear_down(self: Box<Self>, run: &mut RunResult, ranks: &Ranks) {
        if let Err(left) = self.files.remove(&self.suite, ranks) {
            lifecycle::left_behind(run, left);
        }
    }
}

/// The suite's settings from the flags; each MPI rank's files carry its own prefix.
/// The result's config of the suite `spec` planned as `phases`, run in `run_dir`.
fn suite_config(
    args: &BonnieArgs,
    spec: &BonnieSpec,
    phases: &[iobm_engine::Phase],
    run_dir: String,
    servers: &crate::servers::Servers,
) -> Config {
    let mut config = Config {
        bonnie: Some(bonnie_config(spec)),
        ..plan::config(
            phases,
            Placement {
                dir: args.dir.display().to_string(),
                run_dir,
                keep: false,
                ranks: 1,
            },
        )
    };
    servers.apply(&mut config);
    config
}

fn suite_spec(args: &BonnieArgs, size: u64, seed: u64, ranks: &Ranks) -> BonnieSpec {
    let files = args.files;
    BonnieSpec {
        size,
        chunk: args.chunk,
        per_char: args.per_char,
        fsync: args.fsync,
        direct: args.direct,
        drop_cache: !args.keep_cache,
        drop_system_cache: args.drop_caches,
        data: args.data,
        seeks: args.seeks,
        seekers: args.seekers as usize,
        seek_rewrite_pct: 10,
        files: (files.count > 0).then_some(MetaSpec {
            count: files.count,
            max_size: files.max_size,
            min_size: files.min_size,
            dirs: files.dirs,
        }),
        seed,
        prefix: if ranks.size() > 1 {
            format!("r{}.", ranks.rank())
        } else {
            String::new()
        },
    }
}

/// The suite's own settings in the result (also for quick's bonnie step).
pub(crate) fn bonnie_config(spec: &BonnieSpec) -> BonnieConfig {
    let files = spec.files.unwrap_or(MetaSpec {
        count: 0,
        max_size: 0,
        min_size: 0,
        dirs: 0,
    });
    BonnieConfig {
        file_bytes: spec.size,
        per_char: per_char_name(spec.per_char).to_string(),
        per_char_bytes: suite::per_char_bytes(spec),
        seeks: spec.seeks,
        seekers: spec.seekers as u32,
        seek_rewrite_pct: spec.seek_rewrite_pct,
        files: files.count,
        max_file_bytes: files.max_size,
        min_file_bytes: files.min_size,
        dirs: files.dirs,
    }
}

/// Where the suite runs: the run's own directory and its target, with the metadata tests'
/// directories made.
struct SuiteFiles {
    dir: RunDir,
    target: Arc<dyn Target>,
}

impl SuiteFiles {
    fn create(
        args: &BonnieArgs,
        plan: &BonniePlan,
        run_id: &RunId,
        ranks: &Ranks,
    ) -> Result<SuiteFiles, Failure> {
        let targets::InRunDir { dir, target } = targets::run_dir(&args.dir, run_id, ranks)?;
        let files = SuiteFiles { dir, target };
        let mut prepared = if args.direct {
            session::probe_direct(files.target.as_ref(), &args.dir, ranks.rank())
        } else {
            Ok(())
        };
        for d in &plan.dirs {
            if prepared.is_ok() {
                prepared = files.target.create_dir(d).map_err(|e| {
                    let path = files.dir.path.display();
                    Failure::run(format!("{path}/{d}: {}", describe_io(&e)))
                });
            }
        }
        if let Err(f) = ranks.agree(prepared) {
            let _ = files.remove(plan, ranks);
            return Err(f);
        }
        Ok(files)
    }

    /// Every rank removes its own files and directories, then the run directory's owners it.
    fn remove(&self, plan: &BonniePlan, ranks: &Ranks) -> Result<(), LeftBehind> {
        let names: Vec<&str> = plan.files.iter().map(String::as_str).collect();
        let ours = self
            .dir
            .remove_files(&names)
            .and_then(|_| self.dir.remove_subdirs(&plan.dirs));
        ranks.barrier();
        ours.and_then(|_| self.dir.remove_if_owned())
    }
}

/// What a per-char kind does, in the report's words.
fn per_char_words(per_char: PerChar) -> &'static str {
    match per_char {
        PerChar::Buffered => "buffered",
        PerChar::Syscall => "one system call per byte",
    }
}
