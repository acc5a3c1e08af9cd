//! `iobm merge RESULT.json...`: results of one workload run by hand on several clients,
//! combined into one run (`iobm_run::combine`), printed and saved like any run.

use crate::cli::MergeArgs;
use iobm_report::render_run;
use iobm_run::combine::{check_mergeable, merge_runs};
use iobm_run::exit::{Exit, Failure};
use iobm_run::session::{self, say};
use std::ffi::OsString;

pub fn merge(args: MergeArgs, argv: &[OsString]) -> Result<Exit, Failure> {
    args.output.check()?;
    let runs = args
        .results
        .iter()
        .map(|a| crate::compare::load(a))
        .collect::<Result<Vec<_>, _>>()?;
    check_mergeable(&runs).map_err(Failure::input)?;
    if iobm_run::session::checking_only() {
        return Ok(Exit::Ok);
    }
    let argv = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let mut merged = merge_runs(runs, args.whole, argv);
    merged.label = args.output.label.clone().or(merged.label);
    say(&render_run(&merged));
    args.output.outputs().save_views(&merged)?;
    session::finish(&merged, args.output.json())
}
