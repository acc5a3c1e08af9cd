//! Runs a list of phases against a target on every rank and fills in the run's result (at rank
//! 0), handing the run to its observers after each merged phase; stops at the first phase that
//! was interrupted or failed on any rank.

use crate::observe::Observer;
use crate::offered;
use crate::probe::{Probe, Probes, Refusal, Scene};
use crate::progress::ProgressLine;
use crate::ranks::{RankPhase, Ranks};
use crate::record::phase_result;
use iobm_engine::{Control, Op, Phase, PhaseOutcome, Ranked, StopRule};
use iobm_results::checks::{check, Machine};
use iobm_results::{RunResult, RunStatus};
use iobm_target::Target;
use std::sync::Arc;

/// Runs `phases` in order, appending each phase's result to `run` (rank 0) and handing the run
/// to every observer; `extra` probes (the step's own) look before the run's. Later phases on the files of a write that stopped by time are limited to
/// the data it wrote; those on the items of a creation a stonewall cut short, to what it made.
pub fn execute(
    target: &dyn Target,
    (mut phases, extra): (Vec<Phase>, Vec<Arc<dyn Probe>>),
    run: &mut RunResult,
    control: &Arc<Control>,
    ranks: &Ranks,
    observers: &mut [&mut dyn Observer],
) {
    let _progress = ranks
        .is_root()
        .then(|| ProgressLine::start(control.clone()));
    for o in observers.iter_mut().filter(|_| ranks.is_root()) {
        o.started(run);
    }
    let host = run.environment.hostname.clone();
    let machine = Machine::of(run);
    let mut probes = Probes::of(run, control.origin, extra);
    for index in 0..phases.len() {
        if !ranks.all(!control.stop_requested()) {
            run.status = RunStatus::Interrupted;
            break;
        }
        let phase = phases[index].clone();
        let scene = Scene {
            phase: &phase,
            target,
            ranks,
        };
        // Outside the phase's timing: what the probes read before it (and through it).
        let (outcome, ticking) = match probes.before(&scene) {
            Ok(()) => {
                let ticking = probes.ticking(&scene);
                (run_on_ranks(target, &phase, control, ranks), Some(ticking))
            }
            Err(Refusal::Phase(e, what)) => (
                PhaseOutcome::failed_before_start(&phase, control, &e, what),
                None,
            ),
            Err(Refusal::Run(why)) => {
                ranks.is_root().then(|| eprintln!("iobm: {why}"));
                run.warnings.push(why);
                run.status = RunStatus::Failed;
                break;
            }
        };
        limit_later(&mut phases[index + 1..], &phase, &outcome);
        let mut recorded = phase_result(&phase, &outcome, ranks.rank(), &host, &machine);
        // Object phases: the endpoint each worker sent its requests to, before the merge adds
        // up each endpoint's series.
        for w in &mut recorded.workers {
            w.endpoint = target.endpoint_of(w.worker as usize).map(str::to_string);
        }
        probes.after(&scene, &outcome, &mut recorded);
        // Outside the phase's timing and CPU: what its data offered the storage.
        recorded.offered = offered::measure(&phase, phase.verify.unwrap_or(control.run_id));
        let local = RankPhase {
            phase: recorded,
            traces: outcome.workers.into_iter().map(|w| w.trace).collect(),
            origin_unix_ns: run.clock.origin_unix_ns,
        };
        let mut status = RunStatus::Complete;
        if let Some(mut merged) = ranks.merge(local, run.clock.origin_unix_ns, &machine) {
            probes.merged(&scene, ticking, &mut merged);
            check(&mut merged, &machine);
            status = merged.status;
            run.phases.push(merged);
            for o in observers.iter_mut() {
                o.phase_done(run);
            }
        }
        let status = ranks.share(&status);
        if status != RunStatus::Complete {
            run.status = status;
            break;
        }
    }
}

/// The engine's run of `phase` on this rank: its workers released together with every rank's,
/// a stonewall's wear-out the most any worker of any rank did, `--until-stable`'s rate that of
/// every rank's workers. It returns once every rank's workers have ended, so that what the
/// probes read after it (a block device that ranks share, a server) covers the whole phase,
/// never one rank's window against every rank's bytes.
fn run_on_ranks(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    ranks: &Ranks,
) -> PhaseOutcome {
    let ranked = Ranked {
        gate: &|| ranks.barrier(),
        agree: &|most| ranks.max(most),
        sum: &|mine| ranks.sum_tally(mine),
        peers: ranks.peers(),
    };
    let outcome = iobm_engine::run_phase(target, phase, control, &ranked);
    ranks.barrier();
    outcome
}

/// Limits the `later` phases to what `phase` did: those on the files of a write that stopped
/// by time to the data it wrote, those on the items of a creation a stonewall cut short to
/// what it made.
fn limit_later(later: &mut [Phase], phase: &Phase, outcome: &PhaseOutcome) {
    if phase.op == Op::Write && matches!(phase.stop, StopRule::Duration(_)) {
        let written: Vec<u64> = outcome.workers.iter().map(|w| w.span.bytes).collect();
        let same_data = |p: &&mut Phase| p.layout.files == phase.layout.files;
        for p in later.iter_mut().filter(same_data) {
            p.limit_to_written(phase, &written);
        }
    }
    if let Some(made) = outcome.items_done() {
        for p in later.iter_mut() {
            p.limit_to_made(phase, made);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_dist::{ClockOffset, Transport};
    use iobm_engine::Layout;
    use iobm_target::mem::MemTarget;
    use std::sync::Mutex;

    /// Rank 1 of 2, whose barrier notes the bytes this rank's workers had moved when it was
    /// called.
    struct Noting {
        control: Arc<Control>,
        seen: Arc<Mutex<Vec<u64>>>,
    }

    impl Transport for Noting {
        fn rank(&self) -> u32 {
            1
        }
        fn size(&self) -> u32 {
            2
        }
        fn barrier(&self) {
            self.seen.lock().unwrap().push(self.control.live_bytes());
        }
        fn gather_each(&self, _: &[u8], _: &mut dyn FnMut(u32, &[u8])) {}
        fn broadcast(&self, bytes: &[u8]) -> Vec<u8> {
            bytes.to_vec()
        }
        fn clock_offsets(&self) -> Vec<ClockOffset> {
            Vec::new()
        }
    }

    #[test]
    fn every_rank_waits_for_the_others_to_end_before_its_probes_read_their_evidence() {
        let control = Arc::new(Control::new(1, 1));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let ranks = Ranks::over(Box::new(Noting {
            control: control.clone(),
            seen: seen.clone(),
        }));
        let target = MemTarget::new();
        let phase = Phase::new("p", Op::Write, 4096, Layout::file_per_worker(1, 1 << 20));
        iobm_engine::prepare_objects(&target, &phase.layout).unwrap();
        let outcome = run_on_ranks(&target, &phase, &control, &ranks);
        assert_eq!(outcome.workers[0].span.bytes, 1 << 20);
        // The barrier before the phase, then one once this rank's workers have written it all.
        assert_eq!(*seen.lock().unwrap(), [0, 1 << 20]);
    }
}
