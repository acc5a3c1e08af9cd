//! What a run shows while it goes: `--live FILE` (one JSON line per interval of each phase,
//! each rank its own file), the `--csv` rows as they come (rank 0's; the file is written again
//! from the result at the end),
//! the counters of `--metrics-listen` ([`crate::metrics`]), and with `--html` the page of the
//! run so far ([`page`], rank 0's). Each is fed by the engine's [`IntervalObserver`] as every
//! worker passes an interval.

mod page;

use crate::exit::Failure;
use crate::metrics::Metrics;
use crate::session::describe_io;
use iobm_engine::{IntervalObserver, LiveInterval};
use iobm_report::series::{kind_prefix, row, worker_prefix, HEADER};
use iobm_stats::names::RunKind;
use iobm_stats::Interval;
pub use page::LivePage;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The file `--live FILE` names on `rank`: FILE on rank 0, FILE.rankN on rank N.
pub fn live_path(path: &Path, rank: u32) -> PathBuf {
    match rank {
        0 => path.to_path_buf(),
        _ => {
            let mut name = path.as_os_str().to_os_string();
            name.push(format!(".rank{rank}"));
            PathBuf::from(name)
        }
    }
}

/// A file written a piece at a time, each piece one write(2) (so it is whole in the file as
/// soon as it is written, whatever follows); the first failure is said once.
struct Appended {
    flag: &'static str,
    path: PathBuf,
    file: Mutex<File>,
    warned: AtomicBool,
}

impl Appended {
    fn open(flag: &'static str, path: PathBuf, append: bool) -> Result<Appended, Failure> {
        let mut options = OpenOptions::new();
        options.create(true);
        if append {
            options.append(true);
        } else {
            options.write(true).truncate(true);
        }
        let file = options.open(&path).map_err(|e| {
            Failure::run(format!(
                "{flag} {}: cannot write: {}",
                path.display(),
                describe_io(&e)
            ))
        })?;
        Ok(Appended {
            flag,
            path,
            file: Mutex::new(file),
            warned: AtomicBool::new(false),
        })
    }

    fn write(&self, text: &str) {
        let written = self.file.lock().unwrap().write_all(text.as_bytes());
        if let Err(e) = written {
            if !self.warned.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "iobm: warning: {} {}: cannot write: {}",
                    self.flag,
                    self.path.display(),
                    describe_io(&e)
                );
            }
        }
    }
}

/// The run's live outputs, open for its length (every repetition).
pub struct Watchers {
    rank: u32,
    live: Option<Appended>,
    csv: Option<Appended>,
    page: Option<LivePage>,
    pub metrics: Option<Arc<Metrics>>,
}

/// Where the live outputs go, as the command line asks (the run's `Outputs`).
pub struct Asked<'a> {
    pub live: Option<&'a Path>,
    pub csv: Option<&'a Path>,
    /// `--html`: with `--live`, the page of the run so far is written there until the report.
    pub html: Option<&'a Path>,
}

impl Watchers {
    /// Opens the live outputs asked for: `live` appended to (FILE.rankN on rank N), `csv` at
    /// rank 0 begun with its header, with `live` the page at `html` written at rank 0 (of
    /// `ranks`); None when nothing watches the run.
    pub fn open(
        asked: Asked,
        metrics: Option<Arc<Metrics>>,
        rank: u32,
        ranks: u32,
    ) -> Result<Option<Arc<Watchers>>, Failure> {
        let Asked { live, csv, html } = asked;
        let asks_page = live.is_some() && rank == 0;
        let live = live
            .map(|p| Appended::open("--live", live_path(p, rank), true))
            .transpose()?;
        let csv = csv
            .filter(|_| rank == 0)
            .map(|p| Appended::open("--csv", p.to_path_buf(), false))
            .transpose()?;
        if let Some(csv) = &csv {
            csv.write(&format!("{HEADER}\n"));
        }
        let whose = (ranks > 1).then(|| format!("rank {rank}'s workers of {ranks} ranks"));
        let page = (html.filter(|_| asks_page)).map(|path| LivePage::start(path, whose));
        let any = live.is_some() || csv.is_some() || metrics.is_some();
        Ok(any.then(|| {
            Arc::new(Watchers {
                rank,
                live,
                csv,
                page,
                metrics,
            })
        }))
    }

    /// Ends the live page (written a last time, no longer reloading), before the report is
    /// written over it.
    pub fn close_page(&self) {
        if let Some(page) = &self.page {
            page.close();
        }
    }

