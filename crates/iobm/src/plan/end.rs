//! What a plan prints and writes at its end: the table of its runs, the comparison of each kind
//! of complete result, and `bonnie.csv`, the bonnie++ CSV of its complete bonnie runs.

use super::record::Outcome;
use crate::cli::{FormatArg, RunArgs};
use iobm_report::compare::{render, Format, Layout};
use iobm_results::RunResult;
use iobm_run::exit::Failure;
use iobm_run::session::describe_io;
use std::path::Path;

pub(super) fn summary_table(outcomes: &[Outcome]) -> String {
    let width = outcomes.iter().map(|o| o.label.len()).max().unwrap_or(0);
    let mut text = String::from("\nplan:\n");
    for o in outcomes {
        let code = o
            .exit_code
            .map_or(String::new(), |c| format!(" (exit {c})"));
        text.push_str(&format!(
            "  {:width$}  {}{code}  {}\n",
            o.label,
            o.status,
            o.result.as_deref().unwrap_or("-")
        ));
    }
    text
}

/// The complete results of the plan (complete now or before --resume), in plan order.
fn complete(outcomes: &[Outcome]) -> impl Iterator<Item = (&Outcome, &str)> {
    outcomes
        .iter()
        .filter(|o| matches!(o.status, "complete" | "resumed"))
        .filter_map(|o| Some((o, o.result.as_deref()?)))
}

/// One comparison per kind of run among the complete results (S3 operations together).
pub(super) fn compare_groups(
    out: &Path,
    outcomes: &[Outcome],
    args: &RunArgs,
) -> Result<(), Failure> {
    let mut groups: Vec<(String, Vec<(String, RunResult)>)> = Vec::new();
    for (o, result) in complete(outcomes) {
        let (_, run) = crate::compare::load(&out.join(result).display().to_string())?;
        let kind = run.kind.family();
        match groups.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, runs)) => runs.push((o.label.clone(), run)),
            None => groups.push((kind, vec![(o.label.clone(), run)])),
        }
    }
    let aggregate = iobm_stats::AggregateKind::Makespan;
    for (kind, runs) in groups.iter().filter(|(_, runs)| runs.len() > 1) {
        let format = match args.format {
            FormatArg::Text => Format::Text,
            FormatArg::Markdown => Format::Markdown,
            FormatArg::Csv => Format::Csv,
        };
        let layout = Layout {
            transpose: false,
            format,
            aggregate,
            unit: iobm_report::compare::Unit::MiB,
            wide: false,
        };
        let title = format!("\n== {kind}: {} runs compared\n", runs.len());
        if format == Format::Csv {
            // The CSV alone on stdout, to be saved as it is.
            eprint!("{title}");
            iobm_run::session::say(&render(runs, layout));
        } else {
            super::tell(args, &format!("{title}{}", render(runs, layout)));
        }
        if args.html {
            let page = iobm_report::html::compare_page(runs, aggregate, layout.unit);
            let path = out.join(format!("compare-{kind}.html"));
            iobm_run::outputs::save("--html", &path, &page)?;
            eprintln!("iobm: comparison saved to {}", path.display());
        }
    }
    Ok(())
}

/// `out/bonnie.csv`: a bonnie++ CSV line (as `--bonnie-csv` writes, for bon_csv2html) per
/// complete bonnie result, in plan order, rewritten whole each time.
pub(super) fn bonnie_csv(out: &Path, outcomes: &[Outcome]) -> Result<(), Failure> {
    let mut lines = String::new();
    let mut count = 0;
    for (_, result) in complete(outcomes) {
        let path = out.join(result);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Failure::run(format!("{}: {}", path.display(), describe_io(&e))))?;
        let run = RunResult::from_json(&text)
            .map_err(|e| Failure::run(format!("{}: {e}", path.display())))?;
        if let Some(line) = iobm_report::bonnie::csv_line(&run) {
            lines.push_str(&line);
            lines.push('\n');
            count += 1;
        }
    }
    let path = out.join("bonnie.csv");
    if count == 0 {
        return Ok(());
    }
    iobm_run::outputs::save("--out", &path, &lines)?;
    eprintln!(
        "iobm: bonnie++ CSV of {count} run{} saved to {}",
        if count == 1 { "" } else { "s" },
        path.display()
    );
    Ok(())
}
