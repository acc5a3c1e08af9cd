//! A `--server-metrics` endpoint read once per interval through a phase, kept as a series: of
//! each reading only the few numbers the series shows (the data devices' byte counters, the CPU
//! seconds, the page cache), and between two readings that answered what the server did.

use crate::server::{data_devices, Reading};
use crate::ServerSeries;

/// The least time between two readings of an endpoint during a phase: node_exporter answers in
/// milliseconds, but a series interval of 10 ms would have it read a hundred times a second.
pub const MIN_PERIOD_NS: u64 = 100_000_000;

/// How often an endpoint is read during a phase whose series has intervals of `interval_ns`:
/// every interval, or every few where they are shorter than [`MIN_PERIOD_NS`], so that the
/// readings stay on the intervals' edges.
pub fn period_ns(interval_ns: u64) -> u64 {
    let interval_ns = interval_ns.max(1);
    interval_ns * MIN_PERIOD_NS.div_ceil(interval_ns)
}

/// The numbers of one reading a series needs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// (device, bytes read, bytes written) of each data device (`--server-devices`, else the
    /// disks, as [`crate::server::node_evidence`] counts them).
    devices: Vec<(String, u64, u64)>,
    /// CPU seconds busy and in all, of every CPU.
    cpu: Option<(f64, f64)>,
    page_cache: Option<u64>,
}

impl Totals {
    /// What a series keeps of `reading`.
    pub fn of(reading: &Reading, named: &[String]) -> Totals {
        match reading {
            Reading::Node(c) => Totals {
                devices: data_devices(c, named).cloned().collect(),
                cpu: c.cpu_busy_s.zip(c.cpu_all_s),
                page_cache: c.cached_bytes,
            },
            Reading::Gateway(c) => Totals {
                devices: match (c.device_read_bytes, c.device_written_bytes) {
                    (Some(r), Some(w)) => vec![(c.device.clone().unwrap_or_default(), r, w)],
                    _ => Vec::new(),
                },
                cpu: None,
                page_cache: None,
            },
        }
    }
}

/// A series being built from readings in the order they were taken.
#[derive(Debug, Clone)]
pub struct SeriesBuilder {
    series: ServerSeries,
    /// The last reading, when it answered: the base of the next one's differences.
    last: Option<Totals>,
}

impl SeriesBuilder {
    /// A series read every `period_ns`, whose first differences are from `before` (the reading
    /// before the phase, answered at `before_ns`; None when it did not answer).
    pub fn new(period_ns: u64, before_ns: u64, before: Option<Totals>) -> SeriesBuilder {
        SeriesBuilder {
            series: ServerSeries {
                interval_ns: period_ns,
                before_ns,
                ..ServerSeries::default()
            },
            last: before,
        }
    }

    /// Adds the reading taken at `at_ns` (None: the endpoint did not answer, a gap). A
    /// difference is only taken between two readings that both answered, over the devices both
    /// report, and never from a counter that went back (a restarted server): else it is null.
    pub fn push(&mut self, at_ns: u64, reading: Option<Totals>) {
        let s = &mut self.series;
        s.at_ns.push(at_ns);
        let pair = self.last.as_ref().zip(reading.as_ref());
        let moved = |pick: fn(&(String, u64, u64)) -> u64| {
            let (before, now) = pair?;
            now.devices
                .iter()
                .filter_map(|d| {
                    let b = before.devices.iter().find(|b| b.0 == d.0)?;
                    Some(pick(d).checked_sub(pick(b)))
                })
                .try_fold(None, |sum: Option<u64>, delta| {
                    Some(Some(sum.unwrap_or(0) + delta?))
                })
                .flatten()
        };
        s.device_read_bytes.push(moved(|d| d.1));
        s.device_written_bytes.push(moved(|d| d.2));
        let busy = pair.and_then(|(before, now)| {
            let ((b0, a0), (b1, a1)) = (before.cpu?, now.cpu?);
            let all = a1 - a0;
            (all > 0.0 && b1 >= b0).then(|| ((b1 - b0) / all).clamp(0.0, 1.0))
        });
        s.cpu_busy.push(busy);
        s.page_cache_bytes
            .push(reading.as_ref().and_then(|r| r.page_cache));
        self.last = reading;
    }

