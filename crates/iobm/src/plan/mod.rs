//! `iobm run PLAN.toml`: every run of a plan file checked before any starts, then run one
//! after another as iobm processes (each under its `launch`er), each result saved in `--out`
//! by its label, a summary (`plan.json`) rewritten after each, and the comparable results
//! compared at the end. `iobm rerun RESULT.json` runs a result's spec again.

mod end;
pub mod file;
mod record;
mod running;

use crate::cli::{FormatArg, RerunArgs, RunArgs};
use crate::spec;
use file::{Plan, PlannedRun};
use iobm_results::spec::SpecValue;
use iobm_results::RunResult;
use iobm_run::exit::{Exit, Failure};
use iobm_run::session::{describe_io, say};
use record::Outcome;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A run of the plan, checked: its command line, and the config hash it will record where its
/// command can tell before it runs.
type Checked<'p> = (&'p PlannedRun, Vec<OsString>, Option<String>);

/// The plan's runs with their command lines, each checked as the command would check it.
fn checked<'p>(plan: &'p Plan, iobm: &Path) -> Result<Vec<Checked<'p>>, Failure> {
    plan.runs
        .iter()
        .map(|run| {
            let argv = spec::to_argv(&run.spec).map_err(|message| {
                let key = message.split(':').next();
                Failure::input(plan.error_at(run, key, &message))
            })?;
            check_command_line(plan, run, &argv)?;
            let hash = check_target(plan, run, &argv, iobm)?;
            Ok((run, argv, hash))
        })
        .collect()
}

/// clap's verdict on a run's command line, as one line at the key it is about.
fn check_command_line(plan: &Plan, run: &PlannedRun, argv: &[OsString]) -> Result<(), Failure> {
    use clap::error::{ContextKind, ContextValue};
    use clap::CommandFactory;
    let Err(error) = crate::cli::Cli::command().try_get_matches_from(argv) else {
        return Ok(());
    };
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // "--obj-size <SIZE>" or "<DIR>": the key in the plan.
    let key = context(ContextKind::InvalidArg).map(|arg| {
        let name = arg
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_start_matches('-');
        name.trim_matches(|c| c == '<' || c == '>' || c == '.')
            .to_ascii_lowercase()
            .replace('_', "-")
    });
    let rendered = error.render().to_string();
    // The first line, and the one it introduces ("... not provided:" and what).
    let mut lines = rendered.lines().filter(|l| !l.trim().is_empty());
    let mut message = lines
        .next()
        .unwrap_or("")
        .trim_start_matches("error: ")
        .to_string();
    if message.ends_with(':') {
        message.push(' ');
        message.push_str(lines.next().unwrap_or("").trim());
    }
    if let Some(similar) = context(ContextKind::SuggestedArg) {
        message.push_str(&format!(
            " (did you mean {}?)",
            similar.trim_start_matches('-')
        ));
    }
    let message = format!("{}: {message}", key.as_deref().unwrap_or(&run.spec.command));
    Err(Failure::input(plan.error_at(run, key.as_deref(), &message)))
}

