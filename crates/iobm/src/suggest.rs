//! "Did you mean" for mistyped options: the names the field's other tools (fio, elbencho, warp,
//! bonnie++, the aws CLI) give iobm's options, per command, said in place of clap's tip to pass
//! an unknown flag as a value after `--` (an unknown flag is nearly always a flag). Near misses
//! of iobm's own names keep clap's "a similar argument exists".

use clap::builder::StyledStr;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use std::ffi::OsString;

/// What another tool calls an option of the file commands (write, read, stream): its name,
/// iobm's, and whose name it is.
const FILES: &[(&str, &str, &str)] = &[
    ("--threads", "--jobs", "elbencho's --threads"),
    ("-t", "--jobs", "elbencho's -t"),
    ("--numjobs", "--jobs", "fio's --numjobs"),
    ("--num-jobs", "--jobs", "fio's --numjobs"),
    ("--concurrent", "--jobs", "the file commands' workers"),
    ("--bs", "--block", "fio's --bs"),
    ("--blocksize", "--block", "fio's --blocksize"),
    ("--block-size", "--block", "elbencho's --block"),
    ("--filesize", "--size-per-job", "fio's --filesize, per job"),
    ("--file-size", "--size-per-job", "a size per file and job"),
    ("--runtime", "--duration", "fio's --runtime"),
    ("--timelimit", "--duration", "elbencho's --timelimit"),
    ("--time", "--duration", "a time limit"),
    ("--ioengine", "--engine", "fio's --ioengine"),
    ("--rwmixread", "--rwmix", "fio's --rwmixread"),
    ("--ramp_time", "--ramp", "fio's --ramp_time"),
    ("--ramp-time", "--ramp", "fio's --ramp_time"),
    (
        "--rw",
        "--random",
        "fio's --rw=randread/randwrite; the command says read or write",
    ),
    ("--output", "--json", "fio's --output"),
    ("--output-format", "--json", "fio's --output-format=json"),
    (
        "--directory",
        "DIR",
        "fio's --directory: iobm takes the directory as its argument",
    ),
    ("--dir", "DIR", "iobm takes the directory as its argument"),
    (
        "--filename",
        "DIR",
        "iobm makes its own files inside the directory given",
    ),
];

/// The same for `iobm s3` (warp, the aws CLI, elbencho's S3 mode).
const S3: &[(&str, &str, &str)] = &[
    ("--threads", "--concurrent", "elbencho's --threads"),
    ("-t", "--concurrent", "elbencho's -t"),
    ("--jobs", "--concurrent", "one worker per connection"),
    ("--numjobs", "--concurrent", "fio's --numjobs"),
    ("--concurrency", "--concurrent", "warp's --concurrent"),
    ("--workers", "--concurrent", "one worker per connection"),
    ("--host", "--endpoint", "warp's --host"),
    ("--hosts", "--endpoint", "elbencho's --s3endpoints"),
    ("--s3endpoints", "--endpoint", "elbencho's --s3endpoints"),
    (
        "--endpoint-url",
        "--endpoint",
        "the aws CLI's --endpoint-url",
    ),
    ("--url", "--endpoint", "the S3 endpoint"),
    ("--obj.size", "--obj-size", "warp's --obj.size"),
    ("--objsize", "--obj-size", "warp's --obj.size"),
    ("--object-size", "--obj-size", "warp's --obj.size"),
    ("--size", "--obj-size", "the size of each object"),
    ("--bs", "--obj-size", "a whole object per request"),
    ("--block", "--obj-size", "a whole object per request"),
    (
        "--obj.randsize",
        "--obj-size log2:MIN..MAX",
        "warp's --obj.randsize: sizes on a log2 scale up to --obj.size",
    ),
    ("--part.size", "--part-size", "warp's --part.size"),
    ("--runtime", "--duration", "fio's --runtime"),
    ("--timelimit", "--duration", "elbencho's --timelimit"),
    ("--time", "--duration", "a time limit"),
    ("--accesskey", "--access-key", "the access key"),
    ("--access-key-id", "--access-key", "AWS_ACCESS_KEY_ID"),
    ("--secretkey", "--secret-key", "the secret key"),
    ("--secret", "--secret-key", "the secret key"),
    (
        "--secret-access-key",
        "--secret-key",
        "AWS_SECRET_ACCESS_KEY",
    ),
    ("--noclear", "--keep", "warp's --noclear"),
    ("--no-clear", "--keep", "warp's --noclear"),
    ("--benchdata", "--json", "warp's --benchdata"),
];

/// The same for `iobm bonnie` (bonnie++'s one-letter flags).
const BONNIE: &[(&str, &str, &str)] = &[
    (
        "-d",
        "DIR",
        "bonnie++ -d: iobm takes the directory as its argument",
    ),
    ("-n", "--files", "bonnie++ -n"),
    ("-m", "--label", "bonnie++ -m"),
    ("-x", "--repeat", "bonnie++ -x"),
    ("-b", "--fsync each", "bonnie++ -b"),
    ("-D", "--direct", "bonnie++ -D"),
    (
        "-r",
        "--size",
        "bonnie++ -r RAM: iobm reads the RAM and sizes the file twice that",
    ),
    ("--threads", "--seekers", "the workers doing the seeks"),
    ("--jobs", "--seekers", "the workers doing the seeks"),
];

