//! What one worker does per object operation (put, get, head, delete, list, multipart, and the
//! mixed draw among them), through its target's [`Objects`] session.

use crate::data::Generator;
use crate::permute::mix;
use crate::task::Task;
use crate::workload::{object_name, ObjectOp, ObjectSpec, Phase, StopRule, MIXED};
use iobm_target::objects::{stamp, CHUNK, STAMP_LEN};
use iobm_target::{Body, Objects, Target};
use md5::{Digest, Md5};
use std::io;
use std::time::Instant;

/// Checks every byte of a GET body as it arrives, without keeping it, against what the run
/// stored there; the first mismatch is named by its 4 KiB and what its stamp says they hold.
struct ByteCheck<'b> {
    content: &'b Generator,
    object: u64,
    /// Offset in the object of the next byte to arrive.
    pos: u64,
    expected: &'b mut [u8],
    bad: Option<String>,
    /// Time spent checking, kept out of the operation's latency.
    ns: u64,
}

impl ByteCheck<'_> {
    fn feed(&mut self, piece: &[u8]) {
        let t = Instant::now();
        let mut done = 0;
        while done < piece.len() && self.bad.is_none() {
            let n = (piece.len() - done).min(self.expected.len());
            let at = self.pos + done as u64;
            let expected = &mut self.expected[..n];
            self.content.fill(expected, self.object, at);
            let found = &piece[done..done + n];
            if let Some(i) = found.iter().zip(expected.iter()).position(|(a, b)| a != b) {
                self.bad = Some(self.describe(piece, at + i as u64));
            }
            done += n;
        }
        self.pos += piece.len() as u64;
        self.ns += t.elapsed().as_nanos() as u64;
    }

    /// What the 4 KiB around `first` hold: when they arrived whole in `piece`, their stamp
    /// says whose they may be, and regenerating those bytes tells stale or misplaced data from
    /// corrupt bytes.
    fn describe(&self, piece: &[u8], first: u64) -> String {
        let chunk_at = first / CHUNK as u64 * CHUNK as u64;
        let (piece_at, piece_end) = (self.pos, self.pos + piece.len() as u64);
        let corrupt =
            format!("corrupt: bytes differ from what was stored, the first at offset {first}");
        let what = if chunk_at >= piece_at && chunk_at + CHUNK as u64 <= piece_end {
            let chunk = &piece[(chunk_at - piece_at) as usize..][..CHUNK];
            let word = |i: usize| u64::from_le_bytes(chunk[i..i + 8].try_into().expect("8 bytes"));
            let (run, object, offset) = (word(0), word(8), word(16));
            let mut theirs = [0u8; CHUNK];
            self.content.fill_run(&mut theirs, run, object, offset);
            if chunk[..STAMP_LEN] == stamp(self.content.run_id(), self.object, chunk_at)
                || theirs[..] != chunk[..]
            {
                corrupt
            } else if run != self.content.run_id() {
                format!("stale: they hold data another run (id {run:#x}) stored")
            } else {
                format!("misplaced: they hold the data of object {object} offset {offset}")
            }
        } else {
            corrupt
        };
        format!("the 4 KiB at offset {chunk_at} are not what was stored there: {what}")
    }
}

pub(crate) struct ObjectTask<'a> {
    phase: &'a Phase,
    spec: &'a ObjectSpec,
    op: ObjectOp,
    session: Box<dyn Objects + 'a>,
    content: &'a Generator,
    /// Where a GET's expected bytes are made (`--verify`).
    expected: Vec<u8>,
    /// Time the last operation spent checking what it read.
    verify_ns: u64,
    worker: u64,
    workers: u64,
    rng: u64,
    /// Mixed phases: the objects this worker may read or delete (its share of the data set,
    /// plus what it stored, minus what it deleted).
    live: Vec<u64>,
    /// List phases: where the next page starts.
    list_next: Option<String>,
    /// Keys the last operation returned (a listing page) or deleted (a batch).
    keys: u64,
    /// The names of a batch delete (reused).
    batch: Vec<String>,
    // The prepared operation.
    class: usize,
    object: u64,
    name: String,
    range: Option<(u64, u64)>,
    first_byte: Option<Instant>,
}

/// The index of a mixed phase's operation among its classes.
fn class_of(op: ObjectOp) -> usize {
    MIXED.iter().position(|&m| m == op).unwrap_or(0)
}

impl<'a> ObjectTask<'a> {
    /// The operation prepared now: the phase's own, or the one a mixed phase drew.
    fn current(&self) -> ObjectOp {
        match self.op {
            ObjectOp::Mixed => MIXED[self.class],
            op => op,
        }
    }

