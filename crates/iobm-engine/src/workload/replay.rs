//! A recorded trace as a phase's work (`iobm replay`): each worker's stream of reads and
//! writes at recorded offsets and lengths of the data set's files, in trace order, with the
//! syncs between them and, timed as recorded, when each was meant to start.

/// One read or write of a replayed stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplayIo {
    /// When it was recorded, ns after the trace's first operation (scaled by `--speed`).
    pub at_ns: u64,
    /// Index into the phase's [`crate::Layout::files`].
    pub file: usize,
    pub write: bool,
    pub offset: u64,
    pub len: u64,
}

/// One worker's share of a trace: its reads and writes in trace order, and its syncs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReplayStream {
    pub ios: Vec<ReplayIo>,
    /// `(i, file)`: an fsync of `file` in its place before `ios[i]` (`i == ios.len()`: after
    /// the last). A sync is done between the operations, outside their latency; the syncs after
    /// the last are the worker's final fsync, inside its span.
    pub syncs: Vec<(usize, usize)>,
}

/// A phase's replayed trace: one stream per worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    pub streams: Vec<ReplayStream>,
    /// Each operation started at its recorded time (the phase is paced by the trace); false:
    /// each as the last returns.
    pub recorded: bool,
}

impl Replay {
    /// The longest read or write of any stream, the size of a worker's buffers.
    pub fn largest(&self) -> u64 {
        let ios = self.streams.iter().flat_map(|s| &s.ios);
        ios.map(|io| io.len).max().unwrap_or(0)
    }

    /// Reads and writes over every stream.
    pub fn ios(&self) -> u64 {
        self.streams.iter().map(|s| s.ios.len() as u64).sum()
    }

    /// The recorded time from the first operation to the last start, over every stream.
    pub fn span_ns(&self) -> u64 {
        let ios = self.streams.iter().flat_map(|s| &s.ios);
        ios.map(|io| io.at_ns).max().unwrap_or(0)
    }

    /// Worker `index`'s recorded start times, in its order, where the replay keeps them.
    pub fn starts(&self, index: usize) -> Option<Vec<u64>> {
        let ios = self.recorded.then(|| &self.streams[index].ios)?;
        Some(ios.iter().map(|io| io.at_ns).collect())
    }
}
