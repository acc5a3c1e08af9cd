//! `iobm merge`: results of one workload started by hand on several clients, without MPI,
//! combined into one run on the first run's clock by their wall-clock stamps (as warp's
//! `merge`). Each input becomes a "rank" of the merged run; by default only the window in
//! which every run was active is kept, each worker cut to it from its per-second series.

mod servers;

use crate::ranks::{absorb, merge_operations, worst};
use crate::record::{cpu_usage, latency};
use iobm_results::checks::{check, Machine};
use iobm_results::{config_hash, OperationResult, PhaseResult, RankInfo, RunResult, Series};
use iobm_stats::{aggregates, format_bytes, Histogram, Progress, Trace};

/// Why runs cannot be merged, if they cannot.
pub fn check_mergeable(runs: &[(String, RunResult)]) -> Result<(), String> {
    let Some((first_name, first)) = runs.first() else {
        return Err("nothing to merge".into());
    };
    let hash = config_hash(&first.kind, &first.config);
    for (name, run) in &runs[1..] {
        if run.kind != first.kind {
            return Err(format!(
                "{first_name} is a {} run and {name} a {} run: only runs of one workload merge",
                first.kind, run.kind
            ));
        }
        if config_hash(&run.kind, &run.config) != hash {
            return Err(format!(
                "{first_name} and {name} ran different workloads (configuration hashes differ): only runs of one workload merge"
            ));
        }
        let names = |r: &RunResult| r.phases.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        if names(run) != names(first) {
            return Err(format!("{first_name} and {name} have different phases"));
        }
    }
    Ok(())
}

/// A worker's (or an operation kind's) cumulative progress at the end of each interval of its
/// series, stamped on the common clock and ending at `end_ns`: the trace the snapshots and the
/// cut are taken from (to within an interval).
fn series_trace(series: &Series, phase_start_ns: u64, end_ns: u64) -> Trace {
    let mut done = Progress::default();
    let mut trace = Vec::with_capacity(series.bytes.len() + 1);
    for (k, (&bytes, &ops)) in series.bytes.iter().zip(&series.ops).enumerate() {
        done.bytes += bytes;
        done.ops += ops;
        let at = phase_start_ns + (k as u64 + 1) * series.interval_ns;
        trace.push((at.min(end_ns), done));
    }
    trace
}

/// The part of `trace` between `start` and `end`, counted from `start`, with points at both.
fn cut_trace(trace: &Trace, phase_start_ns: u64, (start, end): (u64, u64)) -> (Trace, Progress) {
    let at_start = progress_between(trace, phase_start_ns, start);
    let at_end = progress_between(trace, phase_start_ns, end);
    let since = |p: Progress| Progress {
        bytes: p.bytes.saturating_sub(at_start.bytes),
        ops: p.ops.saturating_sub(at_start.ops),
    };
    let mut cut: Trace = vec![(start, Progress::default())];
    cut.extend(
        trace
            .iter()
            .filter(|&&(t, _)| t > start && t < end)
            .map(|&(t, p)| (t, since(p))),
    );
    cut.push((end, since(at_end)));
    (cut, since(at_end))
}

/// Progress at `t`, interpolated linearly within the interval that holds it.
fn progress_between(trace: &Trace, start_ns: u64, t: u64) -> Progress {
    let mut before = (start_ns, Progress::default());
    for &(at, done) in trace {
        if at >= t {
            let span = at.saturating_sub(before.0).max(1) as f64;
            let part = t.saturating_sub(before.0) as f64 / span;
            let lerp = |a: u64, b: u64| a + ((b - a) as f64 * part).round() as u64;
            return Progress {
                bytes: lerp(before.1.bytes, done.bytes),
                ops: lerp(before.1.ops, done.ops),
            };
        }
        before = (at, done);
    }
    before.1
}

/// What the same phase of every run adds up to as they are merged.
#[derive(Default)]
struct Sums {
    latency: Histogram,
    // Paced runs: every run's response times and lags, and its own target (each ran its rate).
    response: Histogram,
    lag: Histogram,
    target: f64,
    user_s: f64,
    system_s: f64,
    /// Each run's operations by kind.
    operations: Vec<Vec<OperationResult>>,
    /// Each worker's trace, in the order of the merged phase's workers.
    traces: Vec<Trace>,
    /// The bytes cut away outside the window.
    cut: u64,
}

