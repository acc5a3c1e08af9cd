//! The servers' devices (node_exporter) against what the phase read and wrote: what they did
//! not read or write, their caches served or hold.

use crate::remote::{node_totals, read_and_written, servers_dropped, wire_totals, OTHER_IO};
use crate::share::{by_share, pct, MOST};
use crate::verdict::rule::{judged, Evidence, Rule};
use crate::{CacheVerdict, PhaseResult, Verdict};
use iobm_stats::format_bytes;

pub struct Servers;

impl Rule for Servers {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        e.beyond_client().then_some(())?;
        verdict(e.phase)
    }
}

/// The verdict from the servers' devices against what the phase moved. None without them.
fn verdict(phase: &PhaseResult) -> Option<CacheVerdict> {
    let t = node_totals(phase)?;
    let (read, written) = read_and_written(phase);
    let devices = t.devices.join("; ");
    let mut parts = Vec::new();
    let mut least = f64::MAX;
    let mut other_io = false;
    if read > 0 {
        let share = pct(t.read, read);
        least = least.min(share);
        other_io = share > OTHER_IO;
        parts.push(format!(
            "the servers' devices ({devices}) read {} of the {} served ({share:.1}%)",
            format_bytes(t.read),
            format_bytes(read)
        ));
    }
    if written > 0 {
        let share = pct(t.written, written);
        least = least.min(share);
        parts.push(format!(
            "{} ({devices}) wrote {} of the {} written ({share:.1}%)",
            if read > 0 {
                "they"
            } else {
                "the servers' devices"
            },
            format_bytes(t.written),
            format_bytes(written)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    let mut evidence = parts.join(" and ");
    let verdict = if other_io && least >= MOST {
        evidence.push_str(
            ": more than the phase read, so other I/O ran on them and this phase's share cannot be told",
        );
        Verdict::PossiblyCached
    } else {
        let v = by_share(least);
        if v != Verdict::Uncached {
            evidence.push_str(match (read > 0, written > 0) {
                (true, false) => ": served by their caches",
                (false, _) => ": the rest is in their caches",
                (true, true) => ": their caches served or hold the rest",
            });
            if written > 0 && t.cache_growth > 0 {
                evidence.push_str(&format!(
                    " (their page cache grew by {})",
                    format_bytes(t.cache_growth as u64)
                ));
            }
        }
        v
    };
    if let Some((received, _, nics)) = wire_totals(phase).filter(|_| read > 0) {
        evidence.push_str(&format!(
            "; the client received {} over {nics}",
            format_bytes(received)
        ));
    }
    if servers_dropped(phase) {
        evidence.push_str("; their caches were dropped before the phase (--server-drop-cmd)");
    }
    judged(verdict, evidence)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::server::NODE_EXPORTER;
    use crate::ServerEvidence;

    #[test]
    fn fires_on_the_servers_devices() {
        let nfs = Machine {
            network_fs: true,
            ..Machine::with_ram(RAM)
        };
        let mut read = phase("read", [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
        assert!(Servers.judge(&Evidence::of(&read, &nfs)).is_none());
        read.cache.servers = vec![ServerEvidence {
            endpoint: "http://s:9100/metrics".into(),
            source: NODE_EXPORTER.into(),
            device_read_bytes: Some(100 * MIB),
            device_written_bytes: Some(0),
            ..ServerEvidence::default()
        }];
        let v = Servers.judge(&Evidence::of(&read, &nfs)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
        let local = Machine::with_ram(RAM);
        assert!(Servers.judge(&Evidence::of(&read, &local)).is_none());
    }
}
