//! Unit tests of what IO500's suite needs of the runner: the find walk, a stonewalled write and
//! the later phases limited to what the wall let be made.

use super::*;
use crate::workload::{FindWork, FsyncPolicy, ItemsPer, MetaOp, Opening, Tree, TreeWork};
use iobm_target::mem::MemTarget;
use iobm_target::posix::PosixTarget;
use iobm_target::OpenOptions;
use std::time::Duration;

fn file(t: &dyn Target, name: &str, len: usize) {
    let create = OpenOptions {
        access: iobm_target::Access::Create,
        direct: false,
    };
    let mut h = t.open(name, create).unwrap();
    h.write_at(&vec![7u8; len], 0).unwrap();
    h.close().unwrap();
}

/// Three roots, one with a subdirectory: 8 entries, 7 files (pfind's `total_files`, find's
/// operations), of which 2 match (their names contain "01" and they hold 3901 bytes); "f.101"
/// is too short, "x01" is a directory.
fn namespace(t: &dyn Target) {
    for dir in ["a", "a/x01", "b", "c"] {
        t.create_dir(dir).unwrap();
    }
    file(t, "a/f.01", 3901);
    file(t, "a/f.2", 3901);
    file(t, "a/x01/f.301", 3901);
    file(t, "a/x01/f.101", 10);
    file(t, "b/g.0", 0);
    file(t, "b/g.1", 0);
    file(t, "c/h", 0);
}

fn find(jobs: usize) -> Phase {
    Phase::find(
        "find",
        FindWork {
            roots: vec!["a".into(), "b".into(), "c".into()],
            rank: 0,
            ranks: 1,
            jobs,
            name_contains: "01".into(),
            size: Some(3901),
        },
    )
}

#[test]
fn find_examines_every_file_below_its_roots_once_and_counts_the_matches() {
    let mem = MemTarget::new();
    namespace(&mem);
    let dir = tempfile::tempdir().unwrap();
    let posix = PosixTarget::new(dir.path());
    namespace(&posix);
    for (target, jobs) in [
        (&mem as &dyn Target, 1),
        (&mem, 2),
        (&posix, 3),
        (&posix, 5),
    ] {
        let control = Control::new(1, jobs);
        let out = run_phase(target, &find(jobs), &control, &Ranked::ALONE);
        assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
        let examined: u64 = out.workers.iter().map(|w| w.span.ops).sum();
        assert_eq!(examined, 7, "{jobs} workers");
        assert_eq!(out.by_op[0].keys, 2, "{jobs} workers");
    }
}

