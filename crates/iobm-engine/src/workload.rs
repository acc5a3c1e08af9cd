//! Workloads as data: a phase says what every worker does (operation, block size, order,
//! flushing, stop rule) over a layout of files and per-worker regions.

use iobm_stats::names::OpName;
use std::time::Duration;

pub mod find;
mod pattern;
pub use pattern::Pattern;
mod object;
use object::MIXED_NAMES;
pub use object::{object_name, Mix, ObjectOp, ObjectSpec, MIXED};
mod replay;
pub mod tree;
pub use find::FindWork;
pub use replay::{Replay, ReplayIo, ReplayStream};
pub use tree::{ItemName, ItemsPer, MetaOp, Tree, TreeWork};

/// The operation a phase repeats. Byte operations work on blocks of the worker's region; the
/// metadata operations (create, stat, delete) on whole small files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Write a block (`pwrite`).
    Write,
    /// Read a block (`pread`).
    Read,
    /// Read a block, change it, write it back in place (bonnie++ "rewrite").
    Rewrite,
    /// Read or write a block, `read_pct` percent of the operations reads (fio's `rwmixread`);
    /// each kind has its own books. What is written is what the data set holds there.
    ReadWrite { read_pct: u8 },
    /// Write a block one byte at a time; one operation is one block's worth of bytes.
    PutChar(PerChar),
    /// Read a block one byte at a time; one operation is one block's worth of bytes.
    GetChar(PerChar),
    /// Read a random block of the region (with replacement); `rewrite_pct` percent of them are
    /// changed and written back (bonnie++ "seeks").
    Seek { rewrite_pct: u8 },
    /// Create a file and write its contents (its `FileSpec::size`).
    Create,
    /// Stat a file, and read its contents when it has any.
    Stat,
    /// Delete a file.
    Delete,
    /// A whole-object operation (S3's verbs) on the phase's [`ObjectSpec`].
    Object(ObjectOp),
    /// An mdtest-class metadata operation on the items of the phase's [`TreeWork`].
    Meta(MetaOp),
}

/// The two meanings of "per-char" I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerChar {
    /// Through a block-sized user-space buffer, one function call per byte (stdio putc/getc, as
    /// bonnie and bonnie++ 1.0x): limited by the CPU.
    Buffered,
    /// One `write(2)`/`read(2)` system call per byte (bonnie++ 1.92 and later).
    Syscall,
}

impl Op {
    pub fn name(self) -> OpName {
        match self {
            Op::Write => OpName::Write,
            Op::Read => OpName::Read,
            Op::Rewrite => OpName::Rewrite,
            Op::ReadWrite { .. } => OpName::Readwrite,
            Op::PutChar(_) => OpName::Putc,
            Op::GetChar(_) => OpName::Getc,
            Op::Seek { .. } => OpName::Seek,
            Op::Create => OpName::Create,
            Op::Stat => OpName::Stat,
            Op::Delete => OpName::Delete,
            Op::Object(op) => op.name(),
            Op::Meta(op) => op.name(),
        }
    }

    /// The operations whose counts, bytes and latencies are kept apart within a phase (the
    /// mixed and versioned phases have five; every other phase one).
    pub fn classes(self) -> &'static [OpName] {
        match self {
            Op::Object(ObjectOp::Mixed | ObjectOp::Versioned) => &MIXED_NAMES,
            Op::Object(ObjectOp::Put) => &[OpName::Put],
            Op::Object(ObjectOp::Get) => &[OpName::Get],
            Op::Object(ObjectOp::Head) => &[OpName::Head],
            Op::Object(ObjectOp::Delete) => &[OpName::Delete],
            Op::Object(ObjectOp::List) => &[OpName::List],
            Op::Object(ObjectOp::Multipart) => &[OpName::Multipart],
            Op::Write => &[OpName::Write],
            Op::Read => &[OpName::Read],
            Op::Rewrite => &[OpName::Rewrite],
            Op::ReadWrite { .. } => &[OpName::Read, OpName::Write],
            Op::PutChar(_) => &[OpName::Putc],
            Op::GetChar(_) => &[OpName::Getc],
            Op::Seek { .. } => &[OpName::Seek],
            Op::Create => &[OpName::Create],
            Op::Stat => &[OpName::Stat],
            Op::Delete => &[OpName::Delete],
            Op::Meta(op) => op.classes(),
        }
    }

    /// Whether the operation writes file data.
    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Write
                | Op::Rewrite
                | Op::ReadWrite { .. }
                | Op::PutChar(_)
                | Op::Seek { .. }
                | Op::Create
                | Op::Meta(MetaOp::FileCreate)
                | Op::Object(
                    ObjectOp::Put | ObjectOp::Multipart | ObjectOp::Mixed | ObjectOp::Versioned
                )
        )
    }

    /// Whether the operation reads file data (and may be served by a cache).
    pub fn reads(self) -> bool {
        matches!(
            self,
            Op::Read
                | Op::Rewrite
                | Op::ReadWrite { .. }
                | Op::GetChar(_)
                | Op::Seek { .. }
                | Op::Stat
                | Op::Meta(MetaOp::FileRead)
                | Op::Object(ObjectOp::Get | ObjectOp::Mixed | ObjectOp::Versioned)
        )
    }

    /// Whether the operation works on many small files rather than blocks of a region.
    pub fn is_metadata(self) -> bool {
        matches!(self, Op::Create | Op::Stat | Op::Delete | Op::Meta(_))
    }
}

