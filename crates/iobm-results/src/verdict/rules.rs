//! The rules of the cache verdict, best evidence first: the first that fires decides. A rule
//! is a file under `rules/` and a line in [`RULES`]; its unit tests sit beside it.

mod device;
mod direct;
mod fsync;
mod gateway;
mod layers;
mod lookups;
mod memory;
mod metadata;
mod network;
mod nothing;
mod objects;
mod residency;
mod servers;
mod size;
mod wire;

use super::Rule;

/// The rules in their order of precedence. Rules of different classes of phase (objects,
/// file writes, file reads, metadata) never fire on the same phase, so only the order within a
/// class matters.
pub const RULES: &[&dyn Rule] = &[
    &memory::Memory,
    &lookups::Lookups,
    &nothing::NothingMoved,
    &metadata::MetadataOps,
    // Object phases: the gateways' own counters, then beyond the client.
    &gateway::Served,
    &gateway::Received,
    // File phases on a network file system: above the line rate, then as objects.
    &network::HostOverLine,
    &wire::Wire,
    &servers::Servers,
    &objects::WritesUnseen,
    &network::GetsOverLine,
    &objects::Passes,
    &size::ServerFits,
    &objects::Unseen,
    // File phases from this client's side.
    &layers::Layers,
    &device::Device,
    &direct::Direct,
    &fsync::Fsync,
    &fsync::Unflushed,
    &residency::Residency,
    &size::OverRam,
    &size::FitsRam,
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::{OperationResult, PhaseResult};
    use iobm_stats::names::OpName;

    /// One kind of operation of an object phase, moving `bytes`.
    pub(crate) fn operation(p: &PhaseResult, op: OpName, bytes: u64) -> OperationResult {
        OperationResult {
            op,
            ops: bytes >> 20,
            bytes,
            errors: 0,
            retried: 0,
            keys: 0,
            ops_per_s: 0.0,
            bytes_per_s: bytes as f64,
            latency: p.latency.clone(),
            ttfb: None,
            series: None,
        }
    }

    #[test]
    fn the_rules_are_tried_best_evidence_first() {
        let names: Vec<&str> = RULES.iter().map(|r| r.name()).collect();
        assert_eq!(
            names,
            [
                "Memory",
                "Lookups",
                "NothingMoved",
                "MetadataOps",
                "Served",
                "Received",
                "HostOverLine",
                "Wire",
                "Servers",
                "WritesUnseen",
                "GetsOverLine",
                "Passes",
                "ServerFits",
                "Unseen",
                "Layers",
                "Device",
                "Direct",
                "Fsync",
                "Unflushed",
                "Residency",
                "OverRam",
                "FitsRam",
            ]
        );
    }
}
