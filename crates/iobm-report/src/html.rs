//! The HTML report (`--html FILE`): one self-contained page per run or comparison.

use iobm_results::RunResult;

/// The page of one run.
pub fn run_page(run: &RunResult) -> String {
    format!("<!doctype html><title>iobm {}</title>", run.run_id)
}