/// The run's command as it checks itself before it creates anything (its flags, its target,
/// sizes against the free space, the servers it names): an iobm process told to stop there.
fn check_target(
    plan: &Plan,
    run: &PlannedRun,
    argv: &[OsString],
    iobm: &Path,
) -> Result<Option<String>, Failure> {
    // Under its launcher, as it will run (an MPI launcher, an iobm built without MPI).
    let words = words(run, argv, iobm, "--check-only".into());
    let checked = std::process::Command::new(&words[0])
        .args(&words[1..])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| {
            let message = format!(
                "run {:?}: {}: cannot start: {}",
                run.label,
                words[0],
                describe_io(&e)
            );
            let key = if run.launch.is_empty() {
                None
            } else {
                Some("launch")
            };
            Failure::input(plan.error_at(run, key, &message))
        })?;
    if checked.status.success() {
        let stdout = String::from_utf8_lossy(&checked.stdout);
        let hash = stdout
            .lines()
            .find_map(|l| l.strip_prefix(iobm_run::session::CHECKED_HASH));
        return Ok(hash.map(str::to_string));
    }
    let stderr = String::from_utf8_lossy(&checked.stderr);
    let said = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("iobm: "))
        .unwrap_or(stderr.trim())
        .trim_start_matches("iobm: ")
        .trim_start_matches("error: ");
    // The key it is about: the first option it names, else the option whose value it starts with.
    let named = said.split_whitespace().find_map(|word| {
        let name = word.strip_prefix("--")?;
        let name: String = name
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        run.spec.options.contains_key(&name).then_some(name)
    });
    let key = named.or_else(|| {
        run.spec.options.iter().find_map(|(k, v)| match v {
            SpecValue::Text(t) if said.starts_with(&format!("{t}:")) => Some(k.clone()),
            _ => None,
        })
    });
    let message = format!("run {:?}: {said}", run.label);
    let key = key
        .as_deref()
        .or((!run.launch.is_empty()).then_some("launch"));
    Err(Failure::input(plan.error_at(run, key, &message)))
}

/// A command line as a shell would take it.
fn shell_line(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c))
            {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a run: its launcher, iobm, the command, `flag` (`--json=RESULT` to run it,
/// `--check-only` to check it), then its options.
fn words(run: &PlannedRun, argv: &[OsString], iobm: &Path, flag: String) -> Vec<String> {
    let mut words = run.launch.clone();
    words.push(iobm.display().to_string());
    words.push(run.spec.command.clone());
    words.push(flag);
    words.extend(argv[2..].iter().map(|a| a.to_string_lossy().into_owned()));
    words
}

/// The flag that saves a run's result in `result`.
fn json_flag(result: &Path) -> String {
    format!("--json={}", result.display())
}

/// The spec a run records for this command line (as clap reads it).
fn canonical(argv: &[OsString]) -> Option<iobm_results::spec::RunSpec> {
    use clap::CommandFactory;
    let matches = crate::cli::Cli::command().try_get_matches_from(argv).ok()?;
    spec::from_matches(&matches)
}

/// `iobm run PLAN.toml`: the plan read and every run checked, then each run started in turn
/// (or kept by `--resume`, or only shown by `--dry-run`), the summary saved after each, and the
/// results compared at the end.
pub fn run(args: RunArgs) -> Result<Exit, Failure> {
    if iobm_dist::launcher_ranks().is_some() {
        return Err(Failure::input(
            "iobm run: started by an MPI launcher; start the plan alone and give its runs \
             launch = \"mpirun -np N\"",
        ));
    }
    let name = args.plan.display().to_string();
    let text = std::fs::read_to_string(&args.plan)
        .map_err(|e| Failure::input(format!("{name}: {}", describe_io(&e))))?;
    let plan = Plan::parse(&name, text).map_err(Failure::input)?;
    let iobm = std::env::current_exe()
        .map_err(|e| Failure::run(format!("cannot find iobm's own program: {e}")))?;
    let runs = checked(&plan, &iobm)?;
    let out = out_dir(&args)?;
    let earlier = record::earlier(&out);
    let planned: Vec<&PlannedRun> = runs.iter().map(|(run, _, _)| *run).collect();
    let stale = record::stale_results(&out, &earlier, &planned);
    record::note_stale_results(&out, &stale);
    // Each run's words, saving its result in --out.
    let lines: Vec<Vec<String>> = runs
        .iter()
        .map(|(run, argv, _)| {
            let result = out.join(file::result_name(&run.label));
            words(run, argv, &iobm, json_flag(&result))
        })
        .collect();
    // Kept by --resume: complete, of the same spec, started the same way.
    let kept = |i: usize| {
        let (run, argv, _) = &runs[i];
        args.resume && record::kept(&out, &earlier, run, argv, &lines[i])
    };
    if args.dry_run {
        dry_run(&runs, &lines, kept);
        return Ok(Exit::Ok);
    }
    writable_out(&out)?;
    running::catch_signals();
    let not_run = |i: usize| record::not_run(&out, &earlier, runs[i].0, &lines[i]);
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut stop = false;
    for (i, (run, _, _)) in runs.iter().enumerate() {
        let mut outcome = not_run(i);
        let at = format!("{}/{} {}", i + 1, runs.len(), run.label);
        stop |= running::interrupted();
        if !stop && kept(i) {
            tell(&args, &format!("== {at}: complete before, kept\n"));
            outcome.command_line = lines[i].clone();
            outcome.status = "resumed";
        } else if !stop {
            tell(&args, &format!("== {at}\n   {}\n", shell_line(&lines[i])));
            start(&args, &out, &lines[i], &mut outcome);
            if outcome.status == "interrupted" {
                eprintln!(
                    "iobm: run '{}' interrupted: the plan stops here ({} not run)",
                    run.label,
                    runs.len() - i - 1
                );
            }
            stop =
                outcome.status == "interrupted" || (outcome.status == "failed" && args.fail_fast);
        }
        outcomes.push(outcome);
        let to_come = (i + 1..runs.len()).map(not_run).collect();
        record::save(&out, &name, &outcomes, to_come, &stale)?;
    }
    let not_run = outcomes.iter().filter(|o| o.status == "not run").count();
    if running::interrupted() && !outcomes.iter().any(|o| o.status == "interrupted") {
        // Between two runs: none was stopped, the rest were not started.
        eprintln!("iobm: interrupted: the plan stops here ({not_run} not run)");
    }
    tell(&args, &end::summary_table(&outcomes));
    end::compare_groups(&out, &outcomes, &args)?;
    end::bonnie_csv(&out, &outcomes)?;
    Ok(exit_of(&outcomes, running::interrupted()))
}

/// The directory the results go to: `--out`, else `PLAN-results`; not a file.
fn out_dir(args: &RunArgs) -> Result<PathBuf, Failure> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("{}-results", stem(&args.plan))));
    if out.exists() && !out.is_dir() {
        let message = format!("--out {}: not a directory", out.display());
        return Err(Failure::input(message));
    }
    Ok(out)
}

