//! A plan file read and expanded: `[defaults]`, `[matrix]` and `[[run]]` tables into one spec
//! per run, each labelled, every error one line naming the file, line, column and key.

use crate::spec;
use iobm_results::spec::{RunSpec, SpecValue, SPEC_VERSION};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use toml::Spanned;

/// Keys of a `[[run]]` table that are not options of its command.
const RUN_KEYS: &[&str] = &["command", "matrix", "launch"];

/// The most runs one plan expands to: a matrix larger than this is a mistake more often than
/// a plan (and checking each run takes a few milliseconds).
pub const MAX_RUNS: usize = 10_000;

type Table = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

/// One key of a matrix: its values, and where in the file it was written.
type Axis = (Vec<SpecValue>, Range<usize>);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlanFile {
    #[serde(default)]
    defaults: Table,
    #[serde(default)]
    matrix: Table,
    #[serde(default)]
    run: Vec<Spanned<Table>>,
}

/// A run's options, each with where in the file it was written.
type Options = BTreeMap<String, (SpecValue, Range<usize>)>;

/// A key of a run's matrix with its values and where it was written.
type NamedAxis = (String, Vec<SpecValue>, Range<usize>);

/// The key `name` of a `[[run]]` table and its value.
fn entry<'t>(
    entries: &'t Table,
    name: &str,
) -> Option<(&'t Spanned<String>, &'t Spanned<toml::Value>)> {
    entries.iter().find(|(k, _)| k.get_ref() == name)
}

/// The keys of a `[[run]]` table that are options of its command.
fn own_keys(entries: &Table) -> impl Iterator<Item = (&Spanned<String>, &Spanned<toml::Value>)> {
    entries
        .iter()
        .filter(|(k, _)| !RUN_KEYS.contains(&k.get_ref().as_str()))
}

/// The spec of command `name` with `options` and one `combination` of the matrix's values,
/// where each option came from, and the matrix values as `key=value` for its label.
fn fill_in(
    name: &str,
    options: &Options,
    axes: &[NamedAxis],
    combination: &[SpecValue],
) -> (RunSpec, BTreeMap<String, Range<usize>>, Vec<String>) {
    let mut spec = RunSpec {
        spec: SPEC_VERSION,
        command: name.to_string(),
        options: BTreeMap::new(),
    };
    let mut origin = BTreeMap::new();
    for (key, (value, at)) in options {
        spec.options.insert(key.clone(), value.clone());
        origin.insert(key.clone(), at.clone());
    }
    let mut named = Vec::new();
    for ((key, _, at), value) in axes.iter().zip(combination) {
        spec.options.insert(key.clone(), value.clone());
        origin.insert(key.clone(), at.clone());
        named.push(format!("{key}={}", shown(value)));
    }
    (spec, origin, named)
}

/// One run of a plan, after its defaults and matrix are applied.
#[derive(Debug, Clone)]
pub struct PlannedRun {
    /// Its label: `label` with `{key}` replaced by that option's value, else the command (an
    /// s3 run's with its operation, `s3-put`) and the matrix values it has.
    pub label: String,
    pub spec: RunSpec,
    /// A launcher the run is started under: "mpirun -np 4" split at whitespace, or an array of
    /// its words.
    pub launch: Vec<String>,
    /// Where in the file each of its options, and the run itself, came from.
    origin: BTreeMap<String, Range<usize>>,
    table: Range<usize>,
}

/// A plan file: its name (for errors), its text and its runs.
#[derive(Debug)]
pub struct Plan {
    pub path: String,
    text: String,
    pub runs: Vec<PlannedRun>,
}

