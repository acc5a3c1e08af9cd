//! Command lines as specs and back: the options a command was given (by their long names)
//! read from clap's matches, printed as a plan entry (`--print-spec`), and a spec turned into
//! the command line clap checks, so a spec is valid exactly when its command line is.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, CommandFactory};
use iobm_report::views::{Commands, FORMATS};
use iobm_results::spec::{RunSpec, SpecValue, SPEC_VERSION};
use std::collections::BTreeMap;
use std::ffi::OsString;

/// The commands a spec can hold: those that run a workload and save a result.
pub const COMMANDS: &[&str] = &[
    "write", "read", "stream", "bonnie", "meta", "io500", "s3", "quick", "merge", "replay",
];

/// Options a spec never holds: secrets, where outputs go (`is_output`: chosen again by whoever
/// runs the spec), and the spec flag itself.
const NOT_IN_SPEC: &[&str] = &[
    "access-key",
    "secret-key",
    "session-token",
    "print-spec",
    "check-only",
    "help",
];

/// Whether a spec never holds the option `key`.
fn not_in_spec(key: &str) -> bool {
    NOT_IN_SPEC.contains(&key) || is_output(key)
}

/// Whether the option `key` says where an output goes: the result, a view, what a run shows
/// while it goes.
fn is_output(key: &str) -> bool {
    const WATCHING: &[&str] = &["json", "live", "metrics-listen", "metrics-linger"];
    WATCHING.contains(&key) || FORMATS.iter().any(|f| f.name == key)
}

/// Arguments naming a path on this machine: kept absolute in a spec, so it means the same
/// wherever it is run from.
const PATHS: &[&str] = &["dir", "path", "results"];

/// The key an argument has in a spec: its long name, else (an argument without a flag) its id.
fn key(arg: &Arg) -> String {
    arg.get_long()
        .map_or_else(|| arg.get_id().as_str().replace('_', "-"), str::to_string)
}

fn is_list(arg: &Arg) -> bool {
    matches!(arg.get_action(), ArgAction::Append)
        || arg.get_num_args().is_some_and(|n| n.max_values() > 1)
}

/// The subcommand `name` of iobm's command line, if a spec can hold it.
fn command(name: &str) -> Option<clap::Command> {
    COMMANDS.contains(&name).then(|| {
        crate::cli::Cli::command()
            .find_subcommand(name)
            .expect("a command of COMMANDS")
            .clone()
    })
}

/// The spec of a parsed command line, or None for a command that runs no workload.
pub fn from_matches(matches: &ArgMatches) -> Option<RunSpec> {
    let (name, sub) = matches.subcommand()?;
    let command = command(name)?;
    let mut options = BTreeMap::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        let key = key(arg);
        if not_in_spec(&key) || sub.value_source(id) != Some(ValueSource::CommandLine) {
            continue;
        }
        let value = match arg.get_action() {
            ArgAction::SetTrue => SpecValue::Flag(true),
            ArgAction::SetFalse => SpecValue::Flag(false),
            _ => {
                let raw: Vec<String> = sub
                    .get_raw(id)
                    .into_iter()
                    .flatten()
                    .map(|v| v.to_string_lossy().into_owned())
                    .collect();
                let raw = if PATHS.contains(&key.as_str()) {
                    raw.into_iter().map(absolute).collect()
                } else {
                    raw
                };
                match (is_list(arg), raw.as_slice()) {
                    (false, [one]) => SpecValue::Text(one.clone()),
                    _ => SpecValue::List(raw),
                }
            }
        };
        options.insert(key, value);
    }
    Some(RunSpec {
        spec: SPEC_VERSION,
        command: name.to_string(),
        options,
    })
}

/// A path as given, made absolute against the current directory when it is relative (not
/// resolved further: a symbolic link stays as named).
fn absolute(path: String) -> String {
    if std::path::Path::new(&path).is_absolute() || path.is_empty() {
        return path;
    }
    std::env::current_dir()
        .map(|cwd| cwd.join(&path).display().to_string())
        .unwrap_or(path)
}

