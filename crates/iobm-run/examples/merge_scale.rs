//! The merge's cost at scale, for `bench/merge_scale.py`: rank 0's side of a phase of RANKS x 16
//! workers with INTERVALS 1 s intervals each. Each rank's part is made and serialised as that
//! rank would send it (not timed), then parsed and folded in as rank 0 does (timed); prints
//! the time, rank 0's peak memory (the process's maximum resident set) and the document's size.
//!
//! With OUT.json, also saves the phase as a run's document there (with its side file), for
//! `iobm report` to read.
//!
//! Usage: cargo run --release -p iobm-run --example merge_scale -- RANKS [INTERVALS [OUT.json]]

#[path = "../tests/synthetic/mod.rs"]
mod synthetic;

use iobm_results::checks::Machine;
use iobm_run::ranks::{PhaseMerger, RankPhase};
use std::time::{Duration, Instant};

fn main() {
    let mut args = std::env::args().skip(1);
    let ranks: u32 = args.next().and_then(|a| a.parse().ok()).expect("RANKS");
    let intervals: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3600);
    let template = synthetic::template(16);
    let mut merger = PhaseMerger::new(&[], 0, ranks as usize);
    let mut merging = Duration::ZERO;
    for r in 0..ranks {
        let sent = serde_json::to_vec(&synthetic::part(&template, r, ranks, intervals)).unwrap();
        let started = Instant::now();
        let part: RankPhase = serde_json::from_slice(&sent).unwrap();
        merger.add(r, part);
        merging += started.elapsed();
    }
    let started = Instant::now();
    let phase = merger.finish(&Machine::with_ram(64 << 30));
    merging += started.elapsed();
    let document = serde_json::to_vec(&phase).unwrap().len();
    let side_file = phase.detached.len();
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
        "{{\"workers\": {}, \"intervals\": {intervals}, \"merge_s\": {:.3}, \"peak_rss_mib\": {:.1}, \"document_mb\": {:.2}, \"side_file_mb\": {:.2}}}",
        ranks * 16,
        merging.as_secs_f64(),
        peak_kib as f64 / 1024.0,
        document as f64 / 1e6,
        side_file as f64 / 1e6
    );
}
