//! Observers of a run: what is handed the run as it goes (before the first phase, then after
//! each phase on rank 0). The text a command prints is one; the result file is another.

use crate::atomic::write_atomic;
use crate::session::describe_io;
use iobm_results::{LeftBehind, RunResult, RunStatus};
use std::path::Path;

pub trait Observer {
    /// Before the first phase.
    fn started(&mut self, _run: &RunResult) {}
    /// After each phase, with the run so far.
    fn phase_done(&mut self, run: &RunResult);
}

/// A closure sees each phase.
impl<F: FnMut(&RunResult)> Observer for F {
    fn phase_done(&mut self, run: &RunResult) {
        self(run)
    }
}

/// `--json FILE`: the result document, rewritten atomically before the first phase and after
/// every phase with status `running`, so a run killed by SIGKILL, the OOM killer or a batch
/// system's time limit leaves a valid document with every phase it completed. The command
/// writes the final document at its end.
pub struct ResultFile<'a> {
    path: Option<&'a Path>,
    warned: bool,
}

impl<'a> ResultFile<'a> {
    /// Saves nothing for `None` or `-` (stdout gets the one final document).
    pub fn new(path: Option<&'a Path>) -> ResultFile<'a> {
        ResultFile {
            path: path.filter(|p| p.as_os_str() != "-"),
            warned: false,
        }
    }

    fn save(&mut self, run: &RunResult) {
        let Some(path) = self.path else {
            return;
        };
        let saved = crate::session::document(run, path).and_then(|mut doc| {
            doc["status"] = serde_json::to_value(RunStatus::Running).expect("status serialises");
            write_atomic(path, &crate::session::document_text(&doc))?;
            crate::signals::set_last_words(path, last_words(run, doc));
            Ok(())
        });
        if let Err(e) = saved {
            if !self.warned {
                eprintln!(
                    "iobm: warning: --json {}: cannot save the results so far: {}",
                    path.display(),
                    describe_io(&e)
                );
                self.warned = true;
            }
        }
    }
}

/// The document a second interrupt leaves when it exits at once (see [`crate::signals`]): the
/// run so far, interrupted, and the clean-up that did not run.
fn last_words(run: &RunResult, mut doc: serde_json::Value) -> Vec<u8> {
    let why = "exited at once on a second interrupt: the clean-up did not run";
    doc["status"] = serde_json::to_value(RunStatus::Interrupted).expect("status serialises");
    if let Some(warnings) = doc["warnings"].as_array_mut() {
        warnings.push(why.into());
    }
    if !run.config.keep {
        let left = LeftBehind {
            location: run.config.run_dir.clone(),
            what: if run.config.s3.is_some() {
                "objects"
            } else {
                "files"
            }
            .to_string(),
            count: None,
            at_most: None,
            error: why.to_string(),
        };
        if let Some(list) = doc["left_behind"].as_array_mut() {
            list.push(serde_json::to_value(left).expect("serialises"));
        }
    }
    crate::session::document_text(&doc)
}

impl Observer for ResultFile<'_> {
    fn started(&mut self, run: &RunResult) {
        self.save(run);
    }

    fn phase_done(&mut self, run: &RunResult) {
        self.save(run);
    }
}
