//! The merge's cost at scale, for `bench/merge_scale.py`: rank 0's side of a phase of RANKS x 16
//! workers with INTERVALS 1 s intervals each. Each rank's part is made (not timed), folded and
//! framed as that rank sends it (timed apart: each rank does this for itself, all at once),
//! then folded in as rank 0 does (timed); prints those times, the time to write the phase's
//! document, rank 0's peak memory (the process's maximum resident set) and the sizes.
//!
//! With OUT.json, also saves the phase as a run's document there (with its side file), for
//! `iobm report` to read.
//!
//! Usage: cargo run --release -p iobm-run --example merge_scale -- RANKS [INTERVALS [OUT.json]]

#[path = "../tests/synthetic/mod.rs"]
mod synthetic;

use iobm_results::checks::Machine;
use iobm_run::ranks::PhaseMerger;
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let ranks: u32 = args.next().and_then(|a| a.parse().ok()).expect("RANKS");
    let intervals: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3600);
    let template = synthetic::template(16);
    let mut merger = PhaseMerger::new(&[], 0, ranks as usize);
    let (mut merging, mut sending) = (Duration::ZERO, Duration::ZERO);
    let mut sent_bytes = 0usize;
    for r in 0..ranks {
        let part = synthetic::part(&template, r, ranks, intervals);
        let started = Instant::now();
        let sent = synthetic::sent(part, ranks);
        sending += started.elapsed();
        sent_bytes += sent.len();
        let started = Instant::now();
        merger.add_sent(r, &sent).unwrap();
        merging += started.elapsed();
    }
    let started = Instant::now();
    let phase = merger.finish(&Machine::with_ram(64 << 30));
    merging += started.elapsed();
    let started = Instant::now();
    let document = serde_json::to_vec(&phase).unwrap().len();
    let writing = started.elapsed();
    let side_file = phase.detached.len();
    let rank_interval_s = phase
        .rank_series
        .first()
        .map_or(0.0, |r| r.series.interval_ns as f64 / 1e9);
    if let Some(out) = args.next() {
        let mut run: iobm_results::RunResult =
            serde_json::from_str(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        run.phases = vec![phase];
        let doc = iobm_run::session::document(&run, std::path::Path::new(&out)).unwrap();
        std::fs::write(&out, iobm_run::session::document_text(&doc)).unwrap();
    }
    // SAFETY: getrusage writes into the struct it is given.
    let peak_kib = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage.ru_maxrss
    };
    println!(
        "{{\"workers\": {}, \"intervals\": {intervals}, \"merge_s\": {:.3}, \"rank_fold_ms\": {:.2}, \"sent_kb_per_rank\": {:.1}, \"document_s\": {:.3}, \"rank_interval_s\": {rank_interval_s}, \"peak_rss_mib\": {:.1}, \"document_mb\": {:.2}, \"side_file_mb\": {:.2}}}",
        ranks * 16,
        merging.as_secs_f64(),
        sending.as_secs_f64() * 1e3 / ranks as f64,
        sent_bytes as f64 / 1e3 / ranks as f64,
        writing.as_secs_f64(),
        peak_kib as f64 / 1024.0,
        document as f64 / 1e6,
        side_file as f64 / 1e6
    );
}