    /// The series.
    pub fn finish(self) -> ServerSeries {
        self.series
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::NodeCounters;

    fn node(disks: &[(&str, u64, u64)], busy: f64, all: f64, cached: u64) -> Totals {
        let c = NodeCounters {
            disks: disks
                .iter()
                .map(|(d, r, w)| (d.to_string(), *r, *w))
                .collect(),
            cpu_busy_s: Some(busy),
            cpu_all_s: Some(all),
            cached_bytes: Some(cached),
            ..NodeCounters::default()
        };
        Totals::of(&Reading::Node(c), &[])
    }

    #[test]
    fn readings_are_kept_every_interval_or_every_few_of_short_ones() {
        assert_eq!(period_ns(1_000_000_000), 1_000_000_000);
        assert_eq!(period_ns(100_000_000), 100_000_000);
        assert_eq!(period_ns(30_000_000), 120_000_000);
        assert_eq!(period_ns(10_000_000), 100_000_000);
        assert_eq!(period_ns(0), 100_000_000);
    }

    #[test]
    fn each_reading_holds_what_the_data_devices_did_since_the_one_before() {
        // sda is a disk, sda1 its partition and dm-0 a layer: only sda counts.
        let before = node(
            &[("sda", 100, 1000), ("sda1", 100, 1000), ("dm-0", 5, 5)],
            1.0,
            10.0,
            7,
        );
        let mut b = SeriesBuilder::new(100, 0, Some(before));
        b.push(
            50,
            Some(node(
                &[("sda", 150, 1000), ("sda1", 150, 1000)],
                2.0,
                12.0,
                8,
            )),
        );
        b.push(150, Some(node(&[("sda", 150, 1400)], 2.5, 14.0, 9)));
        let s = b.finish();
        assert_eq!(s.interval_ns, 100);
        assert_eq!(s.at_ns, vec![50, 150]);
        assert_eq!(s.device_read_bytes, vec![Some(50), Some(0)]);
        assert_eq!(s.device_written_bytes, vec![Some(0), Some(400)]);
        assert_eq!(s.cpu_busy, vec![Some(0.5), Some(0.25)]);
        assert_eq!(s.page_cache_bytes, vec![Some(8), Some(9)]);
    }

    #[test]
    fn a_reading_that_did_not_answer_leaves_gaps_never_a_wrong_number() {
        let mut b = SeriesBuilder::new(100, 0, None);
        // Nothing to difference the first with: before the phase it did not answer.
        b.push(100, Some(node(&[("vda", 0, 0)], 0.0, 1.0, 5)));
        b.push(200, Some(node(&[("vda", 10, 20)], 1.0, 2.0, 5)));
        b.push(300, None);
        // After a gap: a new base, not the two intervals' bytes in one.
        b.push(400, Some(node(&[("vda", 1000, 2000)], 2.0, 4.0, 6)));
        b.push(500, Some(node(&[("vda", 1001, 2002)], 2.0, 5.0, 6)));
        // A counter that went back (the server restarted): unknown, not a huge number.
        b.push(600, Some(node(&[("vda", 3, 4)], 0.0, 1.0, 6)));
        let s = b.finish();
        assert_eq!(s.at_ns, vec![100, 200, 300, 400, 500, 600]);
        assert_eq!(
            s.device_read_bytes,
            vec![None, Some(10), None, None, Some(1), None]
        );
        assert_eq!(
            s.device_written_bytes,
            vec![None, Some(20), None, None, Some(2), None]
        );
        assert_eq!(
            s.cpu_busy,
            vec![None, Some(1.0), None, None, Some(0.0), None]
        );
        assert_eq!(
            s.page_cache_bytes,
            vec![Some(5), Some(5), None, Some(6), Some(6), Some(6)]
        );
    }

    #[test]
    fn only_the_devices_both_readings_report_are_differenced() {
        let named = ["vdb".to_string()];
        let c = |disks: Vec<(String, u64, u64)>| {
            Totals::of(
                &Reading::Node(NodeCounters {
                    disks,
                    ..NodeCounters::default()
                }),
                &named,
            )
        };
        let mut b = SeriesBuilder::new(1, 0, Some(c(vec![("vda".into(), 0, 0)])));
        // vdb appears: nothing to difference it with. vda is not named.
        b.push(1, Some(c(vec![("vda".into(), 9, 9), ("vdb".into(), 5, 5)])));
        b.push(2, Some(c(vec![("vdb".into(), 8, 9)])));
        let s = b.finish();
        assert_eq!(s.device_read_bytes, vec![None, Some(3)]);
        assert_eq!(s.device_written_bytes, vec![None, Some(4)]);
        assert_eq!(s.cpu_busy, vec![None, None]);
    }
}
