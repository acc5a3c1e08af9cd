//! A run over several processes (MPI ranks; one process without MPI). Every rank runs its own
//! workers; before each phase all ranks pass a barrier; after it rank 0 gathers every rank's
//! phase, moves the stamps onto its own clock with the measured offsets, and merges them into
//! one phase whose aggregates cover all workers of all ranks.

use crate::exit::Failure;
use crate::record::{cpu_usage, latency};
use iobm_dist::{ClockOffset, Transport};
use iobm_engine::Tally;
use iobm_results::checks::{check, Machine};
use iobm_results::detail::SeriesFolder;
use iobm_results::{CacheEvidence, DeviceIo, OperationResult, PhaseResult, RankInfo, RunStatus};
use iobm_stats::{aggregates, Histogram, SnapshotInstants, Trace, WorkerSpan};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What one rank sends rank 0 after a phase.
#[derive(Serialize, Deserialize)]
pub struct RankPhase {
    pub phase: PhaseResult,
    /// Each worker's progress trace (for the snapshots across ranks); not kept in results.
    pub traces: Vec<Trace>,
    /// Wall-clock time of this rank's stamp 0.
    pub origin_unix_ns: u64,
}

/// The processes of this run.
pub struct Ranks {
    transport: Box<dyn Transport>,
    offsets: Vec<ClockOffset>,
}

impl Ranks {
    /// Connects to the other ranks when an MPI launcher started this process; ranks other
    /// than 0 print nothing from then on (rank 0 reports for all), errors apart.
    pub fn connect() -> Result<Ranks, Failure> {
        let transport = iobm_dist::connect().map_err(Failure::input)?;
        let offsets = transport.clock_offsets();
        if transport.rank() != 0 {
            crate::session::silence();
        }
        Ok(Ranks { transport, offsets })
    }

    pub fn rank(&self) -> u32 {
        self.transport.rank()
    }

    pub fn size(&self) -> u32 {
        self.transport.size()
    }

    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    pub fn barrier(&self) {
        self.transport.barrier();
    }

    /// The largest of every rank's `value`, on every rank.
    pub fn max(&self, value: u64) -> u64 {
        if self.size() == 1 {
            return value;
        }
        let gathered = self.transport.gather(&value.to_le_bytes());
        let most = gathered.map_or(0, |all| {
            all.iter()
                .filter_map(|b| Some(u64::from_le_bytes(b.get(..8)?.try_into().ok()?)))
                .fold(value, u64::max)
        });
        self.share(&most)
    }

    /// Every rank's progress at one of `--until-stable`'s ticks summed, and whether every
    /// rank's workers have ended, on every rank.
    pub fn sum_tally(&self, mine: Tally) -> Tally {
        if self.size() == 1 {
            return mine;
        }
        let mut message = [0u8; 18];
        message[..8].copy_from_slice(&mine.bytes.to_le_bytes());
        message[8..16].copy_from_slice(&mine.ops.to_le_bytes());
        message[16] = u8::from(mine.done);
        message[17] = u8::from(mine.ending);
        let all = self.transport.gather(&message).map(|all| {
            let word = |b: &[u8], at: usize| {
                b.get(at..at + 8)
                    .and_then(|w| w.try_into().ok())
                    .map_or(0, u64::from_le_bytes)
            };
            let empty = Tally {
                done: true,
                ..Tally::default()
            };
            all.iter().fold(empty, |sum, b| Tally {
                bytes: sum.bytes + word(b, 0),
                ops: sum.ops + word(b, 8),
                done: sum.done && b.get(16) == Some(&1),
                ending: sum.ending || b.get(17) == Some(&1),
            })
        });
        // Rank 0's sum, broadcast (the other ranks' argument is not sent).
        let t = all.unwrap_or_default();
        let [bytes, ops, done, ending] =
            self.share(&[t.bytes, t.ops, u64::from(t.done), u64::from(t.ending)]);
        Tally {
            bytes,
            ops,
            done: done == 1,
            ending: ending == 1,
        }
    }

    /// Whether every rank says yes.
    pub fn all(&self, yes: bool) -> bool {
        self.transport.all(yes)
    }

    /// Rank 0's value, on every rank.
    pub fn share<T: Serialize + DeserializeOwned>(&self, value: &T) -> T {
        let bytes = self
            .transport
            .broadcast(&serde_json::to_vec(value).expect("serialisable"));
        serde_json::from_slice(&bytes).expect("rank 0 sent a valid value")
    }

    /// Goes on only if every rank got this far without error; a rank's error (the first one)
    /// is everybody's, named with its rank when it is not rank 0's.
    pub fn agree(&self, local: Result<(), Failure>) -> Result<(), Failure> {
        if self.size() == 1 {
            return local;
        }
        let mine = local.as_ref().err().map(|f| {
            let who = format!("rank {} ({})", self.rank(), iobm_results::env::hostname());
            (
                f.exit as u8,
                if self.is_root() {
                    f.message.clone()
                } else {
                    format!("{who}: {}", f.message)
                },
            )
        });
        let gathered = self
            .transport
            .gather(&serde_json::to_vec(&mine).expect("serialisable"));
        let first: Option<(u8, String)> = gathered.and_then(|all| {
            all.iter()
                .filter_map(|b| {
                    serde_json::from_slice::<Option<(u8, String)>>(b)
                        .ok()
                        .flatten()
                })
                .next()
        });
        match self.share(&first) {
            None => Ok(()),
            Some((code, message)) => Err(Failure {
                exit: crate::exit::Exit::from_code(code),
                message,
            }),
        }
    }

