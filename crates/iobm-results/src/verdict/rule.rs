//! What a rule of the verdict is ([`Rule`]) and what it judges by ([`Evidence`]): the phase,
//! the machine, the bytes it moved, its class, and which block-device counters are this run's
//! evidence; with the notes that follow a verdict on a file phase.

use crate::machine::Machine;
use crate::storage::{self, Judged};
use crate::{CacheVerdict, PhaseResult, Verdict};
use iobm_stats::format_bytes;
use iobm_stats::names::OpName;

/// One rule of the cache verdict: it fires with its verdict and the evidence for it, or
/// passes. The first rule of [`super::rules::RULES`] that fires decides.
pub trait Rule: Sync {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict>;

    /// The rule's name, for the test of the order.
    fn name(&self) -> &'static str {
        let path = std::any::type_name::<Self>();
        path.rsplit("::").next().unwrap_or(path)
    }
}

/// What a phase does, as the verdict tells phases apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// S3 operations (deletes only with their own books).
    Object,
    /// File writes (blocks or characters).
    Write,
    /// File reads, seeks, rewrites and read-write mixes.
    Read,
    /// Metadata operations (creates, stats, deletes), whose caching is not measured.
    Namespace,
}

impl Class {
    fn of(phase: &PhaseResult) -> Class {
        match phase.op {
            op if op.on_objects() => Class::Object,
            OpName::Delete if !phase.operations.is_empty() => Class::Object,
            op if op.writes_blocks() => Class::Write,
            op if op.reads_blocks() => Class::Read,
            OpName::Rewrite | OpName::Readwrite => Class::Read,
            _ => Class::Namespace,
        }
    }
}

/// What the rules judge a phase by.
pub struct Evidence<'a> {
    pub phase: &'a PhaseResult,
    pub machine: &'a Machine,
    /// Bytes the phase moved.
    pub moved: u64,
    pub class: Class,
    /// Which block-device counters are this run's evidence, and what the layers below say.
    pub storage: Judged,
}

/// Said of a verdict from the client's side alone when the servers' caches were dropped.
pub const DROPPED_NOTE: &str =
    "; the servers' caches were dropped before the phase (--server-drop-cmd)";

impl<'a> Evidence<'a> {
    pub fn of(phase: &'a PhaseResult, machine: &'a Machine) -> Evidence<'a> {
        Evidence {
            phase,
            machine,
            moved: phase.bytes(),
            class: Class::of(phase),
            storage: storage::judge(phase),
        }
    }

    /// A file phase that moves data (reads or writes).
    pub fn file_data(&self) -> bool {
        matches!(self.class, Class::Write | Class::Read)
    }

    /// A phase whose storage is beyond the client: an object phase, or a file phase on a
    /// network file system.
    pub fn beyond_client(&self) -> bool {
        self.class == Class::Object || (self.machine.network_fs && self.file_data())
    }

    /// A verdict on the counters of the storage below a file system, with what its layers say.
    pub fn below(&self, verdict: Verdict, evidence: String) -> CacheVerdict {
        CacheVerdict {
            verdict,
            evidence: evidence + &self.storage.note,
        }
    }

    /// A verdict on a file read from this client's side, with what the layers say and what a
    /// server's memory may have served (an uncached read becomes possibly cached).
    pub fn client_read(&self, verdict: Verdict, evidence: String) -> CacheVerdict {
        let mut v = self.below(verdict, evidence);
        let s = &self.phase.settings;
        let dropped = crate::remote::servers_dropped(self.phase);
        let server = crate::remote::server_memory(self.phase, self.machine)
            .filter(|&(ram, _)| s.data_bytes > 0 && s.data_bytes < ram && !dropped);
        if let Some((ram, source)) = server {
            if v.verdict == Verdict::Uncached {
                v.verdict = Verdict::PossiblyCached;
            }
            v.evidence.push_str(&format!(
                "; the data set ({}) fits in the server's memory ({}, {source}), so its cache may have served it",
                format_bytes(s.data_bytes),
                format_bytes(ram)
            ));
        }
        if dropped {
            v.evidence.push_str(DROPPED_NOTE);
        }
        v
    }
}

/// A verdict with its evidence.
pub fn judged(verdict: Verdict, evidence: impl Into<String>) -> Option<CacheVerdict> {
    Some(CacheVerdict {
        verdict,
        evidence: evidence.into(),
    })
}
