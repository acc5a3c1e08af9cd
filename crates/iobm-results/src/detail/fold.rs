//! A rank's series folded before they travel to rank 0 (`FoldedSeries`): rank 0 adds one sum
//! per rank and appends each rank's compressed rows as they are, never parsing a worker's
//! series; and each rank's series coarsened past [`RANK_INTERVALS`] so that the document stays
//! bounded at any rank count.

use super::{clear_series, compress, rows, SeriesFolder};
use crate::{EndpointSeries, RankSeries, Series, WorkerResult};
use serde::{Deserialize, Serialize};

/// Most rank-intervals (ranks times intervals) the document keeps at the phase's own interval;
/// past it every rank's series is kept at a whole multiple of it (about 30 MB of rank series at
/// most).
pub const RANK_INTERVALS: usize = 2 << 20;

/// One rank's workers' series folded on that rank: their sum (with the latency histograms),
/// the rank's and each endpoint's counts, and, in a phase too large to keep them in the
/// document, the workers' own series as compressed rows of the side file (`rows`, which travel
/// beside the rest, not inside it).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FoldedSeries {
    pub all: Option<Series>,
    pub ranks: Vec<RankSeries>,
    pub endpoints: Vec<EndpointSeries>,
    /// Whether the workers' own series are in `rows` (and empty in the workers' records).
    pub detached: bool,
    #[serde(skip)]
    pub rows: Vec<u8>,
}

impl FoldedSeries {
    /// Folds `workers` of phase `phase` (one rank's); with `detach`, moves their own series
    /// into compressed rows.
    pub fn of(phase: &str, workers: &mut [WorkerResult], detach: bool) -> FoldedSeries {
        let mut folder = SeriesFolder::new(0);
        folder.sum(workers);
        let rows = if detach {
            let frame = compress(&rows(phase, workers));
            clear_series(workers);
            frame
        } else {
            Vec::new()
        };
        FoldedSeries {
            all: folder.all,
            ranks: folder.ranks,
            endpoints: folder.endpoints,
            detached: detach,
            rows,
        }
    }
}

impl SeriesFolder {
    /// For the folded series of ranks that detached their workers' series (`detach`) or not.
    pub fn detaching(detach: bool) -> SeriesFolder {
        let mut folder = SeriesFolder::new(0);
        folder.detach = detach;
        folder
    }

    /// Keeps each rank's series at the multiple of the phase's interval that holds `ranks`
    /// ranks of `intervals` intervals within [`RANK_INTERVALS`].
    pub fn bounding_ranks(mut self, ranks: usize, intervals: usize) -> SeriesFolder {
        self.rank_factor = (ranks * intervals).div_ceil(RANK_INTERVALS).max(1);
        self.rank_shape = (ranks, intervals);
        self
    }

    /// Whether the workers' own series go to the side file.
    pub fn detaches(&self) -> bool {
        self.detach
    }

    /// Folds in one rank's folded series: its sum added, its counts kept, its rows appended.
    pub fn add_folded(&mut self, part: FoldedSeries) {
        match (&mut self.all, part.all) {
            (Some(all), Some(theirs)) => all.merge(&theirs),
            (all, theirs) => *all = all.take().or(theirs),
        }
        for e in part.endpoints {
            self.add_endpoint(e);
        }
        for r in part.ranks {
            self.add_rank(r);
        }
        self.append(&part.rows);
    }

    /// What the document says of the rank series' coarsening.
    pub(super) fn coarsening_note(&self) -> String {
        let (ranks, intervals) = self.rank_shape;
        format!(
            "rank_series coarsened: each entry adds up {} of the phase's intervals ({ranks} ranks x {intervals} intervals is past the document's bound of {RANK_INTERVALS} rank-intervals); the phase's own series keeps every interval",
            self.rank_factor
        )
    }
}

/// `series`' counts in intervals `factor` times as long, each the sum of `factor` of them (the
/// last of what remains); latency is not kept.
pub fn coarsened(series: &Series, factor: usize) -> Series {
    let group =
        |v: &[u64]| -> Vec<u64> { v.chunks(factor.max(1)).map(|c| c.iter().sum()).collect() };
    Series {
        interval_ns: series.interval_ns * factor.max(1) as u64,
        bytes: group(&series.bytes),
        ops: group(&series.ops),
        errors: group(&series.errors),
        latency: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_adds_whole_groups_and_keeps_the_total() {
        let mut s = Series::new(std::time::Duration::from_secs(1));
        s.bytes = vec![1, 2, 3, 4, 5, 6, 7];
        s.ops = vec![1; 7];
        let c = coarsened(&s, 3);
        assert_eq!(c.interval_ns, 3_000_000_000);
        assert_eq!(c.bytes, vec![6, 15, 7]);
        assert_eq!(c.ops, vec![3, 3, 1]);
        assert!(c.errors.is_empty());
    }

    #[test]
    fn ranks_past_the_bound_are_coarsened_and_said_so() {
        let folder = SeriesFolder::new(0).bounding_ranks(4096, 3600);
        assert_eq!(folder.rank_factor, 8);
        assert!(folder
            .coarsening_note()
            .contains("adds up 8 of the phase's intervals"));
        assert_eq!(
            SeriesFolder::new(0).bounding_ranks(256, 3600).rank_factor,
            1
        );
    }
}
