//! What one worker does in a versioned phase (`iobm s3 versioned`, warp's `versioned`): the
//! mix's operations, each on one version of one of the worker's own objects. A PUT stores a
//! new version and keeps the id the store gave it; a GET, HEAD or DELETE acts on one of the
//! versions kept (a key with none gets a PUT); a LIST is a page of every version.

use super::{check_etag, draw_class, Reading};
use crate::data::Generator;
use crate::permute::mix;
use crate::task::Task;
use crate::workload::{object_name, ObjectOp, ObjectSpec, Phase, MIXED};
use iobm_target::{Body, Objects, Target};
use std::io;
use std::time::Instant;

/// The bits of a version's content id below its number: version `v` of object `k` holds the
/// content of id `k | v << VERSION_SHIFT`, so each version's bytes differ and a GET of one
/// version is checked against that version.
const VERSION_SHIFT: u32 = 40;

/// A versioned phase's worker: its objects (k = worker + j W of the data set's count) and the
/// versions of each it stored and has not deleted.
pub(crate) struct VersionedTask<'a> {
    phase: &'a Phase,
    spec: &'a ObjectSpec,
    session: Box<dyn Objects + 'a>,
    content: &'a Generator,
    expected: Vec<u8>,
    verify_ns: u64,
    worker: u64,
    workers: u64,
    rng: u64,
    /// For each of the worker's objects, its versions kept, oldest first: (content id, the
    /// store's version id).
    kept: Vec<Vec<(u64, String)>>,
    /// For each of the worker's objects, the number of its next version.
    next: Vec<u64>,
    /// Versions this worker stored.
    stored: u64,
    list_next: Option<String>,
    keys: u64,
    // The prepared operation.
    class: usize,
    slot: usize,
    version: usize,
    id: u64,
    name: String,
    first_byte: Option<Instant>,
}

impl<'a> VersionedTask<'a> {
    pub(crate) fn new(
        target: &'a dyn Target,
        phase: &'a Phase,
        run_id: u64,
        worker: usize,
        content: &'a Generator,
    ) -> Result<VersionedTask<'a>, (io::Error, String)> {
        let spec = phase
            .objects
            .as_ref()
            .expect("object phases have an ObjectSpec");
        let session = target
            .objects(worker)
            .map_err(|e| (e, format!("connect worker {worker}")))?;
        let (worker, workers) = (worker as u64, phase.workers as u64);
        let owned = spec.count.saturating_sub(worker).div_ceil(workers) as usize;
        Ok(VersionedTask {
            phase,
            spec,
            session,
            content,
            expected: match phase.verify {
                Some(_) => vec![0; 64 << 10],
                None => Vec::new(),
            },
            verify_ns: 0,
            worker,
            workers,
            rng: mix(run_id ^ (worker << 40) ^ 0x7e55_1011),
            kept: vec![Vec::new(); owned],
            next: vec![0; owned],
            stored: 0,
            list_next: None,
            keys: 0,
            class: 0,
            slot: 0,
            version: 0,
            id: 0,
            name: String::with_capacity(32),
            first_byte: None,
        })
    }

    fn random(&mut self) -> u64 {
        self.rng = mix(self.rng);
        self.rng
    }

    fn current(&self) -> ObjectOp {
        MIXED[self.class]
    }

    /// The object number of slot `slot`.
    fn object(&self, slot: usize) -> u64 {
        self.worker + slot as u64 * self.workers
    }

    fn size(&self) -> u64 {
        self.spec.size_of(self.object(self.slot))
    }

    fn body(&self) -> Body<'a> {
        Body::new(self.content, self.id, self.size())
    }

    /// The store's id of the prepared operation's version.
    fn version_id(&self) -> &str {
        (self.kept[self.slot].get(self.version)).map_or("", |(_, v)| v.as_str())
    }

    /// A GET of the prepared version, checked as it arrives under `--verify`.
    fn get(&mut self) -> io::Result<u64> {
        let (session, name) = (&mut self.session, &self.name);
        let version = &self.kept[self.slot][self.version].1;
        let got = Reading {
            check: self.phase.verify.map(|_| self.content),
            at: (self.id, 0),
            expected: &mut self.expected,
            first_byte: &mut self.first_byte,
            verify_ns: &mut self.verify_ns,
        }
        .read(|sink| session.get_version(name, version, sink))?;
        expect_size(got, self.size())
    }

    fn put(&mut self) -> io::Result<u64> {
        let body = self.body();
        self.session.put(&self.name, &body)?;
        let Some(version) = self.session.last_version() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the store named no version of what it stored (no x-amz-version-id): the bucket does not keep versions",
            ));
        };
        self.kept[self.slot].push((self.id, version.to_string()));
        self.next[self.slot] += 1;
        self.stored += 1;
        Ok(body.len())
    }

    fn list(&mut self) -> io::Result<u64> {
        let first = self.list_next.is_none();
        let page = (self.session).list_versions(self.list_next.as_deref(), self.spec.page_keys)?;
        if page.keys == 0 && first && self.kept.iter().any(|v| !v.is_empty()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the first page of the versions' listing was empty, yet this worker has versions stored",
            ));
        }
        self.list_next = page.next;
        self.keys = page.keys;
        Ok(0)
    }
}

