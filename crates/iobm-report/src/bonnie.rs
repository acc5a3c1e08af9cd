//! bonnie++'s shapes: the text tables (sequential output and input, seeks; then the metadata
//! tests), with both K/sec and MiB/s, and the CSV line that bonnie++'s `bon_csv2txt` and
//! `bon_csv2html` read (format 1.98, as bonnie++ 2.00).

use iobm_results::bonnie::{BYTE_TESTS, META_TESTS, SEEK_TEST};
use iobm_results::{BonnieSummary, BonnieTest, RunResult};
use std::fmt::Write;
use std::time::Duration;

fn find<'a>(summary: &'a BonnieSummary, test: &str) -> Option<&'a BonnieTest> {
    summary.tests.iter().find(|t| t.test == test)
}

/// bonnie++'s size notation: `512M`, `8G`.
pub fn size_label(bytes: u64) -> String {
    let mib = bytes / (1 << 20);
    if mib >= 1024 && mib.is_multiple_of(1024) {
        format!("{}G", mib / 1024)
    } else if bytes.is_multiple_of(1 << 20) {
        format!("{mib}M")
    } else {
        format!("{}K", bytes / 1024)
    }
}

fn latency_text(ns: Option<u64>) -> String {
    ns.map_or(String::new(), |ns| {
        let us = ns / 1000;
        if us < 1_000_000 {
            format!("{us}us")
        } else if us < 1_000_000_000 {
            format!("{}ms", us / 1000)
        } else {
            format!("{}s", us / 1_000_000)
        }
    })
}

fn short_latency(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |ns| {
        iobm_stats::format_duration(Duration::from_nanos(ns))
    })
}

/// The two bonnie++ tables for one run: the data tests, then the metadata tests if any ran.
pub fn render_tables(run: &RunResult) -> String {
    let Some(summary) = &run.bonnie else {
        return String::new();
    };
    let mut out = data_table(run, summary);
    if META_TESTS.iter().any(|t| find(summary, t).is_some()) {
        out.push('\n');
        out.push_str(&meta_table(run, summary));
    }
    out
}

/// A test's "p99/max" latency cell.
fn latencies(t: &BonnieTest) -> String {
    format!("{}/{}", short_latency(t.p99_ns), short_latency(t.max_ns))
}

/// The table of sequential output and input and the seeks, named `label:size`.
fn data_table(run: &RunResult, summary: &BonnieSummary) -> String {
    let mut out = String::new();
    let file_bytes = run.config.bonnie.as_ref().map_or(0, |b| b.file_bytes);
    let name = format!(
        "{}:{}",
        run.label.as_deref().unwrap_or(&run.environment.hostname),
        size_label(file_bytes)
    );
    let _ = writeln!(
        out,
        "{:<22}{:-^62} {:-^41} {:-^11}",
        "", " Sequential Output ", " Sequential Input ", " Random "
    );
    let _ = writeln!(
        out,
        "{:<22}{:-^20} {:-^20} {:-^20} {:-^20} {:-^20} {:-^11}",
        "", " Per Chr ", " Block ", " Rewrite ", " Per Chr ", " Block ", " Seeks "
    );
    let mut header = format!("{:<22}", "Name:Size");
    for _ in 0..5 {
        header.push_str(&format!("{:>9} {:>6} {:>3} ", "K/sec", "MiB/s", "%CP"));
    }
    header.push_str(&format!("{:>6} {:>4}", "/sec", "%CP"));
    let _ = writeln!(out, "{}", header.trim_end());
    let mut line = format!("{name:<22}");
    let mut latency = format!("{:<22}", "Latency p99/max");
    for test in BYTE_TESTS {
        match find(summary, test) {
            Some(t) => {
                line.push_str(&format!(
                    "{:>9.0} {:>6.1} {:>3.0} ",
                    t.kib_per_s.unwrap_or(0.0),
                    t.mib_per_s.unwrap_or(0.0),
                    t.cpu_pct
                ));
                latency.push_str(&format!("{:>20} ", latencies(t)));
            }
            None => {
                line.push_str(&format!("{:>20} ", ""));
                latency.push_str(&format!("{:>20} ", ""));
            }
        }
    }
    if let Some(t) = find(summary, SEEK_TEST) {
        line.push_str(&format!("{:>6.1} {:>4.0}", t.ops_per_s, t.cpu_pct));
        latency.push_str(&format!("{:>11}", latencies(t)));
    }
    let _ = writeln!(out, "{}", line.trim_end());
    let _ = writeln!(out, "{}", latency.trim_end());
    out
}

