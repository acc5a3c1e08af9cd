//! `iobm meta DIR`: mdtest's workload, on one process or every MPI rank. The namespace's shape
//! and the phases are checked, then handed to the run layer as a plan: the run's own directory
//! made, the tree's directories created, the chosen phases run (each operation timed, with a
//! stonewall when asked), the tree removed, and whatever is left removed with the directory.

use crate::cli::{MetaArgs, MetaPhase};
use crate::files::keep_or_remove;
use crate::rundir::RunDir;
use crate::servers::Storage as Servers;
use crate::targets;
use iobm_engine::{ItemsPer, MetaOp, Phase, StopRule, Tree, TreeWork};
use iobm_results::{env, Config, MetaConfig, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_command, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, RunId};
use iobm_stats::format_bytes;
use iobm_stats::names::RunKind;
use std::ffi::OsString;

/// The name of the tree's root inside the run's directory (`tree.G` for worker G's own).
const TREE: &str = "tree";

/// `iobm meta DIR`: the shape and the phases checked on every rank, then run by the run layer.
pub fn meta(args: MetaArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    let common = args.output.common(&args.measure);
    run_command(argv, &common, |ranks| {
        let (tree, chosen) = ranks.agreed(check(&args, ranks))?;
        Ok(Meta {
            args: &args,
            tree,
            chosen,
            servers: args.server.check(Servers::Dir(&args.dir))?,
        })
    })
}

/// The phases run when `--phases` names none: every one but the rename, and the read only
/// when the files hold bytes.
fn default_phases(args: &MetaArgs) -> Vec<MetaPhase> {
    use MetaPhase::*;
    let reads = args.read_bytes.unwrap_or(args.write_bytes) > 0;
    [
        DirCreate, DirStat, DirRemove, FileCreate, FileStat, FileRead, FileRemove,
    ]
    .into_iter()
    .filter(|p| *p != FileRead || reads)
    .collect()
}

/// Every check before anything is created: the directory, the outputs, the shape, the stride,
/// the phases and what each needs, the bytes against the free space.
fn check(args: &MetaArgs, ranks: &Ranks) -> Result<(Tree, Vec<MetaPhase>), Failure> {
    session::writable_dir(&args.dir)?;
    args.output.check()?;
    args.measure.check_steady(None, "--duration")?;
    let tree = checked_tree(args, ranks)?;
    let chosen = chosen_phases(args)?;
    check_space(args, &tree, &chosen)?;
    Ok((tree, chosen))
}

/// The namespace's shape and its stride, checked.
fn checked_tree(args: &MetaArgs, ranks: &Ranks) -> Result<Tree, Failure> {
    let tree = Tree {
        base: TREE.to_string(),
        depth: args.depth,
        branch: args.branch,
        items: args.items,
        per: if args.items_per_dir {
            ItemsPer::Directory
        } else {
            ItemsPer::Worker
        },
        unique: args.unique_dir,
        leaves_only: args.leaves_only,
        ranks: ranks.size() as usize,
        jobs: args.jobs as usize,
    };
    tree.check().map_err(|e| {
        Failure::input(format!(
            "--depth {} --branch {} --items {}: {e}",
            args.depth, args.branch, args.items
        ))
    })?;
    tree.check_stride(args.stride as usize).map_err(|e| {
        let hint = match ranks.size() {
            1 => " (a stride needs several MPI ranks: mpirun -np N)",
            _ => "",
        };
        Failure::input(format!("--stride {}: {e}{hint}", args.stride))
    })?;
    Ok(tree)
}

/// The phases chosen, in their order, each with the creation it needs.
fn chosen_phases(args: &MetaArgs) -> Result<Vec<MetaPhase>, Failure> {
    let mut chosen = if args.phases.is_empty() {
        default_phases(args)
    } else {
        args.phases.clone()
    };
    chosen.sort();
    chosen.dedup();
    let name = |p: MetaPhase| p.op().name();
    for p in &chosen {
        let needs = if p.op().on_dirs() {
            MetaPhase::DirCreate
        } else {
            MetaPhase::FileCreate
        };
        if *p != needs && !chosen.contains(&needs) {
            return Err(Failure::input(format!(
                "--phases {}: needs {} in the same run (the run's directory starts empty)",
                name(*p),
                name(needs)
            )));
        }
    }
    Ok(chosen)
}

/// The namespace against the free inodes, the bytes read against those written, the files
/// against the free space.
fn check_space(args: &MetaArgs, tree: &Tree, chosen: &[MetaPhase]) -> Result<(), Failure> {
    // Every directory and file of the namespace at once, against the free inodes.
    let trees = if tree.unique {
        tree.workers() as u64
    } else {
        1
    };
    let made_by_each = [MetaPhase::DirCreate, MetaPhase::FileCreate]
        .iter()
        .filter(|p| chosen.contains(p))
        .count() as u64;
    let entries = trees.saturating_mul(tree.dirs()).saturating_add(
        (tree.workers() as u64)
            .saturating_mul(tree.items_per_worker())
            .saturating_mul(made_by_each),
    );
    if let Some((_, free)) = env::inodes(&args.dir).filter(|&(_, free)| free < entries) {
        return Err(Failure::input(format!(
            "--depth {} --branch {} --items {}: the namespace ({entries} directories and files) needs more inodes than the {free} free at {}",
            args.depth,
            args.branch,
            args.items,
            args.dir.display()
        )));
    }
    let read_bytes = args.read_bytes.unwrap_or(args.write_bytes);
    if chosen.contains(&MetaPhase::FileRead) && read_bytes > args.write_bytes {
        return Err(Failure::input(format!(
            "--read-bytes {}: more than the {} each file holds (--write-bytes)",
            format_bytes(read_bytes),
            format_bytes(args.write_bytes)
        )));
    }
    if chosen.contains(&MetaPhase::FileCreate) {
        let total = (tree.workers() as u64)
            .saturating_mul(tree.items_per_worker())
            .saturating_mul(args.write_bytes);
        let available = env::space(&args.dir)
            .filter(|&(size, _)| size > 0)
            .map(|(_, avail)| avail);
        if let Some(avail) = available.filter(|&a| a < total) {
            return Err(Failure::input(format!(
                "--write-bytes: the files ({}) do not fit in the {} free at {}",
                format_bytes(total),
                format_bytes(avail),
                args.dir.display()
            )));
        }
    }
    Ok(())
}

