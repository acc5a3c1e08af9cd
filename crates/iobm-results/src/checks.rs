//! Checks on a phase's numbers that become warnings: aggregates that disagree, and the signs
//! of a cache effect (data resident before a read, a device that moved less than the benchmark,
//! a data set that fits in memory). Computed from the result alone, so saved runs re-check.

use crate::{PhaseResult, RunStatus};
use iobm_stats::{aggregate::disagreement, format_bytes};

/// Aggregates further apart than this (relative) are reported.
pub const AGGREGATE_TOLERANCE: f64 = 0.10;

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// Warnings for one phase of a run on a machine with `ram_bytes` of memory.
pub fn phase_warnings(phase: &PhaseResult, ram_bytes: u64) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(w) = disagreement(&phase.aggregates, AGGREGATE_TOLERANCE) {
        out.push(w);
    }
    match phase.status {
        RunStatus::Interrupted => {
            out.push("interrupted: these numbers cover part of the phase".into())
        }
        RunStatus::Failed => {
            out.push("failed: these numbers cover the phase up to the first error".into())
        }
        RunStatus::Complete => {}
    }
    let moved = phase.bytes();
    let s = &phase.settings;
    let device = phase.cache.device.as_ref();
    let cache_hint = "use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM";
    if phase.op == "read" && !s.direct && moved > 0 {
        if let Some(resident) = phase.cache.resident_before_bytes {
            if pct(resident, s.data_bytes) > 10.0 {
                out.push(format!(
                    "cache effect: {:.0}% of the data ({} of {}) was in the page cache when the read began, so this is partly a memory rate; {cache_hint}",
                    pct(resident, s.data_bytes),
                    format_bytes(resident),
                    format_bytes(s.data_bytes)
                ));
            }
        }
        if let Some(dev) = device {
            if pct(dev.read_bytes, moved) < 50.0 {
                out.push(format!(
                    "cache effect: the block device {} delivered {} for {} read ({:.0}%); the rest came from a cache",
                    dev.device,
                    format_bytes(dev.read_bytes),
                    format_bytes(moved),
                    pct(dev.read_bytes, moved)
                ));
            }
        } else if s.data_bytes < ram_bytes && phase.cache.resident_before_bytes.is_none() {
            out.push(format!(
                "possible cache effect: the data set ({}) fits in RAM ({}); {cache_hint}",
                format_bytes(s.data_bytes),
                format_bytes(ram_bytes)
            ));
        }
    }
    if phase.op == "write" && !s.direct && moved > 0 {
        match device {
            Some(dev) if pct(dev.written_bytes, moved) < 50.0 => out.push(format!(
                "cache effect: only {} of the {} written reached the block device {} during the phase; the rest stayed in or was overwritten in the page cache (use --direct, or --fsync end with a data set that is written once)",
                format_bytes(dev.written_bytes),
                format_bytes(moved),
                dev.device
            )),
            None if s.fsync == "never" && moved < ram_bytes => out.push(
                "possible cache effect: without --fsync or --direct, written data may still be in the page cache when the phase ends".into(),
            ),
            _ => {}
        }
    }
    out
}
