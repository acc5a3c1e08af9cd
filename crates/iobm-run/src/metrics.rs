//! `--metrics-listen ADDR`: the run's counters (bytes, operations, errors by phase and kind of
//! operation) and latency histograms in Prometheus' text format 0.0.4, added up from the
//! intervals the workers pass ([`crate::live`]) and served by a std-only HTTP listener
//! (`metrics/serve.rs`) for the run's length. Under MPI rank 0 serves the sum over the ranks:
//! each other rank posts its counts as its workers pass an interval (`metrics/ranks.rs`).

use iobm_dist::Mailbox;
use iobm_engine::LiveInterval;
use iobm_stats::Interval;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

mod ranks;
mod serve;
pub use ranks::Summing;
pub use serve::Server;

/// The histogram's bounds: `le` 2^(k+10) - 1 ns for k in 0..BOUNDS (1.023 us to 34.4 s). The
/// per-interval histograms split each power of two, so every count falls under its bound
/// exactly.
const BOUNDS: usize = 26;
const FIRST_BIT: u32 = 10;

/// One phase's and kind's counts.
#[derive(Default, Clone, Serialize, Deserialize)]
struct Counts {
    bytes: u64,
    ops: u64,
    errors: u64,
    /// Latencies by bound (not cumulative); above the last, only in `count`.
    under: [u64; BOUNDS],
    count: u64,
    sum_ns: u128,
}

impl Counts {
    fn add(&mut self, i: &Interval) {
        self.bytes += i.bytes;
        self.ops += i.ops;
        self.errors += i.errors;
        for &[low, n] in &i.latency.buckets {
            // A bucket starting at `low` ends below the next power of two.
            let bits = (u64::BITS - low.leading_zeros()).max(FIRST_BIT);
            if let Some(at) = self.under.get_mut((bits - FIRST_BIT) as usize) {
                *at += n;
            }
        }
        self.count += i.latency.count;
        self.sum_ns += u128::from(i.latency.sum_ns);
    }

    /// Adds another's counts.
    fn merge(&mut self, other: &Counts) {
        self.bytes += other.bytes;
        self.ops += other.ops;
        self.errors += other.errors;
        for (at, n) in self.under.iter_mut().zip(other.under) {
            *at += n;
        }
        self.count += other.count;
        self.sum_ns += other.sum_ns;
    }
}

/// Counts by phase and kind of operation.
type ByPhase = BTreeMap<(String, String), Counts>;

/// The counters a run serves, by phase and kind of operation: this rank's own, and at rank 0
/// the other ranks' as each last posted them (their whole counts so far).
#[derive(Default)]
pub struct Metrics {
    counts: Mutex<ByPhase>,
    others: Mutex<BTreeMap<u32, ByPhase>>,
    /// Where a rank other than 0 posts its counts.
    mailbox: Option<Arc<dyn Mailbox>>,
}

/// What each metric counts, as `# HELP` says it: (name, type, help).
pub const METRICS: &[(&str, &str, &str)] = &[
    (
        "iobm_bytes_total",
        "counter",
        "Bytes moved by the operations that completed, by phase and kind of operation.",
    ),
    (
        "iobm_operations_total",
        "counter",
        "Operations that completed, by phase and kind of operation.",
    ),
    (
        "iobm_errors_total",
        "counter",
        "Operations that failed, by phase and kind of operation.",
    ),
    (
        "iobm_latency_seconds",
        "histogram",
        "Latency of the operations that completed, by phase and kind of operation.",
    ),
];

impl Metrics {
    pub fn new() -> Metrics {
        Metrics::default()
    }

    /// The counts of a rank other than 0, posted to rank 0 through `mailbox`.
    pub fn posting(mailbox: Arc<dyn Mailbox>) -> Metrics {
        Metrics {
            mailbox: Some(mailbox),
            ..Metrics::default()
        }
    }