/// The command line (program name first) that runs `spec`; an error names the key.
pub fn to_argv(spec: &RunSpec) -> Result<Vec<OsString>, String> {
    if spec.spec != SPEC_VERSION {
        return Err(format!(
            "spec {}: this iobm reads spec {SPEC_VERSION}",
            spec.spec
        ));
    }
    let command = command(&spec.command).ok_or_else(|| {
        format!(
            "command {:?}: a spec runs one of {}",
            spec.command,
            COMMANDS.join(", ")
        )
    })?;
    let mut argv: Vec<OsString> = vec!["iobm".into(), spec.command.clone().into()];
    let mut positional: Vec<(usize, &SpecValue)> = Vec::new();
    for (name, value) in &spec.options {
        let arg = command
            .get_arguments()
            .find(|a| key(a) == *name && !not_in_spec(name))
            .ok_or_else(|| unknown(&command, name))?;
        let flag = matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse);
        // A flag whose value may be left out (`--until-stable`): true gives it bare.
        let bare = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        match (flag, value) {
            (false, SpecValue::Flag(true)) if bare => argv.push(format!("--{name}").into()),
            (false, SpecValue::Flag(false)) if bare => {}
            (true, SpecValue::Flag(true)) => argv.push(format!("--{name}").into()),
            (true, SpecValue::Flag(false)) => {}
            (true, _) => return Err(format!("{name}: a flag: true or false")),
            (false, SpecValue::Flag(_)) => {
                return Err(format!("{name}: takes a value, not true or false"))
            }
            (false, SpecValue::List(vs))
                if arg.is_positional() && !is_list(arg) && vs.len() != 1 =>
            {
                return Err(format!("{name}: takes one value, not a list{IN_MATRIX}"))
            }
            (false, value) if arg.is_positional() => {
                positional.push((arg.get_index().unwrap_or(usize::MAX), value))
            }
            (false, SpecValue::Text(v)) => argv.push(format!("--{name}={v}").into()),
            (false, SpecValue::List(vs)) if !is_list(arg) && vs.len() != 1 => {
                return Err(format!("{name}: takes one value, not a list{IN_MATRIX}"))
            }
            (false, SpecValue::List(vs)) => {
                argv.extend(vs.iter().map(|v| OsString::from(format!("--{name}={v}"))))
            }
        }
    }
    // Arguments without a flag last, in their order, after "--" so none is read as a flag.
    positional.sort_by_key(|(index, _)| *index);
    if !positional.is_empty() {
        argv.push("--".into());
    }
    for (_, value) in positional {
        match value {
            SpecValue::Text(v) => argv.push(v.into()),
            SpecValue::List(vs) => argv.extend(vs.iter().map(OsString::from)),
            SpecValue::Flag(_) => unreachable!("refused above"),
        }
    }
    Ok(argv)
}

/// `--set KEY=VALUE` applied to `spec`: a flag takes true or false, an empty value takes the
/// option out (back to its default).
pub fn set(spec: &mut RunSpec, assignment: &str) -> Result<(), String> {
    let (name, value) = assignment
        .split_once('=')
        .ok_or("KEY=VALUE, as size=4GiB or direct=true")?;
    let command = command(&spec.command).ok_or_else(|| format!("command {:?}", spec.command))?;
    let arg = command
        .get_arguments()
        .find(|a| key(a) == name && !not_in_spec(name))
        .ok_or_else(|| unknown(&command, name))?;
    if value.is_empty() {
        spec.options.remove(name);
        return Ok(());
    }
    let value = if matches!(arg.get_action(), ArgAction::SetTrue | ArgAction::SetFalse) {
        SpecValue::Flag(
            value
                .parse()
                .map_err(|_| format!("{name}: a flag: true or false"))?,
        )
    } else {
        SpecValue::Text(value.to_string())
    };
    spec.options.insert(name.to_string(), value);
    Ok(())
}