impl Sums {
    /// Adds run `run`'s `phase`, its workers (and operations) cut to `window` when given.
    fn add(&mut self, run: usize, phase: &mut PhaseResult, window: Option<(u64, u64)>) {
        self.latency += &Histogram::from_data(&phase.latency.histogram);
        if let Some(p) = &phase.pace {
            self.response += &Histogram::from_data(&p.response.histogram);
            if let Some(lag) = &p.lag {
                self.lag += &Histogram::from_data(&lag.histogram);
            }
            self.target += p.target_ops_per_s;
        }
        self.user_s += phase.cpu.user_s;
        self.system_s += phase.cpu.system_s;
        let mut operations = std::mem::take(&mut phase.operations);
        for w in &mut phase.workers {
            w.rank = run as u32;
            let trace = series_trace(&w.series, phase.start_ns, w.span.end_ns);
            let start = window.map_or(w.span.start_ns, |(from, _)| w.span.start_ns.max(from));
            let end = window.map_or(w.span.end_ns, |(_, to)| w.span.end_ns.min(to).max(start));
            let (trace, kept) = cut_trace(&trace, phase.start_ns, (start, end));
            if window.is_some() {
                self.cut += w.span.bytes.saturating_sub(kept.bytes);
                w.span.start_ns = start;
                w.span.end_ns = end;
                w.span.bytes = kept.bytes;
                w.span.ops = kept.ops;
                // warp's window needs operation stamps the series cannot give.
                w.span.first_op_end_ns = 0;
            }
            self.traces.push(trace);
        }
        if let Some(window) = window {
            // Each kind of operation cut to the window the same way, from its own series.
            for o in &mut operations {
                if let Some(series) = &o.series {
                    let trace = series_trace(series, phase.start_ns, phase.end_ns);
                    let (_, kept) = cut_trace(&trace, phase.start_ns, window);
                    o.ops = kept.ops;
                    o.bytes = kept.bytes;
                }
            }
        }
        self.operations.push(operations);
    }
}

/// One merged phase of `phases` (the same phase of every run, its stamps already on the
/// common clock, each run's bucket in `buckets`), cut to `window` when given; returns it, the
/// bytes cut away and why servers' evidence was left out, if it was.
fn merge_phase(
    phases: Vec<PhaseResult>,
    buckets: &[&str],
    window: Option<(u64, u64)>,
    machine: &Machine,
) -> (PhaseResult, u64, Option<String>) {
    let readings: Vec<servers::Reading> = (phases.iter().zip(buckets))
        .map(|(p, bucket)| servers::Reading::of(p, bucket))
        .collect();
    let mut sums = Sums::default();
    let mut merged: Option<PhaseResult> = None;
    for (run, mut phase) in phases.into_iter().enumerate() {
        sums.add(run, &mut phase, window);
        absorb(&mut merged, phase);
    }
    let mut phase = merged.expect("at least one run");
    if let Some((from, to)) = window {
        phase.start_ns = from;
        phase.end_ns = to.max(from);
    }
    // The snapshots behind first done and steady state, interpolated within the series'
    // intervals (a step at each interval's end would lag by up to one).
    let spans = phase.spans();
    let active = || spans.iter().filter(|s| s.end_ns > s.start_ns);
    let last_start = active().map(|s| s.start_ns).max().unwrap_or(0);
    let first_end = active().map(|s| s.end_ns).min().unwrap_or(0);
    for (w, trace) in phase.workers.iter_mut().zip(&sums.traces) {
        w.span.at_all_started = progress_between(trace, w.span.start_ns, last_start);
        w.span.at_first_done = progress_between(trace, w.span.start_ns, first_end);
    }
    let cut = sums.cut;
    let (servers, why) = servers::merge(&readings, window.is_some() && cut > 0);
    phase.cache.servers = servers;
    summarize(&mut phase, sums, machine);
    (phase, cut, why)
}

/// The merged phase's figures recomputed from the sums and its workers, and checked; what
/// each run read of its own machine is not summed, so left out (the servers' evidence is
/// merged apart, [`servers`]).
fn summarize(phase: &mut PhaseResult, sums: Sums, machine: &Machine) {
    phase.latency = latency(phase.latency.measures.clone(), &sums.latency);
    let wall_ns = phase.end_ns.saturating_sub(phase.start_ns);
    phase.operations = merge_operations(sums.operations, wall_ns);
    phase.cpu = cpu_usage(sums.user_s, sums.system_s, phase.bytes());
    phase.cache.device = None;
    phase.cache.resident_before_bytes = None;
    phase.cache.own_io = None;
    phase.cache.below.clear();
    phase.aggregates = aggregates(&phase.spans());
    let ops = phase.spans().iter().map(|s| s.ops).sum();
    if let Some(p) = phase.pace.as_mut() {
        p.response = latency(p.response.measures.clone(), &sums.response);
        p.lag = p.lag.take().map(|l| latency(l.measures, &sums.lag));
        p.target_ops_per_s = sums.target;
        p.assess(ops, wall_ns);
    }
    check(phase, machine);
}

