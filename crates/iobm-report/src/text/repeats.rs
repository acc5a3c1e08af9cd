//! The spread table of a repeated run: every aggregate's median and interval over its
//! repetitions, per phase.

use crate::table::Table;
use iobm_results::repeats::{rate_unit, Spread};
use iobm_results::RunResult;
use iobm_stats::names::RunKind;

/// The spread of every aggregate over a repeated run's repetitions (nothing for a run made
/// once): MiB/s for phases that move data, operations per second for the others.
pub fn render_repeats(run: &RunResult) -> String {
    let Some(repeats) = &run.repeats else {
        return String::new();
    };
    let data = match run.kind {
        RunKind::Read => "each reading the same kept data set",
        _ => "each on fresh data",
    };
    let mut out = format!(
        "repeated {} times (runs {}), {data}: every aggregate over the repetitions whose phase ran to its end\n",
        repeats.run_ids.len(),
        repeats.run_ids.join(", ")
    );
    let mut table = Table::new([
        "phase",
        "aggregate",
        "unit",
        "runs",
        "median",
        "min",
        "max",
        "mean",
        "CV",
        "95% CI",
    ])
    .left(1)
    .left(2);
    let mut why_not: Vec<String> = Vec::new();
    for phase in &repeats.phases {
        let moves_data = run
            .phases
            .iter()
            .find(|p| p.name == phase.name)
            .is_none_or(|p| p.moves_data());
        for a in &phase.aggregates {
            let spread = if moves_data {
                &a.bytes_per_s
            } else {
                &a.ops_per_s
            };
            table.row(spread_row(&phase.name, a.kind.label(), spread, moves_data));
            if let Some(why) = &spread.no_interval {
                if !why_not.contains(why) {
                    why_not.push(why.clone());
                }
            }
        }
    }
    out.push_str(&table.render("  "));
    out.push_str(
        "CV: standard deviation over the mean; 95% CI: of the geometric mean, from the values' logarithms (never below 0)\n",
    );
    for why in why_not {
        out.push_str(&format!("no interval (-): {why}\n"));
    }
    for line in repeats.findings(run) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One aggregate's row of the repetitions' table: in MiB/s for a phase that moves data, else
/// in operations per second.
fn spread_row(phase: &str, aggregate: &str, spread: &Spread, moves_data: bool) -> [String; 10] {
    let (unit, scale) = rate_unit(moves_data);
    let v = |x: f64| format!("{:.2}", x * scale);
    [
        phase.to_string(),
        aggregate.to_string(),
        unit.to_string(),
        spread.values.len().to_string(),
        v(spread.median),
        v(spread.min),
        v(spread.max),
        v(spread.mean),
        spread
            .cv
            .map_or("-".to_string(), |cv| format!("{:.1}%", 100.0 * cv)),
        match spread.ci95 {
            Some([l, h]) => format!("{} .. {}", v(l), v(h)),
            None => "-".to_string(),
        },
    ]
}
