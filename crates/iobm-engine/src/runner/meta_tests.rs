//! Unit tests of metadata phases through the runner: mdtest's phases over tree shapes on the
//! memory and POSIX targets, strides across ranks, and the stonewall with wear-out.

use super::*;
use crate::workload::{ItemsPer, MetaOp, Tree, TreeWork};
use iobm_target::mem::MemTarget;
use iobm_target::posix::PosixTarget;
use iobm_target::{Handle, OpenOptions, Stat};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

fn tree(depth: u32, branch: u32, items: u64, unique: bool, ranks: usize, jobs: usize) -> Tree {
    Tree {
        base: "mdt".into(),
        depth,
        branch,
        items,
        per: ItemsPer::Directory,
        unique,
        leaves_only: false,
        ranks,
        jobs,
    }
}

fn run(target: &dyn Target, op: MetaOp, work: &TreeWork, control: &Control) -> PhaseOutcome {
    let phase = Phase::meta(op.name(), op, work.clone());
    run_phase(target, &phase, control, &Ranked::ALONE)
}

/// Every file and directory under `root`, relative to it.
fn on_disk(root: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut files, mut dirs) = (BTreeSet::new(), BTreeSet::new());
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            if path.is_dir() {
                dirs.insert(rel);
                todo.push(path);
            } else {
                files.insert(rel);
            }
        }
    }
    (files, dirs)
}

/// mdtest's phases in its order on one rank; checks each phase's operations and what the
/// namespace holds after the creations. Returns the item count per worker.
fn every_phase(target: &dyn Target, shape: Tree, listing: &dyn Fn() -> (usize, usize)) -> u64 {
    let control = Control::new(7, shape.jobs);
    let workers = shape.jobs as u64;
    let per_worker = shape.items_per_worker();
    let trees = if shape.unique { workers } else { 1 };
    let dirs = shape.dirs();
    let mut work = TreeWork {
        bytes: 3901,
        ..TreeWork::new(shape, 0)
    };
    let ops = |out: &PhaseOutcome| out.workers.iter().map(|w| w.span.ops).sum::<u64>();
    let expect = |op: MetaOp, work: &TreeWork, n: u64| {
        let out = run(target, op, work, &control);
        assert_eq!(
            out.end,
            PhaseEnd::Completed,
            "{}: {:?}",
            op.name(),
            out.errors
        );
        assert_eq!(ops(&out), n, "{}", op.name());
        assert_eq!(
            out.latency.count(),
            n,
            "{}: every operation timed",
            op.name()
        );
        assert_eq!(out.by_op[0].name, op.name());
        assert_eq!(out.items_done(), None);
        out
    };
    expect(MetaOp::TreeCreate, &work, trees * dirs);
    assert_eq!(listing(), (0, (trees * dirs) as usize));
    expect(MetaOp::DirCreate, &work, workers * per_worker);
    assert_eq!(
        listing(),
        (0, ((trees * dirs) + workers * per_worker) as usize)
    );
    expect(MetaOp::DirStat, &work, workers * per_worker);
    expect(MetaOp::DirRemove, &work, workers * per_worker);
    let created = expect(MetaOp::FileCreate, &work, workers * per_worker);
    assert_eq!(created.bytes(), workers * per_worker * 3901);
    assert_eq!(
        listing(),
        ((workers * per_worker) as usize, (trees * dirs) as usize)
    );
    expect(MetaOp::FileStat, &work, workers * per_worker);
    let read = expect(MetaOp::FileRead, &work, workers * per_worker);
    assert_eq!(read.bytes(), created.bytes());
    expect(MetaOp::FileRename, &work, workers * per_worker);
    work.renamed = true;
    expect(MetaOp::FileStat, &work, workers * per_worker);
    expect(MetaOp::FileRemove, &work, workers * per_worker);
    assert_eq!(listing(), (0, (trees * dirs) as usize));
    expect(MetaOp::TreeRemove, &work, trees * dirs);
    assert_eq!(listing(), (0, 0));
    per_worker
}

#[test]
fn every_mdtest_phase_on_a_shared_tree_in_memory() {
    let target = MemTarget::new();
    let listing = || (target.names().len(), target.dir_names().len());
    // 3 workers, 7 directories, 2 items of each worker in each.
    assert_eq!(
        every_phase(&target, tree(2, 2, 2, false, 1, 3), &listing),
        14
    );
}

