//! Checks on a phase's numbers that become warnings: aggregates that disagree (and the workers
//! behind it, [`workers`]), and the signs of a cache effect (data resident before a read, a
//! device that moved less than the benchmark, a data set that fits in memory), and what the
//! checks know of the machine ([`Machine`]). Computed from the result alone, so saved runs
//! re-check; [`check`] also sets the phase's verdict ([`crate::verdict`]).

mod workers;

pub use crate::machine::{Machine, NETWORK_FS_TYPES};
use crate::share::pct;
use crate::{DeviceIo, PhaseResult, RunStatus};
use iobm_stats::names::{FsyncPolicy, OpName};
use iobm_stats::{aggregate::disagreement, format_bytes, AggregateKind};

/// Aggregates further apart than this (relative) are reported.
pub const AGGREGATE_TOLERANCE: f64 = 0.10;

/// A phase's S3 operations went through iobm's own gateway in the same process.
pub const BUILTIN_GATEWAY_CPU: &str = "served by iobm's built-in gateway in this process: its threads' CPU time is apart (cpu.gateway_s), not in iobm's";
/// The objects a GET read had just been written through the same gateway.
pub const JUST_WRITTEN: &str =
    "the objects were just written: the gateway likely read them from the page cache";
/// The notes documents of schema 1 kept only among their warnings, before phases had `notes`.
pub const LEGACY_NOTES: [&str; 2] = [BUILTIN_GATEWAY_CPU, JUST_WRITTEN];

/// Said of every phase on a file system that is memory.
pub const MEMORY_FS: &str = "memory: the data lives in RAM (tmpfs or ramfs), so these rates are memory rates, not a storage device's, whether O_DIRECT or not";

/// Said of every phase on block devices that are RAM by their driver (`ram`, as
/// [`crate::storage::ram`] names them).
pub fn memory_device(ram: &str) -> String {
    format!("memory: the data lives in RAM ({ram}, by its driver), so these rates are memory rates, not a storage device's, whether O_DIRECT or not")
}

/// Said of buffered writes with one fsync per worker at its end, by several workers.
pub const UNFLUSHED_SNAPSHOTS: &str = "first done and steady state count the bytes other workers had handed to the page cache, not yet flushed by their final fsync (--fsync end); the makespan includes every flush";

/// Warnings for one phase of a run on `machine`: the checks on its records, in a stable order.
pub fn phase_warnings(phase: &PhaseResult, machine: &Machine) -> Vec<String> {
    let mut out = records(phase);
    let moved = phase.bytes();
    let ram = crate::storage::ram(&phase.cache.below);
    if (machine.memory_fs || ram.is_some()) && moved > 0 {
        // No remedy applies: the storage itself is memory.
        out.push(ram.map_or(MEMORY_FS.to_string(), |ram| memory_device(&ram)));
        return out;
    }
    // The counters that are this run's evidence (the layers below, other I/O set aside).
    let storage = crate::storage::judge(phase);
    let device = storage.device.as_ref();
    servers(phase, machine, &mut out);
    file_reads(phase, machine, device, &mut out);
    object_reads(phase, machine, &mut out);
    file_writes(phase, machine, device, &mut out);
    if moved > 0 && phase.operations.iter().all(|o| o.op != OpName::Put) {
        out.extend(storage.warnings.iter().map(ToString::to_string));
    }
    // The servers' own counters, the wire and the line rate.
    out.extend(
        crate::remote::warnings(phase, machine)
            .iter()
            .map(ToString::to_string),
    );
    out
}

/// The checks on the records: aggregates that disagree and the workers behind it, how the
/// phase ended, a paced phase that fell behind, failed operations.
fn records(phase: &PhaseResult) -> Vec<String> {
    let mut out = Vec::new();
    let disagree = disagreement(&phase.aggregates, AGGREGATE_TOLERANCE);
    let uneven = disagree.is_some();
    out.extend(disagree);
    // The workers behind it: those that moved nothing, and those that ran a small part.
    out.extend(workers::named(phase, uneven));
    match phase.status {
        RunStatus::Interrupted => {
            out.push("interrupted: these numbers cover part of the phase".into())
        }
        RunStatus::Failed => out.push(
            "failed: these numbers cover the phase until it stopped for errors (failed operations are not in them)"
                .into(),
        ),
        RunStatus::Complete | RunStatus::Running => {}
    }
    if let Some(pace) = &phase.pace {
        out.extend(pace.warnings(&phase.latency).iter().map(|w| w.to_string()));
    }
    let failed: u64 = phase.errors.iter().map(|e| e.count).sum();
    if phase.status == RunStatus::Complete && failed > 0 {
        out.push(format!(
            "{failed} operations failed and are not in these numbers (see errors)"
        ));
    }
    out
}

