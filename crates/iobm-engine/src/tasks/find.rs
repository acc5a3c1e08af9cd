//! What one worker of a find phase does per operation: one file examined, its name matched and,
//! when the name matches, its size asked (a stat). The workers of a process share one walk
//! ([`Walk`]): directories to list and listed entries wait in one queue, and a worker with
//! nothing left takes from it (pfind's work stealing, within the process); across ranks, a
//! rank with nothing left steals from the others (`ranks.rs`).

mod ranks;

use crate::task::Task;
use crate::workload::find::FindWork;
use iobm_dist::Peers;
use iobm_target::Target;
pub(crate) use ranks::serving;
use ranks::{Across, Link};
use std::io;
use std::sync::{Condvar, Mutex};

/// An entry listed: its path inside the target, whether a directory.
type Entry = (String, bool);

/// The most entries of a listed directory handed out as one piece of work.
const MOST_PER_PIECE: usize = 256;

/// What a worker takes from the walk: a directory to list, or entries listed by another.
enum Piece {
    Dir(String),
    Entries(Vec<Entry>),
}

/// The queue a rank's workers share, and how many of them hold work (a worker waiting for work
/// ends once the queue is empty and no one holds any: nothing more can come).
#[derive(Default)]
struct Queue {
    pieces: Vec<Piece>,
    holding: usize,
    across: Across,
}

/// One find phase's walk on one process, shared by its workers.
pub(crate) struct Walk<'a> {
    queue: Mutex<Queue>,
    changed: Condvar,
    /// The workers sharing it, to size the pieces a large directory is cut into.
    workers: usize,
    /// The other ranks it steals work from and gives work to, when there are any to reach.
    link: Option<Link<'a>>,
}

impl<'a> Walk<'a> {
    /// The walk of this rank's roots, the first listed first, sharing work with `peers`' other
    /// ranks where there are any.
    pub(crate) fn new(work: &FindWork, peers: Option<&'a dyn Peers>) -> Walk<'a> {
        let pieces = work
            .rank_roots()
            .into_iter()
            .rev()
            .map(Piece::Dir)
            .collect();
        Walk {
            queue: Mutex::new(Queue {
                pieces,
                ..Queue::default()
            }),
            changed: Condvar::new(),
            workers: work.jobs.max(1),
            link: peers.filter(|p| p.size() > 1).map(|peers| Link { peers }),
        }
    }

    /// Work for a worker that has none (it held some if `held`), waiting while others may
    /// still queue more; None once the walk is done.
    fn take(&self, held: bool) -> Option<Piece> {
        let mut queue = self.queue.lock().unwrap();
        if held {
            queue.holding -= 1;
        }
        loop {
            if let Some(piece) = queue.pieces.pop() {
                queue.holding += 1;
                return Some(piece);
            }
            if queue.holding == 0 {
                // Alone, or every rank done: nothing more can come.
                match &self.link {
                    Some(link) if !queue.across.done => link.idle(&mut queue),
                    _ => {
                        self.changed.notify_all();
                        return None;
                    }
                }
            }
            queue = self.changed.wait(queue).unwrap();
        }
    }

    /// Queues work for the others.
    fn give(&self, pieces: impl IntoIterator<Item = Piece>) {
        let mut queue = self.queue.lock().unwrap();
        queue.pieces.extend(pieces);
        if let Some(link) = &self.link {
            link.queued(&mut queue);
        }
        if !queue.pieces.is_empty() {
            self.changed.notify_all();
        }
    }

    /// A worker that stops holding work without taking more (its phase ended early).
    fn leave(&self) {
        self.queue.lock().unwrap().holding -= 1;
        self.changed.notify_all();
    }

    /// How many entries of a directory of `n` a piece holds: a few pieces per worker, so that
    /// one large directory is shared out evenly.
    fn piece_len(&self, n: usize) -> usize {
        (n / (4 * self.workers)).clamp(1, MOST_PER_PIECE)
    }
}

/// One worker's part of the walk: the entries it holds, not yet examined.
pub(crate) struct FindTask<'a> {
    target: &'a dyn Target,
    work: &'a FindWork,
    walk: &'a Walk<'a>,
    /// Entries held, the next last.
    entries: Vec<Entry>,
    /// Whether this worker holds work (counted in the walk's `holding`).
    holding: bool,
    /// A listing that failed while the next file was sought, failing the next operation.
    failed: Option<io::Error>,
    /// The entry the last operation examined, for error messages.
    current: String,
    /// Whether the last operation's entry matched.
    matched: bool,
}

impl<'a> FindTask<'a> {
    pub(crate) fn new(
        target: &'a dyn Target,
        work: &'a FindWork,
        walk: &'a Walk<'a>,
    ) -> FindTask<'a> {
        FindTask {
            target,
            work,
            walk,
            entries: Vec::new(),
            holding: false,
            failed: None,
            current: String::new(),
            matched: false,
        }
    }

    /// Holds a file to examine next (queueing the directories met), or false once the walk is
    /// done. A listing that fails is kept for the next operation.
    fn seek_file(&mut self) -> bool {
        loop {
            match self.entries.last() {
                Some((_, false)) => return true,
                Some((_, true)) => {
                    let (dir, _) = self.entries.pop().unwrap();
                    self.walk.give([Piece::Dir(dir)]);
                    continue;
                }
                None => {}
            }
            let Some(piece) = self.walk.take(self.holding) else {
                self.holding = false;
                return false;
            };
            self.holding = true;
            match piece {
                Piece::Entries(entries) => self.entries = entries,
                Piece::Dir(dir) => {
                    if let Err(e) = self.list(&dir) {
                        self.current = dir;
                        self.failed = Some(e);
                        return true;
                    }
                }
            }
        }
    }

    /// Lists `dir`, keeps its first piece and queues the rest for the other workers.
    fn list(&mut self, dir: &str) -> io::Result<()> {
        let mut listed: Vec<Entry> = (self.target.list_dir(dir)?.into_iter())
            .map(|e| match dir {
                "" => (e.name, e.dir),
                _ => (format!("{dir}/{}", e.name), e.dir),
            })
            .collect();
        let len = self.walk.piece_len(listed.len());
        let rest = listed.split_off(len.min(listed.len()));
        let pieces =
            (rest.chunks(len)).map(|piece| Piece::Entries(piece.iter().rev().cloned().collect()));
        self.walk.give(pieces);
        // Examined in the order listed.
        listed.reverse();
        self.entries = listed;
        Ok(())
    }
}

impl Task for FindTask<'_> {
    /// Finds the next file to examine, taking work from the shared walk (and listing the
    /// directories it meets) between operations, inside the worker's time.
    fn prepare(&mut self, _i: u64) -> bool {
        self.seek_file()
    }

    fn execute(&mut self) -> io::Result<u64> {
        self.matched = false;
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        if let Some((path, _)) = self.entries.pop() {
            let name = path.rsplit('/').next().unwrap_or(&path);
            if self.work.name_matches(name) {
                self.matched = match self.work.size {
                    Some(size) => self.target.stat(&path)?.len == size,
                    None => true,
                };
            }
            self.current = path;
        }
        Ok(0)
    }

    fn describe(&self) -> String {
        format!("find {}", self.current)
    }

    /// The files the operation found that match (0 or 1), as the phase's keys.
    fn keys(&self) -> u64 {
        u64::from(self.matched)
    }

    fn finish(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}

impl Drop for FindTask<'_> {
    /// A worker ended before the walk was done (a failed operation, Ctrl-C) lets the others
    /// that wait for work end too.
    fn drop(&mut self) {
        if self.holding {
            self.walk.leave();
        }
    }
}
