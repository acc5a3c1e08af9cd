//! `plan.json`: what each run of a plan did and the file it left, the results in `--out` of
//! runs earlier plans there had and this one has not (`stale`), and what `--resume` keeps.

use super::file::{self, PlannedRun};
use iobm_results::{RunResult, RunStatus};
use iobm_run::exit::Failure;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;
use std::time::SystemTime;

/// The summary `--out DIR/plan.json`.
#[derive(Serialize)]
struct Summary<'a> {
    plan: &'a str,
    runs: Vec<Outcome>,
    /// Results in the directory of runs an earlier plan had and this one has not: left as they
    /// are, not compared, kept here (with the command line that made them) until they are
    /// removed, so a run put back is resumed like any other.
    stale: &'a [Stale],
}

/// How one run of the plan went.
#[derive(Serialize, Clone)]
pub(super) struct Outcome {
    pub label: String,
    /// The command line that made `result` (a run not run this time: that of the earlier plan
    /// whose result is there), else the one it would run.
    pub command_line: Vec<String>,
    /// The result's file name in the output directory; null when the run wrote none (it failed
    /// at its start, or was not run and no earlier plan left one).
    pub result: Option<String>,
    /// "complete", "resumed" (complete before --resume), "failed", "interrupted", "not run".
    pub status: &'static str,
    /// The run's exit code (absent when it did not run, or a signal ended it).
    pub exit_code: Option<i32>,
}

/// A result of a run an earlier plan had and this one has not.
#[derive(Serialize, Clone)]
pub(super) struct Stale {
    pub label: String,
    pub command_line: Vec<String>,
    pub result: String,
}

/// A run recorded by the earlier `plan.json`: the command line that made its result, if any.
pub(super) struct Earlier {
    pub command_line: Vec<String>,
    pub result: Option<String>,
}

/// The runs (and stale results) of the earlier `plan.json` in `out`, by label.
pub(super) fn earlier(out: &Path) -> BTreeMap<String, Earlier> {
    let text = std::fs::read_to_string(out.join("plan.json")).unwrap_or_default();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let entries = |key: &str| summary[key].as_array().cloned().unwrap_or_default();
    let mut earlier = BTreeMap::new();
    for entry in entries("stale").iter().chain(&entries("runs")) {
        let Some(label) = entry["label"].as_str() else {
            continue;
        };
        let command_line = entry["command_line"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(String::from))
            .collect();
        let result = entry["result"].as_str().map(String::from);
        earlier.insert(
            label.to_string(),
            Earlier {
                command_line,
                result,
            },
        );
    }
    earlier
}

/// The results in `out` of runs an earlier plan had and this one has not (by label and by
/// file: a file this plan's runs write is theirs).
pub(super) fn stale_results(
    out: &Path,
    earlier: &BTreeMap<String, Earlier>,
    runs: &[&PlannedRun],
) -> Vec<Stale> {
    let labels: BTreeSet<&str> = runs.iter().map(|run| run.label.as_str()).collect();
    let files: BTreeSet<String> = runs.iter().map(|r| file::result_name(&r.label)).collect();
    earlier
        .iter()
        .filter(|(label, _)| !labels.contains(label.as_str()))
        .filter_map(|(label, e)| {
            let result = e.result.clone()?;
            (!files.contains(&result) && out.join(&result).is_file()).then(|| Stale {
                label: label.clone(),
                command_line: e.command_line.clone(),
                result,
            })
        })
        .collect()
}

/// Says which results in `out` are stale: left as they are, not in this plan's comparison.
pub(super) fn note_stale_results(out: &Path, stale: &[Stale]) {
    for s in stale {
        eprintln!(
            "iobm: note: {}: the result of run '{}' of an earlier plan, not in this one (left as it is, not compared)",
            out.join(&s.result).display(),
            s.label
        );
    }
}

/// Two command lines of one run that start it the same way: the same words but where each
/// saves its result (`--json=OUT/LABEL.json`), so `--out` spelled otherwise, or the directory
/// copied elsewhere, is the same run.
pub(super) fn same_start(earlier: &[String], words: &[String]) -> bool {
    fn without_result(words: &[String]) -> Vec<&String> {
        let at = words.iter().position(|w| w.starts_with("--json="));
        words
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != at)
            .map(|(_, w)| w)
            .collect()
    }
    without_result(earlier) == without_result(words)
}

/// Whether `--resume` keeps the run's result: recorded by the earlier plan as made by the same
/// command line (the launcher too), complete and of the same spec.
pub(super) fn kept(
    out: &Path,
    earlier: &BTreeMap<String, Earlier>,
    run: &PlannedRun,
    argv: &[OsString],
    words: &[String],
) -> bool {
    let name = file::result_name(&run.label);
    earlier.get(&run.label).is_some_and(|e| {
        e.result.as_deref() == Some(name.as_str()) && same_start(&e.command_line, words)
    }) && complete_before(&out.join(name), run, argv)
}

/// A result saved before, complete and of the same spec.
fn complete_before(path: &Path, run: &PlannedRun, argv: &[OsString]) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let Ok(saved) = RunResult::from_json(&text) else {
        return false;
    };
    saved.status == RunStatus::Complete
        && saved.spec == super::canonical(argv).or(Some(run.spec.clone()))
}

/// The outcome of a run not run this time: the earlier plan's record of its result if that is
/// still there, else its command line and no result.
pub(super) fn not_run(
    out: &Path,
    earlier: &BTreeMap<String, Earlier>,
    run: &PlannedRun,
    words: &[String],
) -> Outcome {
    let name = file::result_name(&run.label);
    let before = earlier
        .get(&run.label)
        .filter(|e| e.result.as_deref() == Some(name.as_str()) && out.join(&name).is_file());
    Outcome {
        label: run.label.clone(),
        command_line: before.map_or_else(|| words.to_vec(), |e| e.command_line.clone()),
        result: before.map(|_| name),
        status: "not run",
        exit_code: None,
    }
}

/// What identifies one version of a file: its size and when it was last written (None: no
/// file).
pub(super) fn stamp(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// `plan.json` with the runs so far, those still to come (each with its command line) and the
/// stale results.
pub(super) fn save(
    out: &Path,
    plan: &str,
    done: &[Outcome],
    to_come: Vec<Outcome>,
    stale: &[Stale],
) -> Result<(), Failure> {
    let mut runs = done.to_vec();
    runs.extend(to_come);
    let text = serde_json::to_string_pretty(&Summary { plan, runs, stale }).expect("plain data");
    iobm_run::outputs::save("--out", &out.join("plan.json"), &text)
}