/// Said of a list given to an option of one value.
const IN_MATRIX: &str = " (values to run one after another go in a [matrix])";

/// "unknown option" naming the nearest the command has, or why an option it has is not kept.
fn unknown(command: &clap::Command, name: &str) -> String {
    match name {
        "access-key" | "secret-key" | "session-token" => {
            return format!(
                "{name}: never kept in a spec: give the credentials as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment"
            )
        }
        _ if is_output(name) => {
            let views = FORMATS.iter().filter(|f| f.commands == Commands::Workloads);
            let flags: String = views.map(|f| format!("/{}", f.flag())).collect();
            return format!(
                "{name}: where results go is chosen by whoever runs the spec (iobm run --out, iobm rerun --json{flags})"
            );
        }
        _ => {}
    }
    let nearest = command
        .get_arguments()
        .map(key)
        .filter(|k| !not_in_spec(k))
        .min_by_key(|k| edit_distance(k, name))
        .filter(|k| edit_distance(k, name) <= 2.max(name.len() / 3));
    match nearest {
        Some(k) => format!(
            "{name}: {} has no such option; did you mean {k}?",
            command.get_name()
        ),
        None => format!("{name}: {} has no such option", command.get_name()),
    }
}

/// Levenshtein distance of two short names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let replaced = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = replaced.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// A TOML value of a plan file as a spec value: strings, numbers and booleans, or arrays of
/// strings and numbers.
pub fn from_toml(value: &toml::Value) -> Result<SpecValue, &'static str> {
    fn scalar(value: &toml::Value) -> Option<String> {
        match value {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Integer(i) => Some(i.to_string()),
            toml::Value::Float(f) => Some(f.to_string()),
            _ => None,
        }
    }
    match value {
        toml::Value::Boolean(b) => Ok(SpecValue::Flag(*b)),
        toml::Value::Array(items) => items
            .iter()
            .map(scalar)
            .collect::<Option<Vec<_>>>()
            .map(SpecValue::List)
            .ok_or("an array of strings or numbers"),
        other => scalar(other)
            .map(SpecValue::Text)
            .ok_or("a string, number, boolean or array"),
    }
}

/// A spec value as TOML: whole numbers as numbers, the rest as strings.
fn to_toml(value: &SpecValue) -> toml::Value {
    fn scalar(text: &str) -> toml::Value {
        match text.parse::<i64>() {
            Ok(n) if n.to_string() == text => toml::Value::Integer(n),
            _ => toml::Value::String(text.to_string()),
        }
    }
    match value {
        SpecValue::Flag(b) => toml::Value::Boolean(*b),
        SpecValue::Text(t) => scalar(t),
        SpecValue::List(vs) => toml::Value::Array(vs.iter().map(|v| scalar(v)).collect()),
    }
}

