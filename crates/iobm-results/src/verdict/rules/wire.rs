//! The client's network interfaces towards the storage moved less than most of what the phase
//! read or wrote: the client's own cache served or holds the rest.

use crate::remote::{read_and_written, wire_totals};
use crate::share::{by_share, pct, Margin, MOST};
use crate::verdict::rule::{judged, Evidence, Rule};
use crate::{CacheVerdict, PhaseResult};
use iobm_stats::format_bytes;

pub struct Wire;

impl Rule for Wire {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        e.beyond_client().then_some(())?;
        verdict(e.phase)
    }
}

/// The client's cache served (or held) what the phase moved: its interfaces towards the
/// storage received (sent) less than most of it. None when they carried most of it, or tell
/// nothing.
fn verdict(phase: &PhaseResult) -> Option<CacheVerdict> {
    let (received, sent, nics) = wire_totals(phase)?;
    let (read, written) = read_and_written(phase);
    let mut parts = Vec::new();
    let mut least = f64::MAX;
    if read > 0 {
        least = least.min(pct(received, read));
        parts.push(format!(
            "the client received {} over {nics} for the {} read ({})",
            format_bytes(received),
            format_bytes(read),
            Margin::CLIENT.share_text(received, read)
        ));
    }
    if written > 0 {
        least = least.min(pct(sent, written));
        parts.push(format!(
            "sent {} over {nics} for the {} written ({})",
            format_bytes(sent),
            format_bytes(written),
            Margin::CLIENT.share_text(sent, written)
        ));
    }
    if parts.is_empty() || least >= MOST {
        return None;
    }
    let whose = match (read > 0, written > 0) {
        (true, false) => "the client's cache served the rest",
        (false, _) => "the rest is in the client's cache",
        (true, true) => "the client's cache served or holds the rest",
    };
    judged(by_share(least), format!("{}: {whose}", parts.join(" and ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::verdict::rules::tests::operation;
    use crate::{NicIo, Verdict};
    use iobm_stats::names::OpName;

    #[test]
    fn fires_when_the_wire_carried_less_than_most_of_it() {
        let nfs = Machine {
            network_fs: true,
            ..Machine::with_ram(RAM)
        };
        let mut read = phase(OpName::Read, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
        let nic = |received| NicIo {
            host: "c".into(),
            nic: "eth0".into(),
            received_bytes: received,
            sent_bytes: 0,
            towards_storage: true,
        };
        read.cache.wire = vec![nic(MIB)];
        let v = Wire.judge(&Evidence::of(&read, &nfs)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
        let local = Machine::with_ram(RAM);
        assert!(Wire.judge(&Evidence::of(&read, &local)).is_none());
        read.cache.wire = vec![nic(100 * MIB)];
        assert!(Wire.judge(&Evidence::of(&read, &nfs)).is_none());
        // Other traffic on the interface is no share above 100%.
        let mut mixed = phase(
            OpName::Readwrite,
            [100 * MIB, 100 * MIB],
            [1_000_000_000; 2],
        );
        mixed.operations = vec![
            operation(&mixed, OpName::Read, 100 * MIB),
            operation(&mixed, OpName::Write, 100 * MIB),
        ];
        mixed.cache.wire = vec![NicIo {
            sent_bytes: 5 * MIB,
            ..nic(300 * MIB)
        }];
        let v = Wire.judge(&Evidence::of(&mixed, &nfs)).unwrap();
        assert_eq!(v.verdict, Verdict::Cached, "{}", v.evidence);
        assert!(
            v.evidence.starts_with("the client received 300.00 MiB over eth0 for the 100.00 MiB read (more than all of it) and sent 5.00 MiB over eth0 for the 100.00 MiB written (5%)"),
            "{}",
            v.evidence
        );
    }
}
