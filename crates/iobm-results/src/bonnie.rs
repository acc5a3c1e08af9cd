//! The bonnie++-shaped table of a bonnie run, derived from its phases: rate (K/sec and MiB/s,
//! or operations per second), CPU% and latency per test.

use crate::{PhaseResult, RunResult};
use iobm_stats::AggregateKind;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The test names, one source for the suite that runs them and the tables that show them.
pub use iobm_stats::names::bonnie::{
    is_test as is_bonnie_test, BYTE_TESTS, META_TESTS, SEEKS as SEEK_TEST,
};

fn test_row(phase: &PhaseResult) -> BonnieTest {
    let seconds = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
    let makespan = phase.aggregate(AggregateKind::Makespan);
    let bytes_per_s = makespan.map_or(0.0, |a| a.bytes_per_s);
    let moves_data = phase.moves_data();
    let cpu = phase.cpu.user_s + phase.cpu.system_s;
    BonnieTest {
        test: phase.name.clone(),
        kib_per_s: moves_data.then_some(bytes_per_s / 1024.0),
        mib_per_s: moves_data.then_some(bytes_per_s / (1024.0 * 1024.0)),
        ops_per_s: makespan.map_or(0.0, |a| a.ops_per_s),
        cpu_pct: if seconds > 0.0 {
            100.0 * cpu / seconds
        } else {
            0.0
        },
        p99_ns: phase.latency.p99_ns,
        max_ns: phase.latency.max_ns,
        seconds,
    }
}

/// The table for a run's phases.
pub fn summarize(run: &RunResult) -> BonnieSummary {
    BonnieSummary {
        tests: run.phases.iter().map(test_row).collect(),
    }
}

/// The bonnie++-shaped table of a bonnie run, derived from its phases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonnieSummary {
    /// One row per test, in bonnie++'s order.
    pub tests: Vec<BonnieTest>,
}

/// One test of the bonnie table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BonnieTest {
    /// The test ("per-char write", "block write", "rewrite", "per-char read", "block read",
    /// "random seeks", "sequential create", ...).
    pub test: String,
    /// Throughput in KiB/s (bonnie++'s K/sec) for tests that move data; null otherwise.
    pub kib_per_s: Option<f64>,
    /// Throughput in MiB/s for tests that move data; null otherwise.
    pub mib_per_s: Option<f64>,
    /// Operations per second: seeks/s, or files/s for the metadata tests.
    pub ops_per_s: f64,
    /// iobm's CPU time over the test's wall time, percent (over 100 with several workers).
    pub cpu_pct: f64,
    /// 99th percentile latency of one operation, ns.
    pub p99_ns: Option<u64>,
    /// Largest latency of one operation, ns.
    pub max_ns: Option<u64>,
    /// Wall time of the test in seconds.
    pub seconds: f64,
}
