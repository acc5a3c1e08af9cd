//! The namespace of metadata phases as data (mdtest's): a tree of directories of a depth and
//! fan-out, one per worker or one shared by every worker of every rank; the items each worker
//! makes in it and their names; whose items a worker works on (the stride); the operations.

use iobm_stats::names::OpName;
use std::fmt::Write;

/// A metadata operation of an mdtest-class phase, on one item of a [`Tree`] per operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaOp {
    /// `mkdir` of an item directory.
    DirCreate,
    /// `stat` of an item directory.
    DirStat,
    /// `rmdir` of an item directory.
    DirRemove,
    /// Create a file (`O_CREAT|O_EXCL`), write [`TreeWork::bytes`] into it, close it.
    FileCreate,
    /// `stat` of a file.
    FileStat,
    /// Open a file, read [`TreeWork::bytes`] of it, close it.
    FileRead,
    /// `rename` of a file within its directory, to its other name ([`TreeWork::renamed`]).
    FileRename,
    /// `unlink` of a file.
    FileRemove,
    /// `mkdir` of a directory of the tree itself, parents first.
    TreeCreate,
    /// `rmdir` of a directory of the tree itself, children first.
    TreeRemove,
    /// One directory entry examined by a walk (IO500's find): listed with its directory, its
    /// name matched, its size asked when the name matches ([`crate::FindWork`]).
    Find,
}

/// The operations' names, as results name their books.
static NAMES: [OpName; 11] = [
    OpName::DirCreate,
    OpName::DirStat,
    OpName::DirRemove,
    OpName::FileCreate,
    OpName::FileStat,
    OpName::FileRead,
    OpName::FileRename,
    OpName::FileRemove,
    OpName::TreeCreate,
    OpName::TreeRemove,
    OpName::Find,
];

impl MetaOp {
    /// Every operation, in mdtest's order of phases, then IO500's find.
    pub const ALL: [MetaOp; 11] = [
        MetaOp::TreeCreate,
        MetaOp::DirCreate,
        MetaOp::DirStat,
        MetaOp::DirRemove,
        MetaOp::FileCreate,
        MetaOp::FileStat,
        MetaOp::FileRead,
        MetaOp::FileRename,
        MetaOp::FileRemove,
        MetaOp::TreeRemove,
        MetaOp::Find,
    ];

    pub fn name(self) -> OpName {
        NAMES[self as usize]
    }

    /// The operation's one class of books ([`crate::Op::classes`]).
    pub fn classes(self) -> &'static [OpName] {
        std::slice::from_ref(&NAMES[self as usize])
    }

    /// What one operation's latency covers, for the result.
    pub fn measures(self) -> &'static str {
        match self {
            MetaOp::DirCreate => "mkdir of one directory",
            MetaOp::DirStat => "stat of one directory",
            MetaOp::DirRemove => "rmdir of one directory",
            MetaOp::FileCreate => "create (open O_CREAT|O_EXCL), write its bytes, close one file",
            MetaOp::FileStat => "stat of one file",
            MetaOp::FileRead => "open, read its bytes, close one file",
            MetaOp::FileRename => "rename of one file within its directory",
            MetaOp::FileRemove => "unlink of one file",
            MetaOp::TreeCreate => "mkdir of one directory of the tree",
            MetaOp::TreeRemove => "rmdir of one directory of the tree",
            MetaOp::Find => {
                "one directory entry examined (listed with its directory, a stat when its name matches)"
            }
        }
    }

    /// Whether it works on items another worker made, when the phase has a stride: stats,
    /// reads, renames and removals of files and directories (never creations, never the tree).
    pub fn strided(self) -> bool {
        matches!(
            self,
            MetaOp::DirStat
                | MetaOp::DirRemove
                | MetaOp::FileStat
                | MetaOp::FileRead
                | MetaOp::FileRename
                | MetaOp::FileRemove
        )
    }

    /// Whether it works on the tree's own directories rather than on items.
    pub fn on_tree(self) -> bool {
        matches!(self, MetaOp::TreeCreate | MetaOp::TreeRemove)
    }

    /// Whether its items are directories (else files).
    pub fn on_dirs(self) -> bool {
        matches!(
            self,
            MetaOp::DirCreate | MetaOp::DirStat | MetaOp::DirRemove
        )
    }
}

