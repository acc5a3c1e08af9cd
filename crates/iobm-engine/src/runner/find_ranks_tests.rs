//! Unit tests of a find whose ranks steal work from each other: ranks as threads of this
//! process (`iobm_dist::LocalPeers`), each running the phase as a rank would, over one tree
//! whose every entry lies below rank 0's starting directory. What each rank examined is what
//! the target saw it do, not what the runner counted.

use super::*;
use crate::workload::FindWork;
use iobm_dist::{LocalPeers, Peers};
use iobm_target::mem::MemTarget;
use iobm_target::{DirEntry, OpenOptions, Stat};
use std::collections::BTreeMap;
use std::io;
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// What the ranks did to one tree, as the target saw it: each stat (every file is one: all
/// match) and each listing, by rank.
struct Seen {
    tree: MemTarget,
    stats: Mutex<Vec<(usize, String)>>,
    listed: Mutex<Vec<(usize, String)>>,
    /// Rank 0's stats wait until another rank has made one (or `HOLD` has passed since the
    /// first waited): a rank 0 that keeps all the work shows however fast it is.
    hold_rank_0: bool,
    held_since: Mutex<Option<Instant>>,
}

/// How long rank 0 waits for another rank to take work before going on alone (only a broken
/// stealing waits that long).
const HOLD: Duration = Duration::from_secs(20);

impl Seen {
    fn others_stats(&self) -> bool {
        self.stats.lock().unwrap().iter().any(|(r, _)| *r != 0)
    }
}

/// The target as one rank sees it: `Seen`'s, its calls marked with the rank.
struct AsRank<'a>(&'a Seen, usize);

impl Target for AsRank<'_> {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.0.tree.capabilities()
    }
    fn open(&self, name: &str, o: OpenOptions) -> io::Result<Box<dyn iobm_target::Handle>> {
        self.0.tree.open(name, o)
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.0.tree.len(name)
    }
    fn objects(&self, w: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
        self.0.tree.objects(w)
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.0.tree.remove(name)
    }
    fn stat(&self, name: &str) -> io::Result<Stat> {
        if self.1 == 0 && self.0.hold_rank_0 {
            let since = *self
                .0
                .held_since
                .lock()
                .unwrap()
                .get_or_insert_with(Instant::now);
            while !self.0.others_stats() && since.elapsed() < HOLD {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        (self.0.stats.lock().unwrap()).push((self.1, name.to_string()));
        self.0.tree.stat(name)
    }
    fn list_dir(&self, name: &str) -> io::Result<Vec<DirEntry>> {
        (self.0.listed.lock().unwrap()).push((self.1, name.to_string()));
        self.0.tree.list_dir(name)
    }
}

fn file(t: &dyn Target, name: &str) {
    let create = OpenOptions {
        access: iobm_target::Access::Create,
        direct: false,
    };
    t.open(name, create).unwrap().close().unwrap();
}

/// One root, "big": 200 files and four subdirectories of 50 (400 files, 5 directories).
fn tree() -> (MemTarget, Vec<String>, Vec<String>) {
    let mem = MemTarget::new();
    let mut files = Vec::new();
    let mut dirs = vec!["big".to_string()];
    mem.create_dir("big").unwrap();
    for d in 0..4 {
        dirs.push(format!("big/d{d}"));
        mem.create_dir(&dirs[d + 1]).unwrap();
        files.extend((0..50).map(|i| format!("big/d{d}/f.{i}")));
    }
    files.extend((0..200).map(|i| format!("big/f.{i}")));
    for f in &files {
        file(&mem, f);
    }
    (mem, files, dirs)
}

/// Runs the find on `ranks` ranks of `jobs` workers, all starting from "big" (rank 0's, as
/// root 0 is global worker 0's): the operations each rank's runner counted.
fn run_ranks(seen: &Seen, ranks: usize, jobs: usize) -> Vec<u64> {
    let peers = LocalPeers::ranks(ranks as u32);
    let gate = Barrier::new(ranks);
    std::thread::scope(|s| {
        let handles: Vec<_> = (peers.iter().enumerate())
            .map(|(rank, peers)| {
                let gate = &gate;
                s.spawn(move || {
                    let work = FindWork {
                        roots: vec!["big".into()],
                        rank,
                        ranks,
                        jobs,
                        name_contains: String::new(),
                        size: Some(0),
                    };
                    let ranked = Ranked {
                        gate: &|| {
                            gate.wait();
                        },
                        peers: Some(peers as &dyn Peers),
                        ..Ranked::ALONE
                    };
                    let control = Control::new(1, jobs);
                    let out = run_phase(
                        &AsRank(seen, rank),
                        &Phase::find("find", work),
                        &control,
                        &ranked,
                    );
                    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
                    out.workers.iter().map(|w| w.span.ops).sum::<u64>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// How many times each name was seen, and by how many ranks.
fn by_rank(calls: &[(usize, String)], ranks: usize) -> (BTreeMap<String, usize>, Vec<usize>) {
    let mut times = BTreeMap::new();
    let mut per_rank = vec![0; ranks];
    for (rank, name) in calls {
        *times.entry(name.clone()).or_default() += 1;
        per_rank[*rank] += 1;
    }
    (times, per_rank)
}

fn check_once(seen: &Seen, files: &[String], dirs: &[String], ranks: usize) -> Vec<usize> {
    let (stats, per_rank) = by_rank(&seen.stats.lock().unwrap(), ranks);
    let (listed, _) = by_rank(&seen.listed.lock().unwrap(), ranks);
    let mut want: Vec<&String> = files.iter().collect();
    want.sort();
    assert_eq!(
        stats.keys().collect::<Vec<_>>(),
        want,
        "every file examined"
    );
    assert!(stats.values().all(|&n| n == 1), "a file examined twice");
    let mut want: Vec<&String> = dirs.iter().collect();
    want.sort();
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        want,
        "every directory listed"
    );
    assert!(listed.values().all(|&n| n == 1), "a directory listed twice");
    per_rank
}

/// Rank 1 starts with nothing; rank 0 holds the whole tree and waits until another rank has
/// examined a file: rank 1 must have stolen work, and every file is examined exactly once.
#[test]
fn a_rank_without_starting_directories_steals_from_the_rank_that_has_them() {
    let (tree, files, dirs) = tree();
    let seen = Seen {
        tree,
        stats: Mutex::default(),
        listed: Mutex::default(),
        hold_rank_0: true,
        held_since: Mutex::default(),
    };
    let counted = run_ranks(&seen, 2, 1);
    let per_rank = check_once(&seen, &files, &dirs, 2);
    assert!(per_rank[1] > 0, "rank 1 examined nothing: {per_rank:?}");
    // The runner's operations are the files each rank's target saw examined.
    assert_eq!(
        counted,
        per_rank.iter().map(|&n| n as u64).collect::<Vec<_>>()
    );
}

/// Three ranks of two workers, rank 0 holding the tree: the walk ends on every rank, each file
/// examined and each directory listed exactly once.
#[test]
fn three_ranks_of_two_workers_examine_every_file_once() {
    for _ in 0..5 {
        let (tree, files, dirs) = tree();
        let seen = Seen {
            tree,
            stats: Mutex::default(),
            listed: Mutex::default(),
            hold_rank_0: false,
            held_since: Mutex::default(),
        };
        let counted = run_ranks(&seen, 3, 2);
        let per_rank = check_once(&seen, &files, &dirs, 3);
        assert_eq!(
            counted,
            per_rank.iter().map(|&n| n as u64).collect::<Vec<_>>()
        );
    }
}