pub use iobm_stats::names::FsyncPolicy;

/// When a worker stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopRule {
    /// After one pass over its region.
    Once,
    /// When this much time has passed since the phase began, wrapping around its region.
    Duration(Duration),
    /// After this many operations in all, split evenly over the workers.
    Ops(u64),
    /// One pass, cut short by a stonewall with wear-out (mdtest `-W`, IOR `-D` with `-O
    /// stoneWallingWearOut=1`): when this much time has passed since the phase began, every
    /// worker stops at its next operation; then each goes on until it has done as many
    /// operations as the most any worker of any rank had done by then (or its pass ends), so
    /// that every worker did the same and later phases work on exactly what was made
    /// ([`crate::PhaseOutcome::items_done`]).
    Stonewall(Duration),
}

impl StopRule {
    /// Whether a worker makes one pass over its work (which a stonewall may cut short).
    pub fn one_pass(&self) -> bool {
        matches!(self, StopRule::Once | StopRule::Stonewall(_))
    }

    /// The series interval for a phase that stops by this rule when none was asked for
    /// (`--interval`): for a phase of known length the longest readable one (10ms, 20ms, 50ms,
    /// ... 1s) giving it at least 20 intervals, 10ms at the least; else 1s.
    pub fn default_interval(&self) -> Duration {
        const READABLE_MS: [u64; 7] = [1000, 500, 200, 100, 50, 20, 10];
        match self {
            StopRule::Duration(length) | StopRule::Stonewall(length) => READABLE_MS
                .iter()
                .map(|&ms| Duration::from_millis(ms))
                .find(|&i| *length >= i * 20)
                .unwrap_or(Duration::from_millis(10)),
            StopRule::Once | StopRule::Ops(_) => Duration::from_secs(1),
        }
    }
}

/// What written blocks contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// Random bytes, each 4 KiB stamped with (run id, file, offset): incompressible, not dedupable.
    Random,
    /// All zeros (compresses and deduplicates completely).
    Zero,
    /// Random and stamped, with this percentage of every 4 KiB set to zero.
    Compressible(u8),
    /// Random and stamped, with this percentage of the 4 KiB blocks repeating one of the
    /// first blocks of their file or object (fio's `dedupe_percentage`).
    Dedupe(u8),
}

impl DataKind {
    /// As results and `--data` name it: `random`, `zero`, `compressible:PCT`.
    pub fn name(self) -> String {
        match self {
            DataKind::Random => "random".into(),
            DataKind::Zero => "zero".into(),
            DataKind::Compressible(p) => format!("compressible:{p}"),
            DataKind::Dedupe(p) => format!("dedupe:{p}"),
        }
    }
}

/// One file of the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    pub name: String,
    pub size: u64,
}

/// The part of a file one worker owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Index into [`Layout::files`].
    pub file: usize,
    pub offset: u64,
    pub len: u64,
    /// Visit only the first `visit` blocks of the region's order, the same ones every pass
    /// (the blocks a time-limited random write reached); None: every block.
    pub visit: Option<u64>,
}

/// Files and which worker owns which region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub files: Vec<FileSpec>,
    /// One region per worker; regions never overlap.
    pub regions: Vec<Region>,
    /// The workers share one file (`--shared-file`), each in its own region.
    pub shared: bool,
}

