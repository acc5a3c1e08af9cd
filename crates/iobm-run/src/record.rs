//! Turns what the engine measured in a phase into the result contract: per-worker records,
//! aggregates with formulas, latency summary, CPU cost and warnings (the evidence around the
//! phase is the probes', [`crate::probe`]).

use iobm_engine::{
    Engine, FsyncPolicy, MetaOp, ObjectOp, Op, PaceOutcome, PerChar, Phase, PhaseEnd, PhaseOutcome,
    SteadyOutcome, Stonewall, StopRule,
};
use iobm_results::access::AccessShare;
use iobm_results::checks::{check, Machine};
use iobm_results::device::DeviceCopy;
use iobm_results::{
    CacheEvidence, CpuUsage, ErrorCount, Latency, OperationResult, PaceResult, PhaseResult,
    PhaseSettings, RunStatus, SteadyResult, SteadyUnit, StonewallResult, WorkerResult,
};
use iobm_stats::names::{CacheDrop, CacheDropped, OpName};
use iobm_stats::{aggregates, Histogram};

pub fn duration_s(stop: StopRule) -> Option<f64> {
    match stop {
        StopRule::Duration(d) => Some(d.as_secs_f64()),
        StopRule::Once | StopRule::Ops(_) | StopRule::Stonewall(_) => None,
    }
}

pub fn status(end: PhaseEnd) -> RunStatus {
    match end {
        PhaseEnd::Completed => RunStatus::Complete,
        PhaseEnd::Interrupted => RunStatus::Interrupted,
        PhaseEnd::Failed => RunStatus::Failed,
    }
}

/// What one operation's latency covers, by operation and flush policy.
fn measures(phase: &Phase) -> String {
    let io = if phase.direct { "O_DIRECT" } else { "buffered" };
    let block = phase.block;
    let cufile = phase
        .memory
        .devices()
        .is_some_and(|d| d.path == iobm_target::memory::DevicePath::Direct);
    let base = match phase.op {
        Op::ReadWrite { .. } if phase.replay.is_some() => format!(
            "one {io} pread or pwrite of a replayed trace, at its recorded offset and length (up to {block} bytes)"
        ),
        Op::Write | Op::Read | Op::ReadWrite { .. } if cufile => format!(
            "one {} of {block} bytes between an O_DIRECT file and a GPU buffer (--gds)",
            match phase.op {
                Op::Write => "cuFileWrite",
                Op::Read => "cuFileRead",
                _ => "cuFileRead or cuFileWrite",
            }
        ),
        Op::Write | Op::Read if phase.engine == Engine::IoUring => format!(
            "one {io} {} of {block} bytes through io_uring, {} in flight per worker: from its submission to its completion",
            if phase.op == Op::Write { "write" } else { "read" },
            phase.iodepth
        ),
        Op::Write | Op::Read | Op::ReadWrite { .. } if phase.engine == Engine::Mmap => format!(
            "one copy of {block} bytes {} the file's mapping, its page faults included",
            match phase.op {
                Op::Write => "into",
                Op::Read => "out of",
                _ => "out of or into",
            }
        ),
        Op::Write => format!("one {io} pwrite of {block} bytes"),
        Op::Read => format!("one {io} pread of {block} bytes"),
        Op::Rewrite => format!("pread, change and pwrite back of one {block}-byte block ({io})"),
        Op::ReadWrite { read_pct } => format!(
            "one {io} read or write of {block} bytes ({read_pct}% reads){}",
            if phase.engine == Engine::IoUring {
                format!(
                    " through io_uring, {} in flight per worker: from its submission to its completion",
                    phase.iodepth
                )
            } else {
                String::new()
            }
        ),
        Op::PutChar(PerChar::Buffered) => {
            format!("{block} putc calls into a {block}-byte buffer and its pwrite ({io})")
        }
        Op::PutChar(PerChar::Syscall) => format!("{block} one-byte pwrite calls ({io})"),
        Op::GetChar(PerChar::Buffered) => {
            format!("a pread of {block} bytes into a buffer and {block} getc calls ({io})")
        }
        Op::GetChar(PerChar::Syscall) => format!("{block} one-byte pread calls ({io})"),
        Op::Seek { rewrite_pct } => format!(
            "pread of one random {block}-byte block, {rewrite_pct}% of them changed and written back ({io})"
        ),
        Op::Create => "create (open O_CREAT|O_EXCL), write its contents, close one file".to_string(),
        Op::Stat => "stat one file, and read its contents when it has any".to_string(),
        Op::Delete => "unlink one file".to_string(),
        Op::Meta(op) => op.measures().to_string(),
        Op::Object(_) => {
            return "one request: from its first byte sent to the answer's last byte received"
                .to_string()
        }
    };
    if phase.op.writes() && phase.fsync == FsyncPolicy::Each {
        // Each write, or each created file, is followed by an fsync (a mapping's: msync).
        let mapped = phase.engine == Engine::Mmap && !phase.op.is_metadata();
        format!("{base}, then {}", if mapped { "msync" } else { "fsync" })
    } else {
        base
    }
}

