//! The reference made from the command line's own definitions: `iobm generate DIR` writes the
//! man pages (one per command, by clap_mangen) and the bash, zsh and fish completions (by
//! clap_complete) where the repository keeps them, so no flag is described by hand.

use crate::cli::Cli;
use clap::{Command, CommandFactory};
use clap_complete::Shell;
use iobm_run::exit::{Exit, Failure};
use std::path::Path;

/// Where the man pages go, under the repository's root.
pub const MAN_DIR: &str = "docs/man";
/// Where the shell completions go, under the repository's root.
pub const COMPLETIONS_DIR: &str = "completions";

/// Writes the man pages into `root/docs/man` and the completions into `root/completions`.
pub fn generate(root: &Path) -> Result<Exit, Failure> {
    let failed = |what: &Path, e: std::io::Error| Failure::run(format!("{}: {e}", what.display()));
    let man = root.join(MAN_DIR);
    std::fs::create_dir_all(&man).map_err(|e| failed(&man, e))?;
    clap_mangen::generate_to(Cli::command(), &man).map_err(|e| failed(&man, e))?;
    let completions = root.join(COMPLETIONS_DIR);
    std::fs::create_dir_all(&completions).map_err(|e| failed(&completions, e))?;
    let mut shown = shown(&Cli::command());
    for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
        clap_complete::generate_to(shell, &mut shown, "iobm", &completions)
            .map_err(|e| failed(&completions, e))?;
    }
    Ok(Exit::Ok)
}

/// The commands and flags `--help` shows: clap_complete would also offer the hidden ones
/// (`generate`, `--check-only`), which are for iobm's own use, where clap_mangen leaves them out.
fn shown(cli: &Command) -> Command {
    Command::new("iobm")
        .version(env!("CARGO_PKG_VERSION"))
        .args(cli.get_arguments().filter(|a| !a.is_hide_set()).cloned())
        .subcommands(cli.get_subcommands().filter(|s| !s.is_hide_set()).cloned())
}