/// A checked `meta`: the shape and the phases chosen, in their order.
struct Meta<'a> {
    args: &'a MetaArgs,
    tree: Tree,
    chosen: Vec<MetaPhase>,
    servers: crate::servers::Servers,
}

impl Meta<'_> {
    /// This rank's phases: the tree made, the chosen phases, and the tree removed when they
    /// removed every item they made.
    fn phases(&self, rank: u32) -> Vec<Phase> {
        let args = self.args;
        let work = TreeWork {
            stride: args.stride as usize,
            bytes: args.write_bytes,
            ..TreeWork::new(self.tree.clone(), rank as usize)
        };
        let tree_phase = |op: MetaOp| Phase::meta(op.name(), op, work.clone());
        let mut phases = vec![tree_phase(MetaOp::TreeCreate)];
        let mut renamed = false;
        for p in &self.chosen {
            let op = p.op();
            let mut w = work.clone();
            w.renamed = renamed;
            if op == MetaOp::FileRead {
                w.bytes = args.read_bytes.unwrap_or(args.write_bytes);
            }
            let mut phase = Phase::meta(op.name(), op, w);
            // Renames and removals see every item made, as the later phases need them to.
            let walled = !matches!(
                op,
                MetaOp::FileRename | MetaOp::FileRemove | MetaOp::DirRemove
            );
            if let Some(wall) = args.stonewall.filter(|_| walled) {
                phase.stop = StopRule::Stonewall(wall);
            }
            // Before each phase that looks at what was made, as asked.
            phase.drop_system_cache = args.drop_caches && op.strided();
            phases.push(phase);
            renamed ^= op == MetaOp::FileRename;
        }
        if self.removes_all() {
            phases.push(tree_phase(MetaOp::TreeRemove));
        }
        args.measure.apply(&mut phases);
        phases
    }

    /// Whether the chosen phases remove every item they make (else the tear-down does).
    fn removes_all(&self) -> bool {
        let has = |p| self.chosen.contains(&p);
        (!has(MetaPhase::DirCreate) || has(MetaPhase::DirRemove))
            && (!has(MetaPhase::FileCreate) || has(MetaPhase::FileRemove))
    }

    fn config(&self, phases: &[Phase], run_dir: String, ranks: &Ranks) -> Config {
        let (args, tree) = (self.args, &self.tree);
        let mut config = Config {
            meta: Some(MetaConfig {
                depth: tree.depth,
                branch: tree.branch,
                items: tree.items,
                items_per: match tree.per {
                    ItemsPer::Worker => "worker",
                    ItemsPer::Directory => "directory",
                }
                .to_string(),
                items_per_worker: tree.items_per_worker(),
                leaves_only: tree.leaves_only,
                tree: if tree.unique { "unique" } else { "shared" }.to_string(),
                tree_dirs: tree.dirs(),
                stride: args.stride,
                write_bytes: args.write_bytes,
                read_bytes: args.read_bytes.unwrap_or(args.write_bytes),
                phases: phases.iter().map(|p| p.name.clone()).collect(),
                stonewall_s: args.stonewall.map(|w| w.as_secs_f64()),
                drop_caches: args.drop_caches,
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
}

impl RunPlan for Meta<'_> {
    fn kind(&self) -> RunKind {
        RunKind::Meta
    }

    fn checked_config(&self, ranks: &Ranks) -> Option<Config> {
        Some(self.config(&self.phases(ranks.rank()), String::new(), ranks))
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        let targets::InRunDir { dir, target } = targets::run_dir(&self.args.dir, run_id, ranks)?;
        let phases = self.phases(ranks.rank());
        let config = self.config(&phases, dir.path.display().to_string(), ranks);
        let (jobs, at) = (self.tree.jobs, Some(self.args.dir.as_path()));
        Ok(Stage::new(target, phases, jobs, config, at).with(MetaRun { plan: self, dir }))
    }
}

/// One repetition: the run's own directory, which holds the trees.
struct MetaRun<'a> {
    plan: &'a Meta<'a>,
    dir: RunDir,
}

impl Hooks for MetaRun<'_> {
    fn tear_down(self: Box<Self>, run: &mut RunResult, ranks: &Ranks) {
        // Whatever the phases left: every rank its workers' trees (rank 0 the shared one),
        // then the directory's owner the directory.
        let tree = &self.plan.tree;
        let rank = ranks.rank() as usize;
        let mine: Vec<String> = tree
            .roots()
            .into_iter()
            .enumerate()
            .filter(|(g, _)| !tree.unique || g / tree.jobs == rank)
            .filter(|_| tree.unique || rank == 0)
            .map(|(_, root)| root)
            .collect();
        keep_or_remove(&self.dir, self.plan.args.keep, run, || {
            let removed = self.dir.remove_trees(&mine);
            ranks.barrier();
            removed.and_then(|_| self.dir.remove_if_owned())
        });
    }
}
