//! Unit tests of the per-object operations of a worker over an in-memory store.

use crate::runner::{run_phase, Ranked};
use crate::workload::{Mix, ObjectOp, ObjectSpec, Phase, StopRule};
use crate::{Control, PhaseEnd};
use iobm_stats::names::Picks;
use iobm_stats::sizes::SizeDist;
use iobm_target::fault::FaultTarget;
use iobm_target::mem::MemTarget;
use iobm_target::objects::STAMP_LEN;
use iobm_target::Target;
use std::collections::BTreeMap;
use std::io;
use std::sync::Mutex;

/// An in-memory store that notes the name of every GET, and (`wrong_etag`) answers with an
/// ETag that is no MD5 of anything sent.
#[derive(Default)]
struct Spy {
    inner: MemTarget,
    wrong_etag: bool,
    gets: Mutex<Vec<String>>,
}

struct SpySession<'a> {
    inner: Box<dyn iobm_target::Objects + 'a>,
    spy: &'a Spy,
}

impl iobm_target::Objects for SpySession<'_> {
    fn put(&mut self, name: &str, body: &iobm_target::Body<'_>) -> io::Result<()> {
        self.inner.put(name, body)
    }
    fn last_etag(&self) -> Option<&str> {
        match self.spy.wrong_etag {
            true => Some("0123456789abcdef0123456789abcdef"),
            false => self.inner.last_etag(),
        }
    }
    fn get(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        self.spy.gets.lock().unwrap().push(name.to_string());
        self.inner.get(name, range, sink)
    }
    fn head(&mut self, name: &str) -> io::Result<u64> {
        self.inner.head(name)
    }
    fn delete(&mut self, name: &str) -> io::Result<()> {
        self.inner.delete(name)
    }
    fn list(&mut self, after: Option<&str>, max: u32) -> io::Result<iobm_target::ListPage> {
        self.inner.list(after, max)
    }
}

impl Target for Spy {
    fn capabilities(&self) -> iobm_target::Capabilities {
        self.inner.capabilities()
    }
    fn open(
        &self,
        name: &str,
        options: iobm_target::OpenOptions,
    ) -> io::Result<Box<dyn iobm_target::Handle>> {
        self.inner.open(name, options)
    }
    fn len(&self, name: &str) -> io::Result<u64> {
        self.inner.len(name)
    }
    fn objects(&self, worker: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
        Ok(Box::new(SpySession {
            inner: self.inner.objects(worker)?,
            spy: self,
        }))
    }
    fn remove(&self, name: &str) -> io::Result<()> {
        self.inner.remove(name)
    }
}

#[test]
fn verify_of_a_put_checks_the_etag_against_what_was_sent() {
    let control = Control::new(4, 2);
    let mut put = Phase::objects(ObjectOp::Put, 2, spec(0), StopRule::Ops(6));
    put.verify = Some(4);
    // The in-memory store gives no ETag: nothing to check.
    assert_eq!(
        run_phase(&MemTarget::new(), &put, &control, &Ranked::ALONE).end,
        PhaseEnd::Completed
    );
    let spy = Spy {
        wrong_etag: true,
        ..Spy::default()
    };
    let wrong = run_phase(&spy, &put, &control, &Ranked::ALONE);
    assert_eq!(wrong.end, PhaseEnd::Failed);
    assert!(
        wrong.errors[0]
            .first
            .contains("not the MD5 of what was sent"),
        "{}",
        wrong.errors[0].first
    );
}

fn spec(count: u64) -> ObjectSpec {
    ObjectSpec {
        count,
        size: SizeDist::Uniform {
            min: 10_000,
            max: 50_000,
        },
        range: None,
        part_size: 16_384,
        part_concurrency: 2,
        mix: Mix::default(),
        page_keys: 10,
        delete_batch: 1,
        retries: 0,
        max_new: None,
        picks: Picks::Random,
        access: iobm_stats::access::AccessDist::Uniform,
    }
}

