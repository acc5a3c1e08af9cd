//! The N-way comparison: saved runs of one kind side by side, one value per test (MiB/s, or
//! bonnie++'s K/sec, for tests that move data; operations per second for the others) with its
//! ratio to the first run, iobm's %CPU and the p99 latency beside it. Text that fits 100
//! columns (tables split by tests, or `wide`), Markdown or CSV; runs as rows or, transposed, as
//! columns. S3 runs of different operations (PUT against GET of one store) compare as one rate.
//! Every value carries its phase's cache verdict (a mark, with a legend) and every format has the
//! phases' and runs' warnings, so a rate served from a cache never sits unmarked beside a real one.

use crate::table::Table;
use iobm_results::repeats::{overlap, Spread};
use iobm_results::{PhaseResult, RunResult, Verdict};
use iobm_stats::AggregateKind;

mod csv;
use csv::csv;

/// Output formats of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
}

/// The unit of tests that move data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    MiB,
    /// bonnie++'s K/sec: KiB per second.
    KiB,
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

/// Columns a text comparison fits in unless `wide`.
pub const TEXT_WIDTH: usize = 100;

/// The value compared for a phase by the aggregate `kind` (None where the phase has no such
/// aggregate), and its unit.
pub fn headline(
    phase: &PhaseResult,
    kind: AggregateKind,
    unit: Unit,
) -> (Option<f64>, &'static str) {
    let (per_byte, name) = scale(phase, unit);
    let value = phase.aggregate(kind).map(|a| match per_byte {
        Some(s) => a.bytes_per_s * s,
        None => a.ops_per_s,
    });
    (value, name)
}

/// What a phase's bytes per second are multiplied by for `unit` (None: operations per second
/// are compared), and the unit's name.
fn scale(phase: &PhaseResult, unit: Unit) -> (Option<f64>, &'static str) {
    match (phase.moves_data(), unit) {
        (true, Unit::MiB) => (Some(1.0 / (1024.0 * 1024.0)), "MiB/s"),
        (true, Unit::KiB) => (Some(1.0 / 1024.0), "K/sec"),
        (false, _) => (None, "/s"),
    }
}

/// iobm's CPU time over the phase's wall time, as bonnie++'s %CPU (100 = one CPU busy).
pub fn cpu_percent(p: &PhaseResult) -> Option<f64> {
    let wall = p.end_ns.saturating_sub(p.start_ns) as f64 / 1e9;
    (wall > 0.0).then(|| (p.cpu.user_s + p.cpu.system_s) / wall * 100.0)
}

/// Why runs cannot be compared, if they cannot: runs of one kind compare, and S3 runs of any
/// operation with each other.
pub fn check_kinds(runs: &[(String, RunResult)]) -> Result<(), String> {
    let Some((first_label, first)) = runs.first() else {
        return Err("nothing to compare".into());
    };
    for (label, run) in &runs[1..] {
        if run.kind != first.kind && !(is_s3(first) && is_s3(run)) {
            return Err(format!(
                "cannot compare runs of different kinds: {first_label} is a {} run, {label} is a {} run",
                first.kind, run.kind
            ));
        }
    }
    Ok(())
}

fn is_s3(run: &RunResult) -> bool {
    run.kind.starts_with("s3 ")
}

/// One run's value for one test.
#[derive(Debug, Clone, Default)]
pub struct Cell {
    pub value: Option<f64>,
    /// value / the first run's value (1 for the first run).
    pub ratio: Option<f64>,
    /// A repeated run: the 95% confidence interval of the mean over its repetitions (`value`
    /// is their median).
    pub ci95: Option<[f64; 2]>,
    /// Both this run and the first were repeated and their intervals overlap: the difference
    /// is within their noise.
    pub within_noise: bool,
    pub cpu_percent: Option<f64>,
    pub p99_ns: Option<u64>,
    /// The phase's cache verdict (uncached, cached, memory, ...), None for documents without.
    pub verdict: Option<Verdict>,
    /// The phase's warnings (its checks, then its notes).
    pub warnings: Vec<String>,
}

