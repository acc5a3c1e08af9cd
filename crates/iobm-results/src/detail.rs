//! Per-worker series of large phases, kept out of the result document so that it stays bounded
//! whatever the worker count and duration: a phase with more than [`INLINE_WORKER_INTERVALS`]
//! worker-intervals keeps its summed series (`series`, `rank_series`) in the document and its
//! per-worker series in a side file beside it, zstd-compressed tidy CSV ([`HEADER`]), which
//! pandas reads as it is (`pd.read_csv(path)`) and `zstd -dc` turns into plain CSV.

use crate::{EndpointSeries, PhaseResult, RankSeries, RunResult, Series, WorkerResult};
use iobm_stats::HistogramData;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod fold;

pub use fold::{coarsened, FoldedSeries, RANK_INTERVALS};

/// Most worker-intervals a phase keeps in the document (about 20 MB of per-worker series).
pub const INLINE_WORKER_INTERVALS: usize = 20_000;

/// The columns of the side file: one row per phase, worker and interval; `buckets` is the
/// interval's latency histogram as `lowest_ns:count` pairs separated by spaces, with
/// `sub_bits` sub-buckets per power of two as in the document's histograms.
pub const HEADER: &str =
    "phase,rank,worker,interval_ns,interval,bytes,ops,errors,latency_count,latency_min_ns,latency_max_ns,latency_sum_ns,sub_bits,buckets\n";

/// The side file of a document saved at `json`: beside it, `NAME.workers.csv.zst`.
pub fn side_file(json: &Path) -> PathBuf {
    let mut name = json.file_name().unwrap_or_default().to_os_string();
    name.push(".workers.csv.zst");
    json.with_file_name(name)
}

fn quoted(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Adds up a phase's series as its workers arrive (all workers; each rank's) and, for a
/// phase too large to keep them, moves the workers' own series into compressed rows.
pub struct SeriesFolder {
    all: Option<Series>,
    ranks: Vec<RankSeries>,
    endpoints: Vec<EndpointSeries>,
    detach: bool,
    /// The detached rows, compressed, in a temporary file: rank 0 holds none of them in memory.
    rows: Option<(File, u64)>,
    /// Each rank's series kept at this many of the phase's intervals per entry (1: as they are).
    rank_factor: usize,
    /// The ranks and intervals that made `rank_factor`, for the phase's note.
    rank_shape: (usize, usize),
}

/// A phase's detached per-worker series: zstd frames of CSV rows in an unnamed temporary file,
/// until the run is saved.
#[derive(Debug, Clone, Default)]
pub struct Detached(Option<(Arc<File>, u64)>);

