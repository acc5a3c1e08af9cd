//! The seam every saved view goes through: an [`Exporter`] makes a file's text from a run, and
//! its [`Format`] says which flag asks for it, what `--help` says of it and how it is written.

use iobm_results::RunResult;

/// Makes one format's file from a run.
pub trait Exporter: Sync {
    /// The file's text made from `run` (its per-worker series attached where it has a side
    /// file).
    fn export(&self, run: &RunResult) -> String;
}

/// How a view's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Once, from the whole run, after it.
    Once,
    /// Appended to after each repetition, keeping what the file held.
    EachRepetition,
}

/// The commands whose flags offer a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commands {
    /// Every command that runs a workload.
    Workloads,
    /// `iobm bonnie` only.
    Bonnie,
}

/// One output format: its flag, its help, where it is offered and how it is written.
pub struct Format {
    /// The long flag that asks for it, without its dashes.
    pub name: &'static str,
    /// What `--help` of the commands that offer it says.
    pub help: &'static str,
    /// What the file holds, as `iobm report`'s help names it; `None` where `iobm report` does
    /// not offer it.
    pub saved: Option<&'static str>,
    /// The commands that offer it.
    pub commands: Commands,
    /// How its file is written.
    pub written: Written,
    /// What makes its text.
    pub exporter: &'static dyn Exporter,
}

impl Format {
    /// The flag that asks for it, as given on the command line.
    pub fn flag(&self) -> String {
        format!("--{}", self.name)
    }
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.flag())
    }
}
