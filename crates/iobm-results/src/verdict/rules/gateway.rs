//! An object phase judged by the iobm gateways' own counters: the share of what they served
//! that was in their page cache, or what their storage wrote of what they received. Their
//! storage's counters are every process's: beyond what the gateways served or received
//! ([`Margin::SERVER`]) they are other I/O, named, never a share above 100%.

use crate::remote::is_gateway;
use crate::share::{by_share, pct, Margin};
use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, PhaseResult, ServerEvidence, Verdict};
use iobm_stats::format_bytes;
use iobm_stats::names::OpName;

/// The gateways served the GETs: judged by what their page cache held.
pub struct Served;

/// The gateways received the PUTs of a phase without GETs: judged by what their storage wrote.
pub struct Received;

/// Bytes the phase's GETs read.
pub(super) fn get_bytes(phase: &PhaseResult) -> u64 {
    (phase.operations.iter())
        .filter(|o| o.op == OpName::Get)
        .map(|o| o.bytes)
        .sum()
}

/// A device counter summed over the gateways; several gateways of one host on one device each
/// count all of its bytes: once. None when one of them has no such counter.
fn device(servers: &[ServerEvidence], f: fn(&ServerEvidence) -> Option<u64>) -> Option<u64> {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let mut total = Some(0u64);
    for e in servers.iter().filter(|e| is_gateway(e)) {
        let host = e.endpoint.split("://").nth(1).unwrap_or(&e.endpoint);
        let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
        let key = (host, e.device.as_deref().unwrap_or(""));
        if e.device.is_some() && seen.contains(&key) {
            continue;
        }
        seen.push(key);
        total = total.zip(f(e)).map(|(a, b)| a + b);
    }
    total
}

impl Rule for Served {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let servers = &e.phase.cache.servers;
        let served: u64 = servers.iter().map(|s| s.served_bytes).sum();
        (e.class == Class::Object && served > 0).then_some(())?;
        let resident: u64 = servers.iter().map(|s| s.resident_bytes).sum();
        let device_read =
            device(servers, |s| s.device_read_bytes).map_or(
                String::new(),
                |d| match Margin::SERVER.share(d, served) {
                    Some(share) => {
                        format!("; its storage read {} ({share:.0}% of it)", format_bytes(d))
                    }
                    None => format!(
                    "; its storage read {}, {} more than it served: other I/O ran on its device",
                    format_bytes(d),
                    format_bytes(d - served)
                ),
                },
            );
        let data = e.phase.settings.data_bytes;
        let gets = get_bytes(e.phase);
        let passes = if data > 0 && gets > 0 {
            format!(
                "; the GETs read the data set ({}) {:.1} times over",
                format_bytes(data),
                gets as f64 / data as f64
            )
        } else {
            String::new()
        };
        judged(
            by_share(100.0 - pct(resident, served)),
            format!(
                "the gateway served {}: {:.0}% was in its page cache before it read it{device_read}{passes}",
                format_bytes(served),
                pct(resident, served)
            ),
        )
    }
}

