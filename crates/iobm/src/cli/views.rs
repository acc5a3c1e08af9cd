//! The flags that ask for a run's views, made from `iobm_report::views::FORMATS`: each kind of
//! command ([`Offer`]) offers the formats it takes, so a new format needs no flag written here.

use clap::{value_parser, Arg, ArgAction, ArgMatches, Args, Command, FromArgMatches};
use iobm_report::views::{Commands, Format, FORMATS};
use iobm_run::exit::Failure;
use std::marker::PhantomData;
use std::path::PathBuf;

/// Which formats a kind of command offers, and what its `--help` says of each.
pub trait Offer {
    /// The help of `format`'s flag, or `None` where this kind of command does not offer it.
    fn help(format: &Format) -> Option<String>;
}

/// Every command that runs a workload.
#[derive(Debug)]
pub struct Workload;

impl Offer for Workload {
    fn help(format: &Format) -> Option<String> {
        (format.commands == Commands::Workloads).then(|| format.help.to_string())
    }
}

/// `iobm bonnie`'s own views.
#[derive(Debug)]
pub struct Bonnie;

impl Offer for Bonnie {
    fn help(format: &Format) -> Option<String> {
        (format.commands == Commands::Bonnie).then(|| format.help.to_string())
    }
}

/// `iobm report`, which saves the views of a saved run again.
#[derive(Debug)]
pub struct Saved;

impl Offer for Saved {
    fn help(format: &Format) -> Option<String> {
        format.saved.map(|what| {
            format!(
                "Also save the run's {what} to FILE (as {} of the run would have)",
                format.flag()
            )
        })
    }
}

/// The views asked for on a command of kind `O`, each with its file, in the order of
/// `FORMATS`.
#[derive(Debug)]
pub struct ViewArgs<O> {
    pub chosen: Vec<(&'static Format, PathBuf)>,
    offer: PhantomData<O>,
}

impl<O: Offer> ViewArgs<O> {
    /// The formats this kind of command offers, with their help.
    fn offered() -> impl Iterator<Item = (&'static Format, String)> {
        FORMATS
            .iter()
            .filter_map(|f| O::help(f).map(|help| (f, help)))
    }

    /// Checks each view's path before a run starts.
    pub fn check(&self) -> Result<(), Failure> {
        for (format, path) in &self.chosen {
            iobm_run::session::output_path_ok(&format.flag(), path)?;
        }
        Ok(())
    }
}

impl<O: Offer> FromArgMatches for ViewArgs<O> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let chosen = Self::offered()
            .filter_map(|(f, _)| matches.get_one::<PathBuf>(f.name).map(|p| (f, p.clone())))
            .collect();
        Ok(ViewArgs {
            chosen,
            offer: PhantomData,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<O: Offer> Args for ViewArgs<O> {
    fn augment_args(command: Command) -> Command {
        Self::offered().fold(command, |command, (format, help)| {
            command.arg(
                Arg::new(format.name)
                    .long(format.name)
                    .value_name("FILE")
                    .value_parser(value_parser!(PathBuf))
                    .action(ArgAction::Set)
                    .required(false)
                    .help(help),
            )
        })
    }

    fn augment_args_for_update(command: Command) -> Command {
        Self::augment_args(command)
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::{CommandFactory, Parser};
    use iobm_report::views::FORMATS;

    /// The views' flags of command `name`, by their long names.
    fn view_flags(name: &str) -> Vec<String> {
        let cli = Cli::command();
        let command = cli.find_subcommand(name).unwrap();
        let longs = command.get_arguments().filter_map(|a| a.get_long());
        longs
            .filter(|l| FORMATS.iter().any(|f| f.name == *l))
            .map(String::from)
            .collect()
    }

    #[test]
    fn each_kind_of_command_offers_the_views_it_takes_and_reads_their_files() {
        assert_eq!(view_flags("write"), ["csv", "html"]);
        assert_eq!(view_flags("bonnie"), ["bonnie-csv", "csv", "html"]);
        assert_eq!(view_flags("report"), ["csv", "html"]);
        let cli = Cli::parse_from(["iobm", "report", "r.json", "--html", "p.html"]);
        let Command::Report(args) = cli.command else {
            panic!("not report")
        };
        let chosen: Vec<(String, &str)> = args
            .views
            .chosen
            .iter()
            .map(|(f, p)| (f.flag(), p.to_str().unwrap()))
            .collect();
        assert_eq!(chosen, [("--html".to_string(), "p.html")]);
    }
}
