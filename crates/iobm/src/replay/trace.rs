//! A trace as `iobm replay` reads it, whatever its format: the files (or devices) it names,
//! and its operations in trace order with their recorded times and streams; each format's
//! lines are read by its own module.

use iobm_stats::names::TraceFormat;
use std::collections::HashMap;

/// What a traced operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Write,
    /// fio's sync and datasync, blktrace's flush: an fsync of the file.
    Sync,
    /// A trim or discard: counted, not replayed.
    Trim,
}

/// One operation of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOp {
    /// Its line in the trace, from 1.
    pub line: usize,
    /// Recorded time, ns after the trace's first read or write (0 without times).
    pub at_ns: u64,
    /// The stream it belongs to (iolog: its file; blkparse: its process).
    pub stream: u64,
    /// Index into [`Trace::files`].
    pub file: usize,
    pub kind: Kind,
    pub offset: u64,
    pub len: u64,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    pub format: TraceFormat,
    /// The files or devices it names, in order of first appearance.
    pub files: Vec<String>,
    pub ops: Vec<TraceOp>,
}

impl Trace {
    /// Each file's extent: the largest offset + length it is read or written at.
    pub fn extents(&self) -> Vec<u64> {
        let mut sizes = vec![0u64; self.files.len()];
        for op in &self.ops {
            if matches!(op.kind, Kind::Read | Kind::Write) {
                sizes[op.file] = sizes[op.file].max(op.offset + op.len);
            }
        }
        sizes
    }

    pub fn count(&self, kind: Kind) -> u64 {
        self.ops.iter().filter(|op| op.kind == kind).count() as u64
    }
}

/// Why a line could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: usize,
    pub why: String,
}

impl BadLine {
    pub fn new(line: usize, why: impl Into<String>) -> BadLine {
        BadLine {
            line,
            why: why.into(),
        }
    }
}

/// The files of a trace being read, numbered as they first appear.
#[derive(Debug, Default)]
pub struct Names {
    pub names: Vec<String>,
    index: HashMap<String, usize>,
}

impl Names {
    /// The file's number, adding it where new.
    pub fn add(&mut self, name: &str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    pub fn get(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }
}

/// A number of a trace's line, or why not.
pub fn number(word: &str, what: &str, line: usize) -> Result<u64, BadLine> {
    word.parse()
        .map_err(|_| BadLine::new(line, format!("{what} '{word}' is not a whole number")))
}

impl Trace {
    /// The trace as read, checked and its times made relative: refused (naming its last
    /// line, `lines`) without a read or write; times from the first read or write.
    pub fn finish(mut self, lines: usize) -> Result<Trace, BadLine> {
        let io = |op: &&TraceOp| matches!(op.kind, Kind::Read | Kind::Write);
        let Some(origin) = self.ops.iter().find(io).map(|op| op.at_ns) else {
            let why = "the trace holds no read or write to replay";
            return Err(BadLine::new(lines.max(1), why));
        };
        (self.ops.iter_mut()).for_each(|op| op.at_ns = op.at_ns.saturating_sub(origin));
        Ok(self)
    }
}
