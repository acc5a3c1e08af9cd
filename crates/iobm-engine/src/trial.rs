//! The client's own cost per operation at a phase's shape, measured before a paced run: the
//! phase run closed loop for a moment on the null target (no storage), with as many workers as
//! the run, so that a `--rate` no worker could start is told from this machine's figure
//! rather than from a guess.

use crate::workload::{Engine, Phase, StopRule};
use crate::{run_phase, Control, Ranked};
use iobm_target::null::NullTarget;
use std::time::Duration;

/// How long the trial runs.
pub const TRIAL: Duration = Duration::from_millis(100);

/// What one worker of a phase took per operation, against no storage.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientCost {
    /// One worker's time per operation: the workers' time over their operations.
    pub per_op: Duration,
    /// How long the trial ran.
    pub trial: Duration,
}

impl ClientCost {
    /// `phase`'s workers, closed loop and synchronous, on the null target for `trial`.
    pub fn measure(phase: &Phase, trial: Duration) -> ClientCost {
        let trial_phase = Phase {
            stop: StopRule::Duration(trial),
            pace: None,
            ramp: Duration::ZERO,
            engine: Engine::Sync,
            iodepth: 1,
            steady: None,
            // Nothing on the null target to verify.
            verify: None,
            drop_cache: false,
            drop_system_cache: false,
            ..phase.clone()
        };
        let control = Control::new(0, phase.workers);
        let out = run_phase(&NullTarget, &trial_phase, &control, &Ranked::ALONE);
        let ops: u64 = out.workers.iter().map(|w| w.span.ops).sum();
        let busy_ns: u64 = out
            .workers
            .iter()
            .map(|w| w.span.end_ns.saturating_sub(w.span.start_ns))
            .sum();
        ClientCost {
            // None done: at least the whole trial each.
            per_op: Duration::from_nanos(busy_ns / ops.max(1)),
            trial,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pace::{Arrivals, Pace};
    use crate::workload::{Layout, Op};

    #[test]
    fn the_clients_cost_is_measured_closed_loop_on_no_storage_whatever_the_phases_pace() {
        // Paced at 1/s and verified: a paced trial would start one operation in 50 ms, and the null
        // target's reads would fail verification.
        let phase = Phase {
            pace: Some(Pace::new(1.0, 2, Arrivals::Uniform, 0)),
            verify: Some(7),
            workers: 2,
            ..Phase::new("read", Op::Read, 4096, Layout::file_per_worker(2, 1 << 20))
        };
        let trial = Duration::from_millis(50);
        let cost = ClientCost::measure(&phase, trial);
        assert_eq!(cost.trial, trial);
        assert!(cost.per_op > Duration::ZERO);
        // Closed loop: many operations each, not one per gap of a second.
        assert!(cost.per_op < trial / 2, "{:?}", cost.per_op);
    }
}
