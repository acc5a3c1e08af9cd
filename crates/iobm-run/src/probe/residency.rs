//! How much of a reading phase's files was in the page cache just before it began
//! (`mincore`/`cachestat` of each file, summed; unknown when one cannot be told).

use super::{Probe, Refusal, Scene};
use iobm_engine::{Op, PhaseOutcome};
use iobm_results::PhaseResult;
use iobm_target::{posix, Place};
use std::sync::Mutex;

/// The bytes resident before the phase.
#[derive(Default)]
pub struct Residency(Mutex<Option<u64>>);

impl Probe for Residency {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        let phase = scene.phase;
        // Every phase that reads file data (bonnie's per-char reads, seeks and rewrites too).
        let reads_files = matches!(
            phase.op,
            Op::Read | Op::GetChar(_) | Op::Seek { .. } | Op::Rewrite | Op::ReadWrite { .. }
        );
        let root = match scene.target.place() {
            Place::Dir(root) => Some(root),
            Place::Device(_) | Place::Elsewhere => None,
        };
        *self.0.lock().unwrap() = (reads_files && !phase.direct)
            .then(|| {
                let files = phase.layout.files.iter();
                files
                    .map(|f| posix::resident_bytes(&root?.join(&f.name)).ok())
                    .sum::<Option<u64>>()
            })
            .flatten();
        Ok(())
    }

    fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        result.cache.resident_before_bytes = *self.0.lock().unwrap();
    }
}
