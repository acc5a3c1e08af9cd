//! Runs a list of phases against a target and fills in the run's result, printing each phase
//! as it completes; stops at the first phase that was interrupted or failed.

use crate::progress::ProgressLine;
use crate::record::phase_result;
use iobm_engine::{run_phase, Control, Op, Phase, StopRule};
use iobm_results::{RunResult, RunStatus};
use iobm_target::Target;
use std::sync::Arc;

/// Runs `phases` in order, appending each phase's result to `run` and handing it to `on_phase`.
/// Later phases on the files of a write that stopped by time are limited to the data it wrote.
pub fn execute(
    target: &dyn Target,
    mut phases: Vec<Phase>,
    run: &mut RunResult,
    control: &Arc<Control>,
    mut on_phase: impl FnMut(&RunResult),
) {
    let _progress = ProgressLine::start(control.clone());
    for index in 0..phases.len() {
        if control.stop_requested() {
            run.status = RunStatus::Interrupted;
            break;
        }
        let phase = phases[index].clone();
        let outcome = run_phase(target, &phase, control);
        if phase.op == Op::Write && matches!(phase.stop, StopRule::Duration(_)) {
            let written: Vec<u64> = outcome.workers.iter().map(|w| w.span.bytes).collect();
            let same_data = |p: &&mut Phase| p.layout.files == phase.layout.files;
            for later in phases[index + 1..].iter_mut().filter(same_data) {
                later.limit_to_written(&phase, &written);
            }
        }
        let result = phase_result(
            &phase,
            &outcome,
            &run.environment.hostname,
            run.environment.ram_bytes,
        );
        let status = result.status;
        run.phases.push(result);
        on_phase(run);
        if status != RunStatus::Complete {
            run.status = status;
            break;
        }
    }
}
