//! Where a run's result goes: the JSON document (saved after every phase, and at the end), the
//! run's label, and the views asked for (`iobm_report::views::FORMATS`), each written at rank 0
//! as its format says: once from the whole run, or appended to after each repetition.

use crate::exit::Failure;
use crate::session::describe_io;
use iobm_report::views::{Format, Written};
use iobm_results::RunResult;
use std::path::{Path, PathBuf};

/// A run's outputs, from the command line (`--json`, `--label`, `--csv`, `--html`, ...).
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    pub json: Option<PathBuf>,
    pub label: Option<String>,
    /// Each view asked for, with its file, in the order of `iobm_report::views::FORMATS`.
    pub views: Vec<(&'static Format, PathBuf)>,
    /// `--live FILE`: a JSON line per interval of each phase as it is passed.
    pub live: Option<PathBuf>,
    /// `--requests FILE`: every operation, zstd frames of records (FILE.rankN on rank N).
    pub requests: Option<PathBuf>,
    /// `--metrics-listen ADDR`: where the run's counters are served while it goes.
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// `--metrics-linger`: how long the endpoint may wait after the run for a last scrape.
    pub metrics_linger: std::time::Duration,
}

impl Outputs {
    /// The file of the view named `name`, when asked for.
    pub fn view(&self, name: &str) -> Option<&Path> {
        let mut views = self.views.iter();
        views
            .find(|(f, _)| f.name == name)
            .map(|(_, p)| p.as_path())
    }
}

impl Outputs {
    /// Writes each view made from the whole run to its file, after the run.
    pub fn save_views(&self, run: &RunResult) -> Result<(), Failure> {
        let mut whole = self.written(Written::Once).peekable();
        if whole.peek().is_none() {
            return Ok(());
        }
        // The per-worker series of large phases, kept compressed until now, put back.
        let restored = iobm_results::detail::side_file_bytes(run).map(|side| {
            let mut whole = run.clone();
            iobm_results::detail::attach(&mut whole, &side).expect("rows iobm wrote");
            whole
        });
        let run = restored.as_ref().unwrap_or(run);
        for (format, path) in whole {
            save(&format.flag(), path, &format.exporter.export(run))?;
        }
        Ok(())
    }

    /// Appends this repetition to each view that collects repetitions. The whole file is
    /// rewritten atomically, so a failure leaves the old one whole.
    pub fn save_repetition(&self, run: &RunResult) -> Result<(), Failure> {
        for (format, path) in self.written(Written::EachRepetition) {
            let mut text = match std::fs::read_to_string(path) {
                Ok(old) if !old.is_empty() && !old.ends_with('\n') => old + "\n",
                Ok(old) => old,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                Err(e) => {
                    return Err(Failure::run(format!(
                        "{} {}: cannot read: {}",
                        format.flag(),
                        path.display(),
                        describe_io(&e)
                    )))
                }
            };
            text.push_str(&format.exporter.export(run));
            save(&format.flag(), path, &text)?;
        }
        Ok(())
    }

    /// The views asked for that are written so.
    fn written(&self, written: Written) -> impl Iterator<Item = &(&'static Format, PathBuf)> {
        self.views.iter().filter(move |(f, _)| f.written == written)
    }
}

/// Writes `text` to `path` whole or not at all; the error names `flag`.
pub fn save(flag: &str, path: &Path, text: &str) -> Result<(), Failure> {
    crate::atomic::write_atomic(path, text.as_bytes()).map_err(|e| {
        Failure::run(format!(
            "{flag} {}: cannot write: {}",
            path.display(),
            describe_io(&e)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(name: &str) -> &'static Format {
        let mut formats = iobm_report::views::FORMATS.iter();
        formats.find(|f| f.name == name).unwrap()
    }

    fn bonnie_run() -> RunResult {
        RunResult::from_json(include_str!("../../iobm/tests/fixtures/bonnie-tmpfs.json")).unwrap()
    }

    #[test]
    fn appended_views_keep_what_the_file_held_and_add_a_line_per_repetition() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("b.csv");
        // An earlier file without its last newline keeps its line whole.
        std::fs::write(&csv, "earlier").unwrap();
        let html = dir.path().join("r.html");
        let outputs = Outputs {
            views: vec![
                (format("bonnie-csv"), csv.clone()),
                (format("html"), html.clone()),
            ],
            ..Outputs::default()
        };
        let run = bonnie_run();
        outputs.save_repetition(&run).unwrap();
        outputs.save_repetition(&run).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert_eq!(lines[0], "earlier");
        assert_eq!(lines[1], lines[2]);
        assert_eq!(
            format!("{}\n", lines[1]),
            format("bonnie-csv").exporter.export(&run)
        );
        // The page is made once, from the whole run, and not by a repetition.
        assert!(!html.exists());
        outputs.save_views(&run).unwrap();
        assert!(std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!doctype html>"));
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), text);
    }

    #[test]
    fn a_view_that_cannot_be_written_names_its_flag_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("missing").join("b.csv");
        let outputs = Outputs {
            views: vec![(format("bonnie-csv"), csv.clone())],
            ..Outputs::default()
        };
        let err = outputs.save_repetition(&bonnie_run()).unwrap_err();
        assert!(
            err.message
                .starts_with(&format!("--bonnie-csv {}: cannot write", csv.display())),
            "{}",
            err.message
        );
    }
}
