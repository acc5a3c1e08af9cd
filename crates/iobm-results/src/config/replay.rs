//! Settings of `iobm replay`: the trace replayed (its path, format and hash), what it held and
//! how its operations were timed.

use iobm_stats::names::{ReplayTiming, TraceFormat};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A replayed trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReplayConfig {
    /// The trace file as named on the command line.
    pub trace: String,
    /// "iolog2", "iolog3" (fio's iologs) or "blkparse" (blktrace's text).
    #[schemars(with = "String")]
    pub format: TraceFormat,
    /// SHA-256 of the trace file, in hex.
    pub sha256: String,
    /// "recorded" (each operation at its recorded time) or "fast" (each as the last returns).
    #[schemars(with = "String")]
    pub timing: ReplayTiming,
    /// `--speed`: the recorded times divided by it.
    pub speed: f64,
    /// The trace's files or devices, each replayed into a file of the run's own.
    pub files: u32,
    /// Streams (iolog: files; blkparse: processes), dealt over the workers.
    pub streams: u32,
    /// Reads the trace held, all replayed.
    pub reads: u64,
    /// Writes the trace held, all replayed.
    pub writes: u64,
    /// Syncs (fio's sync and datasync; blktrace's flushes), done in their places.
    pub syncs: u64,
    /// Trims (discards) the trace held, not replayed.
    pub trims: u64,
}