/// `--dry-run`: each run's label, config hash, whether `--resume` keeps it, and its command
/// line.
fn dry_run(runs: &[Checked], lines: &[Vec<String>], kept: impl Fn(usize) -> bool) {
    for (i, (run, _, hash)) in runs.iter().enumerate() {
        let hash = hash
            .as_deref()
            .map_or(String::new(), |h| format!("  config {h}"));
        let note = if kept(i) {
            "  (complete: --resume keeps it)"
        } else {
            ""
        };
        say(&format!(
            "{}/{}  {}{hash}{note}\n      {}\n",
            i + 1,
            runs.len(),
            run.label,
            shell_line(&lines[i])
        ));
    }
}

/// Makes the results' directory and checks that it is writable, before the first run, not
/// after it.
fn writable_out(out: &Path) -> Result<(), Failure> {
    let fail =
        |e: std::io::Error| Failure::input(format!("--out {}: {}", out.display(), describe_io(&e)));
    std::fs::create_dir_all(out).map_err(fail)?;
    let probe = out.join(".iobm-write-probe");
    std::fs::write(&probe, b"")
        .and_then(|_| std::fs::remove_file(&probe))
        .map_err(fail)
}

/// Starts the run of `words` and waits for it: its command line, result, exit code and
/// status into `outcome` (whose label names its result in `out`).
fn start(args: &RunArgs, out: &Path, words: &[String], outcome: &mut Outcome) {
    let result_file = file::result_name(&outcome.label);
    let result = out.join(&result_file);
    let before = record::stamp(&result);
    let code = running::start(words, matches!(args.format, FormatArg::Csv));
    // Its result, if it wrote one (not the file an earlier run left).
    let after = record::stamp(&result);
    outcome.command_line = words.to_vec();
    outcome.result = (after.is_some() && after != before).then_some(result_file);
    outcome.exit_code = code.as_ref().ok().copied().flatten();
    outcome.status = match code {
        Err(failure) => {
            eprintln!("iobm: error: {failure}");
            "failed"
        }
        Ok(Some(0)) => "complete",
        Ok(Some(130)) => "interrupted",
        _ if running::interrupted() => "interrupted",
        _ => "failed",
    };
}