impl Layout {
    /// The part of a run's layout that rank `rank` of `ranks` works on, `jobs` workers each:
    /// its own files (`data.G` for global worker G), or its regions of the one shared file.
    pub fn for_rank(shared: bool, rank: usize, ranks: usize, jobs: usize, size: u64) -> Layout {
        let first = rank * jobs;
        if shared {
            Layout {
                shared: true,
                files: vec![FileSpec {
                    name: "data.shared".to_string(),
                    size: size * (jobs * ranks) as u64,
                }],
                regions: (first..first + jobs)
                    .map(|g| Region {
                        file: 0,
                        offset: g as u64 * size,
                        len: size,
                        visit: None,
                    })
                    .collect(),
            }
        } else {
            Layout {
                shared: false,
                files: (first..first + jobs)
                    .map(|g| FileSpec {
                        name: format!("data.{g}"),
                        size,
                    })
                    .collect(),
                regions: (0..jobs)
                    .map(|w| Region {
                        file: w,
                        offset: 0,
                        len: size,
                        visit: None,
                    })
                    .collect(),
            }
        }
    }

    /// IOR's segmented shared file (`-s`, ior-hard's pattern), rank `rank`'s part: for
    /// segment s and global worker g of W, the `transfer` bytes at `(s * W + g) * transfer`
    /// are g's, so every worker's transfers interleave with the others'. As data, worker g's
    /// region is `[g, g + 1) * segments * transfer` of the file, contiguous, never overlapping
    /// another's; [`Phase::interleave`] (from [`Interleave::of`]) places each transfer of it
    /// where it goes in the file.
    pub fn strided(rank: usize, ranks: usize, jobs: usize, transfer: u64, segments: u64) -> Layout {
        Layout::for_rank(true, rank, ranks, jobs, transfer * segments)
    }

    /// One file per worker, each `size_per_worker` long.
    pub fn file_per_worker(workers: usize, size_per_worker: u64) -> Layout {
        Layout::for_rank(false, 0, 1, workers, size_per_worker)
    }

    /// One shared file; worker w owns bytes [w * size, (w + 1) * size).
    pub fn shared_file(workers: usize, size_per_worker: u64) -> Layout {
        Layout::for_rank(true, 0, 1, workers, size_per_worker)
    }

    /// Many small files for metadata phases: worker w takes files w, w + workers, ...; its
    /// region's `len` is the bytes of those files.
    pub fn many_files(workers: usize, files: Vec<FileSpec>) -> Layout {
        let regions = (0..workers)
            .map(|w| Region {
                file: w,
                offset: 0,
                len: files.iter().skip(w).step_by(workers).map(|f| f.size).sum(),
                visit: None,
            })
            .collect();
        Layout {
            files,
            regions,
            shared: false,
        }
    }

    pub fn workers(&self) -> usize {
        self.regions.len()
    }

    pub fn total_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.len).sum()
    }

    /// Bytes of the data set: every file's bytes the regions cover, once however many workers'
    /// regions cover them (bonnie's seekers share one file).
    pub fn data_bytes(&self) -> u64 {
        let mut spans: Vec<(usize, u64, u64)> = self
            .regions
            .iter()
            .map(|r| (r.file, r.offset, r.offset + r.len))
            .collect();
        spans.sort_unstable();
        let mut total = 0;
        let mut open: Option<(usize, u64, u64)> = None;
        for (file, start, end) in spans {
            match open {
                Some((f, s, e)) if f == file && start <= e => open = Some((f, s, e.max(end))),
                _ => {
                    total += open.map_or(0, |(_, s, e)| e - s);
                    open = Some((file, start, end));
                }
            }
        }
        total + open.map_or(0, |(_, s, e)| e - s)
    }
}

/// Where the transfers of a segmented shared file go ([`Layout::strided`]): a region's byte at
/// `x` of the layout is at [`Interleave::place`]`(x)` in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interleave {
    /// Bytes per transfer: any size (47008 in IO500), each operation one transfer.
    pub transfer: u64,
    /// Workers of every rank.
    pub workers: u64,
    pub segments: u64,
}

