//! Runs a list of phases against a target on every rank and fills in the run's result (at rank
//! 0), handing the run to its observers after each merged phase; stops at the first phase that
//! was interrupted or failed on any rank.

use crate::observe::Observer;
use crate::offered;
use crate::progress::ProgressLine;
use crate::ranks::{RankPhase, Ranks};
use crate::record::phase_result;
use iobm_engine::{run_phase_gated, Control, Op, Phase, StopRule};
use iobm_results::checks::Machine;
use iobm_results::{RunResult, RunStatus};
use iobm_target::Target;
use std::sync::Arc;

/// Runs `phases` in order, appending each phase's result to `run` (rank 0) and handing the run
/// to every observer. Later phases on the files of a write that stopped by time are limited to
/// the data it wrote.
pub fn execute(
    target: &dyn Target,
    mut phases: Vec<Phase>,
    run: &mut RunResult,
    control: &Arc<Control>,
    ranks: &Ranks,
    observers: &mut [&mut dyn Observer],
) {
    let _progress = ranks
        .is_root()
        .then(|| ProgressLine::start(control.clone()));
    if ranks.is_root() {
        for o in observers.iter_mut() {
            o.started(run);
        }
    }
    let host = run.environment.hostname.clone();
    let machine = Machine::of(run);
    for index in 0..phases.len() {
        if !ranks.all(!control.stop_requested()) {
            run.status = RunStatus::Interrupted;
            break;
        }
        let phase = phases[index].clone();
        let outcome = run_phase_gated(target, &phase, control, &|| ranks.barrier());
        if phase.op == Op::Write && matches!(phase.stop, StopRule::Duration(_)) {
            let written: Vec<u64> = outcome.workers.iter().map(|w| w.span.bytes).collect();
            let same_data = |p: &&mut Phase| p.layout.files == phase.layout.files;
            for later in phases[index + 1..].iter_mut().filter(same_data) {
                later.limit_to_written(&phase, &written);
            }
        }
        let mut recorded = phase_result(&phase, &outcome, ranks.rank(), &host, &machine);
        // Object phases: the endpoint each worker sent its requests to, before the merge adds
        // up each endpoint's series.
        for w in &mut recorded.workers {
            w.endpoint = target.endpoint_of(w.worker as usize).map(str::to_string);
        }
        // Outside the phase's timing and CPU: what its data offered the storage.
        recorded.offered = offered::measure(&phase, phase.verify.unwrap_or(control.run_id));
        let local = RankPhase {
            phase: recorded,
            traces: outcome.workers.into_iter().map(|w| w.trace).collect(),
            origin_unix_ns: run.clock.origin_unix_ns,
        };
        let mut status = RunStatus::Complete;
        if let Some(merged) = ranks.merge(local, run.clock.origin_unix_ns, &machine) {
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