/// What to say instead of `arg` (a flag, maybe with `=VALUE`) to command `command`.
fn alias(command: &str, arg: &str) -> Option<(&'static str, &'static str)> {
    let table = match command {
        "write" | "stream" | "read" => FILES,
        "s3" => S3,
        "bonnie" => BONNIE,
        _ => return None,
    };
    let name = arg.split_once('=').map_or(arg, |(n, _)| n);
    let &(_, ours, whose) = table.iter().find(|(other, _, _)| *other == name)?;
    // Only an option this command has (`read` has no --jobs: as many as wrote the data set).
    let flag = ours.split(' ').next().unwrap_or(ours);
    (flag == "DIR" || has_option(command, flag)).then_some((ours, whose))
}

/// Whether iobm's `command` has the long option `flag`.
fn has_option(command: &str, flag: &str) -> bool {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    let Some(sub) = cli.find_subcommand(command) else {
        return false;
    };
    let has = sub.get_arguments().any(|a| {
        a.get_long()
            .is_some_and(|l| flag.strip_prefix("--") == Some(l))
    });
    has
}

/// Makes clap's error for an unknown option say what iobm calls it, without the tip to pass it
/// as a value after `--`.
pub fn improve(mut error: clap::Error, argv: &[OsString]) -> clap::Error {
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg).cloned() else {
        return error;
    };
    let mut tips: Vec<StyledStr> = match error.remove(ContextKind::Suggested) {
        Some(ContextValue::StyledStrs(tips)) => tips,
        _ => Vec::new(),
    };
    tips.retain(|t| !t.to_string().contains("as a value, use"));
    let command = argv
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| !a.starts_with('-'));
    if let Some((ours, whose)) = command.and_then(|c| alias(c, &arg)) {
        error.remove(ContextKind::SuggestedArg);
        let tip = if ours == "DIR" {
            format!(
                "give the directory as the argument, as in 'iobm {} DIR' ({whose})",
                command.unwrap_or_default()
            )
        } else {
            format!("did you mean '{ours}'? (iobm's name for {whose})")
        };
        tips.insert(0, StyledStr::from(tip));
    }
    if !tips.is_empty() {
        error.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
    }
    error
}

/// An optional value given apart from its flag (`--until-stable 5%/1s`), which clap takes for
/// the next argument (the directory): the one-line error to give instead.
pub fn detached_value(argv: &[OsString]) -> Option<String> {
    let args: Vec<&str> = argv.iter().filter_map(|a| a.to_str()).collect();
    args.windows(2).find_map(|pair| match pair {
        ["--until-stable", value] if value.contains('%') && value.contains('/') => Some(format!(
            "--until-stable takes its value after '=': --until-stable={value}"
        )),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tolerance_and_window_apart_from_until_stable_is_named() {
        let argv = |args: &[&str]| args.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            detached_value(&argv(&["iobm", "write", "--until-stable", "5%/1s", "/d"])).unwrap(),
            "--until-stable takes its value after '=': --until-stable=5%/1s"
        );
        assert_eq!(
            detached_value(&argv(&["iobm", "write", "--until-stable", "/d"])),
            None
        );
        assert_eq!(
            detached_value(&argv(&["iobm", "write", "--until-stable=5%/1s", "/d"])),
            None
        );
    }

    #[test]
    fn read_is_not_offered_options_it_lacks() {
        assert_eq!(alias("write", "--threads=4").map(|a| a.0), Some("--jobs"));
        assert_eq!(alias("read", "--threads"), None);
        assert_eq!(alias("read", "--bs").map(|a| a.0), Some("--block"));
        assert_eq!(alias("s3", "--threads").map(|a| a.0), Some("--concurrent"));
        assert_eq!(alias("compare", "--threads"), None);
    }

    #[test]
    fn each_alias_names_an_option_its_command_has() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        for (command, table) in [("write", FILES), ("s3", S3), ("bonnie", BONNIE)] {
            let sub = cli.find_subcommand(command).unwrap();
            for (theirs, ours, _) in table {
                let flag = ours.split(' ').next().unwrap();
                let known = flag == "DIR" || has_option(command, flag);
                assert!(known, "{command} {theirs} -> {ours}: no such option");
                // And none shadows an option iobm has.
                let taken = sub.get_arguments().any(|a| {
                    a.get_long().is_some_and(|l| format!("--{l}") == *theirs)
                        || a.get_short().is_some_and(|s| format!("-{s}") == *theirs)
                });
                assert!(!taken, "{command} {theirs} is an option of iobm's");
            }
        }
    }
}
