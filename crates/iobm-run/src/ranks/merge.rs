//! The phase merged from every rank's part at rank 0: each rank's stamps moved onto rank 0's
//! clock with the measured offsets, the snapshot instants over all ranks, and one phase whose
//! aggregates cover every worker of every rank (`PhaseMerger`, each part folded in as it
//! arrives).

use super::RankPhase;
use crate::record::{cpu_usage, latency};
use iobm_dist::ClockOffset;
use iobm_results::checks::{check, Machine};
use iobm_results::detail::{FoldedSeries, SeriesFolder, INLINE_WORKER_INTERVALS};
use iobm_results::{CacheEvidence, DeviceIo, OperationResult, PhaseResult, RunStatus};
use iobm_stats::{aggregates, Histogram, SnapshotInstants, WorkerSpan};

/// Moves a stamp of a rank whose clock origin is `origin` and offset `offset` onto rank 0's
/// clock with origin `root_origin`.
fn shift(stamp: u64, origin: u64, offset: i64, root_origin: u64) -> u64 {
    (stamp as i128 + origin as i128 - offset as i128 - root_origin as i128).max(0) as u64
}

/// [`shift`] undone: a stamp on rank 0's clock onto the rank's own.
fn unshift(stamp: u64, origin: u64, offset: i64, root_origin: u64) -> u64 {
    (stamp as i128 - origin as i128 + offset as i128 + root_origin as i128).max(0) as u64
}

fn offset_of(offsets: &[ClockOffset], rank: u32) -> i64 {
    offsets
        .iter()
        .find(|o| o.rank == rank)
        .map_or(0, |o| o.offset_ns)
}

/// The snapshot instants over every rank's spans (on rank 0's clock), given on each rank's own
/// clock, by rank.
pub(super) fn per_rank_instants(
    ranks: &[(u32, u64, Vec<WorkerSpan>)],
    offsets: &[ClockOffset],
    root_origin: u64,
) -> Vec<SnapshotInstants> {
    let mut spans: Vec<WorkerSpan> = Vec::new();
    for (rank, origin, own) in ranks {
        let offset = offset_of(offsets, *rank);
        spans.extend(own.iter().map(|s| {
            let mut s = *s;
            s.move_stamps(|t| shift(t, *origin, offset, root_origin));
            s
        }));
    }
    let at = SnapshotInstants::of(&spans);
    let mut by_rank = vec![SnapshotInstants::default(); ranks.len()];
    for (rank, origin, _) in ranks {
        let offset = offset_of(offsets, *rank);
        by_rank[*rank as usize] = at.moved(|t| unshift(t, *origin, offset, root_origin));
    }
    by_rank
}

/// One phase from every rank's part of it, in memory (the parts with their traces): the
/// snapshots taken at the instants over all of them, then merged as [`Ranks::merge`] does.
pub fn merge_phases(
    parts: Vec<RankPhase>,
    offsets: &[ClockOffset],
    root_origin: u64,
    machine: &Machine,
) -> PhaseResult {
    let spans: Vec<(u32, u64, Vec<WorkerSpan>)> = parts
        .iter()
        .enumerate()
        .map(|(rank, p)| {
            let spans = p.phase.workers.iter().map(|w| w.span).collect();
            (rank as u32, p.origin_unix_ns, spans)
        })
        .collect();
    let instants = per_rank_instants(&spans, offsets, root_origin);
    let mut merger = PhaseMerger::new(offsets, root_origin, parts.len());
    for (rank, mut part) in parts.into_iter().enumerate() {
        for (w, trace) in part.phase.workers.iter_mut().zip(&part.traces) {
            instants[rank].fill(&mut w.span, trace);
        }
        merger.add(rank as u32, part);
    }
    merger.finish(machine)
}

/// The merge of a phase's parts from every rank, one rank at a time.
pub struct PhaseMerger<'a> {
    offsets: &'a [ClockOffset],
    root_origin: u64,
    merged: Option<PhaseResult>,
    histogram: Histogram,
    user_s: f64,
    system_s: f64,
    resident: Option<u64>,
    /// Every rank's own block-layer bytes added (None once a rank has none).
    own_io: Option<iobm_results::storage::OwnIo>,
    /// Each host's layers below its device, from the first of its ranks.
    below: Vec<iobm_results::storage::Below>,
    device: Option<DeviceIo>,
    /// Ranks on one host see the same block device: each (host, device) counts once.
    devices_seen: Vec<(String, String)>,
    /// Each host's interfaces, from the first of its ranks (they all read the same counters).
    wire: Vec<iobm_results::NicIo>,
    operations: Vec<Vec<OperationResult>>,
    /// Paced phases: every rank's response times and lags.
    response: Histogram,
    lag: Histogram,
    ranks: usize,
    /// The series added up, and the workers' own detached from a phase too large to keep
    /// them (judged by the first rank's part times the ranks).
    folder: Option<SeriesFolder>,
}

