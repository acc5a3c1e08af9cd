//! nvidia-fs's counters around a `--gds` phase (`iobm_target::memory::nvfs`): the bytes it
//! moved GPU-direct, the evidence of the path the phase's bytes took (`iobm_results::gds`).

use super::{Probe, Refusal, Scene};
use iobm_engine::PhaseOutcome;
use iobm_results::gds::{GdsEvidence, NvfsMoved};
use iobm_results::PhaseResult;
use iobm_target::memory::nvfs::NvfsStats;
use std::sync::Mutex;

/// The reading before the phase (None: no stats file).
#[derive(Default)]
pub struct Nvfs(Mutex<Option<NvfsStats>>);

impl Probe for Nvfs {
    fn before(&self, _: &Scene) -> Result<(), Refusal> {
        *self.0.lock().unwrap() = NvfsStats::now();
        Ok(())
    }

    fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        let before = self.0.lock().unwrap().take();
        let nvfs = before.zip(NvfsStats::now()).map(|(before, after)| {
            let moved = before.until(&after);
            NvfsMoved {
                read_bytes: moved.read_bytes,
                written_bytes: moved.written_bytes,
            }
        });
        result.gds = Some(GdsEvidence { nvfs, path: None });
    }
}
