//! The N-way comparison: saved runs of one kind side by side, one value per test (MiB/s, or
//! bonnie++'s K/sec, for tests that move data; operations per second for the others) with its
//! ratio to the first run, iobm's %CPU and the p99 latency beside it. Text that fits 100
//! columns (tables split by tests, or `wide`), Markdown or CSV; runs as rows or, transposed, as
//! columns. S3 runs of different operations (PUT against GET of one store) compare as one rate.
//! Every value carries its phase's cache verdict (a mark, with a legend) and every format has the
//! phases' and runs' warnings, so a rate served from a cache never sits unmarked beside a real one.

use crate::table::Table;
use comparison::wrap;
use iobm_results::RunResult;
use iobm_stats::AggregateKind;

mod comparison;
mod csv;
use csv::csv;

pub use comparison::{
    check_kinds, cpu_percent, headline, interval_text, verdict_mark, Cell, Comparison, Unit,
    TEXT_WIDTH, VERDICT_MARKS,
};

/// Output formats of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
}

/// How to lay the comparison out.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    pub transpose: bool,
    pub format: Format,
    pub aggregate: AggregateKind,
    pub unit: Unit,
    /// Text: one table however wide, instead of tables that fit 100 columns.
    pub wide: bool,
}

/// The warnings below a text table, each wrapped to the table's width.
fn warnings_text(c: &Comparison) -> String {
    let list = c.warnings();
    if list.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nwarnings:\n");
    for (run, tests, w) in list {
        out.push_str(&wrap(
            &format!("  {run} ({tests}): {w}"),
            TEXT_WIDTH,
            "    ",
        ));
    }
    out
}

fn value_text(cell: &Cell, with_ratio: bool) -> String {
    let Some(v) = cell.value else {
        return "-".into();
    };
    let mut text = format!("{v:.2}");
    if let Some(ci) = cell.ci95 {
        text.push(' ');
        text.push_str(&interval_text(ci));
    }
    if let Some(verdict) = &cell.verdict {
        text.push(' ');
        text.push_str(verdict_mark(verdict));
    }
    if let Some(r) = cell.ratio.filter(|_| with_ratio) {
        let noise = if cell.within_noise { "~" } else { "" };
        text.push_str(&format!(" ({r:.2}x{noise})"));
    }
    text
}

fn cpu_text(cell: &Cell) -> String {
    cell.cpu_percent.map_or("-".into(), |c| format!("{c:.0}%"))
}

fn p99_text(cell: &Cell) -> String {
    cell.p99_ns.map_or("-".into(), |ns| {
        iobm_stats::format_duration(std::time::Duration::from_nanos(ns))
    })
}

/// A text comparison's three columns (value, %CPU, p99) of one test or run: its header and each
/// row's cells.
type Block = (String, Vec<Vec<String>>);

/// A comparison laid out as blocks of three columns, one per test, or per run when transposed,
/// beside the names of the rows.
struct Blocks {
    /// The header of the rows' names: "run", or "test" when transposed.
    corner: &'static str,
    row_names: Vec<String>,
    blocks: Vec<Block>,
}

impl Blocks {
    fn of(c: &Comparison, transpose: bool) -> Blocks {
        let test_header = |t: usize| format!("{} {}", c.tests[t].0, c.tests[t].1);
        let three = |r: usize, t: usize| {
            let cell = &c.cells[r][t];
            vec![value_text(cell, r > 0), cpu_text(cell), p99_text(cell)]
        };
        let (runs_n, tests_n) = (c.labels.len(), c.tests.len());
        if transpose {
            let blocks = (0..runs_n)
                .map(|r| {
                    (
                        c.labels[r].clone(),
                        (0..tests_n).map(|t| three(r, t)).collect(),
                    )
                })
                .collect();
            let row_names = (0..tests_n).map(test_header).collect();
            Blocks {
                corner: "test",
                row_names,
                blocks,
            }
        } else {
            let blocks = (0..tests_n)
                .map(|t| (test_header(t), (0..runs_n).map(|r| three(r, t)).collect()))
                .collect();
            Blocks {
                corner: "run",
                row_names: c.labels.clone(),
                blocks,
            }
        }
    }

    /// The header and rows of a table of the `chosen` blocks, each row with its name.
    fn table(&self, chosen: &[usize]) -> (Vec<String>, Vec<Vec<String>>) {
        let mut header = vec![self.corner.to_string()];
        for &b in chosen {
            header.extend([self.blocks[b].0.clone(), "%CPU".into(), "p99".into()]);
        }
        let mut rows = Vec::new();
        for (i, name) in self.row_names.iter().enumerate() {
            let mut row = vec![name.clone()];
            for &b in chosen {
                row.extend(self.blocks[b].1[i].iter().cloned());
            }
            rows.push(row);
        }
        (header, rows)
    }