    /// Moves what every rank's clean-up left behind into rank 0's `run` (each rank calls this
    /// once its clean-up is done).
    pub fn collect_left_behind(&self, run: &mut iobm_results::RunResult) {
        if self.size() == 1 {
            return;
        }
        let mine = if self.is_root() {
            Vec::new()
        } else {
            std::mem::take(&mut run.left_behind)
        };
        let gathered = self
            .transport
            .gather(&serde_json::to_vec(&mine).expect("serialisable"));
        for part in gathered.iter().flatten() {
            let theirs: Vec<iobm_results::LeftBehind> =
                serde_json::from_slice(part).expect("a rank sent a valid list");
            run.left_behind.extend(theirs);
        }
    }

    /// Records the run's ranks and the MPI library in `run` (at rank 0).
    pub fn describe(&self, run: &mut iobm_results::RunResult) {
        run.ranks = self.infos(&run.environment.hostname);
        run.environment.mpi = self
            .transport
            .library()
            .map(|l| iobm_results::env::printable(&l));
    }

    /// Every rank's host and clock offset (rank 0; others get an empty list).
    fn infos(&self, host: &str) -> Vec<RankInfo> {
        let hosts = self.transport.gather(host.as_bytes());
        let Some(hosts) = hosts else {
            return Vec::new();
        };
        hosts
            .iter()
            .enumerate()
            .map(|(rank, host)| {
                let offset = self.offsets.iter().find(|o| o.rank == rank as u32);
                RankInfo {
                    rank: rank as u32,
                    host: String::from_utf8_lossy(host).into_owned(),
                    clock_offset_ns: offset.map_or(0, |o| o.offset_ns),
                    clock_uncertainty_ns: offset.map_or(0, |o| o.uncertainty_ns),
                }
            })
            .collect()
    }

    /// Gathers a phase from every rank; rank 0 gets them merged onto its clock. Two rounds:
    /// every rank's spans (small) give rank 0 the instants of the snapshots, which each rank
    /// then takes from its own workers' traces (the traces never leave their rank); then each
    /// rank's phase is folded into the merge as it arrives, so rank 0 holds one rank's records
    /// at a time besides the merge. The time this takes is the phase's `gather_s`.
    pub fn merge(
        &self,
        mut local: RankPhase,
        root_origin_unix_ns: u64,
        machine: &Machine,
    ) -> Option<PhaseResult> {
        if self.size() == 1 {
            let mut phase = local.phase;
            let mut folder = SeriesFolder::new(SeriesFolder::worker_intervals(&phase.workers));
            folder.add(&phase.name.clone(), &mut phase.workers);
            folder.finish(&mut phase);
            return Some(phase);
        }
        let started = Instant::now();
        let spans: Vec<WorkerSpan> = local.phase.workers.iter().map(|w| w.span).collect();
        let mine = (local.origin_unix_ns, spans);
        let mut all: Vec<(u32, u64, Vec<WorkerSpan>)> = Vec::new();
        self.transport.gather_each(
            &serde_json::to_vec(&mine).expect("serialisable"),
            &mut |rank, bytes| {
                let (origin, spans): (u64, Vec<WorkerSpan>) =
                    serde_json::from_slice(bytes).expect("ranks send valid spans");
                all.push((rank, origin, spans));
            },
        );
        let instants: Vec<SnapshotInstants> = if self.is_root() {
            per_rank_instants(&all, &self.offsets, root_origin_unix_ns)
        } else {
            Vec::new()
        };
        let instants = self.share(&instants);
        let at = instants[self.rank() as usize];
        for (w, trace) in local.phase.workers.iter_mut().zip(&local.traces) {
            at.fill(&mut w.span, trace);
        }
        let part = RankPhase {
            traces: Vec::new(),
            ..local
        };
        let mut merger = self
            .is_root()
            .then(|| PhaseMerger::new(&self.offsets, root_origin_unix_ns, self.size() as usize));
        self.transport.gather_each(
            &serde_json::to_vec(&part).expect("serialisable"),
            &mut |rank, bytes| {
                let part: RankPhase =
                    serde_json::from_slice(bytes).expect("ranks send valid phases");
                if let Some(m) = merger.as_mut() {
                    m.add(rank, part);
                }
            },
        );
        merger.map(|m| {
            let mut phase = m.finish(machine);
            phase.gather_s = Some(started.elapsed().as_secs_f64());
            phase
        })
    }
}

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
fn per_rank_instants(
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
    /// Paced phases: every rank's response times.
    response: Histogram,
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
        }
    }

    /// Folds in rank `rank`'s part, its snapshots taken: stamps moved onto rank 0's clock.
    pub fn add(&mut self, rank: u32, part: RankPhase) {
        let offset = offset_of(self.offsets, rank);
        let (origin, root_origin) = (part.origin_unix_ns, self.root_origin);
        let mut phase = part.phase;
        phase.move_stamps(|t| shift(t, origin, offset, root_origin));
        let ranks = self.ranks;
        let folder = self.folder.get_or_insert_with(|| {
            SeriesFolder::new(SeriesFolder::worker_intervals(&phase.workers) * ranks)
        });
        folder.add(&phase.name.clone(), &mut phase.workers);
        self.histogram += &Histogram::from_data(&phase.latency.histogram);
        if let Some(p) = &phase.pace {
            self.response += &Histogram::from_data(&p.response.histogram);
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
