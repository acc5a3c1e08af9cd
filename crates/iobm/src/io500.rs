//! `iobm io500 DIR`: the IO500 suite, on one process or every MPI rank. The sizes are checked,
//! then handed to the run layer as a plan: the run's own directory made with the suite's
//! directories and files, the twelve phases run in the rules' order (the writes stonewalled,
//! the later phases on what they made), the scores derived and printed, everything removed.

use crate::cli::Io500Args;
use crate::files::keep_or_remove;
use crate::rundir::RunDir;
use crate::servers::Storage as Servers;
use crate::targets;
use iobm_engine::{
    prepare_objects, FindWork, FsyncPolicy, ItemsPer, Layout, MetaOp, Op, Opening, Phase, StopRule,
    Tree, TreeWork,
};
use iobm_results::io500::{summarize, PHASES, RULES_STONEWALL_S};
use iobm_results::{env, Config, Io500Config, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_command, Context, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, RunId};
use iobm_stats::format_bytes;
use iobm_stats::names::RunKind;
use iobm_target::Target;
use std::ffi::OsString;

/// ior-hard's transfer, by the rules.
pub const HARD_TRANSFER: u64 = 47008;
/// mdtest-hard's file size, by the rules.
pub const HARD_FILE: u64 = 3901;
/// What a file's name contains for find to count it (with mdtest-hard's size).
const FIND_NAME: &str = "01";
/// The directories of the run's own: ior-easy's files, ior-hard's shared file.
const EASY_DIR: &str = "ior-easy";
const HARD_DIR: &str = "ior-hard";
/// mdtest-easy's trees (`mdtest-easy.G`, one per worker) and mdtest-hard's shared one.
const MD_EASY: &str = "mdtest-easy";
const MD_HARD: &str = "mdtest-hard";

/// `iobm io500 DIR`: the sizes checked on every rank, then run by the run layer.
pub fn io500(args: Io500Args, argv: &[OsString]) -> Result<Exit, Failure> {
    let common = iobm_run::lifecycle::Common {
        outputs: args.output.outputs(),
        repetitions: 1,
    };
    run_command(argv, &common, |ranks| {
        let suite = ranks.agreed(check(&args, ranks))?;
        Ok(Io500 {
            args: &args,
            room: room(&args, &suite),
            suite,
            servers: args.server.check(Servers::Dir(&args.dir))?,
        })
    })
}

/// The suite's shape, checked: ranks, workers per rank, whose work the lookups and reads see.
#[derive(Debug, Clone, Copy)]
struct Suite {
    ranks: usize,
    jobs: usize,
    /// 1 with several ranks (each reads and looks up what the next rank made), else 0.
    stride: usize,
}

impl Suite {
    fn workers(&self) -> u64 {
        (self.ranks * self.jobs) as u64
    }

    /// mdtest-easy's trees (one per worker, empty files) or mdtest-hard's (one shared).
    fn tree(&self, easy: bool, items: u64) -> Tree {
        Tree {
            base: if easy { MD_EASY } else { MD_HARD }.to_string(),
            depth: 0,
            branch: 1,
            items,
            per: ItemsPer::Worker,
            unique: easy,
            leaves_only: false,
            ranks: self.ranks,
            jobs: self.jobs,
        }
    }
}

/// Every check before anything is created: the directory, the outputs, the stonewall, the
/// sizes, the files against the free space and the inodes.
fn check(args: &Io500Args, ranks: &Ranks) -> Result<Suite, Failure> {
    session::writable_dir(&args.dir)?;
    args.output.check()?;
    if args.stonewall.is_zero() {
        return Err(Failure::input(
            "--stonewall 0s: must be more than 0 (the rules' is 300s)",
        ));
    }
    let transfer = args.easy_transfer;
    if transfer == 0 {
        return Err(Failure::input("--easy-transfer 0 B: must be more than 0"));
    }
    let (easy_items, hard_items) = (args.easy_items(), args.hard_items());
    for (flag, given, n) in [
        ("--easy-items", args.easy_items, easy_items),
        ("--hard-items", args.hard_items, hard_items),
    ] {
        if n == 0 {
            let flag = if given.is_some() { flag } else { "--items" };
            return Err(Failure::input(format!(
                "{flag} 0: mdtest-easy and mdtest-hard need at least 1 file per worker"
            )));
        }
    }
    if args.easy_size < transfer || !args.easy_size.is_multiple_of(transfer) {
        return Err(Failure::input(format!(
            "--easy-size {}: must be a whole number (at least 1) of --easy-transfer {} transfers",
            format_bytes(args.easy_size),
            format_bytes(transfer)
        )));
    }
    if args.segments == 0 || args.segments.checked_mul(HARD_TRANSFER).is_none() {
        return Err(Failure::input(format!(
            "--segments {}: must be at least 1 and fit a file",
            args.segments
        )));
    }
    let suite = Suite {
        ranks: ranks.size() as usize,
        jobs: args.jobs as usize,
        stride: usize::from(ranks.size() > 1),
    };
    for (easy, n) in [(true, easy_items), (false, hard_items)] {
        let flag = if easy { "--easy-items" } else { "--hard-items" };
        (suite.tree(easy, n).check()).map_err(|e| Failure::input(format!("{flag} {n}: {e}")))?;
    }
    Ok(suite)
}

