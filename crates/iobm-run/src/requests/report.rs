//! `iobm report --requests FILE`: requests files re-analysed: per phase and kind of operation
//! the count, bytes and exact latency percentiles, each host's, rank's and worker's, the slowest
//! requests with their object and offset, and the rate over time at another interval, all of
//! them or those that started in a window of the phase.

use super::Chunk;
use iobm_engine::requests::NONE;
use iobm_engine::Request;
use std::collections::BTreeMap;
use std::fmt::Write;

/// How many of the slowest requests are shown.
const SLOWEST: usize = 10;

/// One request with where it came from.
struct Seen<'a> {
    chunk: &'a Chunk,
    r: &'a Request,
}

/// The exact q-quantile (nearest rank) of sorted `v`.
fn quantile(v: &[u64], q: f64) -> u64 {
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// How the requests are looked at.
#[derive(Debug, Clone, Copy)]
pub struct View {
    /// The interval of the rate over time.
    pub interval_ns: u64,
    /// Only the requests that started in `[from, to)`, in nanoseconds since their phase's start.
    pub window: Option<(u64, u64)>,
}

/// The report of `chunks` as `view` looks at them; `cut` says a file ended inside a frame.
pub fn render(chunks: &[Chunk], view: View, cut: bool) -> String {
    let mut phases: Vec<&str> = Vec::new();
    for c in chunks {
        if !phases.contains(&c.phase.as_str()) {
            phases.push(&c.phase);
        }
    }
    let mut out = String::new();
    if cut {
        out.push_str(
            "note: the file ends inside a frame (a killed run); read up to its last whole frame\n",
        );
    }
    let within = |r: &Request| {
        view.window
            .is_none_or(|(from, to)| (from..to).contains(&r.start_ns))
    };
    if let Some((from, to)) = view.window {
        let _ = writeln!(
            out,
            "window: the requests that started from {:.3}s to {:.3}s into their phase",
            from as f64 / 1e9,
            to as f64 / 1e9
        );
    }
    for phase in phases {
        let seen: Vec<Seen> = (chunks.iter().filter(|c| c.phase == phase))
            .flat_map(|chunk| chunk.records.iter().map(move |r| Seen { chunk, r }))
            .filter(|s| within(s.r))
            .collect();
        let _ = writeln!(out, "phase {phase}: {} requests", seen.len());
        kinds(&mut out, &seen);
        splits(&mut out, &seen);
        slowest(&mut out, &seen);
        over_time(&mut out, &seen, view.interval_ns);
    }
    out
}

/// Per kind: count, bytes, errors, percentiles (successful requests).
fn kinds(out: &mut String, seen: &[Seen]) {
    let mut by: BTreeMap<&str, (u64, u64, Vec<u64>)> = BTreeMap::new();
    for s in seen {
        let kind = s
            .chunk
            .kinds
            .get(s.r.class as usize)
            .map_or("?", String::as_str);
        let e = by.entry(kind).or_default();
        if s.r.error == 0 {
            e.0 += 1;
            e.1 += s.r.bytes;
            e.2.push(s.r.duration_ns);
        }
    }
    let errors = seen.iter().filter(|s| s.r.error != 0).count();
    let _ = writeln!(out, "  kind        ops        bytes  p50_ms  p90_ms  p99_ms  p99.9_ms  max_ms  (errors: {errors})");
    for (kind, (ops, bytes, mut v)) in by {
        v.sort_unstable();
        if v.is_empty() {
            continue;
        }
        let q = |q| ms(quantile(&v, q));
        let _ = writeln!(
            out,
            "  {kind:<8} {ops:>6} {bytes:>12} {:>7} {:>7} {:>7} {:>9} {:>7}",
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            ms(*v.last().unwrap())
        );
    }
}

/// Per host, per rank and per worker: count, bytes, p99.
fn splits(out: &mut String, seen: &[Seen]) {
    let ok = || seen.iter().filter(|s| s.r.error == 0);
    split(out, "host", ok().map(|s| (s.chunk.host.clone(), s.r)));
    split(out, "rank", ok().map(|s| (s.chunk.rank.to_string(), s.r)));
    let worker = |s: &Seen| format!("{}/{}", s.chunk.rank, s.chunk.worker);
    split(out, "rank/worker", ok().map(|s| (worker(s), s.r)));
}

/// One split: per `by` key, its count, bytes and p99.
fn split<'a>(out: &mut String, by: &str, seen: impl Iterator<Item = (String, &'a Request)>) {
    let mut keys: BTreeMap<String, (u64, u64, Vec<u64>)> = BTreeMap::new();
    for (key, r) in seen {
        let e = keys.entry(key).or_default();
        e.0 += 1;
        e.1 += r.bytes;
        e.2.push(r.duration_ns);
    }
    let _ = writeln!(out, "  {by:<12}    ops        bytes  p99_ms");
    for (key, (ops, bytes, mut v)) in keys {
        v.sort_unstable();
        let p99 = ms(quantile(&v, 0.99));
        let _ = writeln!(out, "  {key:<12} {ops:>6} {bytes:>12} {p99:>7}");
    }
}

/// The slowest requests, with their object and offset.
fn slowest(out: &mut String, seen: &[Seen]) {
    let mut order: Vec<&Seen> = seen.iter().collect();
    order.sort_by_key(|s| std::cmp::Reverse(s.r.duration_ns));
    let _ = writeln!(
        out,
        "  slowest: host rank worker kind start_ms duration_ms object offset error"
    );
    let field = |v: u64| {
        if v == NONE {
            "-".to_string()
        } else {
            v.to_string()
        }
    };
    for s in order.into_iter().take(SLOWEST) {
        let kind = s
            .chunk
            .kinds
            .get(s.r.class as usize)
            .map_or("?", String::as_str);
        let error = match s.r.error {
            0 => "-",
            e => s
                .chunk
                .errors
                .get(e as usize - 1)
                .map_or("?", String::as_str),
        };
        let _ = writeln!(
            out,
            "    {} {} {} {kind} {} {} {} {} {error}",
            s.chunk.host,
            s.chunk.rank,
            s.chunk.worker,
            ms(s.r.start_ns),
            ms(s.r.duration_ns),
            field(s.r.object),
            field(s.r.offset),
        );
    }
}

/// Operations and bytes by the interval they ended in.
fn over_time(out: &mut String, seen: &[Seen], interval_ns: u64) {
    let mut by: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
    for s in seen.iter().filter(|s| s.r.error == 0) {
        let e = by
            .entry((s.r.start_ns + s.r.duration_ns) / interval_ns)
            .or_default();
        e.0 += 1;
        e.1 += s.r.bytes;
    }
    let secs = interval_ns as f64 / 1e9;
    let _ = writeln!(out, "  over time (interval {secs}s): from_s ops/s MB/s");
    for (k, (ops, bytes)) in by {
        let _ = writeln!(
            out,
            "    {:.3} {:.1} {:.3}",
            k as f64 * secs,
            ops as f64 / secs,
            bytes as f64 / secs / 1e6
        );
    }
}