/// The latency summary of a histogram.
pub fn latency(measures: String, histogram: &Histogram) -> Latency {
    Latency {
        measures,
        mean_ns: histogram.mean(),
        p50_ns: histogram.percentile(50.0),
        p90_ns: histogram.percentile(90.0),
        p99_ns: histogram.percentile(99.0),
        p999_ns: histogram.percentile(99.9),
        max_ns: histogram.max(),
        histogram: histogram.to_data(),
    }
}

/// Whether a phase of `op` has its kinds of operation in the result (`operations`): an object
/// phase's, a mix of reads and writes, a find (whose matches are its keys).
pub fn by_kind(op: Op) -> bool {
    matches!(
        op,
        Op::Object(_) | Op::ReadWrite { .. } | Op::Meta(MetaOp::Find)
    )
}

/// Each kind of operation of an object phase, rated over the phase's wall time.
fn operations(phase: &Phase, outcome: &PhaseOutcome) -> Vec<OperationResult> {
    let wall_s = outcome.end_ns.saturating_sub(outcome.start_ns) as f64 / 1e9;
    let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
    // A mix without LIST has no list books to show (LIST came last to mixes).
    let unlisted = (phase.objects.as_ref()).is_some_and(|o| o.mix.list == 0)
        && matches!(phase.op, Op::Object(ObjectOp::Mixed | ObjectOp::Versioned));
    outcome
        .by_op
        .iter()
        .filter(|o| !(unlisted && o.name == OpName::List))
        .map(|o| OperationResult {
            op: o.name,
            ops: o.ops,
            bytes: o.bytes,
            errors: o.errors,
            retried: o.retried,
            keys: o.keys,
            ops_per_s: per_s(o.ops),
            bytes_per_s: per_s(o.bytes),
            latency: latency(
                match phase.op {
                    Op::Object(_) => format!(
                        "one {}: from its request's first byte sent to the answer's last byte received",
                        o.name
                    ),
                    _ if phase.replay.is_some() => {
                        format!("one replayed {} ({})", o.name, measures(phase))
                    }
                    _ => format!("one {} of {} bytes ({})", o.name, phase.block, measures(phase)),
                },
                &o.latency,
            ),
            series: Some(o.series.clone()),
            ttfb: (o.ttfb.count() > 0).then(|| {
                latency(
                    "from the request's first byte sent until the answer's status line and headers arrived"
                        .to_string(),
                    &o.ttfb,
                )
            }),
        })
        .collect()
}

/// The share of a phase's time under load: on / (on + off) of `--burst`, else 1.
fn duty(phase: &Phase) -> f64 {
    (phase.rhythm)
        .and_then(|r| r.burst)
        .map_or(1.0, |b| b.duty())
}

/// What a paced phase recorded beside its service time, assessed over the phase; under
/// `--burst` the target is the rate during load times the share of time under load (`duty`).
fn pace(p: &PaceOutcome, outcome: &PhaseOutcome, duty: f64) -> PaceResult {
    let mut result = PaceResult {
        arrivals: p.pace.arrivals,
        target_ops_per_s: p.pace.ops_per_s() * duty,
        achieved_ops_per_s: 0.0,
        response: latency(RESPONSE.to_string(), &p.response),
        series: p.series.clone(),
        lag: Some(latency(LAG.to_string(), &p.lag)),
        backlog: p.backlog.clone(),
        behind_threshold_ops: 0,
        fell_behind_s: None,
    };
    let ops = outcome.workers.iter().map(|w| w.span.ops).sum();
    result.assess(ops, outcome.end_ns.saturating_sub(outcome.start_ns));
    result
}

/// What a paced phase's response time covers.
pub const RESPONSE: &str =
    "from the operation's intended start (its place in the schedule of --rate) to its end";

/// What a paced phase's lag covers.
pub const LAG: &str = "the client's own lateness in starting the operation: from when it could have started (its intended start, or later while the storage was busy with the ones before) to when iobm started it";

/// CPU seconds, and per GiB moved.
pub fn cpu_usage(user_s: f64, system_s: f64, moved: u64) -> CpuUsage {
    CpuUsage {
        user_s,
        system_s,
        cpu_s_per_gib: (moved > 0)
            .then(|| (user_s + system_s) / (moved as f64 / (1u64 << 30) as f64)),
        gateway_s: None,
    }
}