/// What the suite's files could take at most (every write to its end) against the room at
/// `dir`, said when more: the stonewall bounds the writes, not these sizes (IO500's defaults
/// are far beyond any disk), so they are not refused; a disk that fills first fails the write
/// with ENOSPC, which ends the run and makes it invalid.
fn room(args: &Io500Args, suite: &Suite) -> Option<String> {
    let workers = suite.workers();
    let (easy_items, hard_items) = (args.easy_items(), args.hard_items());
    // Both mdtest trees' files and directories, ior's files.
    let entries = workers
        .saturating_mul(easy_items.saturating_add(hard_items))
        .saturating_add(workers * 2 + 8);
    let per_worker = args
        .easy_size
        .saturating_add(args.segments.saturating_mul(HARD_TRANSFER))
        .saturating_add(hard_items.saturating_mul(HARD_FILE));
    let total = per_worker.saturating_mul(workers);
    let space = env::space(&args.dir).filter(|&(size, _)| size > 0);
    let short = match (space, env::inodes(&args.dir)) {
        (Some((_, avail)), _) if avail < total => format!(
            "the files may take up to {} (--easy-size, --segments, --hard-items), more than the {} free",
            format_bytes(total),
            format_bytes(avail)
        ),
        (_, Some((_, free))) if free < entries => format!(
            "the files may need up to {entries} inodes (--easy-items, --hard-items), more than the {free} free"
        ),
        _ => return None,
    };
    Some(format!(
        "{short} at {}: the stonewall is to end the writes first; if the disk fills, the write fails (ENOSPC), the run stops and is not valid",
        args.dir.display()
    ))
}

/// A checked `io500`.
struct Io500<'a> {
    args: &'a Io500Args,
    suite: Suite,
    /// Said before the phases when the files could take more than there is room for.
    room: Option<String>,
    servers: crate::servers::Servers,
}

