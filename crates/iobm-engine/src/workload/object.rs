//! Object workloads: the whole-object operations, the weights of a mixed phase, and the
//! objects an object phase works on.

use iobm_stats::access::AccessDist;
use iobm_stats::names::{OpName, Picks};
use iobm_stats::sizes::SizeDist;

/// Whole-object operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectOp {
    /// Store new objects (`obj.K`, K = i × workers + worker).
    Put,
    /// Read objects of the data set, whole or a `range` of each.
    Get,
    /// Ask for the size of objects of the data set.
    Head,
    /// Delete each object of the data set once.
    Delete,
    /// List the run's objects, one page per operation, starting over at the end.
    List,
    /// Store new objects by multipart upload.
    Multipart,
    /// Get, head, put, delete and list drawn by the [`Mix`] weights.
    Mixed,
    /// The [`Mix`] of a mixed phase, each operation on one version of an object in a store
    /// that keeps versions: a PUT stores a new version, a GET, HEAD or DELETE acts on one of
    /// the versions stored, a LIST is a page of every version (warp's `versioned`).
    Versioned,
}

/// The operations of a mixed phase, in the order of its per-class books
/// ([`Op::classes`](super::Op::classes)); list last, so a mix without it keeps the books
/// it had before LIST could be in a mix.
pub const MIXED: [ObjectOp; 5] = [
    ObjectOp::Get,
    ObjectOp::Head,
    ObjectOp::Put,
    ObjectOp::Delete,
    ObjectOp::List,
];
pub(super) const MIXED_NAMES: [OpName; 5] = [
    MIXED[0].name(),
    MIXED[1].name(),
    MIXED[2].name(),
    MIXED[3].name(),
    MIXED[4].name(),
];

impl ObjectOp {
    /// Every object operation, in the order `iobm s3 --help` lists them.
    pub const ALL: [ObjectOp; 8] = [
        ObjectOp::Put,
        ObjectOp::Get,
        ObjectOp::Head,
        ObjectOp::Delete,
        ObjectOp::List,
        ObjectOp::Multipart,
        ObjectOp::Mixed,
        ObjectOp::Versioned,
    ];

    /// The operation of this name.
    pub fn from_name(name: &str) -> Option<ObjectOp> {
        ObjectOp::ALL
            .into_iter()
            .find(|op| op.name().as_str() == name)
    }

    pub const fn name(self) -> OpName {
        match self {
            ObjectOp::Put => OpName::Put,
            ObjectOp::Get => OpName::Get,
            ObjectOp::Head => OpName::Head,
            ObjectOp::Delete => OpName::Delete,
            ObjectOp::List => OpName::List,
            ObjectOp::Multipart => OpName::Multipart,
            ObjectOp::Mixed => OpName::Mixed,
            ObjectOp::Versioned => OpName::Versioned,
        }
    }
}

/// Relative weights of the operations of a mixed phase (warp's defaults: 45/30/15/10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix {
    pub get: u32,
    pub head: u32,
    pub put: u32,
    pub delete: u32,
    /// One page of the run's listing (elbencho's ask; 0 unless given).
    pub list: u32,
}

impl Mix {
    /// The weight of one of the [`MIXED`] operations.
    pub fn weight(&self, op: ObjectOp) -> u32 {
        match op {
            ObjectOp::Get => self.get,
            ObjectOp::Head => self.head,
            ObjectOp::Put => self.put,
            ObjectOp::Delete => self.delete,
            ObjectOp::List => self.list,
            _ => 0,
        }
    }
}

impl Default for Mix {
    fn default() -> Self {
        Mix {
            get: 45,
            head: 30,
            put: 15,
            delete: 10,
            list: 0,
        }
    }
}

/// The objects of an object phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSpec {
    /// Objects of the data set (`obj.0` .. `obj.N-1`) that get, head, delete, list and mixed
    /// work on; for put and multipart with [`StopRule::Once`](super::StopRule::Once), how many to
    /// store.
    pub count: u64,
    /// How each object's size is drawn, from its number.
    pub size: SizeDist,
    /// Bytes per ranged GET (from a random offset), None: whole objects.
    pub range: Option<u64>,
    pub part_size: u64,
    pub part_concurrency: usize,
    pub mix: Mix,
    /// Keys per listing page.
    pub page_keys: u32,
    /// Delete phases: objects per request (1: one DELETE each; more: DeleteObjects, warp's
    /// `--batch`), counted as one operation and that many keys.
    pub delete_batch: u32,
    /// Times a failed operation is tried again at once (counted apart; its latency then
    /// covers every try); 0: failures are only counted.
    pub retries: u32,
    /// Put, multipart and mixed: store at most this many new objects (a phase that runs by
    /// time then ends early), so a run cannot fill the store.
    pub max_new: Option<u64>,
    /// Get and head phases that run by time or count: how they pick the objects they read.
    pub picks: Picks,
    /// Which objects reads picked at random choose (`--access`; object 0 the hottest).
    pub access: AccessDist,
}

impl ObjectSpec {
    /// The size of object `k`: fixed, or drawn from its number (so readers know it too).
    pub fn size_of(&self, k: u64) -> u64 {
        self.size.of_object(k)
    }

    /// Bytes of objects 0..count.
    pub fn total_bytes(&self) -> u64 {
        (0..self.count).map(|k| self.size_of(k)).sum()
    }
}

/// The name of object `k`.
pub fn object_name(out: &mut String, k: u64) {
    use std::fmt::Write;
    out.clear();
    let _ = write!(out, "obj.{k}");
}
