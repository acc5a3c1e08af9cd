//! `--repeat N`: a workload run N times, each on fresh data; the last run's document carries
//! every aggregate's spread over the N, which is printed after the last run.

use iobm_report::render_repeats;
use iobm_results::repeats::Repeats;
use iobm_results::{RunResult, RunStatus};
use iobm_run::exit::Failure;
use iobm_run::ranks::Ranks;
use iobm_run::session::say;

/// Calls `once` for repetition 0, 1, ... until `n` have run or one did not complete (Ctrl-C, a
/// fault): the last run, with the spread over all of them when more than one ran (rank 0).
pub(crate) fn repeated(
    n: u32,
    ranks: &Ranks,
    mut once: impl FnMut(u32) -> Result<RunResult, Failure>,
) -> Result<RunResult, Failure> {
    let mut runs: Vec<RunResult> = Vec::new();
    for index in 0..n {
        if n > 1 && ranks.is_root() {
            say(&format!("\nrepetition {} of {n}\n", index + 1));
        }
        let run = once(index)?;
        let complete = ranks.share(&(run.status == RunStatus::Complete));
        runs.push(run);
        if !complete {
            break;
        }
    }
    let repeats = (n > 1 && ranks.is_root()).then(|| Repeats::of(&runs));
    let mut last = runs.pop().expect("at least one repetition ran");
    if let Some(repeats) = repeats {
        last.repeats = Some(repeats);
        say(&format!("\n{}", render_repeats(&last)));
    }
    Ok(last)
}
