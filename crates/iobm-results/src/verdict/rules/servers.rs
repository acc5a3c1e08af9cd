//! The servers' devices (node_exporter) against what the phase read and wrote: what they did
//! not read or write, their caches served or hold; what they moved beyond what the phase can
//! explain ([`Margin::SERVER`]) is other I/O, whose share of this phase cannot be told.

use crate::remote::{node_totals, read_and_written, servers_dropped, wire_totals, Way};
use crate::share::{by_share, Margin, MOST};
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

/// What the servers' devices did of what the phase moved one way: this phase's share, or
/// other I/O beyond it.
struct Half {
    text: String,
    share: Option<f64>,
}

/// The servers' devices counted `counted` bytes of the `moved` the phase moved `way`.
fn half(way: Way, counted: u64, moved: u64) -> Half {
    let share = Margin::SERVER.share(counted, moved);
    let text = match share {
        Some(share) => format!(
            "{} {} of the {} {} ({share:.1}%)",
            way.did(),
            format_bytes(counted),
            format_bytes(moved),
            way.moved()
        ),
        None => format!(
            "{} {} during the phase, {} more than the {} {}{}",
            way.did(),
            format_bytes(counted),
            format_bytes(counted - moved),
            format_bytes(moved),
            way.moved(),
            way.besides()
        ),
    };
    Half { text, share }
}

/// The verdict from the servers' devices against what the phase moved. None without them.
fn verdict(phase: &PhaseResult) -> Option<CacheVerdict> {
    let t = node_totals(phase)?;
    let (read, written) = read_and_written(phase);
    let devices = t.devices.join("; ");
    let halves: Vec<Half> = (Way::BOTH.into_iter())
        .map(|way| (way, way.of((t.read, t.written)), way.of((read, written))))
        .filter(|&(_, _, moved)| moved > 0)
        .map(|(way, counted, moved)| half(way, counted, moved))
        .collect();
    if halves.is_empty() {
        return None;
    }
    let parts: Vec<&str> = halves.iter().map(|h| h.text.as_str()).collect();
    let least = halves
        .iter()
        .filter_map(|h| h.share)
        .fold(f64::MAX, f64::min);
    let other_io = halves.iter().any(|h| h.share.is_none());
    let (verdict, mut evidence) = if other_io && least >= MOST {
        (
            Verdict::Unknown,
            format!(
                "other I/O ran on the servers' devices ({devices}): they {}, so this phase's share cannot be told",
                parts.join(" and ")
            ),
        )
    } else {
        let v = by_share(least);
        let whose = if other_io {
            format!("other I/O ran on the servers' devices ({devices}): they")
        } else {
            format!("the servers' devices ({devices})")
        };
        let mut evidence = format!("{whose} {}", parts.join(" and "));
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
        (v, evidence)
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
    use crate::verdict::rules::tests::operation;
    use crate::ServerEvidence;
    use iobm_stats::names::OpName;

    #[test]
    fn fires_on_the_servers_devices() {
        let nfs = Machine {
            network_fs: true,
            ..Machine::with_ram(RAM)
        };
        let mut read = phase(OpName::Read, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
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

    /// node_exporter's evidence of a server whose devices read and wrote this much.
    fn node(read: u64, written: u64) -> ServerEvidence {
        ServerEvidence {
            endpoint: "http://s:9100/metrics".into(),
            source: NODE_EXPORTER.into(),
            device: Some("vda".into()),
            device_read_bytes: Some(read),
            device_written_bytes: Some(written),
            ..ServerEvidence::default()
        }
    }

    /// Every percentage in `text` (the figure before each '%').
    fn percentages(text: &str) -> Vec<f64> {
        (text.split('%'))
            .filter_map(|s| s.rsplit(['(', ' ']).next()?.parse().ok())
            .collect()
    }

    #[test]
    fn other_io_on_the_servers_devices_is_unknown_never_a_share_above_100_percent() {
        let m = Machine::with_ram(RAM);
        // `iobm s3 get` of 200 MiB against s3s-fs while another process read the same disk.
        let mut get = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        get.operations = vec![operation(&get, OpName::Get, 200 * MIB)];
        get.cache.servers = vec![node(246_570 * MIB / 1000, 0)];
        let v = Servers.judge(&Evidence::of(&get, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Unknown, "{}", v.evidence);
        assert_eq!(
            v.evidence,
            "other I/O ran on the servers' devices (s: vda): they read 246.57 MiB during the phase, 46.57 MiB more than the 200.00 MiB served, so this phase's share cannot be told"
        );
        assert_eq!(crate::verdict::verdict(&get, &m).verdict, Verdict::Unknown);
        // Within a tenth and 4 MiB: the phase's own, at most 100%.
        get.cache.servers = vec![node(224 * MIB, 0)];
        let v = Servers.judge(&Evidence::of(&get, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
        assert_eq!(percentages(&v.evidence), vec![100.0], "{}", v.evidence);
        // Far beyond, for reads and writes alike: no share above 100% anywhere.
        for (read, written) in [(24_554 * MIB, 0), (0, 2036 * MIB)] {
            let mut p = get.clone();
            if written > 0 {
                p.op = OpName::Put;
                p.operations = vec![operation(&p, OpName::Put, 200 * MIB)];
            }
            p.cache.servers = vec![node(read, written)];
            let v = Servers.judge(&Evidence::of(&p, &m)).unwrap();
            assert_eq!(v.verdict, Verdict::Unknown, "{}", v.evidence);
            assert!(v.evidence.starts_with("other I/O ran on"), "{}", v.evidence);
            assert!(percentages(&v.evidence).is_empty(), "{}", v.evidence);
        }
        // Other I/O on the reads, the writes known to be in the servers' caches: cached.
        let mut mixed = phase(OpName::Mixed, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        mixed.operations = vec![
            operation(&mixed, OpName::Get, 100 * MIB),
            operation(&mixed, OpName::Put, 100 * MIB),
        ];
        mixed.cache.servers = vec![node(400 * MIB, 5 * MIB)];
        let v = Servers.judge(&Evidence::of(&mixed, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
        assert!(
            v.evidence.starts_with("other I/O ran on the servers' devices (s: vda): they read 400.00 MiB during the phase, 300.00 MiB more than the 100.00 MiB served and wrote 5.00 MiB of the 100.00 MiB written (5.0%)"),
            "{}",
            v.evidence
        );
    }
}
