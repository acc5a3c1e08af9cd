//! Unit tests of the order in which a metadata phase's workers go through a tree of several
//! item directories, as the target saw each worker's calls: one directory at a time, as
//! mdtest (its items in a directory are consecutive), never round-robin across them.

use super::*;
use crate::workload::{ItemsPer, MetaOp, Tree, TreeWork};
use iobm_target::mem::MemTarget;
use iobm_target::OpenOptions;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::thread::ThreadId;

/// A memory target recording, per calling thread (one per worker), the paths its creations
/// and removals named, in order.
struct Recorded {
    inner: MemTarget,
    calls: Mutex<BTreeMap<String, Vec<(ThreadId, String)>>>,
}

impl Recorded {
    fn note(&self, call: &str, name: &str) {
        let mut calls = self.calls.lock().unwrap();
        let id = std::thread::current().id();
        calls
            .entry(call.into())
            .or_default()
            .push((id, name.into()));
    }
}

impl Target for Recorded {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.inner.capabilities()
    }
    fn open(&self, name: &str, o: OpenOptions) -> io::Result<Box<dyn iobm_target::Handle>> {
        self.note("open", name);
        self.inner.open(name, o)
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.inner.len(name)
    }
    fn objects(&self, w: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
        self.inner.objects(w)
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.note("remove", name);
        self.inner.remove(name)
    }
    fn create_dir(&self, name: &str) -> io::Result<()> {
        self.note("create_dir", name);
        self.inner.create_dir(name)
    }
    fn remove_dir(&self, name: &str) -> io::Result<()> {
        self.note("remove_dir", name);
        self.inner.remove_dir(name)
    }
    fn stat(&self, name: &str) -> io::Result<iobm_target::Stat> {
        self.inner.stat(name)
    }
}

/// The directories a worker's successive calls were in, one entry per run of calls in the
/// same directory.
fn runs(paths: &[&str]) -> Vec<String> {
    let mut runs: Vec<String> = Vec::new();
    for path in paths {
        let dir = path.rsplit_once('/').unwrap().0.to_string();
        if runs.last() != Some(&dir) {
            runs.push(dir);
        }
    }
    runs
}

/// Two workers in a shared tree of depth 1 and branch 3 (4 item directories), 8 items each
/// (mdtest `-n 8`): each worker's creations, then its removals, of files and of directories
/// visit each directory once, 2 items in each, in the tree's order.
#[test]
fn each_worker_creates_and_removes_its_items_one_directory_at_a_time() {
    let target = Recorded {
        inner: MemTarget::new(),
        calls: Mutex::default(),
    };
    let tree = Tree {
        base: "mdt".into(),
        depth: 1,
        branch: 3,
        items: 8,
        per: ItemsPer::Worker,
        unique: false,
        leaves_only: false,
        ranks: 1,
        jobs: 2,
    };
    let work = TreeWork::new(tree, 0);
    let control = Control::new(3, 2);
    let phases = [
        MetaOp::TreeCreate,
        MetaOp::DirCreate,
        MetaOp::FileCreate,
        MetaOp::FileRemove,
        MetaOp::DirRemove,
    ];
    for op in phases {
        let phase = Phase::meta(op.name(), op, work.clone());
        let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
        assert_eq!(out.end, PhaseEnd::Completed, "{op:?}: {:?}", out.errors);
    }
    let dirs = ["mdt", "mdt/b0", "mdt/b1", "mdt/b2"];
    let calls = target.calls.lock().unwrap();
    for (call, prefix) in [
        ("open", "f."),
        ("remove", "f."),
        ("create_dir", "d."),
        ("remove_dir", "d."),
    ] {
        let mut by_worker: HashMap<ThreadId, Vec<&str>> = HashMap::new();
        for (id, path) in &calls[call] {
            if path.rsplit('/').next().unwrap().starts_with(prefix) {
                by_worker.entry(*id).or_default().push(path);
            }
        }
        assert_eq!(by_worker.len(), 2, "{call}: two workers");
        for paths in by_worker.values() {
            assert_eq!(paths.len(), 8, "{call}: {paths:?}");
            assert_eq!(runs(paths), dirs, "{call}: {paths:?}");
        }
    }
}
