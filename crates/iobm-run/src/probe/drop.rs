//! The page cache dropped before a phase that asks for it (`Phase::drop_cache`, or the whole
//! system's with `Phase::drop_system_cache`), and what was dropped, in the phase's settings.

use super::{Probe, Refusal, Scene};
use iobm_results::PhaseResult;
use iobm_target::{posix, Place};
use std::sync::Mutex;

pub use iobm_stats::names::CacheDrop;
use iobm_stats::names::CacheDropped;

/// Drops what the phase asks, untimed.
pub struct PageCacheDrop {
    /// The storage is memory: its pages are the data itself, nothing is dropped.
    memory_fs: bool,
    dropped: Mutex<CacheDrop>,
}

impl PageCacheDrop {
    pub fn new(memory_fs: bool) -> PageCacheDrop {
        PageCacheDrop {
            memory_fs,
            dropped: Mutex::new(CacheDrop::Nothing),
        }
    }
}

impl Probe for PageCacheDrop {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        let phase = scene.phase;
        let mut dropped = self.dropped.lock().unwrap();
        *dropped = CacheDrop::Nothing;
        if phase.drop_system_cache && posix::drop_system_cache() {
            *dropped = CacheDrop::System;
            return Ok(());
        }
        if !(phase.drop_cache || phase.drop_system_cache) {
            return Ok(());
        }
        let root = match scene.target.place() {
            Place::Dir(root) => root,
            Place::Device(device) => {
                *dropped = CacheDrop::Files;
                return posix::drop_cache(device)
                    .map_err(|e| Refusal::Phase(e, "drop the page cache"));
            }
            Place::Elsewhere => return Ok(()),
        };
        for file in &phase.layout.files {
            *dropped = CacheDrop::Files;
            posix::drop_cache(&root.join(&file.name))
                .map_err(|e| Refusal::Phase(e, "drop the page cache"))?;
        }
        Ok(())
    }

    fn after(&self, _: &Scene, _: &iobm_engine::PhaseOutcome, result: &mut PhaseResult) {
        let dropped = match self.memory_fs {
            true => CacheDrop::Nothing,
            false => *self.dropped.lock().unwrap(),
        };
        result.settings.drop_cache = dropped != CacheDrop::Nothing;
        result.settings.cache_dropped = CacheDropped::client(dropped);
    }
}
