//! The N-way comparison: saved runs of one kind side by side, one value per test (MiB/s for
//! tests that move data, operations per second for the others), each with its ratio to the
//! first run. Text, Markdown or CSV; runs as rows or, transposed, as columns.

use crate::table::Table;
use iobm_results::{PhaseResult, RunResult};
use iobm_stats::AggregateKind;

/// Output formats of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
}

/// The value compared for a phase by the aggregate `kind` (None where the phase has no such
/// aggregate), and its unit.
pub fn headline(phase: &PhaseResult, kind: AggregateKind) -> (Option<f64>, &'static str) {
    let aggregate = phase.aggregate(kind);
    if phase.moves_data() {
        (
            aggregate.map(|a| a.bytes_per_s / (1024.0 * 1024.0)),
            "MiB/s",
        )
    } else {
        (aggregate.map(|a| a.ops_per_s), "/s")
    }
}

/// Why runs cannot be compared, if they cannot.
pub fn check_kinds(runs: &[(String, RunResult)]) -> Result<(), String> {
    let Some((first_label, first)) = runs.first() else {
        return Err("nothing to compare".into());
    };
    for (label, run) in &runs[1..] {
        if run.kind != first.kind {
            return Err(format!(
                "cannot compare runs of different kinds: {first_label} is a {} run, {label} is a {} run",
                first.kind, run.kind
            ));
        }
    }
    Ok(())
}

/// The comparison table. Tests are the phases of all runs, in the order they first appear.
pub fn render(
    runs: &[(String, RunResult)],
    transpose: bool,
    format: Format,
    aggregate: AggregateKind,
) -> String {
    let mut tests: Vec<(String, &'static str)> = Vec::new();
    for (_, run) in runs {
        for phase in &run.phases {
            if !tests.iter().any(|(t, _)| *t == phase.name) {
                tests.push((phase.name.clone(), headline(phase, aggregate).1));
            }
        }
    }
    let value = |run: &RunResult, test: &str| {
        run.phases
            .iter()
            .find(|p| p.name == test)
            .and_then(|p| headline(p, aggregate).0)
    };
    let base: Vec<Option<f64>> = tests.iter().map(|(t, _)| value(&runs[0].1, t)).collect();
    let cell = |run: &RunResult, i: usize| -> (String, String) {
        match (value(run, &tests[i].0), base[i]) {
            (None, _) => ("-".into(), String::new()),
            (Some(v), Some(b)) if b > 0.0 => (format!("{v:.2}"), format!("{:.2}", v / b)),
            (Some(v), _) => (format!("{v:.2}"), String::new()),
        }
    };
    let test_header = |i: usize| format!("{} {}", tests[i].0, tests[i].1);

    if format == Format::Csv {
        let mut out = String::new();
        if transpose {
            let mut header = vec!["test".to_string()];
            for (label, _) in runs {
                header.push(label.clone());
                header.push(format!("{label} ratio"));
            }
            out.push_str(&csv_row(&header));
            for i in 0..tests.len() {
                let mut row = vec![test_header(i)];
                for (_, run) in runs {
                    let (v, r) = cell(run, i);
                    row.push(v);
                    row.push(r);
                }
                out.push_str(&csv_row(&row));
            }
        } else {
            let mut header = vec!["run".to_string()];
            for (i, (test, _)) in tests.iter().enumerate() {
                header.push(test_header(i));
                header.push(format!("{test} ratio"));
            }
            out.push_str(&csv_row(&header));
            for (label, run) in runs {
                let mut row = vec![label.clone()];
                for i in 0..tests.len() {
                    let (v, r) = cell(run, i);
                    row.push(v);
                    row.push(r);
                }
                out.push_str(&csv_row(&row));
            }
        }
        return out;
    }

    let shown = |run: &RunResult, i: usize, first: bool| {
        let (v, r) = cell(run, i);
        if first || r.is_empty() {
            v
        } else {
            format!("{v} ({r}x)")
        }
    };
    let (header, rows): (Vec<String>, Vec<Vec<String>>) = if transpose {
        let mut header = vec!["test".to_string()];
        header.extend(runs.iter().map(|(l, _)| l.clone()));
        let rows = (0..tests.len())
            .map(|i| {
                let mut row = vec![test_header(i)];
                row.extend(
                    runs.iter()
                        .enumerate()
                        .map(|(k, (_, run))| shown(run, i, k == 0)),
                );
                row
            })
            .collect();
        (header, rows)
    } else {
        let mut header = vec!["run".to_string()];
        header.extend((0..tests.len()).map(test_header));
        let rows = runs
            .iter()
            .enumerate()
            .map(|(k, (label, run))| {
                let mut row = vec![label.clone()];
                row.extend((0..tests.len()).map(|i| shown(run, i, k == 0)));
                row
            })
            .collect();
        (header, rows)
    };
    let note = format!(
        "{} runs of kind {}; values are {} rates, (Nx) is the ratio to {}\n{}\n",
        runs.len(),
        runs[0].1.kind,
        aggregate.label(),
        runs[0].0,
        workloads(runs)
    );
    match format {
        Format::Markdown => {
            let mut out = format!("| {} |\n", header.join(" | "));
            out.push_str(&format!(
                "|{}\n",
                header
                    .iter()
                    .enumerate()
                    .map(|(i, _)| if i == 0 { "---|" } else { "---:|" })
                    .collect::<String>()
            ));
            for row in rows {
                out.push_str(&format!("| {} |\n", row.join(" | ")));
            }
            out.push('\n');
            out.push_str(&note);
            out
        }
        _ => {
            let mut table = Table::new(header);
            for row in rows {
                table.row(row);
            }
            format!("{}{}", table.render(""), note)
        }
    }
}

/// Whether the runs ran the same workload, by their configuration hashes (recomputed, so
/// documents from before have one too).
fn workloads(runs: &[(String, RunResult)]) -> String {
    let hashes: Vec<String> = runs
        .iter()
        .map(|(_, r)| iobm_results::config_hash(&r.kind, &r.config))
        .collect();
    if hashes.iter().all(|h| *h == hashes[0]) {
        format!(
            "same workload in every run (configuration hash {})",
            hashes[0]
        )
    } else {
        let each: Vec<String> = runs
            .iter()
            .zip(&hashes)
            .map(|((label, _), h)| format!("{label} {h}"))
            .collect();
        format!(
            "the workloads differ (configuration hashes: {}): compare with care",
            each.join(", ")
        )
    }
}

fn csv_row(cells: &[String]) -> String {
    let escaped: Vec<String> = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect();
    escaped.join(",") + "\n"
}