/// Prints what the plan says of its runs: on stdout, or on stderr when stdout carries the
/// comparison's CSV alone.
fn tell(args: &RunArgs, text: &str) {
    if matches!(args.format, FormatArg::Csv) {
        eprint!("{text}");
    } else {
        say(text);
    }
}

/// The plan's exit code: interrupted before all else, then the worst of its runs'.
fn exit_of(outcomes: &[Outcome], interrupted: bool) -> Exit {
    let codes: Vec<i32> = outcomes.iter().filter_map(|o| o.exit_code).collect();
    if interrupted || outcomes.iter().any(|o| o.status == "interrupted") {
        Exit::Interrupted
    } else if codes.contains(&(Exit::LeftBehind as i32)) {
        Exit::LeftBehind
    } else if codes.contains(&(Exit::VerifyFailed as i32)) {
        Exit::VerifyFailed
    } else if outcomes.iter().any(|o| o.status == "failed") {
        Exit::RunFailed
    } else {
        Exit::Ok
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or("plan".into(), |s| s.to_string_lossy().into_owned())
}

/// The spec `iobm rerun` runs: the result's, changed by the sets. A run changed by a set is not
/// the run its label named: the label goes unless a set gives one.
pub fn rerun_spec(args: &RerunArgs) -> Result<iobm_results::spec::RunSpec, Failure> {
    let name = args.result.display().to_string();
    let text = std::fs::read_to_string(&args.result)
        .map_err(|e| Failure::input(format!("{name}: {}", describe_io(&e))))?;
    let saved = RunResult::from_json(&text).map_err(|e| Failure::input(format!("{name}: {e}")))?;
    let Some(mut spec) = saved.spec else {
        return Err(Failure::input(format!(
            "{name}: no spec recorded (an older iobm made it); its command line was: {}",
            shell_line(&saved.command_line)
        )));
    };
    let recorded = spec.clone();
    for set in &args.set {
        spec::set(&mut spec, set).map_err(|e| Failure::input(format!("--set {set}: {e}")))?;
    }
    if let Some(label) = &args.output.label {
        spec.options
            .insert("label".into(), SpecValue::Text(label.clone()));
    }
    let label_set = args.output.label.is_some() || args.set.iter().any(|s| s.starts_with("label="));
    if spec != recorded && !label_set {
        spec.options.remove("label");
    }
    Ok(spec)
}

/// `iobm rerun RESULT.json [--set KEY=VALUE ...]`: the result's spec, changed by the sets, run
/// in this process (so under an MPI launcher on every rank).
pub fn rerun(args: RerunArgs) -> Result<ExitCode, Failure> {
    let name = args.result.display().to_string();
    let spec = rerun_spec(&args)?;
    let mut argv = spec::to_argv(&spec).map_err(|e| Failure::input(format!("{name}: {e}")))?;
    // Where this run's outputs go, after the command.
    let json = args.output.json.iter().map(|p| ("--json".to_string(), p));
    let views = args.output.views.chosen.iter().map(|(f, p)| (f.flag(), p));
    let given = json.chain(views).map(|(flag, path)| {
        let mut word = OsString::from(format!("{flag}="));
        word.push(path);
        word
    });
    argv.splice(2..2, given.collect::<Vec<_>>());
    let words: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    say(&format!("rerun of {name}: {}\n", shell_line(&words)));
    Ok(crate::run(argv))
}