/// What [`Tree::items`] counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemsPer {
    /// Items per worker in all, spread over the item directories (mdtest `-n`).
    Worker,
    /// Items per worker in each item directory (mdtest `-I`).
    Directory,
}

/// The kind of name of an item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemName {
    /// A file as created: `f.G.I`.
    File,
    /// A file after [`MetaOp::FileRename`]: `r.G.I`.
    Renamed,
    /// An item directory: `d.G.I`.
    Dir,
}

/// The shape of a metadata namespace. Tree directories are numbered breadth-first from the
/// root (0); directory k > 0 is child `(k - 1) % branch` of directory `(k - 1) / branch`, named
/// `b<child>` inside it. Item `I` of global worker `G` is in item directory `I / per_dir` (a
/// run of `per_dir`, the items per worker over the item directories rounded up, in each),
/// named `f.G.I` (a file), `r.G.I` (a renamed file) or `d.G.I` (a directory): names never
/// collide, in a shared tree either, and are never those of tree directories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// The root directory's name: `BASE` for a shared tree, `BASE.G` for worker G's own.
    pub base: String,
    /// Levels below the root (0: the root alone).
    pub depth: u32,
    /// Subdirectories of each directory above the last level.
    pub branch: u32,
    /// Items each worker makes, as [`Tree::per`] says.
    pub items: u64,
    pub per: ItemsPer,
    /// A tree per worker (mdtest `-u`); else one tree every worker of every rank shares.
    pub unique: bool,
    /// Items only in the last level's directories (mdtest `-L`).
    pub leaves_only: bool,
    pub ranks: usize,
    /// Workers per rank; global worker G of rank r's local worker w is `r * jobs + w`.
    pub jobs: usize,
}

/// The most directories one tree may have.
pub const MAX_TREE_DIRS: u64 = 1 << 30;
/// The deepest tree (the longest path stays well within `PATH_MAX`).
pub const MAX_DEPTH: u32 = 64;

impl Tree {
    /// Workers of every rank.
    pub fn workers(&self) -> usize {
        self.ranks * self.jobs
    }

    /// Directories at `level` (the root's is 0).
    fn at_level(&self, level: u32) -> u64 {
        u64::from(self.branch).saturating_pow(level)
    }

    /// Directories of one tree, its root included.
    pub fn dirs(&self) -> u64 {
        (0..=self.depth).fold(0u64, |n, l| n.saturating_add(self.at_level(l)))
    }

    /// The directories that hold items: every one, or the last level's.
    pub fn item_dirs(&self) -> u64 {
        if self.leaves_only {
            self.at_level(self.depth)
        } else {
            self.dirs()
        }
    }

    /// The number of the first directory holding items.
    fn first_item_dir(&self) -> u64 {
        self.dirs() - self.item_dirs()
    }

    /// Items each worker makes.
    pub fn items_per_worker(&self) -> u64 {
        match self.per {
            ItemsPer::Worker => self.items,
            ItemsPer::Directory => self.items.saturating_mul(self.item_dirs()),
        }
    }

    /// Refuses a shape with nothing to do or too large to name, in one line.
    pub fn check(&self) -> Result<(), String> {
        if self.ranks == 0 || self.jobs == 0 {
            return Err("a tree needs at least one worker".into());
        }
        if self.depth == 0 && self.items == 0 {
            return Err("depth 0 with 0 items: nothing to create".into());
        }
        if self.depth > 0 && self.branch == 0 {
            return Err(format!(
                "depth {} with branch 0: a tree deeper than its root needs a branch of at least 1",
                self.depth
            ));
        }
        if self.depth > MAX_DEPTH {
            return Err(format!("depth {} is deeper than {MAX_DEPTH}", self.depth));
        }
        let dirs = self.dirs();
        if dirs > MAX_TREE_DIRS {
            return Err(format!(
                "depth {} with branch {} is more than {MAX_TREE_DIRS} directories per tree",
                self.depth, self.branch
            ));
        }
        if self.base.is_empty() || self.base.contains('/') {
            return Err(format!(
                "the tree's name '{}' is not one plain name",
                self.base
            ));
        }
        if self.items > 0 && self.items_per_worker() == u64::MAX {
            return Err("more items per worker than can be counted".into());
        }
        Ok(())
    }

