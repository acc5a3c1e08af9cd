//! The flags of `iobm meta`: the namespace's shape (mdtest's -z, -b, -n/-I, -u, -L), whose
//! items a worker works on (-N), the bytes of each file (-w, -e), the phases and the stonewall.

use super::units::{parse_positive_duration, parse_size};
use super::{MeasureArgs, OutputArgs, ServerArgs};
use clap::{Args, ValueEnum};
use iobm_engine::MetaOp;
use std::path::PathBuf;
use std::time::Duration;

pub(super) const META_EXAMPLES: &str = "\
Examples:
  iobm meta /mnt/nfs                           1000 files and 1000 directories per worker, one shared directory
  iobm meta -j 4 --unique-dir --depth 2 --branch 10 --items 10 --items-per-dir /mnt/x   (mdtest -u -z 2 -b 10 -I 10)
  mpirun -np 4 iobm meta -j 8 --stride 1 /mnt/lustre   stat, read and remove what the next rank made
  iobm meta --phases file-create,file-stat,file-read,file-remove --write-bytes 3901 --stonewall 30s /scratch
  iobm meta --drop-caches /data                 as root: dentry, inode and page caches dropped before each phase that reads

Each phase is timed per operation; the phases run in this order, whichever are chosen:
tree-create, dir-create, dir-stat, dir-remove, file-create, file-stat, file-read, file-rename,
file-remove, tree-remove (the tree's own directories are made first and removed last).";

/// The phases `--phases` names, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum MetaPhase {
    DirCreate,
    DirStat,
    DirRemove,
    FileCreate,
    FileStat,
    FileRead,
    FileRename,
    FileRemove,
}

impl MetaPhase {
    /// The engine's operation of the phase.
    pub fn op(self) -> MetaOp {
        match self {
            MetaPhase::DirCreate => MetaOp::DirCreate,
            MetaPhase::DirStat => MetaOp::DirStat,
            MetaPhase::DirRemove => MetaOp::DirRemove,
            MetaPhase::FileCreate => MetaOp::FileCreate,
            MetaPhase::FileStat => MetaOp::FileStat,
            MetaPhase::FileRead => MetaOp::FileRead,
            MetaPhase::FileRename => MetaOp::FileRename,
            MetaPhase::FileRemove => MetaOp::FileRemove,
        }
    }
}

#[derive(Debug, Args)]
pub struct MetaArgs {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and works only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Worker threads per process
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,
    /// Files (and directories) each worker makes (mdtest -n), or in each directory of its
    /// tree with --items-per-dir (mdtest -I)
    #[arg(short = 'n', long, value_name = "N", default_value_t = 1000)]
    pub items: u64,
    /// --items counts per directory of the tree, not per worker
    #[arg(long)]
    pub items_per_dir: bool,
    /// Levels of directories below each tree's root (mdtest -z)
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=64))]
    pub depth: u32,
    /// Directories made in each directory of the tree above its last level (mdtest -b)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub branch: u32,
    /// Items only in the last level's directories (mdtest -L)
    #[arg(long)]
    pub leaves_only: bool,
    /// A tree of its own for each worker (mdtest -u); without it every worker of every rank
    /// works in one shared tree (mdtest's default)
    #[arg(long)]
    pub unique_dir: bool,
    /// Stat, read, rename and remove the items of the worker this many ranks on (mdtest -N),
    /// so that no client reads what its own caches hold of its own creations
    #[arg(long, value_name = "RANKS", default_value_t = 0)]
    pub stride: u32,
    /// Bytes written into each file as it is created (mdtest -w)
    #[arg(long, value_name = "SIZE", default_value = "0", value_parser = parse_size)]
    pub write_bytes: u64,
    /// Bytes read from each file by file-read (mdtest -e) [default: --write-bytes]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub read_bytes: Option<u64>,
    /// The phases to run, comma-separated [default: every one but file-rename, and file-read
    /// only when the files hold bytes]
    #[arg(long, value_name = "PHASE,...", value_delimiter = ',', value_enum)]
    pub phases: Vec<MetaPhase>,
    /// A stonewall in every creating and lookup phase (creates, stats, reads): it ends for
    /// every worker once the first reaches this time, then each goes on to as many items as
    /// the most any worker of any rank had done (wear-out), so the later phases work on exactly
    /// what was made; renames and removals always see every item made
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub stonewall: Option<Duration>,
    /// Before each phase that looks at what was made (stat, read, rename, remove) drop the
    /// system's dentry, inode and page caches (as root: sync, then /proc/sys/vm/drop_caches)
    #[arg(long)]
    pub drop_caches: bool,
    /// Keep the run's directory and what the phases left in it (without removal phases, the
    /// whole namespace) instead of removing it at the end
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