/// How many times each object was read, and how many reads were of one read before.
fn reads_of(gets: &[String]) -> (BTreeMap<&str, u64>, usize) {
    let mut times = BTreeMap::new();
    for name in gets {
        *times.entry(name.as_str()).or_insert(0) += 1;
    }
    let repeats = gets.len() - times.len();
    (times, repeats)
}

#[test]
fn reads_by_count_pick_each_object_once_per_pass_in_a_shuffled_order_with_once() {
    let control = Control::new(7, 3);
    let (spy, objects) = (Spy::default(), 40);
    let put = Phase::objects(ObjectOp::Put, 3, spec(objects), StopRule::Once);
    assert_eq!(
        run_phase(&spy, &put, &control, &Ranked::ALONE).end,
        PhaseEnd::Completed
    );
    let read = |picks, workers, ops| {
        spy.gets.lock().unwrap().clear();
        let spec = ObjectSpec {
            picks,
            ..spec(objects)
        };
        let get = Phase::objects(ObjectOp::Get, workers, spec, StopRule::Ops(ops));
        let outcome = run_phase(&spy, &get, &control, &Ranked::ALONE);
        assert_eq!(outcome.end, PhaseEnd::Completed, "{:?}", outcome.errors);
        std::mem::take(&mut *spy.gets.lock().unwrap())
    };
    // As many reads as objects by three workers: each object once.
    let once = read(Picks::Once, 3, objects);
    let (times, repeats) = reads_of(&once);
    assert_eq!((times.len(), repeats), (objects as usize, 0), "{once:?}");
    // Two and a half passes: every object two or three times, never more.
    let passes = read(Picks::Once, 3, 100);
    let (times, _) = reads_of(&passes);
    assert!(times.values().all(|&n| n == 2 || n == 3), "{times:?}");
    assert_eq!(times.values().filter(|&&n| n == 3).count(), 20);
    // One worker's two passes: each shuffled, the second otherwise than the first.
    let two = read(Picks::Once, 1, 2 * objects);
    let (first, second) = two.split_at(objects as usize);
    let stored: Vec<String> = (0..objects).map(|k| format!("obj.{k}")).collect();
    assert_ne!(first, stored);
    assert_ne!(first, second);
    assert_eq!(reads_of(first).1 + reads_of(second).1, 0);
    // At random with replacement, some reads of 40 repeat an object (about 1 in e).
    let random = read(Picks::Random, 3, objects);
    let (_, repeats) = reads_of(&random);
    assert!(repeats > 0);
}