/// The mark beside a value for its cache verdict, and what it means: every verdict has one.
pub const VERDICT_MARKS: [(&str, Verdict); 6] = [
    ("U", Verdict::Uncached),
    ("P", Verdict::PartlyCached),
    ("C", Verdict::Cached),
    ("C?", Verdict::PossiblyCached),
    ("M", Verdict::Memory),
    ("?", Verdict::Unknown),
];

/// The mark of `verdict` (a verdict this iobm does not know is unknown).
pub fn verdict_mark(verdict: &Verdict) -> &'static str {
    VERDICT_MARKS
        .iter()
        .find(|(_, v)| v == verdict)
        .map_or("?", |(m, _)| m)
}

/// The comparison's content, whatever its format.
#[derive(Debug)]
pub struct Comparison {
    /// Each run's label (with its operation when S3 runs of different operations compare).
    pub labels: Vec<String>,
    /// Each test's name and unit, in the order they first appear.
    pub tests: Vec<(String, &'static str)>,
    /// cells[run][test].
    pub cells: Vec<Vec<Cell>>,
    /// What the values are, and whether the runs ran the same workload.
    pub note: String,
    /// Each run's run-wide warnings.
    pub run_warnings: Vec<Vec<String>>,
}

impl Comparison {
    pub fn of(runs: &[(String, RunResult)], aggregate: AggregateKind, unit: Unit) -> Comparison {
        // S3 runs of different operations, one phase each: one rate, each run's own operation.
        let across_ops = runs.iter().all(|(_, r)| is_s3(r) && r.phases.len() == 1)
            && runs.iter().any(|(_, r)| r.kind != runs[0].1.kind);
        let test_of = |p: &PhaseResult| {
            if across_ops {
                "rate".to_string()
            } else {
                p.name.clone()
            }
        };
        let mut tests: Vec<(String, &'static str)> = Vec::new();
        for (_, run) in runs {
            for phase in &run.phases {
                let name = test_of(phase);
                if !tests.iter().any(|(t, _)| *t == name) {
                    tests.push((name, headline(phase, aggregate, unit).1));
                }
            }
        }
        let mut cells: Vec<Vec<Cell>> = runs
            .iter()
            .map(|(_, run)| {
                tests
                    .iter()
                    .map(|(test, _)| {
                        let phase = run.phases.iter().find(|p| test_of(p) == *test);
                        phase.map_or_else(Cell::default, |p| {
                            let spread = run
                                .repeats
                                .as_ref()
                                .and_then(|r| r.of_phase(&p.name, aggregate))
                                .map(|a| match scale(p, unit).0 {
                                    Some(s) => scaled(&a.bytes_per_s, s),
                                    None => a.ops_per_s.clone(),
                                });
                            Cell {
                                value: spread
                                    .as_ref()
                                    .map_or(headline(p, aggregate, unit).0, |s| Some(s.median)),
                                ratio: None,
                                ci95: spread.as_ref().and_then(|s| s.ci95),
                                within_noise: false,
                                cpu_percent: cpu_percent(p),
                                p99_ns: p.latency.p99_ns,
                                verdict: p.cache.verdict.as_ref().map(|v| v.verdict.clone()),
                                warnings: p.warnings.clone(),
                            }
                        })
                    })
                    .collect()
            })
            .collect();
        for t in 0..tests.len() {
            let base = cells[0][t].value.filter(|b| *b > 0.0);
            let base_ci = cells[0][t].ci95;
            for row in cells.iter_mut() {
                row[t].ratio = base.and_then(|b| row[t].value.map(|v| v / b));
                row[t].within_noise = base_ci.zip(row[t].ci95).is_some_and(|(a, b)| overlap(a, b));
            }
        }
        let labels = runs
            .iter()
            .map(|(label, run)| {
                if across_ops {
                    format!("{label} ({})", run.kind)
                } else {
                    label.clone()
                }
            })
            .collect();
        let kinds = if across_ops {
            "S3 runs of different operations".to_string()
        } else {
            format!("runs of kind {}", runs[0].1.kind)
        };
        let mut note = format!(
            "{} {kinds}; values are {} rates, (Nx) is the ratio to {}\n\
             %CPU is iobm's CPU time over each test's wall time; p99 its 99th percentile latency\n{}\n",
            runs.len(),
            aggregate.label(),
            runs[0].0,
            workloads(runs)
        );
        if runs.iter().any(|(_, r)| r.repeats.is_some()) {
            note.push_str(
                "repeated runs: the median of their repetitions, +- half the 95% confidence interval\n\
                 of the mean; ~: within the noise (both runs repeated, their intervals overlap)\n",
            );
        }
        let mut c = Comparison {
            labels,
            tests,
            cells,
            note,
            run_warnings: runs.iter().map(|(_, r)| r.warnings.clone()).collect(),
        };
        if let Some(legend) = c.legend() {
            c.note.push_str(&wrap(&legend, TEXT_WIDTH, ""));
        }
        c
    }

    /// What the marks beside the values mean, those the table uses; None when it has none.
    pub fn legend(&self) -> Option<String> {
        let used: Vec<String> = VERDICT_MARKS
            .iter()
            .filter(|(_, v)| {
                self.cells.iter().flatten().any(|c| {
                    c.value.is_some()
                        && c.verdict.as_ref().map(verdict_mark) == Some(verdict_mark(v))
                })
            })
            .map(|(m, v)| format!("{m} {v}"))
            .collect();
        (!used.is_empty()).then(|| {
            format!(
                "cache verdict beside each value: {} (the evidence is in each run's report)",
                used.join(", ")
            )
        })
    }

    /// Every warning, once per run with the tests it was given for: (run label, tests, warning);
    /// tests is "run-wide" for run-wide ones and "every test" when all of the run's tests have it.
    pub fn warnings(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (r, label) in self.labels.iter().enumerate() {
            let measured: Vec<usize> = (0..self.tests.len())
                .filter(|&t| {
                    self.cells[r][t].value.is_some() || !self.cells[r][t].warnings.is_empty()
                })
                .collect();
            let mut seen: Vec<(&str, Vec<usize>)> = Vec::new();
            for &t in &measured {
                for w in &self.cells[r][t].warnings {
                    match seen.iter_mut().find(|(s, _)| s == w) {
                        Some((_, tests)) => tests.push(t),
                        None => seen.push((w, vec![t])),
                    }
                }
            }
            for (w, tests) in seen {
                let which = if tests.len() > 1 && tests.len() == measured.len() {
                    "every test".to_string()
                } else {
                    tests
                        .iter()
                        .map(|&t| self.tests[t].0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out.push((label.clone(), which, w.to_string()));
            }
            for w in &self.run_warnings[r] {
                out.push((label.clone(), "run-wide".to_string(), w.clone()));
            }
        }
        out
    }
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

/// `text` broken between words into lines of at most `width` characters (a longer word keeps
/// its own line), every line after the first starting with `indent`; ends with a newline.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let lead = text.len() - text.trim_start().len();
    line.push_str(&text[..lead]);
    for word in text.split_whitespace() {
        let fresh = line.trim().is_empty();
        if !fresh && line.chars().count() + 1 + word.chars().count() > width {
            out.push_str(line.trim_end());
            out.push('\n');
            line = indent.to_string();
        } else if !fresh {
            line.push(' ');
        }
        line.push_str(word);
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

fn value_text(cell: &Cell, with_ratio: bool) -> String {
    let Some(v) = cell.value else {
        return "-".into();
    };
    let mut text = format!("{v:.2}");
    if let Some([low, high]) = cell.ci95 {
        text.push_str(&format!(" +-{:.2}", (high - low) / 2.0));
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

/// A spread in bytes per second, in a unit `s` times that.
fn scaled(spread: &Spread, s: f64) -> Spread {
    Spread::of(spread.values.iter().map(|v| v * s).collect())
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

/// The comparison table. Tests are the phases of all runs, in the order they first appear.
pub fn render(runs: &[(String, RunResult)], layout: Layout) -> String {
    let c = Comparison::of(runs, layout.aggregate, layout.unit);
    let test_header = |t: usize| format!("{} {}", c.tests[t].0, c.tests[t].1);
    if layout.format == Format::Csv {
        return csv(&c, layout.transpose);
    }
    // Blocks of three columns (value, %CPU, p99): one per test, or per run when transposed.
    let three = |r: usize, t: usize| {
        let cell = &c.cells[r][t];
        vec![value_text(cell, r > 0), cpu_text(cell), p99_text(cell)]
    };
    let (runs_n, tests_n) = (runs.len(), c.tests.len());
    let (corner, row_names, blocks): (&str, Vec<String>, Vec<Block>) = if layout.transpose {
        let blocks = (0..runs_n)
            .map(|r| {
                (
                    c.labels[r].clone(),
                    (0..tests_n).map(|t| three(r, t)).collect(),
                )
            })
            .collect();
        ("test", (0..tests_n).map(test_header).collect(), blocks)
    } else {
        let blocks = (0..tests_n)
            .map(|t| (test_header(t), (0..runs_n).map(|r| three(r, t)).collect()))
            .collect();
        ("run", c.labels.clone(), blocks)
    };
    let table = |chosen: &[usize]| {
        let mut header = vec![corner.to_string()];
        for &b in chosen {
            header.extend([blocks[b].0.clone(), "%CPU".into(), "p99".into()]);
        }
        let mut rows = Vec::new();
        for (i, name) in row_names.iter().enumerate() {
            let mut row = vec![name.clone()];
            for &b in chosen {
                row.extend(blocks[b].1[i].iter().cloned());
            }
            rows.push(row);
        }
        (header, rows)
    };
    match layout.format {
        Format::Markdown => {
            let (header, rows) = table(&(0..blocks.len()).collect::<Vec<_>>());
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
        _ => {
            let text = |chosen: &[usize]| {
                let (header, rows) = table(chosen);
                let mut t = Table::new(header);
                rows.into_iter().for_each(|r| t.row(r));
                t.render("")
            };
            let width = |s: &str| s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
            // Tables of as many blocks as fit, each with the row names.
            let mut out = String::new();
            let mut chosen: Vec<usize> = Vec::new();
            for b in 0..blocks.len() {
                chosen.push(b);
                if !layout.wide && chosen.len() > 1 && width(&text(&chosen)) > TEXT_WIDTH {
                    chosen.pop();
                    out.push_str(&text(&chosen));
                    out.push('\n');
                    chosen = vec![b];
                }
            }
            out.push_str(&text(&chosen));
            out.push_str(&c.note);
            out.push_str(&io500_scores(runs));
            out.push_str(&paced_lines(runs));
            out.push_str(&warnings_text(&c));
            out
        }
    }
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

/// Whether the runs ran the same workload, by their configuration hashes (recomputed, so
/// documents from before have one too).
fn workloads(runs: &[(String, RunResult)]) -> String {
    let hashes: Vec<String> = runs
        .iter()
        .map(|(_, r)| iobm_results::config_hash(&r.kind, &r.config))
        .collect();
    if hashes.iter().all(|h| *h == hashes[0]) {
        format!(
            "same workload in every run (configuration hash {})",
            hashes[0]
        )
    } else {
        let each: Vec<String> = runs
            .iter()
            .zip(&hashes)
            .map(|((label, _), h)| format!("{label} {h}"))
            .collect();
        format!(
            "the workloads differ (configuration hashes: {}): compare with care",
            each.join(", ")
        )
    }
}

#[cfg(test)]
mod tests;
