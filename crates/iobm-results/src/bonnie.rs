//! The bonnie++-shaped table of a bonnie run, derived from its phases: rate (K/sec and MiB/s,
//! or operations per second), CPU% and latency per test.

use crate::{BonnieSummary, BonnieTest, PhaseResult, RunResult};
use iobm_stats::AggregateKind;

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
