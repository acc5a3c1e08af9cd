//! The comparison as CSV: one row per run (or per test, transposed), each cell's fields.

use super::comparison::{Cell, Comparison};

/// One row per run (or per test, transposed), each test's value, ratio, %CPU, p99 in µs, cache
/// verdict and warnings; the run-wide warnings last (a column, or transposed a row).
pub(super) fn csv(c: &Comparison, transpose: bool) -> String {
    let us = |cell: &Cell| {
        cell.p99_ns
            .map_or(String::new(), |ns| format!("{:.1}", ns as f64 / 1e3))
    };
    let fields = |cell: &Cell| {
        [
            cell.value.map_or("-".into(), |v| format!("{v:.2}")),
            cell.ratio.map_or(String::new(), |r| format!("{r:.2}")),
            cell.cpu_percent
                .map_or(String::new(), |v| format!("{v:.1}")),
            us(cell),
            cell.verdict
                .as_ref()
                .map_or(String::new(), |v| v.to_string()),
            cell.warnings.join("; "),
        ]
    };
    let names = |name: &str| {
        [
            name.to_string(),
            format!("{name} ratio"),
            format!("{name} cpu%"),
            format!("{name} p99 us"),
            format!("{name} cache verdict"),
            format!("{name} warnings"),
        ]
    };
    let mut out = String::new();
    if transpose {
        let mut header = vec!["test".to_string()];
        c.labels.iter().for_each(|l| header.extend(names(l)));
        out.push_str(&csv_row(&header));
        for (t, (test, unit)) in c.tests.iter().enumerate() {
            let mut row = vec![format!("{test} {unit}")];
            c.cells
                .iter()
                .for_each(|cells| row.extend(fields(&cells[t])));
            out.push_str(&csv_row(&row));
        }
        // The run-wide warnings, in each run's first column.
        let mut row = vec!["run warnings".to_string()];
        for w in &c.run_warnings {
            let mut f = vec![String::new(); names("").len()];
            f[0] = w.join("; ");
            row.extend(f);
        }
        out.push_str(&csv_row(&row));
    } else {
        let mut header = vec!["run".to_string()];
        for (test, unit) in &c.tests {
            let mut n = names(test);
            n[0] = format!("{test} {unit}");
            header.extend(n);
        }
        header.push("run warnings".to_string());
        out.push_str(&csv_row(&header));
        for ((label, cells), warnings) in c.labels.iter().zip(&c.cells).zip(&c.run_warnings) {
            let mut row = vec![label.clone()];
            cells.iter().for_each(|cell| row.extend(fields(cell)));
            row.push(warnings.join("; "));
            out.push_str(&csv_row(&row));
        }
    }
    out
}

fn csv_row(cells: &[String]) -> String {
    let escaped: Vec<String> = cells
        .iter()
        .map(|c| {
            if c.contains([',', '"', '\n']) {
                format!("\"{}\"", c.replace('"', "\"\""))
            } else {
                c.clone()
            }
        })
        .collect();
    escaped.join(",") + "\n"
}