#[test]
fn every_mdtest_phase_on_a_tree_per_worker_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let target = PosixTarget::new(dir.path());
    let listing = || {
        let (files, dirs) = on_disk(dir.path());
        (files.len(), dirs.len())
    };
    assert_eq!(every_phase(&target, tree(1, 3, 2, true, 1, 2), &listing), 8);
    let one = Tree {
        per: ItemsPer::Worker,
        ..tree(0, 0, 5, false, 1, 1)
    };
    assert_eq!(every_phase(&target, one, &listing), 5);
}

#[test]
fn the_files_on_disk_are_the_shapes_names_and_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let target = PosixTarget::new(dir.path());
    let shape = tree(2, 2, 1, false, 1, 2);
    let work = TreeWork {
        bytes: 47,
        ..TreeWork::new(shape.clone(), 0)
    };
    let control = Control::new(1, 2);
    run(&target, MetaOp::TreeCreate, &work, &control);
    let out = run(&target, MetaOp::FileCreate, &work, &control);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    let (files, dirs) = on_disk(dir.path());
    // depth x branch x items: 7 directories, one file of each of the 2 workers in each.
    assert_eq!(dirs.len(), 7);
    assert_eq!(files.len(), 7 * 2);
    let (mut name, mut to) = (String::new(), String::new());
    for g in 0..2 {
        for i in 0..7 {
            work.write_name(MetaOp::FileCreate, g, i, &mut name, &mut to);
            assert!(files.contains(&name), "{name} not in {files:?}");
            assert_eq!(std::fs::metadata(dir.path().join(&name)).unwrap().len(), 47);
        }
    }
    assert!(dirs.contains("mdt/b1/b0"));
    // A creation leaves no flush for the end: its first operation's end is kept (warp's
    // window needs it).
    for w in &out.workers {
        assert!(w.span.first_op_end_ns > w.span.start_ns, "{:?}", w.span);
    }
}

#[test]
fn a_stride_stats_what_the_next_rank_made_and_never_its_own() {
    // Two ranks of two workers on one target; only rank 0 creates.
    let target = MemTarget::new();
    let shape = tree(0, 0, 3, false, 2, 2);
    let control = Control::new(1, 2);
    let rank0 = TreeWork::new(shape.clone(), 0);
    let stride = |rank| TreeWork {
        stride: 1,
        ..TreeWork::new(shape.clone(), rank)
    };
    assert_eq!(
        run(&target, MetaOp::TreeCreate, &rank0, &control).end,
        PhaseEnd::Completed
    );
    assert_eq!(
        run(&target, MetaOp::FileCreate, &rank0, &control).end,
        PhaseEnd::Completed
    );
    assert_eq!(target.names().len(), 6);
    // Rank 1 stats rank 0's files; rank 0 those of rank 1, which made none.
    let theirs = run(&target, MetaOp::FileStat, &stride(1), &control);
    assert_eq!(theirs.end, PhaseEnd::Completed, "{:?}", theirs.errors);
    assert_eq!(theirs.latency.count(), 6);
    let own = run(&target, MetaOp::FileStat, &stride(0), &control);
    assert_eq!(own.end, PhaseEnd::Failed);
    assert_eq!(own.errors[0].kind, "NotFound", "{:?}", own.errors);
    assert!(own.errors[0].first.contains("f.2.") || own.errors[0].first.contains("f.3."));
    // And removes them: nothing is left of rank 0's.
    let removed = run(&target, MetaOp::FileRemove, &stride(1), &control);
    assert_eq!(removed.end, PhaseEnd::Completed, "{:?}", removed.errors);
    assert!(target.names().is_empty());
}

/// A memory target whose file creations take a while, longer for worker 1's (`f.1.*`).
struct Slow(MemTarget);

impl Target for Slow {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.0.capabilities()
    }
    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        let micros = if name.contains("/f.1.") { 1000 } else { 100 };
        std::thread::sleep(Duration::from_micros(micros));
        self.0.open(name, options)
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.0.len(name)
    }
    fn objects(&self, worker: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
        self.0.objects(worker)
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.0.remove(name)
    }
    fn create_dir(&self, name: &str) -> io::Result<()> {
        self.0.create_dir(name)
    }
    fn stat(&self, name: &str) -> io::Result<Stat> {
        self.0.stat(name)
    }
}