impl Plan {
    /// Reads and expands `text` (the contents of `path`).
    pub fn parse(path: &str, text: String) -> Result<Plan, String> {
        let mut plan = Plan {
            path: path.to_string(),
            text,
            runs: Vec::new(),
        };
        let file: PlanFile = toml::from_str(&plan.text).map_err(|e| {
            let at = e.span().unwrap_or(0..0);
            plan.error(&at, e.message().trim_end())
        })?;
        if file.run.is_empty() {
            return Err(format!("{path}: no [[run]] tables: nothing to run"));
        }
        for (index, table) in file.run.iter().enumerate() {
            let runs = plan.expand(&file, index, table)?;
            plan.runs.extend(runs);
        }
        plan.check_labels()?;
        Ok(plan)
    }

    /// `path:line:column: message`, at the byte offset where `at` starts.
    pub fn error(&self, at: &Range<usize>, message: &str) -> String {
        let before = &self.text[..at.start.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        format!("{}:{line}:{column}: {message}", self.path)
    }

    /// The error `message` about `key` of `run` (at the key, else at the run's table).
    pub fn error_at(&self, run: &PlannedRun, key: Option<&str>, message: &str) -> String {
        let at = key.and_then(|k| run.origin.get(k)).unwrap_or(&run.table);
        self.error(at, message)
    }

    /// The runs of the `index`th `[[run]]` table: one per combination of its matrix values.
    fn expand(
        &self,
        file: &PlanFile,
        index: usize,
        table: &Spanned<Table>,
    ) -> Result<Vec<PlannedRun>, String> {
        let span = table.span();
        let entries = table.get_ref();
        let name = self.command(entries, index, &span)?;
        let launch = self.launch(entries)?;
        let options = self.options(file, entries)?;
        let axes = self.matrix(file, entries, index, &span)?;
        let mut runs = Vec::new();
        for combination in combinations(&axes) {
            let (spec, origin, named) = fill_in(name, &options, &axes, &combination);
            let label = self.label(name, &spec, &origin, &axes, named, &span)?;
            let mut spec = spec;
            spec.options
                .insert("label".into(), SpecValue::Text(label.clone()));
            runs.push(PlannedRun {
                label,
                spec,
                launch: launch.clone(),
                origin,
                table: span.clone(),
            });
        }
        Ok(runs)
    }

    /// The run's command, one a plan runs.
    fn command<'t>(
        &self,
        entries: &'t Table,
        index: usize,
        span: &Range<usize>,
    ) -> Result<&'t str, String> {
        let Some((_, command)) = entry(entries, "command") else {
            return Err(self.error(span, &format!("run {}: no command key", index + 1)));
        };
        let Some(name) = command.get_ref().as_str() else {
            return Err(self.error(&command.span(), "command: a string"));
        };
        if !spec::COMMANDS.contains(&name) {
            let message = format!(
                "command: {name:?} is not a command a plan runs ({})",
                spec::COMMANDS.join(", ")
            );
            return Err(self.error(&command.span(), &message));
        }
        Ok(name)
    }

    /// The run's launcher: a string split at whitespace or an array of words; none if absent.
    fn launch(&self, entries: &Table) -> Result<Vec<String>, String> {
        let Some((_, v)) = entry(entries, "launch") else {
            return Ok(Vec::new());
        };
        let words: Option<Vec<String>> = match v.get_ref() {
            toml::Value::String(s) => Some(s.split_whitespace().map(String::from).collect()),
            toml::Value::Array(items) => {
                items.iter().map(|w| w.as_str().map(String::from)).collect()
            }
            _ => None,
        };
        match words {
            Some(words) if !words.is_empty() => Ok(words),
            _ => {
                let message = "launch: a command, as \"mpirun -np 4\" or [\"env\", \"A=b c\"]";
                Err(self.error(&v.span(), message))
            }
        }
    }

    /// The run's options: the defaults, then its own, each with where it was written.
    fn options(&self, file: &PlanFile, entries: &Table) -> Result<Options, String> {
        let mut options = Options::new();
        for (key, value) in file.defaults.iter().chain(own_keys(entries)) {
            if RUN_KEYS.contains(&key.get_ref().as_str()) {
                let message = format!(
                    "{}: a key of a [[run]] table, not of [defaults]",
                    key.get_ref()
                );
                return Err(self.error(&key.span(), &message));
            }
            options.insert(key.get_ref().clone(), (self.value(key, value)?, key.span()));
        }
        Ok(options)
    }

    /// The run's matrix: the file's, then the run's own, its keys in the order written;
    /// checked to give no key the run gives itself, no key that is not an option, and no more
    /// than `MAX_RUNS` runs.
    fn matrix(
        &self,
        file: &PlanFile,
        entries: &Table,
        index: usize,
        span: &Range<usize>,
    ) -> Result<Vec<NamedAxis>, String> {
        let mut matrix: BTreeMap<String, Axis> = BTreeMap::new();
        let own = match entry(entries, "matrix") {
            None => None,
            Some((key, v)) => match v.get_ref() {
                toml::Value::Table(_) => Some(self.inline_matrix(key, v)?),
                _ => return Err(self.error(&v.span(), "matrix: a table of arrays")),
            },
        };
        for (key, value) in file.matrix.iter() {
            matrix.insert(key.get_ref().clone(), self.axis(key, value)?);
        }
        for (key, (values, at)) in own.into_iter().flatten() {
            matrix.insert(key, (values, at));
        }
        // A key is the run's own or the matrix's, never both.
        if let Some((key, _)) = own_keys(entries).find(|(k, _)| matrix.contains_key(k.get_ref())) {
            let message = format!(
                "{}: given by the run and by its matrix: keep one (a run's own value would never be used)",
                key.get_ref()
            );
            return Err(self.error(&key.span(), &message));
        }
        if let Some(key) = matrix
            .keys()
            .find(|k| RUN_KEYS.contains(&k.as_str()) || *k == "label")
        {
            let message = format!("matrix.{key}: not an option to run with several values");
            return Err(self.error(span, &message));
        }
        let count = matrix
            .values()
            .map(|(values, _)| values.len())
            .product::<usize>();
        if count > MAX_RUNS {
            let message = format!(
                "run {}: its matrix makes {count} runs, more than {MAX_RUNS}",
                index + 1
            );
            return Err(self.error(span, &message));
        }
        let mut axes: Vec<NamedAxis> = matrix
            .into_iter()
            .map(|(k, (values, at))| (k, values, at))
            .collect();
        axes.sort_by_key(|(_, _, at)| at.start);
        Ok(axes)
    }

    /// A run's label: its `label` template filled in, else the command's default label and
    /// its matrix values (`named`); never empty.
    fn label(
        &self,
        name: &str,
        spec: &RunSpec,
        origin: &BTreeMap<String, Range<usize>>,
        axes: &[NamedAxis],
        named: Vec<String>,
        span: &Range<usize>,
    ) -> Result<String, String> {
        let label = match spec.options.get("label") {
            Some(SpecValue::Text(template)) => fill(template, name, &spec.options)
                .map_err(|e| self.error(&origin["label"], &format!("label: {e}")))?,
            Some(_) => return Err(self.error(&origin["label"], "label: a string")),
            None => std::iter::once(default_label(name, &spec.options, axes))
                .chain(named)
                .collect::<Vec<_>>()
                .join(" "),
        };
        if label.trim().is_empty() {
            return Err(self.error(origin.get("label").unwrap_or(span), "label: empty"));
        }
        Ok(label)
    }

    fn value(
        &self,
        key: &Spanned<String>,
        value: &Spanned<toml::Value>,
    ) -> Result<SpecValue, String> {
        spec::from_toml(value.get_ref())
            .map_err(|what| self.error(&value.span(), &format!("{}: {what}", key.get_ref())))
    }

    fn axis(&self, key: &Spanned<String>, value: &Spanned<toml::Value>) -> Result<Axis, String> {
        let name = key.get_ref();
        let items = match value.get_ref() {
            toml::Value::Array(items) if !items.is_empty() => items,
            _ => {
                let message = format!("matrix.{name}: a non-empty array of the values to run");
                return Err(self.error(&value.span(), &message));
            }
        };
        let values = items
            .iter()
            .map(|item| {
                spec::from_toml(item).map_err(|what| {
                    self.error(&value.span(), &format!("matrix.{name}: each value {what}"))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok((values, key.span()))
    }

    /// A run's own `matrix = { ... }` or `[run.matrix]` (its keys' spans are the table's).
    fn inline_matrix(
        &self,
        key: &Spanned<String>,
        value: &Spanned<toml::Value>,
    ) -> Result<Vec<(String, Axis)>, String> {
        let toml::Value::Table(table) = value.get_ref() else {
            unreachable!("checked by the caller")
        };
        table
            .iter()
            .enumerate()
            .map(|(i, (k, v))| {
                let spanned_key = Spanned::new(key.span(), k.clone());
                let spanned_value = Spanned::new(value.span(), v.clone());
                let (values, at) = self.axis(&spanned_key, &spanned_value)?;
                // Keys of one table keep the order TOML gives them, after the file's matrix.
                Ok((k.clone(), (values, at.start + i..at.end)))
            })
            .collect()
    }

    /// Labels are unique: each names its result file.
    fn check_labels(&self) -> Result<(), String> {
        let mut seen: BTreeMap<String, &PlannedRun> = BTreeMap::new();
        for run in &self.runs {
            let file = result_name(&run.label);
            if let Some(first) = seen.insert(file.clone(), run) {
                let message = format!(
                    "label: {:?} and {:?} would both be saved as {file}: give the runs labels of their own",
                    first.label, run.label
                );
                return Err(self.error_at(run, Some("label"), &message));
            }
        }
        Ok(())
    }
}

/// Every combination of the axes' values, the first axis varying slowest.
fn combinations(axes: &[(String, Vec<SpecValue>, Range<usize>)]) -> Vec<Vec<SpecValue>> {
    axes.iter().fold(vec![Vec::new()], |done, (_, values, _)| {
        done.iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut next = prefix.clone();
                    next.push(v.clone());
                    next
                })
            })
            .collect()
    })
}