impl<'a> PhaseMerger<'a> {
    pub fn new(offsets: &'a [ClockOffset], root_origin: u64, ranks: usize) -> PhaseMerger<'a> {
        PhaseMerger {
            ranks,
            folder: None,
            offsets,
            root_origin,
            merged: None,
            histogram: Histogram::new(),
            user_s: 0.0,
            system_s: 0.0,
            resident: Some(0),
            own_io: Some(Default::default()),
            below: Vec::new(),
            device: None,
            devices_seen: Vec::new(),
            wire: Vec::new(),
            operations: Vec::new(),
            response: Histogram::new(),
            lag: Histogram::new(),
        }
    }

    /// Folds in rank `rank`'s part, its snapshots taken: its series folded here as the rank
    /// would have (the first part decides whether the workers' own series are detached).
    pub fn add(&mut self, rank: u32, mut part: RankPhase) {
        let detach = match &self.folder {
            Some(f) => f.detaches(),
            None => {
                SeriesFolder::worker_intervals(&part.phase.workers) * self.ranks
                    > INLINE_WORKER_INTERVALS
            }
        };
        let name = part.phase.name.clone();
        let folded = FoldedSeries::of(&name, &mut part.phase.workers, detach);
        self.add_folded(rank, part, folded);
    }

    /// Folds in rank `rank`'s part as it sent it ([`super::part::encode`]).
    pub fn add_sent(&mut self, rank: u32, bytes: &[u8]) -> Result<(), String> {
        let (part, folded) = super::part::decode(bytes)?;
        self.add_folded(rank, part, folded);
        Ok(())
    }

    /// Folds in a part whose series its rank folded: stamps moved onto rank 0's clock, its sum
    /// series added and its rows appended.
    fn add_folded(&mut self, rank: u32, part: RankPhase, folded: FoldedSeries) {
        let offset = offset_of(self.offsets, rank);
        let (origin, root_origin) = (part.origin_unix_ns, self.root_origin);
        let mut phase = part.phase;
        phase.move_stamps(|t| shift(t, origin, offset, root_origin));
        let (ranks, intervals) = (self.ranks, folded.all.as_ref().map_or(0, |s| s.len()));
        self.folder
            .get_or_insert_with(|| {
                SeriesFolder::detaching(folded.detached).bounding_ranks(ranks, intervals)
            })
            .add_folded(folded);
        self.histogram += &Histogram::from_data(&phase.latency.histogram);
        if let Some(p) = &phase.pace {
            self.response += &Histogram::from_data(&p.response.histogram);
            if let Some(lag) = &p.lag {
                self.lag += &Histogram::from_data(&lag.histogram);
            }
        }
        self.operations.push(std::mem::take(&mut phase.operations));
        self.user_s += phase.cpu.user_s;
        self.system_s += phase.cpu.system_s;
        self.resident = self
            .resident
            .zip(phase.cache.resident_before_bytes)
            .map(|(a, b)| a + b);
        self.own_io =
            self.own_io
                .zip(phase.cache.own_io)
                .map(|(a, b)| iobm_results::storage::OwnIo {
                    read_bytes: a.read_bytes + b.read_bytes,
                    written_bytes: a.written_bytes + b.written_bytes,
                });
        for b in std::mem::take(&mut phase.cache.below) {
            if !self.below.iter().any(|x| x.host == b.host) {
                self.below.push(b);
            }
        }
        let host = phase
            .workers
            .first()
            .map_or(String::new(), |w| w.host.clone());
        let seen = &mut self.devices_seen;
        if let Some(d) = phase
            .cache
            .device
            .as_ref()
            .filter(|d| !seen.contains(&(host.clone(), d.device.clone())))
        {
            seen.push((host.clone(), d.device.clone()));
            let sum = self.device.get_or_insert(DeviceIo {
                device: d.device.clone(),
                read_bytes: 0,
                written_bytes: 0,
            });
            if sum.device != d.device {
                sum.device = "several".to_string();
            }
            sum.read_bytes += d.read_bytes;
            sum.written_bytes += d.written_bytes;
        }
        for nic in std::mem::take(&mut phase.cache.wire) {
            if !self
                .wire
                .iter()
                .any(|n| n.host == nic.host && n.nic == nic.nic)
            {
                self.wire.push(nic);
            }
        }
        absorb(&mut self.merged, phase);
    }

    /// The merged phase: latency, operations, CPU, cache evidence, aggregates and checks.
    pub fn finish(self, machine: &Machine) -> PhaseResult {
        let mut phase = self.merged.expect("at least one rank");
        phase.latency = latency(phase.latency.measures.clone(), &self.histogram);
        phase.device_copy = iobm_results::device::DeviceCopy::of(&phase);
        phase.operations =
            merge_operations(self.operations, phase.end_ns.saturating_sub(phase.start_ns));
        phase.cpu = cpu_usage(self.user_s, self.system_s, phase.bytes());
        // Ranks sharing one file each measure all of it: never more than the data set.
        phase.cache = CacheEvidence {
            resident_before_bytes: self.resident.map(|r| r.min(phase.settings.data_bytes)),
            own_io: self.own_io,
            below: self.below,
            device: self.device,
            servers: Vec::new(),
            verdict: None,
            wire: self.wire,
        };
        phase.aggregates = aggregates(&phase.spans());
        let (ops, wall_ns) = (
            phase.spans().iter().map(|s| s.ops).sum(),
            phase.end_ns.saturating_sub(phase.start_ns),
        );
        if let Some(p) = phase.pace.as_mut() {
            p.response = latency(p.response.measures.clone(), &self.response);
            p.lag = p.lag.take().map(|l| latency(l.measures, &self.lag));
            p.assess(ops, wall_ns);
        }
        if let Some(folder) = self.folder {
            folder.finish(&mut phase);
        }
        check(&mut phase, machine);
        phase
    }
}

/// Adds one process's (or run's) part of a phase to what was merged so far: the span, the
/// worst status, the workers, errors by kind, the data set and the notes.
pub(crate) fn absorb(merged: &mut Option<PhaseResult>, phase: PhaseResult) {
    let Some(m) = merged else {
        *merged = Some(phase);
        return;
    };
    m.start_ns = m.start_ns.min(phase.start_ns);
    m.end_ns = m.end_ns.max(phase.end_ns);
    m.status = worst(m.status, phase.status);
    m.workers.extend(phase.workers);
    for e in phase.errors {
        match m.errors.iter_mut().find(|x| x.kind == e.kind) {
            Some(x) => x.count += e.count,
            None => m.errors.push(e),
        }
    }
    m.settings.data_bytes += phase.settings.data_bytes;
    if let (Some(a), Some(b)) = (m.pace.as_mut(), &phase.pace) {
        a.merge_counts(b);
    }
    // Every rank's stopped workers; the wear-out is agreed by all.
    if let (Some(a), Some(b)) = (m.stonewall.as_mut(), phase.stonewall) {
        a.stopped_workers += b.stopped_workers;
        a.fewest_at_wall = match (a.fewest_at_wall, b.fewest_at_wall) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        a.wear_out_items = a.wear_out_items.max(b.wear_out_items);
    }
    for note in phase.notes {
        if !m.notes.contains(&note) {
            m.notes.push(note);
        }
    }
}

/// Each kind of object operation over all ranks: counts summed, histograms merged, series
/// added interval by interval (each rank's from its own start, within the barrier's skew),
/// rates over the merged phase's wall time.
pub(crate) fn merge_operations(
    ranks: Vec<Vec<OperationResult>>,
    wall_ns: u64,
) -> Vec<OperationResult> {
    let mut merged: Vec<(OperationResult, Histogram, Histogram)> = Vec::new();
    for o in ranks.into_iter().flatten() {
        let ttfb = o.ttfb.as_ref().map(|t| Histogram::from_data(&t.histogram));
        let hist = Histogram::from_data(&o.latency.histogram);
        match merged.iter_mut().find(|(m, _, _)| m.op == o.op) {
            None => merged.push((o, hist, ttfb.unwrap_or_default())),
            Some((m, h, t)) => {
                *h += &hist;
                if let Some(ttfb) = &ttfb {
                    *t += ttfb;
                }
                m.ops += o.ops;
                m.bytes += o.bytes;
                m.errors += o.errors;
                m.retried += o.retried;
                m.keys += o.keys;
                if let (Some(ms), Some(os)) = (m.series.as_mut(), o.series.as_ref()) {
                    ms.merge(os);
                }
            }
        }
    }
    let wall_s = wall_ns as f64 / 1e9;
    let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
    merged
        .into_iter()
        .map(|(mut o, hist, ttfb)| {
            o.latency = latency(o.latency.measures.clone(), &hist);
            if let Some(t) = o.ttfb.as_mut() {
                *t = latency(t.measures.clone(), &ttfb);
            }
            o.ops_per_s = per_s(o.ops);
            o.bytes_per_s = per_s(o.bytes);
            o
        })
        .collect()
}

pub(crate) fn worst(a: RunStatus, b: RunStatus) -> RunStatus {
    let rank = |s| match s {
        RunStatus::Complete | RunStatus::Running => 0,
        RunStatus::Interrupted => 1,
        RunStatus::Failed => 2,
    };
    if rank(b) > rank(a) {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_move_onto_rank_0s_clock() {
        // Rank 1's origin is 1000 ns after rank 0's on its own clock, which runs 300 ns ahead.
        assert_eq!(shift(50, 2000, 300, 1000), 750);
        assert_eq!(shift(0, 1000, 0, 1000), 0);
        assert_eq!(shift(0, 0, 10, 1000), 0);
    }
}