#[test]
fn a_stonewall_stops_every_worker_and_wears_out_to_the_most_any_did() {
    let target = Slow(MemTarget::new());
    // A pass would take at least 10 s; the wall comes after 20 ms.
    let shape = Tree {
        per: ItemsPer::Worker,
        ..tree(0, 0, 10_000, false, 1, 3)
    };
    let work = TreeWork::new(shape, 0);
    let control = Control::new(1, 3);
    run(&target, MetaOp::TreeCreate, &work, &control);
    let phase = Phase {
        stop: StopRule::Stonewall(Duration::from_millis(20)),
        ..Phase::meta("create", MetaOp::FileCreate, work.clone())
    };
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    let wall = out.stonewall.clone().expect("a stonewall's record");
    let at_wall: Vec<u64> = wall.at_wall.iter().map(|n| n.expect("stopped")).collect();
    let most = *at_wall.iter().max().unwrap();
    assert!(most < 10_000, "{at_wall:?}");
    assert_eq!(wall.wear_out, Some(most));
    assert_eq!(out.items_done(), Some(most));
    // Every worker did as many as the most by the wall: the slow one went on after it.
    for w in &out.workers {
        assert_eq!((w.items, w.span.ops), (most, most));
    }
    assert_eq!(target.0.names().len() as u64, 3 * most);
    // Later phases work on exactly what was made.
    let made = TreeWork {
        limit: out.items_done(),
        ..work
    };
    let stat = run(&target, MetaOp::FileStat, &made, &control);
    assert_eq!(
        (stat.end, stat.latency.count()),
        (PhaseEnd::Completed, 3 * most)
    );
    let removed = run(&target, MetaOp::FileRemove, &made, &control);
    assert_eq!(removed.end, PhaseEnd::Completed, "{:?}", removed.errors);
    assert!(target.0.names().is_empty());
}

/// A stonewall at the start stops every worker before its first item; the agreement says
/// another rank's worker had made `theirs`, which every worker then makes.
fn wall_at_start(target: &dyn Target, jobs: usize, theirs: u64) -> PhaseOutcome {
    let shape = Tree {
        per: ItemsPer::Worker,
        ..tree(1, 2, 20, false, 2, jobs)
    };
    let work = TreeWork::new(shape, 0);
    let control = Control::new(1, jobs);
    run(target, MetaOp::TreeCreate, &work, &control);
    let phase = Phase {
        stop: StopRule::Stonewall(Duration::ZERO),
        ..Phase::meta("create", MetaOp::FileCreate, work)
    };
    let asked = std::sync::Mutex::new(Vec::new());
    let agree = |most: u64| {
        asked.lock().unwrap().push(most);
        most.max(theirs)
    };
    let out = run_phase(
        target,
        &phase,
        &control,
        &Ranked {
            agree: &agree,
            ..Ranked::ALONE
        },
    );
    assert_eq!(
        *asked.lock().unwrap(),
        [0],
        "agreed once, from what this rank did"
    );
    out
}

#[test]
fn the_wear_out_goes_to_the_most_of_every_rank_in_memory_and_on_disk() {
    let mem = MemTarget::new();
    let out = wall_at_start(&mem, 3, 7);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    assert_eq!(out.stonewall.as_ref().unwrap().at_wall, [Some(0); 3]);
    assert_eq!(out.items_done(), Some(7));
    assert!(out.workers.iter().all(|w| w.items == 7 && w.span.ops == 7));
    assert_eq!(mem.names().len(), 3 * 7);
    // One worker alone, on the coordinating thread, on a real file system.
    let dir = tempfile::tempdir().unwrap();
    let posix = PosixTarget::new(dir.path());
    let out = wall_at_start(&posix, 1, 5);
    assert_eq!(out.items_done(), Some(5));
    assert_eq!(out.workers[0].items, 5);
    let (files, _) = on_disk(dir.path());
    let names: BTreeSet<String> = files
        .iter()
        .map(|f| f.rsplit('/').next().unwrap().into())
        .collect();
    let expected: BTreeSet<String> = (0..5).map(|i| format!("f.0.{i}")).collect();
    assert_eq!(names, expected);
}

#[test]
fn a_wall_never_reached_leaves_every_item_made() {
    let target = MemTarget::new();
    let shape = Tree {
        per: ItemsPer::Worker,
        ..tree(0, 0, 4, false, 1, 2)
    };
    let work = TreeWork::new(shape, 0);
    let control = Control::new(1, 2);
    run(&target, MetaOp::TreeCreate, &work, &control);
    let phase = Phase {
        stop: StopRule::Stonewall(Duration::from_secs(3600)),
        ..Phase::meta("create", MetaOp::FileCreate, work)
    };
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(out.stonewall.as_ref().unwrap().at_wall, [None, None]);
    assert_eq!(out.items_done(), Some(4));
    assert_eq!(target.names().len(), 8);
}