/// The table of the metadata tests, named by bonnie++'s `-n` (files:max:min/dirs).
fn meta_table(run: &RunResult, summary: &BonnieSummary) -> String {
    let mut out = String::new();
    let b = run.config.bonnie.as_ref();
    let files = b.map_or(String::new(), |b| {
        format!(
            "{}:{}:{}/{}",
            b.files, b.max_file_bytes, b.min_file_bytes, b.dirs
        )
    });
    let _ = writeln!(
        out,
        "{:<22}{:-^44} {:-^44}",
        "", " Sequential Create ", " Random Create "
    );
    let _ = writeln!(
        out,
        "{:<22}{:-^14} {:-^14} {:-^14} {:-^14} {:-^14} {:-^14}",
        "", " Create ", " Stat ", " Delete ", " Create ", " Stat ", " Delete "
    );
    let mut header = format!("{:<22}", "files:max:min/dirs");
    let mut line = format!("{files:<22}");
    let mut latency = format!("{:<22}", "Latency p99/max");
    for test in META_TESTS {
        header.push_str(&format!("{:>9} {:>4} ", "/sec", "%CP"));
        match find(summary, test) {
            Some(t) => {
                line.push_str(&format!("{:>9.0} {:>4.0} ", t.ops_per_s, t.cpu_pct));
                latency.push_str(&format!("{:>14} ", latencies(t)));
            }
            None => {
                line.push_str(&format!("{:>14} ", ""));
                latency.push_str(&format!("{:>14} ", ""));
            }
        }
    }
    let _ = writeln!(out, "{}", header.trim_end());
    let _ = writeln!(out, "{}", line.trim_end());
    let _ = writeln!(out, "{}", latency.trim_end());
    out
}

/// The bonnie++ CSV line (format 1.98) for a bonnie run, named by its label or host name.
pub fn csv_line(run: &RunResult) -> Option<String> {
    let summary = run.bonnie.as_ref()?;
    let config = run.config.bonnie.as_ref()?;
    let rate = |test: &str| {
        find(summary, test).map_or((String::new(), String::new()), |t| {
            let value = match t.kib_per_s {
                Some(kib) => format!("{kib:.0}"),
                None if test == SEEK_TEST => format!("{:.1}", t.ops_per_s),
                None => format!("{:.0}", t.ops_per_s),
            };
            (value, format!("{:.0}", t.cpu_pct))
        })
    };
    let latency = |test: &str| latency_text(find(summary, test).and_then(|t| t.max_ns));
    let chunk = run.config.block_bytes;
    let mut fields: Vec<String> = vec![
        "1.98".into(),
        format!("iobm-{}", run.environment.iobm_version),
        run.label
            .as_deref()
            .unwrap_or(&run.environment.hostname)
            .replace(',', " "),
        "1".into(),
        (u64::from_str_radix(run.run_id.rsplit('-').next().unwrap_or("0"), 16).unwrap_or(0))
            .to_string(),
        size_label(config.file_bytes),
        if chunk == 8192 {
            String::new()
        } else {
            chunk.to_string()
        },
        config.seeks.to_string(),
        config.seekers.to_string(),
    ];
    for test in BYTE_TESTS.iter().copied().chain([SEEK_TEST]) {
        let (value, cpu) = rate(test);
        fields.push(value);
        fields.push(cpu);
    }
    let has_meta = config.files > 0;
    let opt = |v: u64| if v == 0 { String::new() } else { v.to_string() };
    if has_meta {
        fields.push((config.files / 1024).to_string());
        fields.push(opt(config.max_file_bytes));
        fields.push(opt(config.min_file_bytes));
        fields.push(opt(config.dirs));
        fields.push(String::new());
    } else {
        fields.extend(std::iter::repeat_n(String::new(), 5));
    }
    for test in META_TESTS {
        let (value, cpu) = rate(test);
        fields.push(value);
        fields.push(cpu);
    }
    for test in BYTE_TESTS.iter().copied().chain([SEEK_TEST]) {
        fields.push(latency(test));
    }
    for test in META_TESTS {
        fields.push(latency(test));
    }
    Some(fields.join(","))
}