/// `got` bytes where `expected` were stored: an error unless they are equal.
fn expect_size(got: u64, expected: u64) -> io::Result<u64> {
    match got == expected {
        true => Ok(got),
        false => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{got} bytes where {expected} were stored"),
        )),
    }
}

impl Task for VersionedTask<'_> {
    /// Operation `i`: its kind drawn by the mix's weights, then one of the worker's objects
    /// at random and one of its versions (a PUT where it has none); false once the worker
    /// owns no object or has stored `max_new` versions.
    fn prepare(&mut self, _i: u64) -> bool {
        self.first_byte = None;
        self.keys = 0;
        if self.kept.is_empty() {
            return false;
        }
        self.class = draw_class(self.spec.mix, self.random());
        if self.current() == ObjectOp::List {
            return true;
        }
        self.slot = (self.random() % self.kept.len() as u64) as usize;
        if self.kept[self.slot].is_empty() {
            self.class = MIXED
                .iter()
                .position(|&op| op == ObjectOp::Put)
                .unwrap_or(0);
        }
        if self.current() == ObjectOp::Put {
            if self.spec.max_new.is_some_and(|m| self.stored >= m) {
                return false;
            }
            self.id = self.object(self.slot) | self.next[self.slot] << VERSION_SHIFT;
        } else {
            let versions = self.kept[self.slot].len() as u64;
            self.version = (self.random() % versions) as usize;
            self.id = self.kept[self.slot][self.version].0;
        }
        let object = self.object(self.slot);
        object_name(&mut self.name, object);
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        match self.current() {
            ObjectOp::Put => self.put(),
            ObjectOp::Get => self.get(),
            ObjectOp::Head => {
                let version = &self.kept[self.slot][self.version].1;
                let size = self.session.head_version(&self.name, version)?;
                expect_size(size, self.size()).map(|_| 0)
            }
            ObjectOp::Delete => {
                let version = &self.kept[self.slot][self.version].1;
                self.session.delete_version(&self.name, version)?;
                self.kept[self.slot].remove(self.version);
                Ok(0)
            }
            ObjectOp::List => self.list(),
            op => unreachable!("{op:?} is not drawn in a versioned phase"),
        }
    }

    fn describe(&self) -> String {
        let op = self.phase.op.classes()[self.class];
        match self.current() {
            ObjectOp::List => op.to_string(),
            ObjectOp::Put => format!("{op} {}", self.name),
            _ => format!("{op} {} version {}", self.name, self.version_id()),
        }
    }

    fn class(&self) -> usize {
        self.class
    }

    fn first_byte(&self) -> Option<Instant> {
        self.first_byte
    }

    fn at(&self) -> (u64, u64) {
        (self.object(self.slot), 0)
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
