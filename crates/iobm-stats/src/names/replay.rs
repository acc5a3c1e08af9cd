//! The words of `iobm replay`, as results record them: the trace's format and how its
//! operations were timed.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The format of a replayed trace (`config.replay.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TraceFormat {
    /// fio's iolog version 2 (`fio version 2 iolog`): no times.
    #[serde(rename = "iolog2")]
    Iolog2,
    /// fio's iolog version 3 (`fio version 3 iolog`): each line after its time in ms.
    #[serde(rename = "iolog3")]
    Iolog3,
    /// `blkparse`'s default text output of a blktrace: its queue (`Q`) events.
    #[serde(rename = "blkparse")]
    Blkparse,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Iolog2 => "iolog2",
            TraceFormat::Iolog3 => "iolog3",
            TraceFormat::Blkparse => "blkparse",
        }
    }

    /// As people call it.
    pub fn title(self) -> &'static str {
        match self {
            TraceFormat::Iolog2 => "fio iolog v2",
            TraceFormat::Iolog3 => "fio iolog v3",
            TraceFormat::Blkparse => "blkparse text",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// When a replay starts each operation (`--timing`, `config.replay.timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplayTiming {
    /// At its recorded time after the first (fio's default with times).
    Recorded,
    /// As the one before it returns (fio's `replay_no_stall`).
    Fast,
}

impl ReplayTiming {
    pub const ALL: [ReplayTiming; 2] = [ReplayTiming::Recorded, ReplayTiming::Fast];

    pub fn name(self) -> &'static str {
        match self {
            ReplayTiming::Recorded => "recorded",
            ReplayTiming::Fast => "fast",
        }
    }
}

impl fmt::Display for ReplayTiming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
