//! `iobm report RESULT.json`: prints a saved run again, recomputing every aggregate and warning
//! from the per-worker records, and says so if the saved values differ.

use crate::cli::ReportArgs;
use iobm_report::render_run;
use iobm_results::RunResult;
use iobm_run::exit::{Exit, Failure};
use iobm_run::recompute::recompute;

pub fn report(args: ReportArgs) -> Result<Exit, Failure> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        Failure::input(format!(
            "{}: {}",
            args.file.display(),
            iobm_run::session::describe_io(&e)
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