    /// Refuses a stride (in ranks) that would have a worker work on its own rank's items: a
    /// multiple of the ranks other than 0 (mdtest `-N`).
    pub fn check_stride(&self, stride: usize) -> Result<(), String> {
        if stride > 0 && stride.is_multiple_of(self.ranks.max(1)) {
            return Err(format!(
                "a stride of {stride} with {} ranks has every rank work on its own items",
                self.ranks
            ));
        }
        Ok(())
    }

    /// Whose items global worker `worker` works on with a stride of `stride` ranks: those of
    /// the worker `stride` ranks on, `(worker + stride * jobs) mod workers` (mdtest `-N`).
    pub fn owner(&self, worker: usize, stride: usize) -> usize {
        let workers = self.workers();
        let step = (stride % self.ranks.max(1)) * self.jobs;
        (worker % workers + step) % workers
    }

    /// The tree directories global worker `worker` creates and removes: all of its own tree,
    /// or of the shared tree for worker 0 alone.
    pub fn tree_dirs_of(&self, worker: usize) -> u64 {
        if self.unique || worker == 0 {
            self.dirs()
        } else {
            0
        }
    }

    /// Appends the path of tree directory `k` of `owner`'s tree (the shared one when not
    /// unique) to `out`.
    pub fn write_dir(&self, out: &mut String, owner: usize, k: u64) {
        if k == 0 {
            out.push_str(&self.base);
            if self.unique {
                let _ = write!(out, ".{owner}");
            }
            return;
        }
        let branch = u64::from(self.branch.max(1));
        self.write_dir(out, owner, (k - 1) / branch);
        let _ = write!(out, "/b{}", (k - 1) % branch);
    }

    /// The number of the directory item `item` is in: as mdtest's, each item directory holds a
    /// run of consecutive items (the first `per_dir` in the first, ...), so a worker going
    /// through its items in order works one directory at a time.
    pub fn dir_of_item(&self, item: u64) -> u64 {
        let dirs = self.item_dirs().max(1);
        let per_dir = self.items_per_worker().div_ceil(dirs).max(1);
        self.first_item_dir() + (item / per_dir).min(dirs - 1)
    }

    /// Appends the path of item `item` of global worker `owner` to `out`.
    pub fn write_item(&self, out: &mut String, kind: ItemName, owner: usize, item: u64) {
        self.write_dir(out, owner, self.dir_of_item(item));
        let letter = match kind {
            ItemName::File => 'f',
            ItemName::Renamed => 'r',
            ItemName::Dir => 'd',
        };
        let _ = write!(out, "/{letter}.{owner}.{item}");
    }

    /// Every tree root the run's ranks make, for clean-up.
    pub fn roots(&self) -> Vec<String> {
        let owners = if self.unique { self.workers() } else { 1 };
        (0..owners)
            .map(|g| {
                let mut s = String::new();
                self.write_dir(&mut s, g, 0);
                s
            })
            .collect()
    }
}

/// What one metadata phase does on a [`Tree`], on one rank: its operation is the phase's
/// [`crate::Op::Meta`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeWork {
    pub tree: Tree,
    /// This rank: its local worker w is global worker `rank * tree.jobs + w`.
    pub rank: usize,
    /// Stats, reads, renames and removals work on the items of the worker this many ranks on
    /// ([`Tree::owner`]); 0: their own.
    pub stride: usize,
    /// Items per worker the phase works on: what an earlier phase made when its stonewall cut
    /// it short ([`crate::PhaseOutcome::items_done`]); None: every item of the shape.
    pub limit: Option<u64>,
    /// The files are under their renamed names (a rename phase ran before); a rename phase
    /// with this set renames them back.
    pub renamed: bool,
    /// Bytes written into each created file, or read from each file read.
    pub bytes: u64,
}

impl TreeWork {
    /// Work on `tree` on rank `rank`: own items, all of them, files under their first names.
    pub fn new(tree: Tree, rank: usize) -> TreeWork {
        TreeWork {
            tree,
            rank,
            stride: 0,
            limit: None,
            renamed: false,
            bytes: 0,
        }
    }