    /// The text table of the `chosen` blocks.
    fn text(&self, chosen: &[usize]) -> String {
        let (header, rows) = self.table(chosen);
        let mut t = Table::new(header);
        rows.into_iter().for_each(|r| t.row(r));
        t.render("")
    }
}

/// The comparison table. Tests are the phases of all runs, in the order they first appear.
pub fn render(runs: &[(String, RunResult)], layout: Layout) -> String {
    let c = Comparison::of(runs, layout.aggregate, layout.unit);
    if layout.format == Format::Csv {
        return csv(&c, layout.transpose);
    }
    let blocks = Blocks::of(&c, layout.transpose);
    match layout.format {
        Format::Markdown => markdown(runs, &c, &blocks),
        _ => text(runs, &c, &blocks, layout.wide),
    }
}

/// The comparison as one Markdown table, its notes and its warnings as a list.
fn markdown(runs: &[(String, RunResult)], c: &Comparison, blocks: &Blocks) -> String {
    let (header, rows) = blocks.table(&(0..blocks.blocks.len()).collect::<Vec<_>>());
    let mut out = format!("| {} |\n|", header.join(" | "));
    for i in 0..header.len() {
        out.push_str(if i == 0 { "---|" } else { "---:|" });
    }
    out.push('\n');
    for row in rows {
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out.push('\n');
    out.push_str(&c.note);
    out.push_str(&io500_scores(runs));
    out.push_str(&paced_lines(runs));
    let list = c.warnings();
    if !list.is_empty() {
        out.push_str("\n**Warnings**\n\n");
        for (run, tests, w) in list {
            out.push_str(&format!(
                "- {} ({tests}): {}\n",
                markdown_escape(&run),
                markdown_escape(&w)
            ));
        }
    }
    out
}

/// The comparison as text tables of as many blocks as fit (one however wide with `wide`), each
/// with the row names, then its notes and warnings.
fn text(runs: &[(String, RunResult)], c: &Comparison, blocks: &Blocks, wide: bool) -> String {
    let width = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    let mut chosen: Vec<usize> = Vec::new();
    for b in 0..blocks.blocks.len() {
        chosen.push(b);
        if !wide && chosen.len() > 1 && width(&blocks.text(&chosen)) > TEXT_WIDTH {
            chosen.pop();
            out.push_str(&blocks.text(&chosen));
            out.push('\n');
            chosen = vec![b];
        }
    }
    out.push_str(&blocks.text(&chosen));
    out.push_str(&c.note);
    out.push_str(&io500_scores(runs));
    out.push_str(&paced_lines(runs));
    out.push_str(&warnings_text(c));
    out
}

/// One line per io500 run with its IO500 scores, and the total's ratio to the first run's;
/// nothing for runs without them.
fn io500_scores(runs: &[(String, RunResult)]) -> String {
    let first = runs.first().and_then(|(_, r)| r.io500.as_ref());
    let mut out = String::new();
    for (label, run) in runs {
        let Some(s) = &run.io500 else { continue };
        let (Some(score), Some(bw), Some(md)) = (s.score, s.bw_gib_s, s.md_kiops) else {
            out.push_str(&format!(
                "IO500 score of {label}: none (not every phase of the rules ran to its end)\n"
            ));
            continue;
        };
        let ratio = first
            .and_then(|f| f.score)
            .filter(|&f| f > 0.0)
            .map_or(String::new(), |f| {
                format!(", x{:.2} of the first", score / f)
            });
        out.push_str(&format!(
            "IO500 score of {label}: {score:.6} (bandwidth {bw:.6} GiB/s, metadata {md:.6} kIOPS{ratio}){}\n",
            if s.valid { "" } else { ", NOT a valid submission" }
        ));
    }
    out
}

/// One line per paced phase of each run (`--rate`): its target and achieved rates and its
/// response time beside its service time, which the table's latencies are; nothing for runs
/// without.
fn paced_lines(runs: &[(String, RunResult)]) -> String {
    let ms = |ns: Option<u64>| ns.map_or("-".to_string(), |n| format!("{:.2}ms", n as f64 / 1e6));
    let mut out = String::new();
    for (label, run) in runs {
        for phase in &run.phases {
            let Some(pace) = &phase.pace else { continue };
            out.push_str(&format!(
                "{label} {} (open loop): target {} ops/s, achieved {:.1}; response time p99 {} p99.9 {} (service time p99 {} p99.9 {})\n",
                phase.name,
                iobm_results::pace::trim(pace.target_ops_per_s),
                pace.achieved_ops_per_s,
                ms(pace.response.p99_ns),
                ms(pace.response.p999_ns),
                ms(phase.latency.p99_ns),
                ms(phase.latency.p999_ns),
            ));
        }
    }
    out
}

/// Text that Markdown shows as it is (a warning's `*` or `_` is not emphasis).
fn markdown_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(ch, '\\' | '*' | '_' | '`' | '|' | '<' | '>' | '[' | ']') {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests;