impl Io500<'_> {
    /// Rank `rank`'s ior-easy files (`ior-easy/data.G`), each a worker's.
    fn easy_layout(&self, rank: usize) -> Layout {
        let s = self.suite;
        let mut layout = Layout::for_rank(false, rank, s.ranks, s.jobs, self.args.easy_size);
        for f in &mut layout.files {
            f.name = format!("{EASY_DIR}/{}", f.name);
        }
        layout
    }

    /// A phase of ior-hard's shared file (`ior-hard/data.shared`), rank `rank`'s part of it.
    fn hard(&self, name: &str, op: Op, rank: usize) -> Phase {
        let s = self.suite;
        let mut phase = Phase::strided(
            name,
            op,
            rank,
            s.ranks,
            s.jobs,
            HARD_TRANSFER,
            self.args.segments,
        );
        for f in &mut phase.layout.files {
            f.name = format!("{HARD_DIR}/{}", f.name);
        }
        phase
    }

    /// mdtest-easy's or mdtest-hard's files per worker.
    fn items(&self, easy: bool) -> u64 {
        match easy {
            true => self.args.easy_items(),
            false => self.args.hard_items(),
        }
    }

    /// What rank `rank`'s workers do in mdtest-easy's or mdtest-hard's tree.
    fn work(&self, easy: bool, rank: usize) -> TreeWork {
        TreeWork {
            stride: self.suite.stride,
            bytes: if easy { 0 } else { HARD_FILE },
            ..TreeWork::new(self.suite.tree(easy, self.items(easy)), rank)
        }
    }

    /// Where find starts: ior's two directories and every mdtest tree.
    fn find_roots(&self) -> Vec<String> {
        let mut roots = vec![EASY_DIR.to_string(), HARD_DIR.to_string()];
        roots.extend(self.suite.tree(true, 1).roots());
        roots.extend(self.suite.tree(false, 1).roots());
        roots
    }

    /// This rank's phases, in the rules' order: the writes stonewalled (ior's flushed at their
    /// end, as IOR's -e; mdtest's with the file system synced at their end, as mdtest's -Y),
    /// the reads and lookups of the next rank's data under MPI, the reads checking every byte
    /// against what run `seed` wrote (IOR's -R, mdtest's -X) inside their time.
    fn phases(&self, rank: usize, seed: u64) -> Vec<Phase> {
        let s = self.suite;
        let next = (rank + s.stride) % s.ranks;
        let walled = |p: Phase| Phase {
            stop: StopRule::Stonewall(self.args.stonewall),
            ..p
        };
        let flushed = |p: Phase| Phase {
            fsync: FsyncPolicy::End,
            ..p
        };
        // IOR times its open (and a file per process's create) inside the phase.
        let opened = |opening: Opening, p: Phase| Phase { opening, ..p };
        // As IOR and mdtest, a mismatch is counted and the phase goes on; it invalidates the run.
        let verified = |p: Phase| Phase {
            verify: Some(seed),
            max_errors: u64::MAX,
            ..p
        };
        let meta =
            |name: &str, op: MetaOp, easy: bool| Phase::meta(name, op, self.work(easy, rank));
        let transfer = self.args.easy_transfer;
        let mut phases = vec![
            walled(flushed(opened(
                Opening::TimedCreate,
                Phase::new(
                    "ior-easy-write",
                    Op::Write,
                    transfer,
                    self.easy_layout(rank),
                ),
            ))),
            walled(flushed(meta("mdtest-easy-write", MetaOp::FileCreate, true))),
            walled(flushed(opened(
                Opening::Timed,
                self.hard("ior-hard-write", Op::Write, rank),
            ))),
            walled(flushed(meta(
                "mdtest-hard-write",
                MetaOp::FileCreate,
                false,
            ))),
            Phase::find(
                "find",
                FindWork {
                    roots: self.find_roots(),
                    rank,
                    ranks: s.ranks,
                    jobs: s.jobs,
                    name_contains: FIND_NAME.to_string(),
                    size: Some(HARD_FILE),
                },
            ),
            verified(opened(
                Opening::Timed,
                Phase::new("ior-easy-read", Op::Read, transfer, self.easy_layout(next)),
            )),
            meta("mdtest-easy-stat", MetaOp::FileStat, true),
            verified(opened(
                Opening::Timed,
                self.hard("ior-hard-read", Op::Read, next),
            )),
            meta("mdtest-hard-stat", MetaOp::FileStat, false),
            meta("mdtest-easy-delete", MetaOp::FileRemove, true),
            verified(meta("mdtest-hard-read", MetaOp::FileRead, false)),
            meta("mdtest-hard-delete", MetaOp::FileRemove, false),
        ];
        debug_assert!(phases.iter().map(|p| p.name.as_str()).eq(PHASES));
        for p in &mut phases {
            p.interval = self.args.series.interval_for(p.stop);
        }
        phases
    }

    fn config(&self, phases: &[Phase], run_dir: String, ranks: &Ranks) -> Config {
        let args = self.args;
        let mut config = Config {
            io500: Some(Io500Config {
                easy_bytes: args.easy_size,
                easy_transfer_bytes: args.easy_transfer,
                hard_transfer_bytes: HARD_TRANSFER,
                hard_segments: args.segments,
                easy_items: args.easy_items(),
                hard_items: Some(args.hard_items()),
                hard_file_bytes: HARD_FILE,
                stonewall_s: args.stonewall.as_secs_f64(),
                stride: self.suite.stride as u32,
                find_name: FIND_NAME.to_string(),
                phases: phases.iter().map(|p| p.name.clone()).collect(),
            }),
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

    /// This rank's part of the namespace: the shared directories and file (rank 0, as IOR's
    /// rank 0 creates it before the others open it), its workers' mdtest-easy trees (their
    /// ior-easy files are created inside ior-easy-write, as IOR's). Every rank's part made
    /// before any phase.
    fn make(&self, target: &dyn Target, ranks: &Ranks) -> Result<(), Failure> {
        let rank = ranks.rank() as usize;
        let failed = |e: std::io::Error| Failure::run(format!("set up the suite's files: {e}"));
        let shared = match rank {
            0 => [EASY_DIR, HARD_DIR, MD_HARD]
                .iter()
                .try_for_each(|d| target.create_dir(d))
                .and_then(|_| prepare_objects(target, &self.hard("", Op::Write, 0).layout))
                .map_err(failed),
            _ => Ok(()),
        };
        ranks.agree(shared)?;
        let own = self
            .own_trees(rank)
            .iter()
            .try_for_each(|t| target.create_dir(t))
            .map_err(failed);
        ranks.agree(own)
    }

    /// The mdtest-easy trees of rank `rank`'s workers.
    fn own_trees(&self, rank: usize) -> Vec<String> {
        let jobs = self.suite.jobs;
        self.suite.tree(true, 1).roots()[rank * jobs..(rank + 1) * jobs].to_vec()
    }
}

impl RunPlan for Io500<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Io500
    }

    fn checked_config(&self, ranks: &Ranks) -> Option<Config> {
        let phases = self.phases(ranks.rank() as usize, 0);
        Some(self.config(&phases, String::new(), ranks))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let targets::InRunDir { dir, target } = targets::run_dir(&self.args.dir, run_id, ranks)?;
        let phases = self.phases(ranks.rank() as usize, run_id.seed);
        let config = self.config(&phases, dir.path.display().to_string(), ranks);
        let hooks = Io500Run { plan: self, dir };
        if let Err(failure) = self.make(target.as_ref(), ranks) {
            // Whatever was made, removed on every rank (all ranks agreed on the failure).
            let _ = hooks.remove(ranks);
            return Err(failure);
        }
        let (jobs, at) = (self.suite.jobs, Some(self.args.dir.as_path()));
        Ok(Stage::new(target, phases, jobs, config, at).with(hooks))
    }
}