/// O_DIRECT bypasses this machine's page cache, not a loop device's backing file's.
fn layered(phase: &PhaseResult) -> bool {
    (phase.cache.below.iter()).any(|b| !b.backing_files.is_empty())
}

/// A server's cache, its CPU or the built-in gateway's bounding the phase, the gateway's page
/// cache serving it.
fn servers(phase: &PhaseResult, machine: &Machine, out: &mut Vec<String>) {
    let moved = phase.bytes();
    let s = &phase.settings;
    // A server's cache, which no client residency shows and O_DIRECT does not bypass; the
    // servers' own counters, where they tell, say more.
    let reads_data = matches!(phase.op, OpName::Read | OpName::Get | OpName::Mixed);
    let servers_told = phase.cache.servers.iter().any(|e| e.unavailable.is_none());
    let dropped = crate::remote::servers_dropped(phase);
    if let Some((server, source)) = machine
        .server_cache()
        .filter(|_| reads_data && moved > 0 && !servers_told && !dropped)
    {
        if s.data_bytes > 0 && s.data_bytes < server {
            out.push(format!(
                "possible server cache: the data set ({}) is smaller than the server's memory ({}, {source}), so the server can serve it from its cache whatever this client's cache holds",
                format_bytes(s.data_bytes),
                format_bytes(server)
            ));
        }
    }
    // The gateway's CPU on this machine: the built-in one's threads, else the counters of
    // gateways on this host.
    let here: Vec<_> = phase
        .cache
        .servers
        .iter()
        .filter(|e| e.same_host && crate::remote::is_gateway(e))
        .collect();
    let gateway_cpu = match phase.cpu.gateway_s {
        Some(s) => Some((s, "its built-in gateway")),
        None if !here.is_empty() => Some((
            here.iter().map(|e| e.cpu_s).sum(),
            if here.len() > 1 {
                "the gateways on this machine (their counters)"
            } else {
                "the gateway on this machine (its counters)"
            },
        )),
        None => None,
    };
    // A phase that held its --rate was bounded by it.
    let held = crate::pace::held(phase);
    if let Some((gateway_s, who)) = gateway_cpu.filter(|_| machine.cpus > 0 && !held) {
        let wall = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
        let used = phase.cpu.user_s + phase.cpu.system_s + gateway_s;
        let available = wall * machine.cpus as f64;
        if available > 0.0 && used >= CPU_BOUND * available {
            out.push(format!(
                "bounded by this machine's CPU, not by the storage: iobm and {who} used {used:.1} of the {available:.1} CPU-s its {} CPUs had in the phase ({:.0}%); give the gateway its own machine (iobm serve) to measure the storage",
                machine.cpus,
                100.0 * used / available
            ));
        }
    }
    let served: u64 = phase.cache.servers.iter().map(|e| e.served_bytes).sum();
    let resident: u64 = phase.cache.servers.iter().map(|e| e.resident_bytes).sum();
    if served > 0 && pct(resident, served) > 10.0 {
        out.push(format!(
            "cache effect: the gateway's page cache held {:.0}% of the {} it served before it read them, so this is {} a memory rate",
            pct(resident, served),
            format_bytes(served),
            if pct(resident, served) >= crate::share::MOST { "mostly" } else { "partly" }
        ));
    }
}

/// A file read's cache effects: residency, the device's share, a data set that fits in RAM.
fn file_reads(
    phase: &PhaseResult,
    machine: &Machine,
    device: Option<&DeviceIo>,
    out: &mut Vec<String>,
) {
    let (moved, s, ram_bytes) = (phase.bytes(), &phase.settings, machine.ram_bytes);
    let layered = layered(phase);
    let cache_hint = "use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM";
    if phase.op == OpName::Read && (!s.direct || layered) && moved > 0 {
        if let Some(resident) = phase.cache.resident_before_bytes {
            if pct(resident, s.data_bytes) > 10.0 {
                out.push(format!(
                    "cache effect: {:.0}% of the data ({} of {}) was in the page cache when the read began, so this is partly a memory rate; {cache_hint}",
                    pct(resident, s.data_bytes),
                    format_bytes(resident),
                    format_bytes(s.data_bytes)
                ));
            }
        }
        if let Some(dev) = device {
            if pct(dev.read_bytes, moved) < 50.0 {
                out.push(format!(
                    "cache effect: the block device {} delivered {} for {} read ({:.0}%); the rest came from a cache",
                    dev.device,
                    format_bytes(dev.read_bytes),
                    format_bytes(moved),
                    pct(dev.read_bytes, moved)
                ));
            }
        } else if !s.direct
            && s.data_bytes < ram_bytes
            && phase.cache.resident_before_bytes.is_none()
        {
            out.push(format!(
                "possible cache effect: the data set ({}) fits in RAM ({}); {cache_hint}",
                format_bytes(s.data_bytes),
                format_bytes(ram_bytes)
            ));
        }
    }
}