    /// Adds an interval every worker of this process has passed (and posts the counts so far
    /// to rank 0, in order: under the lock).
    pub fn add(&self, interval: &LiveInterval) {
        let mut counts = self.counts.lock().unwrap();
        for (op, amounts) in interval.by_op {
            let key = (interval.phase.to_string(), op.as_str().to_string());
            counts.entry(key).or_default().add(amounts);
        }
        if let Some(mailbox) = &self.mailbox {
            mailbox.post(&ranks::Post::counts(&counts).bytes());
        }
    }

    /// Every rank's counts added up: this one's and the others' last posted.
    fn summed(&self) -> ByPhase {
        let mut all = self.counts.lock().unwrap().clone();
        for counts in self.others.lock().unwrap().values() {
            for (key, c) in counts {
                all.entry(key.clone()).or_default().merge(c);
            }
        }
        all
    }

    /// The text exposition (format 0.0.4) of every counter so far.
    pub fn text(&self) -> String {
        let counts = self.summed();
        let mut out = String::new();
        for (i, (name, kind, help)) in METRICS.iter().enumerate() {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
            for ((phase, op), c) in &counts {
                let labels = format!("phase=\"{}\",op=\"{}\"", escaped(phase), escaped(op));
                match i {
                    0 => writeln!(out, "{name}{{{labels}}} {}", c.bytes),
                    1 => writeln!(out, "{name}{{{labels}}} {}", c.ops),
                    2 => writeln!(out, "{name}{{{labels}}} {}", c.errors),
                    _ => histogram(&mut out, name, &labels, c),
                }
                .expect("writing to a string");
            }
        }
        out
    }
}

/// The `_bucket`, `_sum` and `_count` lines of one histogram.
fn histogram(out: &mut String, name: &str, labels: &str, c: &Counts) -> std::fmt::Result {
    let mut cumulative = 0;
    for (k, n) in c.under.iter().enumerate() {
        cumulative += n;
        let le = seconds((1u64 << (k as u32 + FIRST_BIT)) - 1);
        writeln!(out, "{name}_bucket{{{labels},le=\"{le}\"}} {cumulative}")?;
    }
    writeln!(out, "{name}_bucket{{{labels},le=\"+Inf\"}} {}", c.count)?;
    let sum = seconds_u128(c.sum_ns);
    writeln!(out, "{name}_sum{{{labels}}} {sum}")?;
    writeln!(out, "{name}_count{{{labels}}} {}", c.count)
}

/// Nanoseconds as exact decimal seconds.
fn seconds(ns: u64) -> String {
    seconds_u128(u128::from(ns))
}

fn seconds_u128(ns: u128) -> String {
    let text = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A label value as the text format escapes it.
fn escaped(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_stats::CoarseHistogram;

    #[test]
    fn latencies_fall_under_their_bound_and_bounds_are_exact_decimals() {
        let mut h = CoarseHistogram::default();
        for ns in [5, 1_023, 1_024, 2_047, 2_048, 40_000_000_000] {
            h.record(ns);
        }
        let i = Interval {
            bytes: 10,
            ops: 6,
            errors: 1,
            latency: h.take(),
        };
        let mut c = Counts::default();
        c.add(&i);
        assert_eq!(c.under[..3], [2, 2, 1]);
        assert_eq!((c.count, c.under.iter().sum::<u64>()), (6, 5));
        let mut out = String::new();
        histogram(&mut out, "m", "p=\"x\"", &c).unwrap();
        assert!(
            out.contains("m_bucket{p=\"x\",le=\"0.000001023\"} 2\n"),
            "{out}"
        );
        assert!(
            out.contains("m_bucket{p=\"x\",le=\"0.000002047\"} 4\n"),
            "{out}"
        );
        assert!(out.contains("m_bucket{p=\"x\",le=\"+Inf\"} 6\n"), "{out}");
        assert!(out.contains("m_sum{p=\"x\"} 40.000006147\n"), "{out}");
        assert_eq!(escaped("a\"b\\c"), "a\\\"b\\\\c");
    }
}