/// The result of one phase on this process; `rank` and `host` label its workers.
pub fn phase_result(
    phase: &Phase,
    outcome: &PhaseOutcome,
    rank: u32,
    host: &str,
    machine: &Machine,
) -> PhaseResult {
    let spans: Vec<_> = outcome.workers.iter().map(|w| w.span).collect();
    let moved: u64 = spans.iter().map(|s| s.bytes).sum();
    let mut result = PhaseResult {
        name: outcome.name.clone(),
        op: outcome.op.name(),
        status: status(outcome.end),
        settings: settings(phase),
        start_ns: outcome.start_ns,
        end_ns: outcome.end_ns,
        workers: workers(phase, outcome, rank, host),
        latency: latency(measures(phase), &outcome.latency),
        aggregates: aggregates(&spans),
        cpu: cpu_usage(
            outcome.cpu.user.as_secs_f64(),
            outcome.cpu.system.as_secs_f64(),
            moved,
        ),
        // The probes' evidence, added after the phase.
        cache: CacheEvidence::default(),
        errors: outcome
            .errors
            .iter()
            .map(|e| ErrorCount {
                kind: e.kind.clone(),
                count: e.count,
                first: e.first.clone(),
            })
            .collect(),
        warnings: Vec::new(),
        notes: Vec::new(),
        gather_s: None,
        series: None,
        rank_series: Vec::new(),
        endpoint_series: Vec::new(),
        worker_series_detached: false,
        pace: (outcome.pace.as_ref()).map(|p| pace(p, outcome, duty(phase))),
        detached: Default::default(),
        offered: None,
        operations: if by_kind(phase.op) {
            operations(phase, outcome)
        } else {
            Vec::new()
        },
        stonewall: outcome.stonewall.as_ref().map(stonewall),
        until_stable: outcome.steady.as_ref().map(until_stable),
        device_copy: None,
        gds: None,
    };
    result.device_copy = DeviceCopy::of(&result);
    check(&mut result, machine);
    result
}

/// Where the stonewall stopped the workers: how many, the fewest items, the wear-out.
fn stonewall(wall: &Stonewall) -> StonewallResult {
    let stopped: Vec<u64> = wall.at_wall.iter().flatten().copied().collect();
    StonewallResult {
        stopped_workers: stopped.len() as u64,
        fewest_at_wall: stopped.iter().copied().min(),
        wear_out_items: wall.wear_out,
    }
}

/// What `--until-stable` watched: its rule, when the rate settled and the rates it saw.
fn until_stable(s: &SteadyOutcome) -> SteadyResult {
    SteadyResult {
        tolerance_pct: s.rule.tolerance() * 100.0,
        window_s: s.rule.window.as_secs_f64(),
        tick_s: s.rule.tick().as_secs_f64(),
        stable_at_s: s.stable_at.map(|d| d.as_secs_f64()),
        unit: match s.ops {
            true => SteadyUnit::OpsPerS,
            false => SteadyUnit::BytesPerS,
        },
        rates: s.rates.clone(),
    }
}

/// How the phase ran, as the result records it (a cache drop is the probe's to set).
fn settings(phase: &Phase) -> PhaseSettings {
    PhaseSettings {
        block_bytes: phase.block,
        pattern: phase.pattern.name(),
        fsync: phase.fsync,
        direct: phase.direct,
        engine: Some(phase.engine),
        iodepth: phase.iodepth,
        // Set by the probe that drops the page cache, where one did.
        drop_cache: false,
        cache_dropped: CacheDropped::client(CacheDrop::Nothing),
        duration_s: duration_s(phase.stop),
        ramp_s: (!phase.ramp.is_zero()).then_some(phase.ramp.as_secs_f64()),
        verify: phase.verify.is_some(),
        // An object phase's data set is its objects (none for put and multipart).
        data_bytes: phase
            .objects
            .as_ref()
            .map_or(phase.layout.data_bytes(), |o| o.total_bytes()),
        stonewall_s: match phase.stop {
            StopRule::Stonewall(wall) => Some(wall.as_secs_f64()),
            _ => None,
        },
        access: access_share(phase),
    }
}

/// A skewed phase's shares on its hottest blocks (each worker's region, as picked among) or
/// objects.
fn access_share(phase: &Phase) -> Option<AccessShare> {
    let (dist, n) = match &phase.objects {
        Some(o) => (o.access, o.count),
        None => {
            let region = phase.layout.regions.first()?;
            let blocks = region.len.div_ceil(phase.block.max(1));
            (
                phase.pattern.access(),
                region.visit.unwrap_or(blocks).min(blocks),
            )
        }
    };
    (!dist.is_uniform()).then(|| AccessShare::of(dist, n))
}

/// This process's workers, labelled with `rank` and `host`; a metadata worker that works on
/// another's items says whose.
fn workers(phase: &Phase, outcome: &PhaseOutcome, rank: u32, host: &str) -> Vec<WorkerResult> {
    outcome
        .workers
        .iter()
        .enumerate()
        .map(|(i, w)| WorkerResult {
            worker: i as u32,
            rank,
            host: host.to_string(),
            span: w.span,
            final_sync_ns: w.final_sync_ns,
            verify_ns: w.verify_ns,
            copy_ns: w.copy_ns,
            series: w.series.clone(),
            endpoint: None,
            items_of: match (phase.op, &phase.tree) {
                (Op::Meta(op), Some(work)) if work.owner(op, i) != work.global(i) => {
                    Some(work.owner(op, i) as u32)
                }
                _ => None,
            },
            cpus: w.cpus.clone(),
        })
        .collect()
}