impl PartialEq for Detached {
    fn eq(&self, other: &Detached) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some((a, _)), Some((b, _))) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Detached {
    /// Bytes of compressed rows.
    pub fn len(&self) -> u64 {
        self.0.as_ref().map_or(0, |(_, len)| *len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Copies the compressed rows to `out`, a piece at a time.
    fn copy_to(&self, out: &mut impl Write) -> io::Result<()> {
        let Some((file, len)) = &self.0 else {
            return Ok(());
        };
        let mut buf = vec![0u8; 1 << 20];
        let mut at = 0;
        while at < *len {
            let n = file.read_at(&mut buf[..(*len - at).min(1 << 20) as usize], at)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            out.write_all(&buf[..n])?;
            at += n as u64;
        }
        Ok(())
    }
}

/// An unnamed temporary file (gone when closed), in the system's temporary directory.
fn temporary() -> io::Result<File> {
    let dir = std::env::temp_dir();
    let unnamed = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(&dir);
    unnamed.or_else(|_| {
        // File systems without O_TMPFILE: a file of iobm's own, unlinked at once.
        let path = dir.join(format!(
            ".iobm-{}-{:x}.workers.tmp",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        ));
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)?;
        std::fs::remove_file(&path)?;
        Ok(file)
    })
}

impl SeriesFolder {
    /// For a phase expected to hold `worker_intervals` in all.
    pub fn new(worker_intervals: usize) -> SeriesFolder {
        SeriesFolder {
            all: None,
            ranks: Vec::new(),
            endpoints: Vec::new(),
            detach: worker_intervals > INLINE_WORKER_INTERVALS,
            rows: None,
            rank_factor: 1,
            rank_shape: (0, 0),
        }
    }

    /// The worker-intervals of `workers` (the longest series of them, times their number).
    pub fn worker_intervals(workers: &[WorkerResult]) -> usize {
        let longest = workers.iter().map(|w| w.series.bytes.len()).max();
        workers.len() * longest.unwrap_or(0)
    }

    /// Folds in `workers` of phase `phase` (all of one rank's, or all of the phase's). A
    /// temporary file that cannot be written loses the workers' own series (their sums stay).
    pub fn add(&mut self, phase: &str, workers: &mut [WorkerResult]) {
        self.sum(workers);
        if self.detach {
            self.append(&compress(&rows(phase, workers)));
            clear_series(workers);
        }
    }

    /// Adds up `workers`' series: all of them, by rank and by endpoint.
    fn sum(&mut self, workers: &[WorkerResult]) {
        for w in workers {
            match &mut self.all {
                Some(all) => all.merge(&w.series),
                None => self.all = Some(w.series.clone()),
            }
            if let Some(endpoint) = &w.endpoint {
                self.add_endpoint(EndpointSeries {
                    endpoint: endpoint.clone(),
                    series: w.series.counts(),
                });
            }
            self.add_rank(RankSeries {
                rank: w.rank,
                series: w.series.counts(),
            });
        }
    }

    fn add_endpoint(&mut self, e: EndpointSeries) {
        match self.endpoints.iter_mut().find(|x| x.endpoint == e.endpoint) {
            Some(x) => x.series.merge_counts(&e.series),
            None => self.endpoints.push(e),
        }
    }

    /// Adds a rank's series, coarsened to the folder's rank intervals (sums of whole groups of
    /// intervals: adding coarsened series equals coarsening their sum).
    fn add_rank(&mut self, mut r: RankSeries) {
        if self.rank_factor > 1 {
            r.series = coarsened(&r.series, self.rank_factor);
        }
        match self.ranks.iter_mut().find(|x| x.rank == r.rank) {
            Some(x) => x.series.merge_counts(&r.series),
            None => self.ranks.push(r),
        }
    }

    /// Appends compressed rows (whole zstd frames) to the temporary file.
    fn append(&mut self, frames: &[u8]) {
        if frames.is_empty() {
            return;
        }
        if self.rows.is_none() {
            self.rows = temporary().ok().map(|f| (f, 0));
        }
        if let Some((file, len)) = &mut self.rows {
            if file.write_all_at(frames, *len).is_ok() {
                *len += frames.len() as u64;
            }
        }
    }

    /// Puts the sums in `phase` (rank series only with several ranks) and the detached rows.
    pub fn finish(self, phase: &mut PhaseResult) {
        if self.rank_factor > 1 {
            phase.note(&self.coarsening_note());
        }
        phase.series = self.all;
        phase.rank_series = if self.ranks.len() > 1 {
            self.ranks
        } else {
            Vec::new()
        };
        phase.endpoint_series = if self.endpoints.len() > 1 {
            self.endpoints
        } else {
            Vec::new()
        };
        phase.worker_series_detached = self.detach;
        phase.detached = Detached(self.rows.map(|(file, len)| (Arc::new(file), len)));
    }
}

/// Empties `workers`' own series (they went to the side file's rows), keeping the interval.
fn clear_series(workers: &mut [WorkerResult]) {
    for w in workers {
        let interval = std::time::Duration::from_nanos(w.series.interval_ns);
        w.series = Series::new(interval);
    }
}

/// The CSV rows (without the header) of `workers`' series.
fn rows(phase: &str, workers: &[WorkerResult]) -> String {
    let mut out = String::new();
    let name = quoted(phase);
    for w in workers {
        let s = &w.series;
        for k in 0..s.bytes.len().max(s.errors.len()) {
            let at = |v: &[u64]| v.get(k).copied().unwrap_or(0);
            let empty = HistogramData::empty(4);
            let h = s.latency.get(k).unwrap_or(&empty);
            let _ = write!(
                out,
                "{name},{},{},{},{k},{},{},{},{},{},{},{},{},",
                w.rank,
                w.worker,
                s.interval_ns,
                at(&s.bytes),
                at(&s.ops),
                at(&s.errors),
                h.count,
                h.min_ns,
                h.max_ns,
                h.sum_ns,
                h.sub_bits()
            );
            for (i, [low, n]) in h.buckets.iter().enumerate() {
                let _ = write!(out, "{}{low}:{n}", if i > 0 { " " } else { "" });
            }
            out.push('\n');
        }
    }
    out
}

/// One zstd frame of `text` (frames concatenate into one valid stream).
fn compress(text: &str) -> Vec<u8> {
    zstd::bulk::compress(text.as_bytes(), 3).expect("zstd compresses in memory")
}

/// Whether a phase of `run` has its per-worker series detached, to be saved in the side file.
pub fn has_side_file(run: &RunResult) -> bool {
    run.phases.iter().any(|p| p.worker_series_detached)
}

/// Writes the side file of `run` to `out`: the header and every detached phase's rows, a piece
/// at a time.
pub fn write_side_file(run: &RunResult, out: &mut impl Write) -> io::Result<()> {
    out.write_all(&compress(HEADER))?;
    for p in run.phases.iter().filter(|p| p.worker_series_detached) {
        p.detached.copy_to(out)?;
    }
    Ok(())
}

/// The side file's bytes for `run`, in memory (to put the series back into a copy of the run
/// for `--csv` and `--html`); None when no phase is detached.
pub fn side_file_bytes(run: &RunResult) -> Option<Vec<u8>> {
    if !has_side_file(run) {
        return None;
    }
    let mut out = Vec::new();
    write_side_file(run, &mut out).expect("temporary files iobm wrote");
    Some(out)
}

/// Puts the per-worker series of the side file's bytes back into `run`'s detached phases.
pub fn attach(run: &mut RunResult, side: &[u8]) -> Result<(), String> {
    let text = zstd::stream::decode_all(side).map_err(|e| format!("not zstd: {e}"))?;
    let text = String::from_utf8(text).map_err(|_| "not text".to_string())?;
    let mut lines = text.lines();
    if lines.next() != Some(HEADER.trim_end()) {
        return Err("not an iobm worker-series file".into());
    }
    // Each worker by phase name, rank and worker index, found once.
    let mut index: HashMap<(String, u32, u32), (usize, usize)> = HashMap::new();
    for (p, phase) in run.phases.iter().enumerate() {
        for (w, worker) in phase.workers.iter().enumerate() {
            index.insert((phase.name.clone(), worker.rank, worker.worker), (p, w));
        }
    }
    for line in lines {
        let (phase, rest) = split_phase(line)?;
        let f: Vec<&str> = rest.split(',').collect();
        if f.len() != 13 {
            return Err(format!("a row of {} fields: {line}", f.len() + 1));
        }
        let n = |i: usize| {
            f[i].parse::<u64>()
                .map_err(|_| format!("not a number: {}", f[i]))
        };
        let (rank, worker, k) = (n(0)? as u32, n(1)? as u32, n(3)? as usize);
        let Some(&(p, w)) = index.get(&(phase.clone(), rank, worker)) else {
            return Err(format!(
                "no worker {worker} of rank {rank} in phase {phase}"
            ));
        };
        let s = &mut run.phases[p].workers[w].series;
        s.interval_ns = n(2)?;
        let put = |v: &mut Vec<u64>, x: u64| {
            if v.len() <= k {
                v.resize(k + 1, 0);
            }
            v[k] = x;
        };
        put(&mut s.bytes, n(4)?);
        put(&mut s.ops, n(5)?);
        if n(6)? > 0 {
            put(&mut s.errors, n(6)?);
        }
        let mut h = HistogramData::empty(n(11)? as u32);
        (h.count, h.min_ns, h.max_ns, h.sum_ns) = (n(7)?, n(8)?, n(9)?, n(10)?);
        for pair in f[12].split_whitespace() {
            let (low, count) = pair.split_once(':').ok_or(format!("a bucket: {pair}"))?;
            let parse = |x: &str| x.parse::<u64>().map_err(|_| format!("a bucket: {pair}"));
            h.buckets.push([parse(low)?, parse(count)?]);
        }
        if s.latency.len() <= k {
            s.latency.resize(k + 1, HistogramData::empty(h.sub_bits()));
        }
        s.latency[k] = h;
    }
    for p in run.phases.iter_mut().filter(|p| p.worker_series_detached) {
        p.worker_series_detached = false;
    }
    Ok(())
}

/// The quoted or plain phase name at the start of a row, and the rest after its comma.
fn split_phase(line: &str) -> Result<(String, &str), String> {
    if let Some(quoted) = line.strip_prefix('"') {
        let mut name = String::new();
        let mut chars = quoted.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '"' {
                if chars.peek().map(|&(_, c)| c) == Some('"') {
                    name.push('"');
                    chars.next();
                } else {
                    let rest = quoted[i + 1..].strip_prefix(',').ok_or("a bad row")?;
                    return Ok((name, rest));
                }
            } else {
                name.push(c);
            }
        }
        Err("an unterminated phase name".into())
    } else {
        line.split_once(',')
            .map(|(p, rest)| (p.to_string(), rest))
            .ok_or_else(|| "a bad row".to_string())
    }
}
