//! What one worker of a metadata phase does per operation: bonnie's files of the layout, or
//! mdtest's items of a tree ([`crate::workload::tree`]), one file or directory each.

use crate::data::{file_key, DataSource};
use crate::permute::Permutation;
use crate::task::Task;
use crate::tasks::{verifier, Verifier};
use crate::workload::{FsyncPolicy, MetaOp, Op, Pattern, Phase, TreeWork};
use iobm_target::memory::HostBuf;
use iobm_target::{Access, OpenOptions, Target};
use std::io;

/// The files a metadata task works on.
enum Items<'a> {
    /// bonnie's: this worker's files of the layout (indices), in order or permuted.
    Files {
        mine: Vec<usize>,
        order: Option<Permutation>,
    },
    /// mdtest's: `count` items of `owner`'s in the tree, named as they are prepared.
    Tree {
        work: &'a TreeWork,
        op: MetaOp,
        owner: usize,
        count: u64,
    },
}

/// One worker of a metadata phase: a file or directory per operation, its name made (into
/// a buffer kept for the phase) and a created file's bytes generated before it is timed.
pub(crate) struct MetaTask<'a> {
    target: &'a dyn Target,
    phase: &'a Phase,
    items: Items<'a>,
    data: Option<DataSource>,
    buf: HostBuf,
    /// The prepared operation's file or directory, and a rename's new name.
    name: String,
    to: String,
    /// The prepared file's bytes to write or read.
    size: u64,
    /// A read's check of every byte against what was written (IO500's mdtest-hard-read, -X).
    verify: Option<Verifier>,
    /// Time spent checking the last read.
    verify_ns: u64,
}

impl<'a> MetaTask<'a> {
    /// Worker `index`'s task: its share of the layout's files (bonnie) or its items of the
    /// phase's tree (mdtest), `seed` ordering a random pass.
    pub(crate) fn new(
        target: &'a dyn Target,
        phase: &'a Phase,
        index: usize,
        seed: u64,
        data: Option<DataSource>,
        buf: HostBuf,
    ) -> Result<MetaTask<'a>, (io::Error, String)> {
        let items = match (phase.op, &phase.tree) {
            (Op::Meta(op), Some(work)) => Items::Tree {
                work,
                op,
                owner: work.owner(op, index),
                count: work.count(op, index),
            },
            (Op::Meta(_), None) => {
                let e = io::Error::new(io::ErrorKind::InvalidInput, "no tree");
                return Err((e, format!("{} without a tree", phase.name)));
            }
            _ => {
                let workers = phase.workers;
                let mine: Vec<usize> = (index..phase.layout.files.len()).step_by(workers).collect();
                let order = match phase.pattern {
                    Pattern::Random { seed: s } | Pattern::Skewed { seed: s, .. } => {
                        Some(Permutation::new(mine.len() as u64, s ^ seed))
                    }
                    Pattern::Sequential => None,
                };
                Items::Files { mine, order }
            }
        };
        Ok(MetaTask {
            target,
            phase,
            items,
            data,
            buf,
            name: String::with_capacity(256),
            to: String::with_capacity(256),
            size: 0,
            verify: verifier(phase),
            verify_ns: 0,
        })
    }
}