    /// The observer of one repetition (of the command `kind`)'s phases.
    pub fn watch(
        self: &Arc<Self>,
        kind: &RunKind,
        run_id: &str,
        host: &str,
    ) -> Arc<dyn IntervalObserver> {
        if let Some(page) = &self.page {
            page.run(format!("iobm {kind} {run_id}"));
        }
        Arc::new(Watch {
            watchers: self.clone(),
            run_id: run_id.to_string(),
            host: host.to_string(),
        })
    }
}

/// One repetition's observer.
struct Watch {
    watchers: Arc<Watchers>,
    run_id: String,
    host: String,
}

impl IntervalObserver for Watch {
    fn interval(&self, interval: &LiveInterval) {
        let w = &self.watchers;
        if let Some(live) = &w.live {
            live.write(&self.line(interval));
        }
        if let Some(csv) = &w.csv {
            csv.write(&self.rows(interval));
        }
        if let Some(metrics) = &w.metrics {
            metrics.add(interval);
        }
        if let Some(page) = &w.page {
            page.passed(interval);
        }
    }
}

/// One line of `--live`.
#[derive(Serialize)]
struct Line<'a> {
    run_id: &'a str,
    rank: u32,
    phase: &'a str,
    op: &'a str,
    interval: usize,
    start_s: f64,
    end_s: f64,
    #[serde(flatten)]
    amounts: Amounts,
    by_op: Vec<Kind>,
}

/// An interval's amounts as a line gives them.
#[derive(Serialize)]
struct Amounts {
    bytes: u64,
    ops: u64,
    errors: u64,
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    max_us: Option<f64>,
}

impl Amounts {
    fn of(i: &Interval) -> Amounts {
        let h = Some(&i.latency).filter(|h| h.count > 0);
        let us = |ns: Option<u64>| ns.map(|ns| ns as f64 / 1e3);
        Amounts {
            bytes: i.bytes,
            ops: i.ops,
            errors: i.errors,
            p50_us: us(h.and_then(|h| h.percentile(50.0))),
            p99_us: us(h.and_then(|h| h.percentile(99.0))),
            max_us: us(h.map(|h| h.max_ns)),
        }
    }
}

#[derive(Serialize)]
struct Kind {
    op: &'static str,
    #[serde(flatten)]
    amounts: Amounts,
}

impl Watch {
    fn line(&self, i: &LiveInterval) -> String {
        let seconds = i.interval_ns as f64 / 1e9;
        let line = Line {
            run_id: &self.run_id,
            rank: self.watchers.rank,
            phase: i.phase,
            op: i.op.name().as_str(),
            interval: i.index,
            start_s: i.index as f64 * seconds,
            end_s: (i.index + 1) as f64 * seconds,
            amounts: Amounts::of(&i.total()),
            by_op: (i.by_op.iter())
                .map(|(op, amounts)| Kind {
                    op: op.as_str(),
                    amounts: Amounts::of(amounts),
                })
                .collect(),
        };
        let mut text = serde_json::to_string(&line).expect("a line serialises");
        text.push('\n');
        text
    }

    /// The rows `--csv` has of this interval: each worker's, then each kind's over all
    /// workers where the phase has several kinds.
    fn rows(&self, i: &LiveInterval) -> String {
        let mut out = String::new();
        let rank = self.watchers.rank;
        for (worker, amounts) in i.workers.iter().enumerate() {
            let endpoint = i.endpoints.get(worker).and_then(|e| e.as_deref());
            let at = (rank, worker as u32);
            let prefix = worker_prefix(
                &self.run_id,
                i.phase,
                i.op.name().as_str(),
                at,
                &self.host,
                endpoint,
            );
            row(
                &mut out,
                &prefix,
                i.interval_ns,
                i.index,
                amounts,
                f64::INFINITY,
            );
        }
        for (op, amounts) in i.by_op.iter().filter(|_| crate::record::by_kind(i.op)) {
            let prefix = kind_prefix(&self.run_id, i.phase, op.as_str());
            row(
                &mut out,
                &prefix,
                i.interval_ns,
                i.index,
                amounts,
                f64::INFINITY,
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rank_but_the_first_writes_a_file_of_its_own() {
        let path = Path::new("/tmp/run/l.jsonl");
        assert_eq!(live_path(path, 0), path);
        assert_eq!(live_path(path, 3), Path::new("/tmp/run/l.jsonl.rank3"));
    }
}