#[test]
fn find_fails_on_a_root_that_is_not_there() {
    let mem = MemTarget::new();
    mem.create_dir("a").unwrap();
    let out = run_phase(&mem, &find(1), &Control::new(1, 1), &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert!(out.errors[0].first.contains("find b"), "{:?}", out.errors);
}

/// A write of `blocks` 4 KiB transfers per worker in `dir`, each worker its own file.
fn write(dir: &str, jobs: usize, blocks: u64) -> Phase {
    let mut layout = Layout::file_per_worker(jobs, blocks * 4096);
    for f in &mut layout.files {
        f.name = format!("{dir}/{}", f.name);
    }
    Phase::new("write", Op::Write, 4096, layout)
}

#[test]
fn a_stonewalled_write_wears_out_to_the_most_of_every_rank_and_its_reads_read_that() {
    let mem = MemTarget::new();
    mem.create_dir("easy").unwrap();
    mem.create_dir("other").unwrap();
    let jobs = 3;
    let phase = Phase {
        stop: StopRule::Stonewall(Duration::ZERO),
        ..write("easy", jobs, 100)
    };
    prepare_objects(&mem, &phase.layout).unwrap();
    let control = Control::new(1, jobs);
    // The wall stops every worker before its first transfer; another rank had written 6.
    let out = run_phase(
        &mem,
        &phase,
        &control,
        &Ranked {
            agree: &|most| most.max(6),
            ..Ranked::ALONE
        },
    );
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    assert_eq!(out.items_done(), Some(6));
    for f in &phase.layout.files {
        assert_eq!(mem.len(&f.name).unwrap(), 6 * 4096, "{}", f.name);
    }
    let read = Phase::new("read", Op::Read, 4096, phase.layout.clone());
    let mut later = [read.clone(), read.clone(), read.clone()];
    // Another directory's files, and transfers of another size, are not the write's.
    let other = Phase::new("read", Op::Read, 4096, write("other", jobs, 100).layout);
    later[1] = other;
    later[2].block = 8192;
    for p in &mut later {
        p.limit_to_made(&phase, 6);
    }
    assert!(later[0].layout.regions.iter().all(|r| r.len == 6 * 4096));
    assert!(later[1].layout.regions.iter().all(|r| r.len == 100 * 4096));
    assert!(later[2].layout.regions.iter().all(|r| r.len == 100 * 4096));
    let read = run_phase(&mem, &later[0], &control, &Ranked::ALONE);
    assert_eq!(read.end, PhaseEnd::Completed, "{:?}", read.errors);
    assert_eq!(read.bytes(), 3 * 6 * 4096);
}

#[test]
fn a_stonewalled_interleaved_write_limits_the_read_of_its_shared_file() {
    let mem = MemTarget::new();
    let (jobs, transfer, segments) = (2, 1000, 50);
    let mut phase = Phase {
        stop: StopRule::Stonewall(Duration::ZERO),
        ..Phase::strided("hard", Op::Write, 0, 1, jobs, transfer, segments)
    };
    phase.layout.files[0].name = "hard/data.shared".into();
    mem.create_dir("hard").unwrap();
    prepare_objects(&mem, &phase.layout).unwrap();
    let control = Control::new(1, jobs);
    let out = run_phase(
        &mem,
        &phase,
        &control,
        &Ranked {
            agree: &|most| most.max(3),
            ..Ranked::ALONE
        },
    );
    assert_eq!(out.items_done(), Some(3));
    // Segments 0, 1 and 2 of both workers: the file's first 6 transfers.
    assert_eq!(mem.len("hard/data.shared").unwrap(), 6 * transfer);
    let mut read = Phase {
        op: Op::Read,
        stop: StopRule::Once,
        ..phase.clone()
    };
    read.limit_to_made(&phase, 3);
    let back = run_phase(&mem, &read, &control, &Ranked::ALONE);
    assert_eq!(back.end, PhaseEnd::Completed, "{:?}", back.errors);
    assert_eq!(back.bytes(), 6 * transfer);
}

fn shared(base: &str) -> TreeWork {
    TreeWork::new(
        Tree {
            base: base.into(),
            depth: 0,
            branch: 1,
            items: 10,
            per: ItemsPer::Worker,
            unique: false,
            leaves_only: false,
            ranks: 1,
            jobs: 2,
        },
        0,
    )
}

#[test]
fn a_creation_limits_only_the_phases_of_its_own_tree() {
    let create = Phase::meta("create", MetaOp::FileCreate, shared("easy"));
    let mut own = Phase::meta("stat", MetaOp::FileStat, shared("easy"));
    let mut other = Phase::meta("stat", MetaOp::FileStat, shared("hard"));
    own.limit_to_made(&create, 4);
    other.limit_to_made(&create, 4);
    assert_eq!(own.tree.unwrap().limit, Some(4));
    assert_eq!(other.tree.unwrap().limit, None);
}

/// mdtest-hard's shared tree of 2 workers with 5 files of 3901 bytes each, made.
fn made(target: &dyn Target, control: &Control) -> TreeWork {
    let work = TreeWork {
        bytes: 3901,
        ..TreeWork::new(
            Tree {
                items: 5,
                ..shared("hard").tree
            },
            0,
        )
    };
    for op in [MetaOp::TreeCreate, MetaOp::FileCreate] {
        let phase = Phase::meta(op.name(), op, work.clone());
        let out = run_phase(target, &phase, control, &Ranked::ALONE);
        assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    }
    work
}

/// mdtest-hard-read of `work`, checking what it reads against run `verify`'s data (-X), its
/// mismatches counted as mdtest counts them.
fn read_back(target: &dyn Target, work: &TreeWork, verify: Option<u64>) -> PhaseOutcome {
    let phase = Phase {
        verify,
        max_errors: u64::MAX,
        ..Phase::meta("read", MetaOp::FileRead, work.clone())
    };
    run_phase(target, &phase, &Control::new(7, 2), &Ranked::ALONE)
}

fn failed(out: &PhaseOutcome) -> u64 {
    out.errors.iter().map(|e| e.count).sum()
}

#[test]
fn a_verified_mdtest_read_checks_every_byte_of_each_file_inside_the_workers_time() {
    let mem = MemTarget::new();
    let work = made(&mem, &Control::new(7, 2));
    let good = read_back(&mem, &work, Some(7));
    assert_eq!(good.end, PhaseEnd::Completed, "{:?}", good.errors);
    assert_eq!(failed(&good), 0, "{:?}", good.errors);
    assert_eq!(good.bytes(), 10 * 3901);
    assert!(good.workers.iter().all(|w| w.verify_ns > 0));
    // One byte of one file changed: the checked read counts it, the unchecked one does not.
    let (mut name, mut to) = (String::new(), String::new());
    work.write_name(MetaOp::FileRead, 1, 3, &mut name, &mut to);
    let mut h = mem
        .open(
            &name,
            OpenOptions {
                access: iobm_target::Access::Write,
                direct: false,
            },
        )
        .unwrap();
    let mut byte = [0u8];
    h.read_at(&mut byte, 3900).unwrap();
    h.write_at(&[byte[0] ^ 1], 3900).unwrap();
    h.close().unwrap();
    let bad = read_back(&mem, &work, Some(7));
    assert_eq!(bad.end, PhaseEnd::Completed, "{:?}", bad.errors);
    assert_eq!(failed(&bad), 1, "{:?}", bad.errors);
    assert!(bad.errors[0].first.contains(&name), "{:?}", bad.errors);
    assert!(bad.errors[0].first.contains("not what was written"));
    assert_eq!(failed(&read_back(&mem, &work, None)), 0);
    // Another run's data: every file differs.
    assert_eq!(failed(&read_back(&mem, &work, Some(8))), 10);
}

/// A memory target that counts its syncs of everything, each taking 20 ms.
struct Syncs(MemTarget, std::sync::atomic::AtomicU64);

impl Target for Syncs {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.0.capabilities()
    }
    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn iobm_target::Handle>> {
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
    fn stat(&self, name: &str) -> io::Result<iobm_target::Stat> {
        self.0.stat(name)
    }
    fn sync_all(&self) -> io::Result<()> {
        self.1.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
        Ok(())
    }
}

#[test]
fn a_creation_with_fsync_end_syncs_the_file_system_inside_each_workers_time() {
    let target = Syncs(MemTarget::new(), Default::default());
    // A tree and its files made with --fsync never: no sync.
    made(&target, &Control::new(7, 2));
    assert_eq!(target.1.load(Ordering::SeqCst), 0);
    let tree = Phase::meta("tree", MetaOp::TreeCreate, shared("easy"));
    let control = Control::new(7, 2);
    run_phase(&target, &tree, &control, &Ranked::ALONE);
    let phase = Phase {
        fsync: FsyncPolicy::End,
        ..Phase::meta("create", MetaOp::FileCreate, shared("easy"))
    };
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    // Synced once per worker, at its end.
    assert_eq!(target.1.load(Ordering::SeqCst), 2);
    for w in &out.workers {
        assert!(w.final_sync_ns >= 20_000_000, "{}", w.final_sync_ns);
        assert!(w.span.end_ns - w.span.start_ns >= w.final_sync_ns);
    }
}

/// A memory target whose every open takes 100 ms.
struct SlowOpen(MemTarget);

impl Target for SlowOpen {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.0.capabilities()
    }
    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn iobm_target::Handle>> {
        std::thread::sleep(Duration::from_millis(100));
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
}

#[test]
fn a_timed_open_is_inside_each_workers_time_and_a_timed_create_makes_the_file() {
    let target = SlowOpen(MemTarget::new());
    target.create_dir("easy").unwrap();
    let jobs = 2;
    let control = Control::new(1, jobs);
    let create = Phase {
        opening: Opening::TimedCreate,
        ..write("easy", jobs, 4)
    };
    // No file before the phase: each worker creates its own inside its time.
    let out = run_phase(&target, &create, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    for w in &out.workers {
        assert!(
            w.span.end_ns - w.span.start_ns >= 100_000_000,
            "{:?}",
            w.span
        );
    }
    assert!(create
        .layout
        .files
        .iter()
        .all(|f| target.len(&f.name).unwrap() == 4 * 4096));
    let read = Phase {
        opening: Opening::Timed,
        ..Phase::new("read", Op::Read, 4096, create.layout.clone())
    };
    let back = run_phase(&target, &read, &control, &Ranked::ALONE);
    assert_eq!(back.end, PhaseEnd::Completed, "{:?}", back.errors);
    assert_eq!(back.bytes(), 2 * 4 * 4096);
    for w in &back.workers {
        assert!(
            w.span.end_ns - w.span.start_ns >= 100_000_000,
            "{:?}",
            w.span
        );
    }
    // A timed create of a file that is there fails the phase, naming the open.
    let again = run_phase(&target, &create, &control, &Ranked::ALONE);
    assert_eq!(again.end, PhaseEnd::Failed);
    assert!(
        again.errors[0].first.contains("open easy/"),
        "{:?}",
        again.errors
    );
}

/// A memory target whose every stat takes `STAT` (a slow metadata server), so that a walk lasts
/// long enough for every worker to be running while there is work left.
struct SlowStat(MemTarget);

const STAT: Duration = Duration::from_micros(200);

impl Target for SlowStat {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.0.capabilities()
    }
    fn open(&self, name: &str, o: OpenOptions) -> std::io::Result<Box<dyn iobm_target::Handle>> {
        self.0.open(name, o)
    }
    fn len(&self, name: &str) -> std::io::Result<u64> {
        self.0.len(name)
    }
    fn objects(&self, w: usize) -> std::io::Result<Box<dyn iobm_target::Objects + '_>> {
        self.0.objects(w)
    }
    fn remove(&self, name: &str) -> std::io::Result<()> {
        self.0.remove(name)
    }
    fn stat(&self, name: &str) -> std::io::Result<iobm_target::Stat> {
        std::thread::sleep(STAT);
        self.0.stat(name)
    }
    fn list_dir(&self, name: &str) -> std::io::Result<Vec<iobm_target::DirEntry>> {
        self.0.list_dir(name)
    }
}

