//! A file phase judged by the block-device counters that are this run's evidence: the share of
//! what it read that the device delivered, of what it wrote that the device took.

use crate::share::{by_share, pct};
use crate::storage::share_text;
use crate::verdict::rule::{Class, Evidence, Rule};
use crate::{CacheVerdict, DeviceIo};
use iobm_stats::format_bytes;
use iobm_stats::names::OpName;

pub struct Device;

impl Rule for Device {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let d = e.storage.device.as_ref()?;
        let moved = e.moved;
        match (e.class, e.phase.op) {
            (Class::Write, _) => Some(e.below(
                by_share(pct(d.written_bytes, moved)),
                format!(
                    "the block device {} took {} of the {} written during the phase ({})",
                    d.device,
                    format_bytes(d.written_bytes),
                    format_bytes(moved),
                    share_text(d.written_bytes, moved)
                ),
            )),
            (Class::Read, OpName::Readwrite) => Some(read_and_write(e, d)),
            (Class::Read, OpName::Rewrite) => {
                // Each block is read, then written back: both halves count, neither for more
                // than its own (readahead does not make up for writes left in the page cache).
                let both = d.read_bytes.min(moved) + d.written_bytes.min(moved);
                Some(e.client_read(
                    by_share(pct(both, 2 * moved)),
                    format!(
                        "the block device {} delivered {} and took {} of the {} read and written back ({})",
                        d.device,
                        format_bytes(d.read_bytes),
                        format_bytes(d.written_bytes),
                        format_bytes(moved),
                        share_text(both, 2 * moved)
                    ),
                ))
            }
            (Class::Read, _) => Some(e.client_read(
                by_share(pct(d.read_bytes, moved)),
                format!(
                    "the block device {} delivered {} of the {} read ({})",
                    d.device,
                    format_bytes(d.read_bytes),
                    format_bytes(moved),
                    share_text(d.read_bytes, moved)
                ),
            )),
            (Class::Object | Class::Namespace, _) => None,
        }
    }
}

/// Reads and writes judged apart; the verdict is the more cached of the two.
fn read_and_write(e: &Evidence, d: &DeviceIo) -> CacheVerdict {
    let (read, written) = (
        e.phase.bytes_of(&[OpName::Read]),
        e.phase.bytes_of(&[OpName::Write]),
    );
    let shares = [
        (read > 0).then(|| pct(d.read_bytes, read)),
        (written > 0).then(|| pct(d.written_bytes, written)),
    ];
    let least = shares.iter().flatten().fold(f64::MAX, |a, &b| a.min(b));
    e.client_read(
        by_share(least),
        format!(
            "the block device {} delivered {} of the {} read ({}) and took {} of the {} written ({})",
            d.device,
            format_bytes(d.read_bytes),
            format_bytes(read),
            share_text(d.read_bytes, read),
            format_bytes(d.written_bytes),
            format_bytes(written),
            share_text(d.written_bytes, written)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::Verdict;

    #[test]
    fn fires_on_device_counters() {
        let m = Machine::with_ram(RAM);
        let mut read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(Device.judge(&Evidence::of(&read, &m)).is_none());
        read.cache.device = Some(DeviceIo {
            device: "8:0".into(),
            read_bytes: 2 * MIB,
            written_bytes: 0,
        });
        let v = Device.judge(&Evidence::of(&read, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached, "{}", v.evidence);
    }
}