/// Object reads: a data set read many times over can come from the server's caches, whose
/// residency no client can see; GETs above the line rate or far above the PUTs.
fn object_reads(phase: &PhaseResult, machine: &Machine, out: &mut Vec<String>) {
    let s = &phase.settings;
    let servers_told = phase.cache.servers.iter().any(|e| e.unavailable.is_none());
    if matches!(phase.op, OpName::Get | OpName::Mixed) && s.data_bytes > 0 {
        let read: u64 = phase
            .operations
            .iter()
            .filter(|o| o.op == OpName::Get)
            .map(|o| o.bytes)
            .sum();
        let passes = read as f64 / s.data_bytes as f64;
        let seconds = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
        if let Some(line) = machine.line_rate_bytes_per_s.filter(|_| seconds > 0.0) {
            let rate = read as f64 / seconds;
            if rate > line as f64 {
                out.push(format!(
                    "impossible over the network: the GETs moved {}/s over the whole phase, above the line rate of {}/s ({:.3} Gbit/s) given with --line-rate; a cache on this side of the network served them",
                    format_bytes(rate as u64),
                    format_bytes(line),
                    line as f64 * 8.0 / 1e9
                ));
            }
        }
        if let Some(put) = machine
            .put_bytes_per_s
            .filter(|_| seconds > 0.0 && !servers_told && !machine.builtin_gateway)
        {
            let rate = read as f64 / seconds;
            if rate > GET_OVER_PUT * put {
                out.push(format!(
                    "possible cache effect: the GETs moved {}/s, {:.1} times the {}/s this run's PUTs stored; a store's reads seldom outrun its writes that far unless a cache serves them",
                    format_bytes(rate as u64),
                    rate / put,
                    format_bytes(put as u64)
                ));
            }
        }
        if passes > 2.0 && !servers_told {
            out.push(format!(
                "possible cache effect: the GETs read the data set ({}) {passes:.1} times over; after the first pass it can come from the server's caches (use more --objects than the server's memory holds)",
                format_bytes(s.data_bytes)
            ));
        }
    }
}

/// A file write's cache effects: snapshots over unflushed bytes, the device's share, no fsync.
fn file_writes(
    phase: &PhaseResult,
    machine: &Machine,
    device: Option<&DeviceIo>,
    out: &mut Vec<String>,
) {
    let (moved, s, ram_bytes) = (phase.bytes(), &phase.settings, machine.ram_bytes);
    let layered = layered(phase);
    let snapshots_given = [AggregateKind::FirstDone, AggregateKind::SteadyState]
        .iter()
        .any(|&k| phase.aggregate(k).is_some());
    if phase.op == OpName::Write
        && !s.direct
        && s.fsync == FsyncPolicy::End
        && phase.workers.len() > 1
        && snapshots_given
    {
        out.push(UNFLUSHED_SNAPSHOTS.to_string());
    }
    if phase.op == OpName::Write && (!s.direct || layered) && moved > 0 {
        match device {
            Some(dev) if pct(dev.written_bytes, moved) < 50.0 => out.push(format!(
                "cache effect: only {} of the {} written reached the block device {} during the phase; the rest stayed in or was overwritten in the page cache (use --direct, or --fsync end with a data set that is written once)",
                format_bytes(dev.written_bytes),
                format_bytes(moved),
                dev.device
            )),
            None if s.fsync == FsyncPolicy::Never && moved < ram_bytes => out.push(
                "possible cache effect: without --fsync or --direct, written data may still be in the page cache when the phase ends".into(),
            ),
            _ => {}
        }
    }
}

/// The phase's warnings (its checks, then its notes) and its cache verdict, on `machine`.
pub fn check(phase: &mut PhaseResult, machine: &Machine) {
    phase.warnings = phase_warnings(phase, machine);
    phase.warnings.extend(phase.notes.iter().cloned());
    phase.cache.verdict = Some(crate::verdict::verdict(phase, machine));
}

/// GETs faster than this many times the run's PUT rate, from a server that does not count for
/// itself, are flagged.
pub const GET_OVER_PUT: f64 = 5.0;

/// Share of the CPUs' time, client and built-in gateway together, from which a phase is
/// called CPU-bound.
pub const CPU_BOUND: f64 = 0.75;

#[cfg(test)]
pub(crate) mod tests;
