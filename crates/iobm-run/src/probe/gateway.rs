//! What each iobm gateway among the target's endpoints counted for the run's bucket over a
//! phase (bytes served from its page cache or its disk, received, written back): rank 0 reads
//! the counters before the phase and once every rank's part is merged, and the difference is
//! the phase's server evidence, before that of `--server-metrics`.

use super::{Probe, Refusal, Scene};
use iobm_results::server::{self, Counters};
use iobm_results::PhaseResult;
use iobm_target::Target;
use std::sync::Mutex;

/// The counters of the gateways serving `bucket`.
pub struct GatewayCounters {
    bucket: String,
    /// Per endpoint, before the phase (None: not an iobm gateway).
    before: Mutex<Vec<Option<Counters>>>,
}

impl GatewayCounters {
    pub fn new(bucket: &str) -> GatewayCounters {
        GatewayCounters {
            bucket: bucket.to_string(),
            before: Mutex::new(Vec::new()),
        }
    }

    /// The counters for the bucket of each endpoint that is an iobm gateway.
    fn read(&self, target: &dyn Target) -> Vec<Option<Counters>> {
        let texts = target.server_counters();
        let parse = |text: &Option<String>| text.as_deref().map(|t| server::parse(t, &self.bucket));
        texts.iter().map(parse).collect()
    }
}

impl Probe for GatewayCounters {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        let read = match scene.ranks.is_root() {
            true => self.read(scene.target),
            false => Vec::new(),
        };
        *self.before.lock().unwrap() = read;
        Ok(())
    }

    fn merged(&self, scene: &Scene, result: &mut PhaseResult) {
        let before = std::mem::take(&mut *self.before.lock().unwrap());
        let after = self.read(scene.target);
        let endpoint = |i: usize| scene.target.endpoint_of(i);
        let counted = before.iter().zip(&after).enumerate();
        let evidence = counted.filter_map(|(i, pair)| match pair {
            (Some(b), Some(a)) => Some(server::evidence(endpoint(i)?, b, a)),
            _ => None,
        });
        // The gateways' own first, then those of --server-metrics.
        let servers = &mut result.cache.servers;
        let others = std::mem::take(servers);
        *servers = evidence.chain(others).collect();
    }
}
