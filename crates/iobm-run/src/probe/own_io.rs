//! This process's own bytes at the block layer over a phase (`/proc/self/io`).

use super::{Probe, Refusal, Scene};
use iobm_engine::PhaseOutcome;
use iobm_results::PhaseResult;
use iobm_target::layers::ProcessIo;
use std::sync::Mutex;

/// The reading before the phase.
#[derive(Default)]
pub struct OwnIo(Mutex<Option<ProcessIo>>);

impl Probe for OwnIo {
    fn before(&self, _: &Scene) -> Result<(), Refusal> {
        *self.0.lock().unwrap() = ProcessIo::now();
        Ok(())
    }

    fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        let before = self.0.lock().unwrap().take();
        result.cache.own_io = before.zip(ProcessIo::now()).map(|(before, after)| {
            let moved = before.until(&after);
            iobm_results::storage::OwnIo {
                read_bytes: moved.read_bytes,
                written_bytes: moved.written_bytes,
            }
        });
    }
}
