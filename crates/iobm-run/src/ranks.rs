//! A run over several processes (MPI ranks; one process without MPI). Every rank runs its own
//! workers; all ranks pass a barrier before each phase and another once every rank's workers
//! have ended (so that the evidence read after it covers the whole phase); then rank 0 gathers
//! every rank's phase, moves the stamps onto its own clock with the measured offsets, and
//! merges them into one phase whose aggregates cover all workers of all ranks.

use crate::exit::Failure;
use iobm_dist::{ClockOffset, Transport};
use iobm_engine::Tally;
use iobm_results::checks::Machine;
use iobm_results::detail::{SeriesFolder, INLINE_WORKER_INTERVALS};
use iobm_results::{PhaseResult, RankInfo};
use iobm_stats::{SnapshotInstants, Trace, WorkerSpan};
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
    peers: Option<std::sync::Arc<dyn iobm_dist::Peers>>,
}

impl Ranks {
    /// Connects to the other ranks when an MPI launcher started this process; ranks other
    /// than 0 print nothing from then on (rank 0 reports for all), errors apart.
    pub fn connect() -> Result<Ranks, Failure> {
        let ranks = Ranks::over(iobm_dist::connect().map_err(Failure::input)?);
        if !ranks.is_root() {
            crate::session::silence();
        }
        Ok(ranks)
    }

    /// The processes `transport` connects, with its clock offsets.
    pub fn over(transport: Box<dyn Transport>) -> Ranks {
        let offsets = transport.clock_offsets();
        let peers = transport.peers();
        Ranks {
            transport,
            offsets,
            peers,
        }
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

    /// Messages to rank 0 from any thread, beside the collectives (None in one process).
    /// Messages between any two ranks from any thread (a find's work stealing), where MPI
    /// takes calls from every thread.
    pub fn peers(&self) -> Option<&dyn iobm_dist::Peers> {
        self.peers.as_deref()
    }

    pub fn mailbox(&self) -> Option<std::sync::Arc<dyn iobm_dist::Mailbox>> {
        self.transport.mailbox()
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

    /// `local` if every rank got this far without error ([`Ranks::agree`]), else the first
    /// rank's error.
    pub fn agreed<T>(&self, local: Result<T, Failure>) -> Result<T, Failure> {
        self.agree(local.as_ref().map(|_| ()).map_err(Failure::clone))?;
        local
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
    /// at a time besides the merge. Each rank folds its own workers' series before sending
    /// (`FoldedSeries`, in the framing of [`part`]), so rank 0 adds one sum per rank and
    /// appends its compressed rows without parsing them. The time this takes is the phase's `gather_s`.
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
        let intervals = SeriesFolder::worker_intervals(&local.phase.workers);
        let mine = (local.origin_unix_ns, spans, intervals);
        let mut all: Vec<(u32, u64, Vec<WorkerSpan>)> = Vec::new();
        let mut most = 0;
        self.transport.gather_each(
            &serde_json::to_vec(&mine).expect("serialisable"),
            &mut |rank, bytes| {
                let (origin, spans, intervals): (u64, Vec<WorkerSpan>, usize) =
                    serde_json::from_slice(bytes).expect("ranks send valid spans");
                all.push((rank, origin, spans));
                most = most.max(intervals);
            },
        );
        // The instants of the snapshots, and whether every rank detaches its workers' series.
        let shared: (Vec<SnapshotInstants>, bool) = if self.is_root() {
            let detach = most * self.size() as usize > INLINE_WORKER_INTERVALS;
            (
                per_rank_instants(&all, &self.offsets, root_origin_unix_ns),
                detach,
            )
        } else {
            (Vec::new(), false)
        };
        let (instants, detach) = self.share(&shared);
        let at = instants[self.rank() as usize];
        for (w, trace) in local.phase.workers.iter_mut().zip(&local.traces) {
            at.fill(&mut w.span, trace);
        }
        let sent = part::send(local, detach);
        let mut merger = self
            .is_root()
            .then(|| PhaseMerger::new(&self.offsets, root_origin_unix_ns, self.size() as usize));
        self.transport.gather_each(&sent, &mut |rank, bytes| {
            if let Some(m) = merger.as_mut() {
                m.add_sent(rank, bytes).expect("ranks send valid phases");
            }
        });
        merger.map(|m| {
            let mut phase = m.finish(machine);
            phase.gather_s = Some(started.elapsed().as_secs_f64());
            phase
        })
    }
}

mod merge;
pub mod part;

use merge::per_rank_instants;
pub(crate) use merge::{absorb, merge_operations, worst};
pub use merge::{merge_phases, PhaseMerger};
