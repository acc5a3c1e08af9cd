//! This client's network interfaces over a phase, where the storage is across a network (S3
//! endpoints, or a network file system): what each moved, towards the servers.

use super::{Probe, Refusal, Scene};
use iobm_engine::PhaseOutcome;
use iobm_results::{wire, PhaseResult, RunResult};
use std::sync::Mutex;

/// The interfaces' counters before the phase.
pub struct Nics {
    host: String,
    /// The interfaces towards the storage (None: every one but loopback).
    towards: Option<Vec<String>>,
    before: Mutex<Vec<(String, u64, u64)>>,
}

impl Nics {
    /// Where `run`'s storage is across a network; None where it is not.
    pub fn of(run: &RunResult) -> Option<Nics> {
        let s3 = run.config.s3.as_ref();
        let storage = run.environment.storage.as_ref();
        let network_fs = storage
            .is_some_and(|s| iobm_results::checks::NETWORK_FS_TYPES.contains(&s.fs_type.as_str()));
        let hosts: Vec<String> = match s3 {
            Some(s3) => s3
                .endpoints
                .iter()
                .filter_map(|e| wire::url_host(e))
                .collect(),
            None if network_fs => storage
                .and_then(|s| wire::mount_server(&s.mount_source))
                .into_iter()
                .collect(),
            None => return None,
        };
        Some(Nics {
            host: run.environment.hostname.clone(),
            towards: wire::towards(&hosts),
            before: Mutex::new(Vec::new()),
        })
    }
}

impl Probe for Nics {
    fn before(&self, _: &Scene) -> Result<(), Refusal> {
        *self.before.lock().unwrap() = wire::counters();
        Ok(())
    }

    fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        let before = std::mem::take(&mut *self.before.lock().unwrap());
        let after = wire::counters();
        result.cache.wire = wire::io(&self.host, &before, &after, self.towards.as_deref());
    }
}
