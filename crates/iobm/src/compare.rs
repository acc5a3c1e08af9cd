//! `iobm compare [LABEL=]RESULT.json...`: one side-by-side table of saved runs of one kind.

use crate::cli::{CompareArgs, FormatArg};
use iobm_report::compare::{check_kinds, render, Format, Layout};
use iobm_results::RunResult;
use iobm_run::exit::{Exit, Failure};
use iobm_run::recompute::recompute;
use iobm_run::session::{describe_io, say};
use std::path::Path;

/// Reads `LABEL=PATH` or `PATH`; the label defaults to the run's own, then the file's stem.
pub(crate) fn load(arg: &str) -> Result<(String, RunResult), Failure> {
    let (label, path) = match arg.split_once('=') {
        Some((label, path)) if !label.is_empty() && !Path::new(arg).exists() => {
            (Some(label.to_string()), path)
        }
        _ => (None, arg),
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::input(format!("{path}: {}", describe_io(&e))))?;
    let mut run =
        RunResult::from_json(&text).map_err(|e| Failure::input(format!("{path}: {e}")))?;
    attach_workers(&mut run, Path::new(path))?;
    recompute(&mut run);
    let label = label.or_else(|| run.label.clone()).unwrap_or_else(|| {
        Path::new(path)
            .file_stem()
            .map_or(path.to_string(), |s| s.to_string_lossy().into_owned())
    });
    Ok((label, run))
}

/// Puts back the per-worker series a document keeps in its side file, when that file is there
/// (without it every figure is still in the document).
pub(crate) fn attach_workers(run: &mut RunResult, json: &Path) -> Result<(), Failure> {
    let Some(name) = run.worker_series_file.clone() else {
        return Ok(());
    };
    let side = json.with_file_name(name);
    match std::fs::read(&side) {
        Ok(bytes) => iobm_results::detail::attach(run, &bytes)
            .map_err(|e| Failure::input(format!("{}: {e}", side.display()))),
        Err(_) => Ok(()),
    }
}

pub fn compare(args: CompareArgs) -> Result<Exit, Failure> {
    let runs = args
        .results
        .iter()
        .map(|a| load(a))
        .collect::<Result<Vec<_>, _>>()?;
    check_kinds(&runs).map_err(Failure::input)?;
    if let Some(html) = &args.html {
        iobm_run::session::output_path_ok("--html", html)?;
    }
    let format = match args.format {
        FormatArg::Text => Format::Text,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
    };
    say(&render(
        &runs,
        Layout {
            transpose: args.transpose,
            format,
            aggregate: args.aggregate.into(),
            unit: args.unit.into(),
            wide: args.wide,
        },
    ));
    if let Some(html) = &args.html {
        let page = iobm_report::html::compare_page(&runs, args.aggregate.into(), args.unit.into());
        iobm_run::outputs::save("--html", html, &page)?;
    }
    Ok(Exit::Ok)
}
