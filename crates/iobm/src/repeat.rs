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
        let mut run = once(index)?;
        ranks.collect_left_behind(&mut run);
        // One that left data behind ends the repetitions too: the next would leave more.
        let complete =
            ranks.share(&(run.status == RunStatus::Complete && run.left_behind.is_empty()));
        runs.push(run);
        if !complete {
            break;
        }
    }
    let repeats = (n > 1 && ranks.is_root()).then(|| Repeats::of(&runs));
    let left_behind: Vec<_> = runs.iter().flat_map(|r| r.left_behind.clone()).collect();
    let mut last = runs.pop().expect("at least one repetition ran");
    last.left_behind = left_behind;
    if let Some(repeats) = repeats {
        last.repeats = Some(repeats);
        say(&format!("\n{}", render_repeats(&last)));
    }
    Ok(last)
}