#[test]
fn a_batch_delete_removes_every_object_once_in_requests_of_n() {
    let target = MemTarget::new();
    let control = Control::new(42, 3);
    let spec = ObjectSpec {
        delete_batch: 10,
        ..spec(95)
    };
    let put = Phase::objects(ObjectOp::Put, 3, spec.clone(), StopRule::Once);
    assert_eq!(
        run_phase(&target, &put, &control, &Ranked::ALONE).by_op[0].ops,
        95
    );
    let delete = run_phase(
        &target,
        &Phase::objects(ObjectOp::Delete, 3, spec, StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    let deletes = &delete.by_op[0];
    // 10 requests: nine of 10 objects and one of 5, each counted once, with its keys.
    assert_eq!((deletes.ops, deletes.keys), (10, 95));
    assert!(delete.errors.is_empty());
    assert!(target.names().is_empty(), "{:?}", target.names());
}

#[test]
fn put_get_head_delete_move_every_object_once() {
    let target = MemTarget::new();
    let control = Control::new(42, 4);
    let spec = spec(23);
    let put = run_phase(
        &target,
        &Phase::objects(ObjectOp::Put, 4, spec.clone(), StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(put.end, PhaseEnd::Completed, "{:?}", put.errors);
    assert_eq!(put.by_op[0].ops, 23);
    assert_eq!(put.bytes(), spec.total_bytes());
    assert_eq!(target.names().len(), 23);
    // Sizes vary within the range, and every object carries its own stamp.
    let a = target.contents("obj.3").unwrap();
    assert_eq!(a.len() as u64, spec.size_of(3));
    assert_eq!(&a[8..16], &3u64.to_le_bytes());
    assert_eq!(&a[4096 + 16..4096 + 24], &4096u64.to_le_bytes());
    let b = target.contents("obj.4").unwrap();
    assert_ne!(a[STAMP_LEN..4096], b[STAMP_LEN..4096], "bodies differ");

    let get = run_phase(
        &target,
        &Phase::objects(ObjectOp::Get, 4, spec.clone(), StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!((get.by_op[0].ops, get.bytes()), (23, spec.total_bytes()));
    assert_eq!(
        get.by_op[0].ttfb.count(),
        23,
        "every get has a time to first byte"
    );
    assert!(get.by_op[0].ttfb.max().unwrap() <= get.by_op[0].latency.max().unwrap());

    let mut ranged = spec.clone();
    ranged.range = Some(1000);
    let got = run_phase(
        &target,
        &Phase::objects(ObjectOp::Get, 2, ranged, StopRule::Ops(10)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!((got.by_op[0].ops, got.bytes()), (10, 10_000));

    let head = run_phase(
        &target,
        &Phase::objects(ObjectOp::Head, 3, spec.clone(), StopRule::Ops(30)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!((head.by_op[0].ops, head.bytes()), (30, 0));

    let delete = run_phase(
        &target,
        &Phase::objects(ObjectOp::Delete, 4, spec.clone(), StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(delete.by_op[0].ops, 23);
    assert_eq!(
        target.names().len(),
        0,
        "multipart objects were obj.0..3 too"
    );
}

#[test]
fn mixed_phases_draw_by_weight_and_keep_their_own_books() {
    let target = MemTarget::new();
    let control = Control::new(7, 3);
    let spec = spec(30);
    run_phase(
        &target,
        &Phase::objects(ObjectOp::Put, 3, spec.clone(), StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    let mixed = run_phase(
        &target,
        &Phase::objects(ObjectOp::Mixed, 3, spec.clone(), StopRule::Ops(2000)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(mixed.end, PhaseEnd::Completed, "{:?}", mixed.errors);
    let ops: Vec<u64> = mixed.by_op.iter().map(|o| o.ops).collect();
    assert_eq!(ops.iter().sum::<u64>(), 2000);
    // 45/30/15/10 of 2000, within a generous margin.
    for (got, want) in ops.iter().zip([900, 600, 300, 200]) {
        assert!(
            (*got as f64 - want as f64).abs() < want as f64 * 0.25,
            "{ops:?}"
        );
    }
    assert_eq!(mixed.by_op[1].bytes, 0, "heads move no data");
    let live = 30 + ops[2] - ops[3];
    assert_eq!(
        target.names().len() as u64,
        live,
        "puts add, deletes remove"
    );
    assert_eq!(mixed.latency.count(), 2000);
    for o in &mixed.by_op {
        assert_eq!(
            o.series.ops.iter().sum::<u64>(),
            o.ops,
            "{}: per-second series",
            o.name
        );
        assert_eq!(o.series.bytes.iter().sum::<u64>(), o.bytes);
    }
}

#[test]
fn verify_checks_every_byte_of_whole_and_ranged_gets() {
    let target = MemTarget::new();
    let control = Control::new(9, 2);
    let mut spec = spec(6);
    run_phase(
        &target,
        &Phase::objects(ObjectOp::Put, 2, spec.clone(), StopRule::Once),
        &control,
        &Ranked::ALONE,
    );
    let mut get = Phase::objects(ObjectOp::Get, 2, spec.clone(), StopRule::Once);
    get.verify = Some(9);
    let clean = run_phase(&target, &get, &control, &Ranked::ALONE);
    assert_eq!(clean.end, PhaseEnd::Completed, "{:?}", clean.errors);
    spec.range = Some(5000);
    let mut ranged = Phase::objects(ObjectOp::Get, 2, spec.clone(), StopRule::Ops(40));
    ranged.verify = Some(9);
    assert_eq!(
        run_phase(&target, &ranged, &control, &Ranked::ALONE).end,
        PhaseEnd::Completed
    );
    // One byte of one stamp changed: the whole read fails and names the chunk.
    let mut obj = target.contents("obj.4").unwrap();
    obj[8192 + 17] ^= 1;
    target.remove("obj.4").unwrap();
    let mut h = target
        .open(
            "obj.4",
            iobm_target::OpenOptions {
                access: iobm_target::Access::Create,
                direct: false,
            },
        )
        .unwrap();
    h.write_at(&obj, 0).unwrap();
    // Another run's objects are not this run's: stale.
    let mut other_run = get.clone();
    other_run.verify = Some(10);
    let stale = run_phase(&target, &other_run, &control, &Ranked::ALONE);
    assert_eq!(stale.errors[0].kind, "bad data");
    assert!(
        stale.errors[0].first.contains("stale"),
        "{}",
        stale.errors[0].first
    );
    let bad = run_phase(&target, &get, &control, &Ranked::ALONE);
    assert_eq!(bad.end, PhaseEnd::Failed);
    assert_eq!(bad.errors[0].kind, "bad data");
    assert!(
        bad.errors[0].first.contains("offset 8192") && bad.errors[0].first.contains("corrupt"),
        "{}",
        bad.errors[0].first
    );
}

#[test]
fn a_cap_on_new_objects_ends_a_timed_put_early() {
    let target = MemTarget::new();
    let control = Control::new(3, 3);
    let capped = ObjectSpec {
        max_new: Some(10),
        ..spec(0)
    };
    let phase = Phase::objects(
        ObjectOp::Put,
        3,
        capped,
        StopRule::Duration(std::time::Duration::from_secs(30)),
    );
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed);
    assert_eq!(out.by_op[0].ops, 10);
    assert_eq!(target.names().len(), 10);
    assert!(
        out.end_ns - out.start_ns < 20_000_000_000,
        "ended by the cap, not the time"
    );
}

#[test]
fn errors_are_counted_until_the_limit_then_fail_the_phase() {
    // Writes fail once 64 KiB are stored: the first puts succeed, the rest fail.
    let target = FaultTarget::fail_writes_after(MemTarget::new(), 64 << 10, libc::ENOSPC);
    let control = Control::new(1, 2);
    let mut phase = Phase::objects(ObjectOp::Put, 2, spec(40), StopRule::Once);
    phase.max_errors = 1000;
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(
        out.end,
        PhaseEnd::Completed,
        "under the limit the phase goes on"
    );
    assert_eq!(out.errors[0].kind, "ENOSPC");
    assert_eq!(out.by_op[0].ops + out.by_op[0].errors, 40);
    assert_eq!(out.errors[0].count, out.by_op[0].errors);
    // Retries are tried at once and counted apart from the errors.
    let target = FaultTarget::fail_writes_after(MemTarget::new(), 0, libc::EIO);
    let mut retrying = Phase::objects(ObjectOp::Put, 2, spec(6), StopRule::Once);
    retrying.max_errors = 100;
    retrying.objects.as_mut().unwrap().retries = 2;
    let out = run_phase(&target, &retrying, &control, &Ranked::ALONE);
    assert_eq!((out.by_op[0].errors, out.by_op[0].retried), (6, 12));

    phase.max_errors = 3;
    let target = FaultTarget::fail_writes_after(MemTarget::new(), 0, libc::EIO);
    let out = run_phase(&target, &phase, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert!(
        out.errors[0].count <= 4 + 1,
        "stops soon after the limit: {:?}",
        out.errors
    );
}
