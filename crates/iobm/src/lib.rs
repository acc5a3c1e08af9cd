//! iobm: the command-line program. `run` parses arguments, dispatches to a command and turns
//! its outcome into an exit code: bad arguments get clap's whole message (what is wrong, the
//! valid values, the usage line), iobm's own checks one line.

pub mod bonnie;
pub mod cli;
pub mod compare;
pub mod files;
pub mod gateway;
pub mod gpu;
pub mod io500;
pub mod kept;
pub mod limits;
pub mod manual;
pub mod merge;
pub mod meta;
pub mod plan;
pub mod quick;
pub mod replay;
pub mod report;
pub mod rundir;
pub mod s3;
pub mod serve;
pub mod servers;
pub mod spec;
pub mod suggest;
pub mod targets;

use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use iobm_run::exit::Exit;
use std::ffi::OsString;
use std::process::ExitCode;

/// Runs iobm with these arguments (the first is the program name).
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let argv: Vec<OsString> = args.into_iter().collect();
    if let Some(message) = suggest::detached_value(&argv) {
        eprintln!("iobm: error: {message}");
        return ExitCode::from(Exit::BadInput as u8);
    }
    let (cli, matches) = match parse(&argv) {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    let spec = match &cli.command {
        Command::Rerun(args) if cli.print_spec => match plan::rerun_spec(args) {
            Ok(spec) => Some(spec),
            Err(failure) => {
                eprintln!("iobm: error: {failure}");
                return ExitCode::from(failure.exit as u8);
            }
        },
        _ => spec::from_matches(&matches),
    };
    if cli.print_spec {
        return print_spec(spec.as_ref(), &argv);
    }
    iobm_run::session::record_spec(spec);
    if cli.check_only {
        iobm_run::session::check_only();
    }
    let outcome = match cli.command {
        Command::Write(args) => files::write(args, false, &argv),
        Command::Stream(args) => files::write(args, true, &argv),
        Command::Read(args) => files::read(args, &argv),
        Command::Bonnie(args) => bonnie::bonnie(args, &argv),
        Command::Replay(args) => replay::replay(args, &argv),
        Command::Meta(args) => meta::meta(args, &argv),
        Command::Io500(args) => io500::io500(args, &argv),
        Command::Compare(args) => compare::compare(args),
        Command::Serve(args) => serve::serve(args),
        Command::S3(args) => s3::s3(*args, &argv),
        Command::Quick(args) => quick::quick(args, &argv),
        Command::Report(args) => report::report(args),
        Command::Limits(args) => limits::limits(args),
        Command::Merge(args) => merge::merge(args, &argv),
        Command::Run(args) => plan::run(args),
        Command::Rerun(args) => match plan::rerun(args) {
            Ok(code) => return code,
            Err(failure) => Err(failure),
        },
        Command::Generate(args) => manual::generate(&args.dir),
    };
    match outcome {
        Ok(exit) => ExitCode::from(exit as u8),
        Err(failure) => {
            eprintln!("iobm: error: {failure}");
            ExitCode::from(failure.exit as u8)
        }
    }
}

/// The command line parsed by clap, or the exit code once clap has printed why not (help and
/// version exit 0; a bad argument gets clap's whole message: what is wrong, the valid values,
/// the usage line; for an unknown option, what iobm calls it).
fn parse(argv: &[OsString]) -> Result<(Cli, clap::ArgMatches), ExitCode> {
    let parsed = Cli::command()
        .try_get_matches_from(argv)
        .and_then(|matches| Cli::from_arg_matches(&matches).map(|cli| (cli, matches)));
    parsed.map_err(|e| {
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
        let rendered = suggest::improve(e, argv).render().to_string();
        eprintln!("iobm: {}", rendered.trim_end());
        ExitCode::from(Exit::BadInput as u8)
    })
}

/// `--print-spec`: the command line as a plan entry, on stdout.
fn print_spec(spec: Option<&iobm_results::spec::RunSpec>, argv: &[OsString]) -> ExitCode {
    let Some(spec) = spec else {
        let command = argv
            .get(1)
            .map_or(String::new(), |a| a.to_string_lossy().into_owned());
        eprintln!(
            "iobm: error: --print-spec: {command} runs no workload; a plan runs one of {}",
            spec::COMMANDS.join(", ")
        );
        return ExitCode::from(Exit::BadInput as u8);
    };
    print!(
        "# iobm {}, as a plan entry: `iobm run PLAN.toml` runs it (secrets and output paths are \
         not kept)\n{}",
        spec.command,
        spec::plan_entry(spec)
    );
    ExitCode::SUCCESS
}
