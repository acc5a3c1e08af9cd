//! What one worker does per object operation (put, get, head, delete, list, multipart, and the
//! mixed draw among them), through its target's [`Objects`] session.

use crate::data::Generator;
use crate::permute::{mix, Permutation};
use crate::task::Task;
use crate::workload::{object_name, Mix, ObjectOp, ObjectSpec, Phase, MIXED};
use iobm_stats::access::Picker;
use iobm_stats::names::Picks;
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

/// A GET's body as it arrives: its first byte stamped, and under `--verify` every byte
/// checked against what the run stored for content id `at.0` from offset `at.1`.
struct Reading<'r> {
    /// The run's content, under `--verify`.
    check: Option<&'r Generator>,
    at: (u64, u64),
    expected: &'r mut [u8],
    first_byte: &'r mut Option<Instant>,
    /// Set to the time spent checking, kept out of the operation's latency.
    verify_ns: &'r mut u64,
}

impl Reading<'_> {
    /// Reads through `get` (a session's GET, handed the sink); the bytes it read, or the
    /// first mismatch found.
    fn read(self, get: impl FnOnce(&mut dyn FnMut(&[u8])) -> io::Result<u64>) -> io::Result<u64> {
        let first_byte = self.first_byte;
        let mut check = self.check.map(|content| ByteCheck {
            content,
            object: self.at.0,
            pos: self.at.1,
            expected: self.expected,
            bad: None,
            ns: 0,
        });
        let got = get(&mut |piece| {
            first_byte.get_or_insert_with(Instant::now);
            if let Some(check) = &mut check {
                check.feed(piece);
            }
        })?;
        if let Some(check) = check {
            *self.verify_ns = check.ns;
            if let Some(what) = check.bad {
                return Err(io::Error::new(io::ErrorKind::InvalidData, what));
            }
        }
        Ok(got)
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
    /// `Picks::Once`: the seed of every pass's order (the same on every worker), and the
    /// order of the pass being read.
    order_seed: u64,
    order: Option<(u64, Permutation)>,
    /// Picks at random (`Picks::Random`): which object of the data set, by `--access`.
    picker: Picker,
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

/// The class of a mixed phase's next operation, drawn by the mix's weights from `random`.
fn draw_class(m: Mix, random: u64) -> usize {
    let total: u64 = MIXED.iter().map(|&op| u64::from(m.weight(op))).sum();
    let mut draw = random % total.max(1);
    MIXED
        .iter()
        .position(|&op| {
            let w = u64::from(m.weight(op));
            draw < w || {
                draw -= w;
                false
            }
        })
        .unwrap_or(MIXED.len() - 1)
}

/// `--verify` of a PUT: the ETag the store answered must be the MD5 of what was sent, where
/// it is an MD5 (32 hex digits; multipart and opaque ETags are not).
fn check_etag(session: &dyn Objects, body: &Body<'_>) -> io::Result<()> {
    let Some(etag) = session.last_etag() else {
        return Ok(());
    };
    if etag.len() != 32 || !etag.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(());
    }
    let mut md5 = Md5::new();
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
            order_seed: mix(run_id ^ 0x0ce0_0ce0),
            order: None,
            picker: spec.access.picker(spec.count),
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

    /// Picks an object of the data set for a read: this worker's share once in order; when the
    /// phase runs by time or count, at random or (`Picks::Once`) the next of a pass over every
    /// object in a shuffled order: read `i` of worker w is read `k = i W + w` of the workers
    /// together, of object `k mod N` of pass `k / N`'s order.
    fn pick_existing(&mut self, i: u64) -> bool {
        let count = self.spec.count;
        if count == 0 {
            return false;
        }
        let k = i * self.workers + self.worker;
        self.object = if self.phase.stop.one_pass() {
            if k >= count {
                return false;
            }
            k
        } else if self.spec.picks == Picks::Once {
            let pass = k / count;
            if self.order.as_ref().is_none_or(|(p, _)| *p != pass) {
                let seed = mix(self.order_seed ^ pass);
                self.order = Some((pass, Permutation::new(count, seed)));
            }
            self.order.as_ref().expect("made above").1.get(k % count)
        } else {
            let rng = &mut self.rng;
            self.picker.pick(&mut || {
                *rng = mix(*rng);
                *rng
            })
        };
        true
    }
    /// Request `i` of worker w deletes objects (i W + w) B .. (i W + w + 1) B; false past the
    /// last.
    fn pick_batch(&mut self, i: u64) -> bool {
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
        true
    }

    /// A mixed phase's object of those live: by `--access` for a read (the live objects in
    /// the order they are kept), at random for a delete.
    fn pick_live(&mut self) -> u64 {
        let n = self.live.len() as u64;
        let access = self.spec.access;
        if access.is_uniform() || self.current() == ObjectOp::Delete {
            return self.random() % n;
        }
        let rng = &mut self.rng;
        access.picker(n).pick(&mut || {
            *rng = mix(*rng);
            *rng
        })
    }

    /// A mixed phase's operation `i`: its kind drawn by the mix's weights (a PUT while no
    /// object lives), then its object; false once the new objects are used up.
    fn pick_mixed(&mut self, i: u64) -> bool {
        self.class = draw_class(self.spec.mix, self.random());
        if self.live.is_empty() && self.current() != ObjectOp::Put {
            self.class = class_of(ObjectOp::Put);
        }
        if self.current() == ObjectOp::List {
            return true;
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
            let at = self.pick_live() as usize;
            self.object = if self.current() == ObjectOp::Delete {
                self.live.swap_remove(at)
            } else {
                self.live[at]
            };
        }
        true
    }
    /// A GET of the object picked (or its range), checked as it arrives under `--verify`,
    /// its first byte stamped; as many bytes as were stored, or an error.
    fn get(&mut self) -> io::Result<u64> {
        self.first_byte = None;
        let (session, name, range) = (&mut self.session, &self.name, self.range);
        let got = Reading {
            check: self.phase.verify.map(|_| self.content),
            at: (self.object, range.map_or(0, |(first, _)| first)),
            expected: &mut self.expected,
            first_byte: &mut self.first_byte,
            verify_ns: &mut self.verify_ns,
        }
        .read(|sink| session.get(name, range, sink))?;
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
}

impl Task for ObjectTask<'_> {
    fn prepare(&mut self, i: u64) -> bool {
        self.first_byte = None;
        self.range = None;
        self.keys = 0;
        match self.op {
            ObjectOp::Put | ObjectOp::Multipart => {
                self.object = self.new_object(i);
                if self.phase.stop.one_pass() && self.object >= self.spec.count {
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
                if !self.pick_batch(i) {
                    return false;
                }
            }
            ObjectOp::Delete => {
                self.object = i * self.workers + self.worker;
                if self.object >= self.spec.count {
                    return false;
                }
            }
            ObjectOp::List => {}
            ObjectOp::Mixed => {
                if !self.pick_mixed(i) {
                    return false;
                }
            }
            ObjectOp::Versioned => unreachable!("versioned phases run as VersionedTask"),
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
            ObjectOp::Get => self.get(),
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
            ObjectOp::Mixed | ObjectOp::Versioned => unreachable!("drawn above"),
        }
    }

    fn describe(&self) -> String {
        match self.op {
            ObjectOp::List => ObjectOp::List.name().to_string(),
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

    fn at(&self) -> (u64, u64) {
        let offset = self.range.map_or(0, |(from, _)| from);
        (self.object, offset)
    }

    fn keys(&self) -> u64 {
        self.keys
    }

    /// `--verify` of a PUT: its ETag checked against what was sent.
    fn check(&mut self) -> io::Result<()> {
        if self.phase.verify.is_none() || self.current() != ObjectOp::Put {
            return Ok(());
        }
        check_etag(&*self.session, &self.body())
    }

    fn take_verify_ns(&mut self) -> u64 {
        std::mem::take(&mut self.verify_ns)
    }

    fn finish(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}

#[cfg(test)]
mod tests;
mod versioned;

use versioned::VersionedTask;

/// Worker `worker`'s task for object operation `op` of `phase`.
pub(crate) fn object_task<'a>(
    target: &'a dyn Target,
    phase: &'a Phase,
    op: ObjectOp,
    (run_id, worker): (u64, usize),
    content: &'a Generator,
) -> Result<Box<dyn Task + 'a>, (io::Error, String)> {
    Ok(match op {
        ObjectOp::Versioned => {
            Box::new(VersionedTask::new(target, phase, run_id, worker, content)?)
        }
        op => Box::new(ObjectTask::new(target, phase, op, run_id, worker, content)?),
    })
}