    /// Global worker id of local worker `local`.
    pub fn global(&self, local: usize) -> usize {
        self.rank * self.tree.jobs + local
    }

    /// Whose items local worker `local` works on in a phase of `op`.
    pub fn owner(&self, op: MetaOp, local: usize) -> usize {
        let global = self.global(local);
        if op.strided() {
            self.tree.owner(global, self.stride)
        } else {
            global
        }
    }

    /// How many operations local worker `local` does in a phase of `op`.
    pub fn count(&self, op: MetaOp, local: usize) -> u64 {
        if op.on_tree() {
            return self.tree.tree_dirs_of(self.global(local));
        }
        let all = self.tree.items_per_worker();
        self.limit.map_or(all, |l| l.min(all))
    }

    /// Writes the name operation `i` of a phase of `op` works on, of `owner`'s items, into
    /// `out` (cleared first); for a rename, its new name into `to`.
    pub fn write_name(&self, op: MetaOp, owner: usize, i: u64, out: &mut String, to: &mut String) {
        out.clear();
        let (now, other) = match self.renamed {
            false => (ItemName::File, ItemName::Renamed),
            true => (ItemName::Renamed, ItemName::File),
        };
        match op {
            MetaOp::TreeCreate => self.tree.write_dir(out, owner, i),
            MetaOp::TreeRemove => self.tree.write_dir(out, owner, self.tree.dirs() - 1 - i),
            MetaOp::DirCreate | MetaOp::DirStat | MetaOp::DirRemove => {
                self.tree.write_item(out, ItemName::Dir, owner, i)
            }
            MetaOp::FileRename => {
                self.tree.write_item(out, now, owner, i);
                to.clear();
                self.tree.write_item(to, other, owner, i);
            }
            MetaOp::FileCreate => self.tree.write_item(out, ItemName::File, owner, i),
            MetaOp::FileStat | MetaOp::FileRead | MetaOp::FileRemove => {
                self.tree.write_item(out, now, owner, i)
            }
            // A walk names what it lists, not items of a tree.
            MetaOp::Find => {}
        }
    }
}

impl crate::Phase {
    /// Limits a phase to the `made` operations per worker that an earlier phase (`create`)
    /// did when its stonewall cut it short: the stats, reads, renames and removals of the files
    /// a creation made in the same tree, or of its directories; the reads of the transfers a
    /// write wrote in the same directory's files, with the same transfers. Other phases are
    /// left as they are.
    pub fn limit_to_made(&mut self, create: &crate::Phase, made: u64) {
        if create.op == crate::Op::Write {
            return self.limit_to_transfers(create, made);
        }
        let (crate::Op::Meta(made_by), crate::Op::Meta(op), Some(work)) =
            (create.op, self.op, &mut self.tree)
        else {
            return;
        };
        if create.tree.as_ref().map(|w| &w.tree) != Some(&work.tree) {
            return;
        }
        let follows = match made_by {
            MetaOp::FileCreate => !op.on_dirs() && !op.on_tree() && op != MetaOp::FileCreate,
            MetaOp::DirCreate => op.on_dirs() && op != MetaOp::DirCreate,
            _ => false,
        };
        if follows {
            work.limit = Some(made);
        }
    }

    /// A read of the files of a write that a stonewall cut at `made` transfers per worker
    /// (every worker of every rank wrote that many, or its whole region): each region cut to
    /// as many of its transfers. The files are the write's when they are in the same
    /// directory, as a read of the next rank's files is.
    fn limit_to_transfers(&mut self, write: &crate::Phase, made: u64) {
        let dir = |p: &crate::Phase| {
            p.layout
                .files
                .first()
                .map(|f| f.name.rsplit_once('/').map_or("", |(d, _)| d).to_string())
        };
        let same = self.op == crate::Op::Read
            && self.block == write.block
            && self.interleave == write.interleave
            && dir(self).is_some()
            && dir(self) == dir(write);
        if !same {
            return;
        }
        let written = made.saturating_mul(write.block);
        for region in &mut self.layout.regions {
            region.len = region.len.min(written);
        }
    }
}

#[cfg(test)]
mod tests;