/// One repetition: the run's own directory, which holds the suite's files.
struct Io500Run<'a> {
    plan: &'a Io500<'a>,
    dir: RunDir,
}

impl Hooks for Io500Run<'_> {
    fn opening(&mut self, run: &mut RunResult) -> String {
        let wall = self.plan.args.stonewall.as_secs_f64();
        let short = (wall != RULES_STONEWALL_S).then(|| format!(
            "--stonewall {wall} s: NOT a valid IO500 submission (the rules' stonewall is {RULES_STONEWALL_S} s)"
        ));
        let mut said = String::new();
        for warning in short.into_iter().chain(self.plan.room.clone()) {
            said.push_str(&format!("{warning}\n"));
            run.warnings.push(warning);
        }
        said
    }

    /// The scores, derived at rank 0 from every rank's phases.
    fn after_phases(&mut self, run: &mut RunResult, context: &Context) -> String {
        if !context.ranks.is_root() {
            return String::new();
        }
        run.io500 = Some(summarize(run, self.plan.args.stonewall.as_secs_f64()));
        format!("\n{}", iobm_report::io500::render_scores(run))
    }

    fn tear_down(self: Box<Self>, run: &mut RunResult, ranks: &Ranks) {
        keep_or_remove(&self.dir, self.plan.args.keep, run, || self.remove(ranks));
    }
}

impl Io500Run<'_> {
    /// Removes what the suite made (and the phases left): every rank its workers' files and
    /// trees, then rank 0 the shared ones, then the directory's owner the directory.
    fn remove(&self, ranks: &Ranks) -> Result<(), iobm_results::LeftBehind> {
        let rank = ranks.rank() as usize;
        let plan = self.plan;
        let easy = plan.easy_layout(rank);
        let files: Vec<&str> = easy.files.iter().map(|f| f.name.as_str()).collect();
        let removed = self
            .dir
            .remove_files(&files)
            .and_then(|_| self.dir.remove_trees(&plan.own_trees(rank)));
        ranks.barrier();
        let shared = match rank {
            0 => {
                let hard = plan.hard("", Op::Write, 0).layout;
                let hard: Vec<&str> = hard.files.iter().map(|f| f.name.as_str()).collect();
                self.dir
                    .remove_files(&hard)
                    .and_then(|_| self.dir.remove_trees(&[MD_HARD.to_string()]))
                    .and_then(|_| {
                        self.dir
                            .remove_subdirs(&[EASY_DIR.to_string(), HARD_DIR.to_string()])
                    })
            }
            _ => Ok(()),
        };
        ranks.barrier();
        removed.and(shared).and_then(|_| self.dir.remove_if_owned())
    }
}
