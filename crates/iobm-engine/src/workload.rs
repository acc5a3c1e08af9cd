//! Workloads as data: a phase says what every worker does (operation, block size, order,
//! flushing, stop rule) over a layout of files and per-worker regions.

use std::time::Duration;

/// The operation a phase repeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Write,
    Read,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Read => "read",
        }
    }
}

/// The order in which a worker visits the blocks of its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Sequential,
    /// Every block once per pass, in a random order drawn from this seed.
    Random { seed: u64 },
}

/// When written data is forced to stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    Never,
    /// Once per worker after its last write, inside its timed interval.
    End,
    /// After every write, inside that operation's latency (bonnie++ -b).
    Each,
}

/// When a worker stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopRule {
    /// After one pass over its region.
    Once,
    /// When this much time has passed since the phase began, wrapping around its region.
    Duration(Duration),
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
}

/// Files and which worker owns which region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub files: Vec<FileSpec>,
    /// One region per worker; regions never overlap.
    pub regions: Vec<Region>,
}

impl Layout {
    /// One file per worker, each `size_per_worker` long.
    pub fn file_per_worker(workers: usize, size_per_worker: u64) -> Layout {
        Layout {
            files: (0..workers)
                .map(|w| FileSpec {
                    name: format!("data.{w}"),
                    size: size_per_worker,
                })
                .collect(),
            regions: (0..workers)
                .map(|w| Region {
                    file: w,
                    offset: 0,
                    len: size_per_worker,
                })
                .collect(),
        }
    }

    /// One shared file; worker w owns bytes [w * size, (w + 1) * size).
    pub fn shared_file(workers: usize, size_per_worker: u64) -> Layout {
        Layout {
            files: vec![FileSpec {
                name: "data.shared".to_string(),
                size: size_per_worker * workers as u64,
            }],
            regions: (0..workers)
                .map(|w| Region {
                    file: 0,
                    offset: w as u64 * size_per_worker,
                    len: size_per_worker,
                })
                .collect(),
        }
    }

    pub fn workers(&self) -> usize {
        self.regions.len()
    }

    pub fn total_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.len).sum()
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
    pub stop: StopRule,
    pub data: DataKind,
    pub layout: Layout,
}