/// The start of a run's default label: its command, an s3 run's with its operation
/// (`s3-put`, unless the matrix names it), so two S3 runs of a plan are two labels.
fn default_label(
    command: &str,
    options: &BTreeMap<String, SpecValue>,
    axes: &[(String, Vec<SpecValue>, Range<usize>)],
) -> String {
    match options.get("op") {
        Some(op) if command == "s3" && !axes.iter().any(|(k, _, _)| k == "op") => {
            format!("{command}-{}", shown(op))
        }
        _ => command.to_string(),
    }
}

fn shown(value: &SpecValue) -> String {
    match value {
        SpecValue::Flag(b) => b.to_string(),
        SpecValue::Text(t) => t.clone(),
        SpecValue::List(vs) => vs.join(","),
    }
}

/// `template` with `{command}` and every `{key}` replaced by that option's value.
fn fill(
    template: &str,
    command: &str,
    options: &BTreeMap<String, SpecValue>,
) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(format!("{template:?}: a {{ without its }}"));
        };
        let key = &rest[open + 1..open + close];
        out.push_str(&rest[..open]);
        match (key, options.get(key)) {
            ("command", _) => out.push_str(command),
            (_, Some(value)) => out.push_str(&shown(value)),
            (_, None) => return Err(format!("{{{key}}}: this run gives no {key}")),
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The file a run's result is saved in: its label with what a file name should not hold
/// replaced by '_'.
pub fn result_name(label: &str) -> String {
    let mut name = String::new();
    for c in label.chars() {
        match c {
            c if c.is_alphanumeric() || c == '.' || c == '-' => name.push(c),
            '=' => name.push('-'),
            _ if !name.ends_with('_') => name.push('_'),
            _ => {}
        }
    }
    let name = name.trim_matches(|c| c == '_' || c == '.');
    format!("{}.json", &name[..name.len().min(200)])
}

#[cfg(test)]
mod tests;