    pub(crate) fn new(
        target: &'a dyn Target,
        phase: &'a Phase,
        op: ObjectOp,
        run_id: u64,
        worker: usize,
        content: &'a Generator,
    ) -> Result<ObjectTask<'a>, (io::Error, String)> {
        let spec = phase
            .objects
            .as_ref()
            .expect("object phases have an ObjectSpec");
        let session = target
            .objects(worker)
            .map_err(|e| (e, format!("connect worker {worker}")))?;
        let workers = phase.workers as u64;
        let worker = worker as u64;
        let live = if op == ObjectOp::Mixed {
            (worker..spec.count).step_by(workers as usize).collect()
        } else {
            Vec::new()
        };
        Ok(ObjectTask {
            phase,
            spec,
            op,
            session,
            content,
            expected: if phase.verify.is_some() {
                vec![0; 64 << 10]
            } else {
                Vec::new()
            },
            verify_ns: 0,
            worker,
            workers,
            rng: mix(run_id ^ (worker << 40) ^ 0x0b1e),
            live,
            list_next: None,
            keys: 0,
            batch: Vec::new(),
            class: 0,
            object: 0,
            name: String::with_capacity(32),
            range: None,
            first_byte: None,
        })
    }

    fn random(&mut self) -> u64 {
        self.rng = mix(self.rng);
        self.rng
    }

    /// A new object's number: never one of the data set, never another worker's.
    fn new_object(&self, i: u64) -> u64 {
        let base = if self.op == ObjectOp::Mixed {
            self.spec.count
        } else {
            0
        };
        base + i * self.workers + self.worker
    }

    fn body(&self) -> Body<'a> {
        Body::new(self.content, self.object, self.spec.size_of(self.object))
    }

    /// Picks an object of the data set for a read: this worker's share once in order, or at
    /// random when the phase runs by time or count.
    fn pick_existing(&mut self, i: u64) -> bool {
        if self.spec.count == 0 {
            return false;
        }
        self.object = if self.phase.stop == StopRule::Once {
            let k = i * self.workers + self.worker;
            if k >= self.spec.count {
                return false;
            }
            k
        } else {
            self.random() % self.spec.count
        };
        true
    }
}

