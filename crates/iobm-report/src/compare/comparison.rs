//! The comparison's content, whatever its format: each run's value, ratio, interval, CPU,
//! p99, cache verdict and warnings per test, the note on what the values are, and the legend
//! of the verdicts' marks.

use iobm_results::repeats::{overlap, Spread};
use iobm_results::{PhaseResult, RunResult, Verdict};
use iobm_stats::AggregateKind;

/// The unit of tests that move data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    MiB,
    /// bonnie++'s K/sec: KiB per second.
    KiB,
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
        if run.kind.family() != first.kind.family() {
            return Err(format!(
                "cannot compare runs of different kinds: {first_label} is a {} run, {label} is a {} run",
                first.kind, run.kind
            ));
        }
    }
    Ok(())
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

impl Cell {
    /// `phase` of `run` as a cell: its headline value (the median of its repetitions, with
    /// their interval, for a repeated run), CPU, p99, verdict and warnings.
    fn of(run: &RunResult, phase: &PhaseResult, aggregate: AggregateKind, unit: Unit) -> Cell {
        let spread = run
            .repeats
            .as_ref()
            .and_then(|r| r.of_phase(&phase.name, aggregate))
            .map(|a| match scale(phase, unit).0 {
                Some(s) => scaled(&a.bytes_per_s, s),
                None => a.ops_per_s.clone(),
            });
        Cell {
            value: spread
                .as_ref()
                .map_or(headline(phase, aggregate, unit).0, |s| Some(s.median)),
            ratio: None,
            ci95: spread.as_ref().and_then(|s| s.ci95),
            within_noise: false,
            cpu_percent: cpu_percent(phase),
            p99_ns: phase.latency.p99_ns,
            verdict: phase.cache.verdict.as_ref().map(|v| v.verdict.clone()),
            warnings: phase.warnings.clone(),
        }
    }
}

/// Each cell's ratio to the first run's in its test, and whether both intervals overlap.
fn against_the_first(cells: &mut [Vec<Cell>]) {
    for t in 0..cells[0].len() {
        let base = cells[0][t].value.filter(|b| *b > 0.0);
        let base_ci = cells[0][t].ci95;
        for row in cells.iter_mut() {
            row[t].ratio = base.and_then(|b| row[t].value.map(|v| v / b));
            row[t].within_noise = base_ci.zip(row[t].ci95).is_some_and(|(a, b)| overlap(a, b));
        }
    }
}

/// What the values are, and whether the runs ran the same workload.
fn note(runs: &[(String, RunResult)], aggregate: AggregateKind, across_ops: bool) -> String {
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
            "repeated runs: the median of their repetitions, then [low, high] the 95% confidence\n\
             interval of their geometric mean; ~: within the noise (both runs repeated, their\n\
             intervals overlap)\n",
        );
    }
    note
}

/// A repeated run's 95% confidence interval as it is printed beside its median: its bounds,
/// never a median plus or minus half of it (the interval is of the geometric mean, and not
/// symmetric).
pub fn interval_text([low, high]: [f64; 2]) -> String {
    format!("[{low:.2}, {high:.2}]")
}

impl Comparison {
    pub fn of(runs: &[(String, RunResult)], aggregate: AggregateKind, unit: Unit) -> Comparison {
        // S3 runs of different operations, one phase each: one rate, each run's own operation.
        let across_ops = runs
            .iter()
            .all(|(_, r)| r.kind.is_s3() && r.phases.len() == 1)
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
                let phase = |test: &String| run.phases.iter().find(|p| test_of(p) == *test);
                let cell = |(test, _): &(String, _)| {
                    phase(test).map_or_else(Cell::default, |p| Cell::of(run, p, aggregate, unit))
                };
                tests.iter().map(cell).collect()
            })
            .collect();
        against_the_first(&mut cells);
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
        let mut c = Comparison {
            labels,
            tests,
            cells,
            note: note(runs, aggregate, across_ops),
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

/// `text` broken between words into lines of at most `width` characters (a longer word keeps
/// its own line), every line after the first starting with `indent`; ends with a newline.
pub(super) fn wrap(text: &str, width: usize, indent: &str) -> String {
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

/// A spread in bytes per second, in a unit `s` times that.
fn scaled(spread: &Spread, s: f64) -> Spread {
    Spread::of(spread.values.iter().map(|v| v * s).collect())
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