/// `spec` as one `[[run]]` entry of a plan file, for `iobm run`.
pub fn plan_entry(spec: &RunSpec) -> String {
    let mut table = toml::Table::new();
    table.insert("command".into(), toml::Value::String(spec.command.clone()));
    for (k, v) in &spec.options {
        table.insert(k.clone(), to_toml(v));
    }
    let mut plan = toml::Table::new();
    plan.insert(
        "run".into(),
        toml::Value::Array(vec![toml::Value::Table(table)]),
    );
    toml::to_string(&plan).expect("a table of plain values")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    fn spec_of(args: &[&str]) -> RunSpec {
        let matches = crate::cli::Cli::command()
            .try_get_matches_from(args)
            .unwrap();
        from_matches(&matches).unwrap()
    }

    fn reparsed(spec: &RunSpec) -> RunSpec {
        let argv = to_argv(spec).unwrap();
        let matches = crate::cli::Cli::command()
            .try_get_matches_from(&argv)
            .unwrap();
        crate::cli::Cli::from_arg_matches(&matches).unwrap();
        from_matches(&matches).unwrap()
    }

    #[test]
    fn a_command_line_round_trips_through_its_spec() {
        for args in [
            &[
                "iobm", "stream", "--jobs", "4", "-s", "64MiB", "--direct", "/mnt/x",
            ][..],
            &[
                "iobm",
                "s3",
                "mixed",
                "--get",
                "60",
                "--put",
                "40",
                "--endpoint",
                "http://a:1,http://b:2",
            ],
            &[
                "iobm",
                "bonnie",
                "--size",
                "8MiB",
                "--files",
                "1:4096:0:4",
                "/tmp",
            ],
            &["iobm", "merge", "a.json", "b.json", "--whole"],
            &["iobm", "read", "--", "-odd"],
            &["iobm", "quick", "--label", "tour", "/tmp"],
        ] {
            let spec = spec_of(args);
            assert_eq!(reparsed(&spec), spec, "{args:?}");
        }
        let spec = spec_of(&[
            "iobm", "stream", "--jobs", "4", "-s", "64MiB", "--direct", "/mnt/x",
        ]);
        assert_eq!(spec.command, "stream");
        assert_eq!(spec.options["jobs"], SpecValue::Text("4".into()));
        assert_eq!(spec.options["size"], SpecValue::Text("64MiB".into()));
        assert_eq!(spec.options["direct"], SpecValue::Flag(true));
        assert_eq!(spec.options["dir"], SpecValue::Text("/mnt/x".into()));
        assert_eq!(spec.options.len(), 4, "defaults are not written: {spec:?}");
    }

    #[test]
    fn secrets_and_output_paths_are_never_in_a_spec() {
        let spec = spec_of(&[
            "iobm",
            "s3",
            "put",
            "--access-key",
            "AK",
            "--secret-key",
            "SK",
            "--session-token",
            "TOKEN",
            "--json",
            "r.json",
            "--html",
            "r.html",
            "--csv",
            "r.csv",
            "--live",
            "l.jsonl",
            "--metrics-listen",
            "127.0.0.1:0",
            "--metrics-linger",
            "5s",
            "--ops",
            "5",
        ]);
        assert_eq!(spec.options.keys().collect::<Vec<_>>(), ["op", "ops"]);
        let mut with_secret = spec.clone();
        with_secret
            .options
            .insert("secret-key".into(), SpecValue::Text("SK".into()));
        assert!(to_argv(&with_secret)
            .unwrap_err()
            .contains("AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) in the environment"));
    }

    #[test]
    fn a_spec_that_cannot_be_a_command_line_names_its_key() {
        let mut spec = spec_of(&["iobm", "stream", "/tmp"]);
        spec.options
            .insert("jbos".into(), SpecValue::Text("4".into()));
        assert_eq!(
            to_argv(&spec).unwrap_err(),
            "jbos: stream has no such option; did you mean jobs?"
        );
        let mut spec = spec_of(&["iobm", "stream", "/tmp"]);
        spec.options
            .insert("direct".into(), SpecValue::Text("yes".into()));
        assert_eq!(to_argv(&spec).unwrap_err(), "direct: a flag: true or false");
        let mut spec = spec_of(&["iobm", "stream", "/tmp"]);
        spec.options.insert("jobs".into(), SpecValue::Flag(true));
        assert!(to_argv(&spec)
            .unwrap_err()
            .starts_with("jobs: takes a value"));
        spec.command = "serve".into();
        assert!(to_argv(&spec).unwrap_err().starts_with("command \"serve\""));
        spec.command = "stream".into();
        spec.spec = 2;
        assert!(to_argv(&spec).unwrap_err().starts_with("spec 2"));
    }

    #[test]
    fn paths_are_kept_absolute() {
        let cwd = std::env::current_dir().unwrap();
        let spec = spec_of(&["iobm", "stream", "rel/dir"]);
        let expected = cwd.join("rel/dir").display().to_string();
        assert_eq!(spec.options["dir"], SpecValue::Text(expected));
        let spec = spec_of(&["iobm", "merge", "a.json", "/b.json"]);
        let a = cwd.join("a.json").display().to_string();
        assert_eq!(
            spec.options["results"],
            SpecValue::List(vec![a, "/b.json".into()])
        );
        let mut spec = spec_of(&["iobm", "stream", "/tmp"]);
        spec.options.insert(
            "dir".into(),
            SpecValue::List(vec!["/a".into(), "/b".into()]),
        );
        assert!(to_argv(&spec)
            .unwrap_err()
            .starts_with("dir: takes one value, not a list"));
    }

    #[test]
    fn a_value_that_may_be_left_out_is_given_bare_by_true() {
        let mut spec = spec_of(&["iobm", "write", "--duration", "1m", "/tmp"]);
        spec.options
            .insert("until-stable".into(), SpecValue::Flag(true));
        let argv = to_argv(&spec).unwrap();
        assert!(argv.iter().any(|a| a == "--until-stable"), "{argv:?}");
        assert_eq!(
            reparsed(&spec).options["until-stable"],
            SpecValue::Text("7.5%/15s".into())
        );
        spec.options
            .insert("until-stable".into(), SpecValue::Flag(false));
        assert!(!to_argv(&spec)
            .unwrap()
            .iter()
            .any(|a| a.to_string_lossy().contains("until")));
        // A value-taking option still refuses true.
        spec.options
            .insert("duration".into(), SpecValue::Flag(true));
        assert!(to_argv(&spec)
            .unwrap_err()
            .contains("duration: takes a value"));
    }

    #[test]
    fn a_flag_set_false_is_left_out() {
        let mut spec = spec_of(&["iobm", "stream", "--direct", "/tmp"]);
        spec.options.insert("direct".into(), SpecValue::Flag(false));
        assert_eq!(to_argv(&spec).unwrap(), ["iobm", "stream", "--", "/tmp"]);
    }

    #[test]
    fn a_plan_entry_reads_back_as_the_same_spec() {
        let spec = spec_of(&[
            "iobm",
            "s3",
            "get",
            "--concurrent",
            "8",
            "--endpoint",
            "http://a:1",
            "--insecure",
        ]);
        let text = plan_entry(&spec);
        assert!(text.contains("concurrent = 8"), "{text}");
        let table: toml::Table = text.parse().unwrap();
        let entry = table["run"].as_array().unwrap()[0].as_table().unwrap();
        let options: BTreeMap<String, SpecValue> = entry
            .iter()
            .filter(|(k, _)| *k != "command")
            .map(|(k, v)| (k.clone(), from_toml(v).unwrap()))
            .collect();
        assert_eq!(entry["command"].as_str(), Some("s3"));
        assert_eq!(options, spec.options);
    }

    #[test]
    fn a_set_changes_adds_or_removes_an_option() {
        let mut spec = spec_of(&["iobm", "stream", "--jobs", "4", "--direct", "/tmp"]);
        set(&mut spec, "jobs=8").unwrap();
        set(&mut spec, "direct=false").unwrap();
        set(&mut spec, "size=16MiB").unwrap();
        assert_eq!(spec.options["jobs"], SpecValue::Text("8".into()));
        assert_eq!(spec.options["direct"], SpecValue::Flag(false));
        assert_eq!(spec.options["size"], SpecValue::Text("16MiB".into()));
        set(&mut spec, "size=").unwrap();
        assert!(!spec.options.contains_key("size"));
        assert_eq!(
            set(&mut spec, "direct=yes").unwrap_err(),
            "direct: a flag: true or false"
        );
        assert!(set(&mut spec, "jobs").unwrap_err().starts_with("KEY=VALUE"));
        assert!(set(&mut spec, "json=r.json")
            .unwrap_err()
            .contains("iobm rerun --json"));
        assert_eq!(
            to_argv(&spec).unwrap(),
            ["iobm", "stream", "--jobs=8", "--", "/tmp"]
        );
    }

    #[test]
    fn edit_distance_counts_single_changes() {
        assert_eq!(edit_distance("jobs", "jobs"), 0);
        assert_eq!(edit_distance("jbos", "jobs"), 2);
        assert_eq!(edit_distance("size", "sizes"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