impl Rule for Received {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let servers = &e.phase.cache.servers;
        let received: u64 = servers.iter().map(|s| s.received_bytes).sum();
        (e.class == Class::Object && received > 0 && get_bytes(e.phase) == 0).then_some(())?;
        let written = device(servers, |s| s.device_written_bytes);
        match written.map(|w| (w, Margin::SERVER.share(w, received))) {
            Some((written, Some(share))) => judged(
                by_share(share),
                format!(
                    "the gateway received {}; its storage wrote {} during the phase ({share:.0}%), the rest was still in its page cache",
                    format_bytes(received),
                    format_bytes(written),
                ),
            ),
            Some((written, None)) => judged(
                Verdict::Unknown,
                format!(
                    "other I/O (or the write-back of earlier data) ran on the gateway's device: the gateway received {}; its storage wrote {} during the phase, {} more, so this phase's share cannot be told",
                    format_bytes(received),
                    format_bytes(written),
                    format_bytes(written - received)
                ),
            ),
            None => judged(
                Verdict::PossiblyCached,
                format!(
                    "the gateway received {}; it has no device counters (tmpfs or a network file system)",
                    format_bytes(received)
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::verdict::rules::tests::operation;

    fn gateway(served: u64, resident: u64, received: u64) -> ServerEvidence {
        ServerEvidence {
            endpoint: "http://h:9000".into(),
            served_bytes: served,
            resident_bytes: resident,
            received_bytes: received,
            device_written_bytes: Some(received / 2),
            ..ServerEvidence::default()
        }
    }

    #[test]
    fn served_fires_on_what_the_gateway_served() {
        let m = Machine::with_ram(RAM);
        let mut get = phase(OpName::Get, [MIB, MIB], [1_000_000_000; 2]);
        get.operations = vec![operation(&get, OpName::Get, 2 * MIB)];
        assert!(Served.judge(&Evidence::of(&get, &m)).is_none());
        get.cache.servers = vec![gateway(2 * MIB, 2 * MIB, 0)];
        let v = Served.judge(&Evidence::of(&get, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
    }

    #[test]
    fn received_fires_on_puts_the_gateway_received() {
        let m = Machine::with_ram(RAM);
        let mut put = phase(OpName::Put, [MIB, MIB], [1_000_000_000; 2]);
        put.operations = vec![operation(&put, OpName::Put, 2 * MIB)];
        assert!(Received.judge(&Evidence::of(&put, &m)).is_none());
        put.cache.servers = vec![gateway(0, 0, 2 * MIB)];
        let v = Received.judge(&Evidence::of(&put, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::PartlyCached, "{}", v.evidence);
    }

    #[test]
    fn the_gateways_storage_beyond_what_it_moved_is_other_io_never_a_share_above_100_percent() {
        let m = Machine::with_ram(RAM);
        // A PUT of 65.25 MiB on a busy disk: its storage wrote 664.42 MiB (once "1018%").
        let mut put = phase(OpName::Put, [MIB, MIB], [1_000_000_000; 2]);
        put.operations = vec![operation(&put, OpName::Put, 6525 * MIB / 100)];
        put.cache.servers = vec![ServerEvidence {
            device_written_bytes: Some(66442 * MIB / 100),
            ..gateway(0, 0, 6525 * MIB / 100)
        }];
        let v = Received.judge(&Evidence::of(&put, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Unknown, "{}", v.evidence);
        assert_eq!(
            v.evidence,
            "other I/O (or the write-back of earlier data) ran on the gateway's device: the gateway received 65.25 MiB; its storage wrote 664.42 MiB during the phase, 599.17 MiB more, so this phase's share cannot be told"
        );
        assert_eq!(crate::verdict::verdict(&put, &m).verdict, Verdict::Unknown);
        // Within a tenth and 4 MiB: at most 100%.
        put.cache.servers[0].device_written_bytes = Some(70 * MIB);
        let v = Received.judge(&Evidence::of(&put, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
        assert!(v.evidence.contains("(100%)"), "{}", v.evidence);
        // A GET: the verdict is the gateway's own (its page cache), its storage's other I/O
        // named (once "12277% of it").
        let mut get = phase(OpName::Get, [MIB, MIB], [1_000_000_000; 2]);
        get.operations = vec![operation(&get, OpName::Get, 2 * MIB)];
        get.cache.servers = vec![ServerEvidence {
            device_read_bytes: Some(24554 * MIB / 100),
            ..gateway(2 * MIB, 2 * MIB, 0)
        }];
        let v = Served.judge(&Evidence::of(&get, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
        assert!(
            v.evidence.contains("; its storage read 245.54 MiB, 243.54 MiB more than it served: other I/O ran on its device"),
            "{}",
            v.evidence
        );
        assert!(!v.evidence.contains("% of it"), "{}", v.evidence);
    }
}