impl Interleave {
    /// The interleave of [`Layout::strided`]'s layout for `workers` workers of every rank.
    pub fn of(workers: usize, transfer: u64, segments: u64) -> Interleave {
        Interleave {
            transfer,
            workers: workers as u64,
            segments,
        }
    }

    /// Where byte `x` of the layout's regions is in the file: worker `g`'s region holds its
    /// transfers of segments 0, 1, ... one after the other; transfer s of g is at
    /// `(s * workers + g) * transfer`.
    pub fn place(&self, x: u64) -> u64 {
        let per_worker = self.segments * self.transfer;
        let (g, within) = (x / per_worker, x % per_worker);
        let (s, byte) = (within / self.transfer, within % self.transfer);
        (s * self.workers + g) * self.transfer + byte
    }
}

/// One phase of a workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Name shown in reports: `write`, `read`, ...
    pub name: String,
    pub op: Op,
    /// Bytes per operation.
    pub block: u64,
    pub pattern: Pattern,
    pub fsync: FsyncPolicy,
    /// Open with `O_DIRECT`.
    pub direct: bool,
    /// Before the phase (untimed), flush the files and drop their pages from the page cache.
    pub drop_cache: bool,
    /// Before the phase (untimed), drop the whole system's page cache when running as root
    /// (sync; `drop_caches`), else the phase's files' pages (`--drop-caches`).
    pub drop_system_cache: bool,
    /// Open files for writing emptied (each of bonnie++'s write tests starts from an empty file);
    /// only for files written by one worker.
    pub truncate: bool,
    pub stop: StopRule,
    pub data: DataKind,
    pub layout: Layout,
    /// Check every 4 KiB read back for the stamp of the run with this id (`--verify`): the
    /// block is where it belongs and was written by that run.
    pub verify: Option<u64>,
    /// Workers running the phase: one per region of the layout for file phases (set from it by
    /// [`Phase::new`]), the concurrency of an object phase.
    pub workers: usize,
    /// The objects of an object phase ([`Op::Object`]).
    pub objects: Option<ObjectSpec>,
    /// Failed operations are counted and the phase goes on, until more than this many failed
    /// (the phase then fails); 0: the first failure fails the phase.
    pub max_errors: u64,
    /// Reads and writes each worker keeps in flight (`--iodepth`); more than 1 needs
    /// [`Engine::IoUring`].
    pub iodepth: u32,
    /// How a worker submits its reads and writes.
    pub engine: Engine,
    /// `posix_fadvise` on each file right after it is opened (`--fadvise`).
    pub fadvise: Option<Fadvise>,
    /// `madvise` on each mapping of [`Engine::Mmap`] right after it is made (`--madvise`).
    pub madvise: Option<Madvise>,
    /// Each worker's thread pinned to the list's CPU in turn (`--cpus`, `--numa`).
    pub cpus: Option<crate::pin::CpuList>,
    /// A warm-up at the start of a phase that stops by time (fio's `ramp_time`): operations
    /// that end within it are done but not counted (no bytes, latency or series), and the
    /// worker's span starts when it ends; the phase runs its duration after it.
    pub ramp: Duration,
    /// Length of one interval of the phase's series (`--interval`).
    pub interval: Duration,
    /// The namespace and items of a metadata phase ([`Op::Meta`]).
    pub tree: Option<TreeWork>,
    /// Transfers placed interleaved in a shared file ([`Layout::strided`]); the block is then
    /// the transfer size.
    pub interleave: Option<Interleave>,
    /// `--until-stable`: a phase that stops by time ends once its rate is steady.
    pub steady: Option<crate::steady::Steady>,
    /// The walk of a find phase ([`MetaOp::Find`]).
    pub find: Option<FindWork>,
    /// Open loop (`--rate`): each worker starts its operations at its share of this rate,
    /// whether or not the last returned. None: closed loop, each as the last returns.
    pub pace: Option<crate::pace::Pace>,
    /// Where each worker's buffers live ([`Placement::AlignedHost`] unless the run says).
    pub memory: iobm_target::memory::Placement,
    /// When a block phase's worker opens its file: before the phase, untimed (iobm's own
    /// phases), or inside its time, as IOR times its open and create (IO500's ior phases).
    pub opening: Opening,
    /// `--think` and `--burst`: the idle time between a worker's operations. None: none.
    pub rhythm: Option<crate::rhythm::Rhythm>,
    /// A replayed trace (`iobm replay`): each worker's stream of reads and writes, in the
    /// books of a read-write phase ([`Op::ReadWrite`]).
    pub replay: Option<std::sync::Arc<Replay>>,
}