/// The runs merged into one, on the first run's clock; `whole` keeps every run's whole span
/// instead of the window in which all were active.
pub fn merge_runs(runs: Vec<(String, RunResult)>, whole: bool, argv: Vec<String>) -> RunResult {
    let mut merged = merged_run(&runs, argv);
    let mut warnings = vec![clock_warning(&runs)];
    let machine = Machine::of(&merged);
    for p in 0..runs[0].1.phases.len() {
        let phases = on_first_clock(&runs, p);
        let from = phases.iter().map(|p| p.start_ns).max().unwrap_or(0);
        let to = phases.iter().map(|p| p.end_ns).min().unwrap_or(0);
        let total: u64 = phases.iter().map(|p| p.bytes()).sum();
        let name = phases[0].name.clone();
        let buckets: Vec<&str> = (runs.iter())
            .map(|(_, r)| r.config.s3.as_ref().map_or("", |s| s.bucket.as_str()))
            .collect();
        let window = (!whole).then_some((from, to));
        let (phase, cut, servers_left_out) = merge_phase(phases, &buckets, window, &machine);
        if let Some(why) = servers_left_out {
            warnings.push(format!("{name}: {why}"));
        }
        if !whole {
            if to <= from {
                warnings.push(format!(
                    "{name}: the runs were never all active at once: nothing is left (merge with --whole to keep everything)"
                ));
            } else if cut > 0 {
                warnings.push(format!(
                    "{name}: kept the {:.3}s in which every run was active; cut {} of {} ({:.1}%) done outside it (--whole keeps everything)",
                    (to - from) as f64 / 1e9,
                    format_bytes(cut),
                    format_bytes(total),
                    100.0 * cut as f64 / total.max(1) as f64
                ));
            }
        }
        merged.phases.push(phase);
    }
    warnings.append(&mut merged.warnings);
    merged.warnings = warnings;
    merged
}

/// The merged run without its phases: the first run's, with every run as a rank, every
/// run's data set, endpoints, warnings (named by run), status and what it left behind.
fn merged_run(runs: &[(String, RunResult)], argv: Vec<String>) -> RunResult {
    let origin = runs[0].1.clock.origin_unix_ns;
    let mut merged = runs[0].1.clone();
    merged.warnings.clear();
    merged.run_id = format!("merge-{}", merged.run_id);
    merged.command_line = argv;
    merged.spec = crate::session::recorded_spec();
    merged.ranks = Vec::new();
    merged.phases = Vec::new();
    merged.merged_from = runs.iter().map(|(name, _)| name.clone()).collect();
    // Every run's data set, as an MPI run's total is every rank's: "2 runs x 1 jobs x 256 MiB =
    // 512 MiB"; the hash is of that workload.
    merged.config.total_bytes = runs.iter().map(|(_, r)| r.config.total_bytes).sum();
    merged.config_hash = config_hash(&merged.kind, &merged.config);
    // Every endpoint any run used.
    let endpoints = runs
        .iter()
        .flat_map(|(_, r)| r.config.s3.iter().flat_map(|s| s.endpoints.clone()));
    let mut all: Vec<String> = Vec::new();
    for e in endpoints {
        if !all.contains(&e) {
            all.push(e);
        }
    }
    if let Some(s3) = merged.config.s3.as_mut() {
        s3.endpoints = all;
    }
    for (index, (name, run)) in runs.iter().enumerate() {
        merged.ranks.push(RankInfo {
            rank: index as u32,
            host: run.environment.hostname.clone(),
            clock_offset_ns: run.clock.origin_unix_ns as i64 - origin as i64,
            clock_uncertainty_ns: 0,
        });
        merged
            .warnings
            .extend(run.warnings.iter().map(|w| format!("{name}: {w}")));
        merged.status = worst(merged.status, run.status);
        if index > 0 {
            merged.left_behind.extend(run.left_behind.iter().cloned());
        }
    }
    merged
}

/// That the runs were put on one clock by their wall clocks, and what each run's was.
fn clock_warning(runs: &[(String, RunResult)]) -> String {
    format!(
        "merged from {} runs by their wall clocks, which agree only as well as NTP keeps them (each run's: {}); the latencies, errors and per-second series cover each run's whole phases",
        runs.len(),
        runs.iter()
            .map(|(name, r)| format!(
                "{name}: {}",
                r.clock.wall_clock.as_deref().unwrap_or("not recorded")
            ))
            .collect::<Vec<_>>()
            .join("; ")
    )
}

/// Phase `p` of every run, its stamps moved onto the first run's clock.
fn on_first_clock(runs: &[(String, RunResult)], p: usize) -> Vec<PhaseResult> {
    let origin = runs[0].1.clock.origin_unix_ns;
    runs.iter()
        .map(|(_, run)| {
            let mut phase = run.phases[p].clone();
            let shift = |t: u64| {
                (t as i128 + run.clock.origin_unix_ns as i128 - origin as i128).max(0) as u64
            };
            phase.move_stamps(shift);
            phase
        })
        .collect()
}