impl Task for ObjectTask<'_> {
    fn prepare(&mut self, i: u64) -> bool {
        self.first_byte = None;
        self.range = None;
        match self.op {
            ObjectOp::Put | ObjectOp::Multipart => {
                self.object = self.new_object(i);
                if self.phase.stop == StopRule::Once && self.object >= self.spec.count {
                    return false;
                }
                if self.spec.max_new.is_some_and(|m| self.object >= m) {
                    return false;
                }
            }
            ObjectOp::Get | ObjectOp::Head => {
                if !self.pick_existing(i) {
                    return false;
                }
            }
            ObjectOp::Delete if self.spec.delete_batch > 1 => {
                // Request i of worker w deletes objects (i W + w) B .. (i W + w + 1) B.
                let size = u64::from(self.spec.delete_batch);
                let first = (i * self.workers + self.worker) * size;
                if first >= self.spec.count {
                    return false;
                }
                let last = (first + size).min(self.spec.count);
                self.batch.resize_with((last - first) as usize, String::new);
                for (name, object) in self.batch.iter_mut().zip(first..last) {
                    object_name(name, object);
                }
                self.object = first;
            }
            ObjectOp::Delete => {
                self.object = i * self.workers + self.worker;
                if self.object >= self.spec.count {
                    return false;
                }
            }
            ObjectOp::List => {}
            ObjectOp::Mixed => {
                let m = self.spec.mix;
                let total: u64 = MIXED.iter().map(|&op| u64::from(m.weight(op))).sum();
                let mut draw = self.random() % total.max(1);
                self.class = MIXED
                    .iter()
                    .position(|&op| {
                        let w = u64::from(m.weight(op));
                        draw < w || {
                            draw -= w;
                            false
                        }
                    })
                    .unwrap_or(MIXED.len() - 1);
                if self.live.is_empty() && self.current() != ObjectOp::Put {
                    self.class = class_of(ObjectOp::Put);
                }
                if self.current() == ObjectOp::Put {
                    self.object = self.new_object(i);
                    if self
                        .spec
                        .max_new
                        .is_some_and(|m| self.object - self.spec.count >= m)
                    {
                        return false;
                    }
                } else {
                    let at = (self.random() % self.live.len() as u64) as usize;
                    self.object = if self.current() == ObjectOp::Delete {
                        self.live.swap_remove(at)
                    } else {
                        self.live[at]
                    };
                }
            }
        }
        let reads = self.current() == ObjectOp::Get;
        if let (true, Some(len)) = (reads, self.spec.range) {
            let size = self.spec.size_of(self.object);
            let len = len.min(size).max(1);
            let offset = self.random() % (size - len + 1).max(1);
            self.range = Some((offset, offset + len - 1));
        }
        object_name(&mut self.name, self.object);
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        let op = self.current();
        match op {
            ObjectOp::Put => {
                let body = self.body();
                self.session.put(&self.name, &body)?;
                if self.op == ObjectOp::Mixed {
                    self.live.push(self.object);
                }
                Ok(body.len())
            }
            ObjectOp::Multipart => {
                let body = self.body();
                let spec = self.spec;
                self.session
                    .multipart(&self.name, &body, spec.part_size, spec.part_concurrency)?;
                Ok(body.len())
            }
            ObjectOp::Get => {
                self.first_byte = None;
                let first_byte = &mut self.first_byte;
                let mut check = self.phase.verify.map(|_| ByteCheck {
                    content: self.content,
                    object: self.object,
                    pos: self.range.map_or(0, |(first, _)| first),
                    expected: &mut self.expected,
                    bad: None,
                    ns: 0,
                });
                let got = self.session.get(&self.name, self.range, &mut |piece| {
                    if first_byte.is_none() {
                        *first_byte = Some(Instant::now());
                    }
                    if let Some(check) = &mut check {
                        check.feed(piece);
                    }
                })?;
                if let Some(check) = check {
                    self.verify_ns = check.ns;
                    if let Some(what) = check.bad {
                        return Err(io::Error::new(io::ErrorKind::InvalidData, what));
                    }
                }
                let expected = match self.range {
                    Some((a, b)) => b - a + 1,
                    None => self.spec.size_of(self.object),
                };
                if got != expected {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("{got} bytes where {expected} were expected"),
                    ));
                }
                Ok(got)
            }
            ObjectOp::Head => {
                let size = self.session.head(&self.name)?;
                let expected = self.spec.size_of(self.object);
                if size != expected {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("size {size} where {expected} was stored"),
                    ));
                }
                Ok(0)
            }
            ObjectOp::Delete if self.op == ObjectOp::Delete && self.spec.delete_batch > 1 => {
                self.keys = self.session.delete_batch(&self.batch)?;
                Ok(0)
            }
            ObjectOp::Delete => {
                self.session.delete(&self.name)?;
                Ok(0)
            }
            ObjectOp::List => {
                let page = self
                    .session
                    .list(self.list_next.as_deref(), self.spec.page_keys)?;
                if page.keys == 0 && self.spec.count > 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a page of the listing was empty, yet the data set has objects",
                    ));
                }
                self.list_next = page.next;
                self.keys = page.keys;
                Ok(0)
            }
            ObjectOp::Mixed => unreachable!("drawn above"),
        }
    }

    fn describe(&self) -> String {
        match self.op {
            ObjectOp::List => "list".to_string(),
            ObjectOp::Mixed => format!("{} {}", self.phase.op.classes()[self.class], self.name),
            op => format!("{} {}", op.name(), self.name),
        }
    }

    fn class(&self) -> usize {
        self.class
    }

    fn first_byte(&self) -> Option<Instant> {
        self.first_byte
    }

    fn keys(&self) -> u64 {
        self.keys
    }

    /// `--verify` of a PUT: the ETag the store answered must be the MD5 of what was sent, where
    /// it is an MD5 (32 hex digits; multipart and opaque ETags are not).
    fn check(&mut self) -> io::Result<()> {
        if self.phase.verify.is_none() || self.current() != ObjectOp::Put {
            return Ok(());
        }
        let Some(etag) = self.session.last_etag() else {
            return Ok(());
        };
        if etag.len() != 32 || !etag.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(());
        }
        let mut md5 = Md5::new();
        let body = self.body();
        body.for_each_batch(0, body.len(), &mut |slices| {
            slices.iter().for_each(|s| md5.update(&s[..]));
            Ok(())
        })?;
        let sent: String = md5.finalize().iter().map(|b| format!("{b:02x}")).collect();
        if !sent.eq_ignore_ascii_case(etag) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the store answered ETag {etag}, not the MD5 of what was sent ({sent}): it did not store these bytes"),
            ));
        }
        Ok(())
    }

    fn take_verify_ns(&mut self) -> u64 {
        std::mem::take(&mut self.verify_ns)
    }

    fn finish(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests {
    use crate::runner::run_phase;
    use crate::workload::{Mix, ObjectOp, ObjectSpec, Phase, StopRule};
    use crate::{Control, PhaseEnd};
    use iobm_target::fault::FaultTarget;
    use iobm_target::mem::MemTarget;
    use iobm_target::objects::STAMP_LEN;
    use iobm_target::Target;
    use std::io;

    /// A store whose answers carry an ETag that is no MD5 of anything sent.
    struct WrongEtag(MemTarget);

    struct WrongEtagSession<'a>(Box<dyn iobm_target::Objects + 'a>);

    impl iobm_target::Objects for WrongEtagSession<'_> {
        fn put(&mut self, name: &str, body: &iobm_target::Body<'_>) -> io::Result<()> {
            self.0.put(name, body)
        }
        fn last_etag(&self) -> Option<&str> {
            Some("0123456789abcdef0123456789abcdef")
        }
        fn get(
            &mut self,
            name: &str,
            range: Option<(u64, u64)>,
            sink: &mut dyn FnMut(&[u8]),
        ) -> io::Result<u64> {
            self.0.get(name, range, sink)
        }
        fn head(&mut self, name: &str) -> io::Result<u64> {
            self.0.head(name)
        }
        fn delete(&mut self, name: &str) -> io::Result<()> {
            self.0.delete(name)
        }
        fn list(&mut self, after: Option<&str>, max: u32) -> io::Result<iobm_target::ListPage> {
            self.0.list(after, max)
        }
    }

    impl Target for WrongEtag {
        fn capabilities(&self) -> iobm_target::Capabilities {
            self.0.capabilities()
        }
        fn open(
            &self,
            name: &str,
            options: iobm_target::OpenOptions,
        ) -> io::Result<Box<dyn iobm_target::Handle>> {
            self.0.open(name, options)
        }
        fn len(&self, name: &str) -> io::Result<u64> {
            self.0.len(name)
        }
        fn objects(&self, worker: usize) -> io::Result<Box<dyn iobm_target::Objects + '_>> {
            Ok(Box::new(WrongEtagSession(self.0.objects(worker)?)))
        }
        fn remove(&self, name: &str) -> io::Result<()> {
            self.0.remove(name)
        }
    }

    #[test]
    fn verify_of_a_put_checks_the_etag_against_what_was_sent() {
        let control = Control::new(4, 2);
        let mut put = Phase::objects(ObjectOp::Put, 2, spec(0), StopRule::Ops(6));
        put.verify = Some(4);
        // The in-memory store gives no ETag: nothing to check.
        assert_eq!(
            run_phase(&MemTarget::new(), &put, &control).end,
            PhaseEnd::Completed
        );
        let wrong = run_phase(&WrongEtag(MemTarget::new()), &put, &control);
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
            size: (10_000, 50_000),
            range: None,
            part_size: 16_384,
            part_concurrency: 2,
            mix: Mix::default(),
            page_keys: 10,
            delete_batch: 1,
            retries: 0,
            max_new: None,
        }
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
        assert_eq!(run_phase(&target, &put, &control).by_op[0].ops, 95);
        let delete = run_phase(
            &target,
            &Phase::objects(ObjectOp::Delete, 3, spec, StopRule::Once),
            &control,
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
        );
        assert_eq!((got.by_op[0].ops, got.bytes()), (10, 10_000));

        let head = run_phase(
            &target,
            &Phase::objects(ObjectOp::Head, 3, spec.clone(), StopRule::Ops(30)),
            &control,
        );
        assert_eq!((head.by_op[0].ops, head.bytes()), (30, 0));

        let delete = run_phase(
            &target,
            &Phase::objects(ObjectOp::Delete, 4, spec.clone(), StopRule::Once),
            &control,
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
        );
        let mixed = run_phase(
            &target,
            &Phase::objects(ObjectOp::Mixed, 3, spec.clone(), StopRule::Ops(2000)),
            &control,
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
        );
        let mut get = Phase::objects(ObjectOp::Get, 2, spec.clone(), StopRule::Once);
        get.verify = Some(9);
        let clean = run_phase(&target, &get, &control);
        assert_eq!(clean.end, PhaseEnd::Completed, "{:?}", clean.errors);
        spec.range = Some(5000);
        let mut ranged = Phase::objects(ObjectOp::Get, 2, spec.clone(), StopRule::Ops(40));
        ranged.verify = Some(9);
        assert_eq!(
            run_phase(&target, &ranged, &control).end,
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
        let stale = run_phase(&target, &other_run, &control);
        assert_eq!(stale.errors[0].kind, "bad data");
        assert!(
            stale.errors[0].first.contains("stale"),
            "{}",
            stale.errors[0].first
        );
        let bad = run_phase(&target, &get, &control);
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
        let out = run_phase(&target, &phase, &control);
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
        let out = run_phase(&target, &phase, &control);
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
        let out = run_phase(&target, &retrying, &control);
        assert_eq!((out.by_op[0].errors, out.by_op[0].retried), (6, 12));

        phase.max_errors = 3;
        let target = FaultTarget::fail_writes_after(MemTarget::new(), 0, libc::EIO);
        let out = run_phase(&target, &phase, &control);
        assert_eq!(out.end, PhaseEnd::Failed);
        assert!(
            out.errors[0].count <= 4 + 1,
            "stops soon after the limit: {:?}",
            out.errors
        );
    }
}