/// When a block phase's worker opens its file ([`Phase::opening`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Before the phase starts, untimed: the file exists.
    Before,
    /// Inside the worker's time: the file exists (IOR's open, and its open of a shared file
    /// rank 0 created).
    Timed,
    /// Created inside the worker's time, failing if it exists (IOR's create of a file per
    /// process); only a write of a file of its own.
    TimedCreate,
}

pub use iobm_stats::names::{Engine, Fadvise, Madvise};

impl Phase {
    /// A phase of `op` in `block`-byte operations over `layout`, with the common settings:
    /// sequential, buffered, no fsync, one pass, random data, no verification, stopped by its
    /// first failure. Callers change what differs (`Phase { fsync, ..Phase::new(...) }`).
    pub fn new(name: impl Into<String>, op: Op, block: u64, layout: Layout) -> Phase {
        Phase {
            name: name.into(),
            op,
            block,
            pattern: Pattern::Sequential,
            fsync: FsyncPolicy::Never,
            direct: false,
            drop_cache: false,
            drop_system_cache: false,
            truncate: false,
            stop: StopRule::Once,
            data: DataKind::Random,
            verify: None,
            workers: layout.workers(),
            objects: None,
            max_errors: 0,
            ramp: Duration::ZERO,
            interval: Duration::from_secs(1),
            iodepth: 1,
            engine: Engine::Sync,
            fadvise: None,
            madvise: None,
            cpus: None,
            tree: None,
            interleave: None,
            steady: None,
            find: None,
            pace: None,
            memory: iobm_target::memory::Placement::AlignedHost,
            opening: Opening::Before,
            rhythm: None,
            replay: None,
            layout,
        }
    }

    /// A phase of `op` over IOR's segmented shared file ([`Layout::strided`]), one transfer
    /// per operation.
    pub fn strided(
        name: impl Into<String>,
        op: Op,
        rank: usize,
        ranks: usize,
        jobs: usize,
        transfer: u64,
        segments: u64,
    ) -> Phase {
        let layout = Layout::strided(rank, ranks, jobs, transfer, segments);
        Phase {
            interleave: Some(Interleave::of(ranks * jobs, transfer, segments)),
            ..Phase::new(name, op, transfer, layout)
        }
    }

    /// A metadata phase: the tree's workers of this rank doing `op` on `work`'s items, one
    /// pass; `block` is the bytes each created file is written or each read file read.
    pub fn meta(name: impl Into<String>, op: MetaOp, work: TreeWork) -> Phase {
        let no_files = Layout {
            files: Vec::new(),
            regions: Vec::new(),
            shared: false,
        };
        Phase {
            workers: work.tree.jobs,
            tree: Some(work.clone()),
            ..Phase::new(name, Op::Meta(op), work.bytes, no_files)
        }
    }

    /// An object phase: `workers` workers doing `op` on `spec`'s objects until `stop`.
    pub fn objects(op: ObjectOp, workers: usize, spec: ObjectSpec, stop: StopRule) -> Phase {
        let block = spec.size.bounds().1;
        let no_files = Layout {
            files: Vec::new(),
            regions: Vec::new(),
            shared: false,
        };
        Phase {
            pattern: Pattern::Random { seed: 0 },
            stop,
            workers,
            objects: Some(spec),
            ..Phase::new(op.name(), Op::Object(op), block, no_files)
        }
    }

    /// Restricts this phase to the data an earlier write phase really wrote, when that write
    /// stopped by time before covering a worker's region: a sequential write wrote a prefix; a
    /// random one wrote the first blocks of its order, which this phase then repeats (it must
    /// use the same block size and order, as `stream` does).
    pub fn limit_to_written(&mut self, write: &Phase, bytes_written: &[u64]) {
        for (region, &written) in self.layout.regions.iter_mut().zip(bytes_written) {
            if written >= region.len {
                continue;
            }
            match write.pattern {
                Pattern::Sequential => region.len = written / self.block * self.block,
                Pattern::Random { .. } | Pattern::Skewed { .. } => {
                    debug_assert!(
                        self.block == write.block && self.pattern.seed() == write.pattern.seed()
                    );
                    region.visit = Some(written / write.block);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
