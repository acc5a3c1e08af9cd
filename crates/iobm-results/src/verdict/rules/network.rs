//! Rates above the line rate (`--line-rate`, or the link's): a cache on this side of the
//! network served (or took) the bytes.

use super::gateway::get_bytes;
use crate::remote::{over_the_line, read_and_written};
use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};
use iobm_stats::format_bytes;

/// A file phase on a network file system whose busiest client host moved more than its link.
pub struct HostOverLine;

/// An object phase whose GETs moved more than the line rate.
pub struct GetsOverLine;

impl Rule for HostOverLine {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.machine.network_fs && e.file_data()).then_some(())?;
        let (host, rate, line) = over_the_line(e.phase, e.machine)?;
        let (read, _) = read_and_written(e.phase);
        let (what, whose) = if read > 0 {
            ("read", "the client's cache served it")
        } else {
            ("wrote", "the client's cache took the writes")
        };
        judged(
            Verdict::Cached,
            format!(
                "{host} {what} {}/s, above the line rate of {}/s: {whose}",
                format_bytes(rate as u64),
                format_bytes(line)
            ),
        )
    }
}

impl Rule for GetsOverLine {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Object).then_some(())?;
        let p = e.phase;
        let seconds = p.end_ns.saturating_sub(p.start_ns) as f64 / 1e9;
        let rate = if seconds > 0.0 {
            get_bytes(p) as f64 / seconds
        } else {
            0.0
        };
        let line = e
            .machine
            .line_rate_bytes_per_s
            .filter(|&l| rate > l as f64)?;
        judged(
            Verdict::Cached,
            format!(
                "the GETs moved {}/s, above the line rate of {}/s: a cache on this side of the network served them",
                format_bytes(rate as u64),
                format_bytes(line)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::verdict::rules::tests::operation;
    use iobm_stats::names::OpName;

    fn line(network_fs: bool) -> Machine {
        Machine {
            network_fs,
            line_rate_bytes_per_s: Some(MIB),
            ..Machine::with_ram(RAM)
        }
    }

    #[test]
    fn host_over_line_fires_above_the_line_on_a_network_file_system() {
        let read = phase(OpName::Read, [100 * MIB, 0], [1_000_000_000; 2]);
        let v = HostOverLine
            .judge(&Evidence::of(&read, &line(true)))
            .unwrap();
        assert_eq!(v.verdict, Verdict::Cached);
        assert!(HostOverLine
            .judge(&Evidence::of(&read, &line(false)))
            .is_none());
    }

    #[test]
    fn gets_over_line_fires_above_the_line() {
        let mut get = phase(OpName::Get, [100 * MIB, 0], [1_000_000_000; 2]);
        get.operations = vec![operation(&get, OpName::Get, 100 * MIB)];
        let v = GetsOverLine
            .judge(&Evidence::of(&get, &line(false)))
            .unwrap();
        assert_eq!(v.verdict, Verdict::Cached);
        let unstated = Machine::with_ram(RAM);
        assert!(GetsOverLine.judge(&Evidence::of(&get, &unstated)).is_none());
    }
}
