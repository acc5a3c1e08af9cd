//! iobm: the command-line program. `run` parses arguments, dispatches to a command and turns
//! its outcome into an exit code: bad arguments get clap's whole message (what is wrong, the
//! valid values, the usage line), iobm's own checks one line.

pub mod bonnie;
pub mod cli;
pub mod compare;
pub mod files;
pub mod gateway;
pub mod kept;
pub mod limits;
pub mod merge;
pub mod quick;
pub mod repeat;
pub mod report;
pub mod rundir;
pub mod s3;
pub mod serve;
pub mod servers;
pub mod suggest;
pub mod targets;

use clap::Parser;
use cli::{Cli, Command};
use iobm_run::exit::Exit;
use std::ffi::OsString;
use std::process::ExitCode;

/// Runs iobm with these arguments (the first is the program name).
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let argv: Vec<OsString> = args.into_iter().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return ExitCode::from(
                    if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                        Exit::BadInput as u8
                    } else {
                        0
                    },
                );
            }
            // clap's whole message: what is wrong, the valid values, the usage line; for an
            // unknown option, what iobm calls it.
            let rendered = suggest::improve(e, &argv).render().to_string();
            eprintln!("iobm: {}", rendered.trim_end());
            return ExitCode::from(Exit::BadInput as u8);
        }
    };
    let outcome = match cli.command {
        Command::Write(args) => files::write(args, false, &argv),
        Command::Stream(args) => files::write(args, true, &argv),
        Command::Read(args) => files::read(args, &argv),
        Command::Bonnie(args) => bonnie::bonnie(args, &argv),
        Command::Compare(args) => compare::compare(args),
        Command::Serve(args) => serve::serve(args),
        Command::S3(args) => s3::s3(*args, &argv),
        Command::Quick(args) => quick::quick(args, &argv),
        Command::Report(args) => report::report(args),
        Command::Limits(args) => limits::limits(args),
        Command::Merge(args) => merge::merge(args, &argv),
    };
    match outcome {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(failure) => {
            eprintln!("iobm: error: {failure}");
            ExitCode::from(failure.exit as u8)
        }
    }
}