impl MetaTask<'_> {
    /// Creates the prepared file, writes its bytes in `phase.block` chunks (the first already
    /// made when `first_ready`) and closes it.
    fn create(&mut self, first_ready: bool) -> io::Result<()> {
        let (chunk, direct) = (self.phase.block, self.phase.direct);
        let access = Access::Create;
        let mut handle = self
            .target
            .open(&self.name, OpenOptions { access, direct })?;
        let mut offset = 0;
        while offset < self.size {
            let len = chunk.min(self.size - offset) as usize;
            let data = self.data.as_mut().expect("creators have data");
            if !(first_ready && offset == 0) {
                data.prepare(file_key(&self.name), offset);
            }
            handle.write_at(&data.get()[..len], offset)?;
            offset += len as u64;
        }
        // As bonnie++: created files are synced only under "fsync after every write".
        if self.phase.fsync == FsyncPolicy::Each {
            handle.sync()?;
        }
        handle.close()
    }

    /// Opens the prepared file and reads `len` bytes of it in `phase.block` chunks.
    fn read(&mut self, len: u64) -> io::Result<()> {
        let (chunk, direct) = (self.phase.block, self.phase.direct);
        let access = Access::Read;
        let mut handle = self
            .target
            .open(&self.name, OpenOptions { access, direct })?;
        let mut offset = 0;
        while offset < len {
            let n = chunk.min(len - offset) as usize;
            handle.read_at(&mut self.buf[..n], offset)?;
            self.check(n, offset)?;
            offset += n as u64;
        }
        handle.close()
    }

    /// Checks the `n` bytes just read at `offset` against what was written there (as mdtest's
    /// -X, inside the read: its time is the phase's, taken out of the operation's latency).
    fn check(&mut self, n: usize, offset: u64) -> io::Result<()> {
        let Some(verifier) = self.verify.as_mut() else {
            return Ok(());
        };
        let checking = std::time::Instant::now();
        let checked = verifier.check(
            &self.buf[..n],
            file_key(&self.name),
            offset,
            &self.phase.layout,
        );
        self.verify_ns += checking.elapsed().as_nanos() as u64;
        checked.map_err(|what| io::Error::new(io::ErrorKind::InvalidData, what))
    }
}

impl Task for MetaTask<'_> {
    fn prepare(&mut self, i: u64) -> bool {
        match &self.items {
            Items::Files { mine, order } => {
                if i >= mine.len() as u64 {
                    return false;
                }
                let k = order.as_ref().map_or(i, |p| p.get(i));
                let file = &self.phase.layout.files[mine[k as usize]];
                self.name.clear();
                self.name.push_str(&file.name);
                self.size = file.size;
            }
            &Items::Tree {
                work,
                op,
                owner,
                count,
            } => {
                if i >= count {
                    return false;
                }
                work.write_name(op, owner, i, &mut self.name, &mut self.to);
                self.size = work.bytes;
                if op == MetaOp::FileCreate && self.size > 0 {
                    let data = self.data.as_mut().expect("creators have data");
                    data.prepare(file_key(&self.name), 0);
                }
            }
        }
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        let t = self.target;
        let name = self.name.as_str();
        match self.phase.op {
            Op::Create => self.create(false)?,
            Op::Stat => {
                let len = t.len(name)?;
                if len > 0 {
                    self.read(len)?;
                }
            }
            Op::Delete => t.remove(name)?,
            Op::Meta(op) => match op {
                MetaOp::DirCreate | MetaOp::TreeCreate => t.create_dir(name)?,
                MetaOp::DirStat | MetaOp::FileStat => {
                    t.stat(name)?;
                }
                MetaOp::DirRemove | MetaOp::TreeRemove => t.remove_dir(name)?,
                MetaOp::FileCreate => self.create(true)?,
                MetaOp::FileRead => self.read(self.size)?,
                MetaOp::FileRename => t.rename(name, &self.to)?,
                MetaOp::FileRemove => t.remove(name)?,
                MetaOp::Find => unreachable!("find runs as FindTask"),
            },
            _ => unreachable!("byte ops run as BlockTask"),
        }
        Ok(match self.phase.op {
            Op::Create | Op::Stat | Op::Meta(MetaOp::FileCreate | MetaOp::FileRead) => self.size,
            _ => 0,
        })
    }

    fn describe(&self) -> String {
        match self.phase.op {
            Op::Meta(MetaOp::FileRename) => format!("rename {} to {}", self.name, self.to),
            op => format!("{} {}", op.name(), self.name),
        }
    }

    fn take_verify_ns(&mut self) -> u64 {
        std::mem::take(&mut self.verify_ns)
    }

    /// With `--fsync end` a phase creating items syncs the file system they are on at each
    /// worker's end, inside its time (mdtest's `-Y`, which IO500's writes use).
    fn finish(&mut self) -> io::Result<u64> {
        let creates = matches!(
            self.phase.op,
            Op::Meta(MetaOp::FileCreate | MetaOp::DirCreate | MetaOp::TreeCreate)
        );
        if !creates || self.phase.fsync != FsyncPolicy::End {
            return Ok(0);
        }
        let syncing = std::time::Instant::now();
        self.target.sync_all()?;
        Ok(syncing.elapsed().as_nanos() as u64)
    }
}
