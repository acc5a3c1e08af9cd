//! `iobm report RESULT.json`: prints a saved run again, recomputing every aggregate and warning
//! from the per-worker records, and says so if the saved values differ.

use crate::cli::ReportArgs;
use crate::exit::{Exit, Failure};
use iobm_report::render_run;
use iobm_results::checks::{phase_warnings, RUN_NOTES};
use iobm_results::RunResult;
use iobm_stats::aggregates;

/// Recomputes aggregates and warnings; returns the names of phases whose saved aggregates
/// differ from the recomputed ones.
pub fn recompute(run: &mut RunResult) -> Vec<String> {
    let mut differing = Vec::new();
    let ram = run.environment.ram_bytes;
    for phase in &mut run.phases {
        let fresh = aggregates(&phase.spans());
        let same = fresh.len() == phase.aggregates.len()
            && fresh.iter().zip(&phase.aggregates).all(|(a, b)| {
                a.kind == b.kind
                    && a.bytes == b.bytes
                    && (a.bytes_per_s - b.bytes_per_s).abs() <= 1e-6 * a.bytes_per_s.abs().max(1.0)
            });
        if !same {
            differing.push(phase.name.clone());
        }
        phase.aggregates = fresh;
        let notes: Vec<String> = phase
            .warnings
            .iter()
            .filter(|w| RUN_NOTES.contains(&w.as_str()))
            .cloned()
            .collect();
        phase.warnings = phase_warnings(phase, ram);
        phase.warnings.extend(notes);
    }
    if run.bonnie.is_some() {
        run.bonnie = Some(iobm_results::bonnie::summarize(run));
    }
    differing
}

pub fn report(args: ReportArgs) -> Result<Exit, Failure> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        Failure::input(format!(
            "{}: {}",
            args.file.display(),
            crate::session::describe_io(&e)
        ))
    })?;
    let mut run = RunResult::from_json(&text)
        .map_err(|e| Failure::input(format!("{}: {e}", args.file.display())))?;
    let differing = recompute(&mut run);
    print!("{}", render_run(&run));
    for name in differing {
        eprintln!(
            "iobm: warning: the aggregates saved for phase '{name}' differ from those recomputed from its workers; showing the recomputed ones"
        );
    }
    Ok(Exit::Ok)
}