/// mdtest-hard's shape: one root holding 400 of the 408 files, four roots of 2; every file
/// matches, so each is a stat. Four workers of one process share the walk: each examines
/// between an eighth and a half of the files (the old fixed split gave one worker 400).
#[test]
fn find_workers_share_a_skewed_tree() {
    let mem = MemTarget::new();
    let mut roots = vec!["big".to_string()];
    mem.create_dir("big").unwrap();
    for i in 0..400 {
        file(&mem, &format!("big/f.{i}"), 0);
    }
    for r in 0..4 {
        let root = format!("s{r}");
        mem.create_dir(&root).unwrap();
        file(&mem, &format!("{root}/a"), 0);
        file(&mem, &format!("{root}/b"), 0);
        roots.push(root);
    }
    let work = FindWork {
        roots,
        rank: 0,
        ranks: 1,
        jobs: 4,
        name_contains: String::new(),
        size: Some(0),
    };
    let control = Control::new(1, 4);
    let target = SlowStat(mem);
    let out = run_phase(
        &target,
        &Phase::find("find", work),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    let ops: Vec<u64> = out.workers.iter().map(|w| w.span.ops).collect();
    assert_eq!(ops.iter().sum::<u64>(), 408, "{ops:?}");
    assert_eq!(out.by_op[0].keys, 408);
    for &n in &ops {
        assert!(
            (408 / 8..=408 / 2).contains(&n),
            "a worker examined {n} of 408: {ops:?}"
        );
    }
}
