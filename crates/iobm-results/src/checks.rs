//! Checks on a phase's numbers that become warnings: aggregates that disagree (and the workers
//! behind it, [`workers`]), and the signs of a cache effect (data resident before a read, a
//! device that moved less than the benchmark, a data set that fits in memory), and what the
//! checks know of the machine ([`Machine`]). Computed from the result alone, so saved runs
//! re-check; [`check`] also sets the phase's verdict ([`crate::verdict`]).

mod warning;
mod workers;

pub use warning::{FileWarning, GatewayCpu, ServerWarning, Warning};
pub use workers::{Named, Uneven};

pub use crate::machine::{Machine, NETWORK_FS_TYPES};
use crate::share::pct;
use crate::{DeviceIo, PhaseResult, RunStatus};
use iobm_stats::names::{FsyncPolicy, OpName};
use iobm_stats::{aggregate::disagreement, AggregateKind};

/// Aggregates further apart than this (relative) are reported.
pub const AGGREGATE_TOLERANCE: f64 = 0.10;

/// A phase's S3 operations went through iobm's own gateway in the same process.
pub const BUILTIN_GATEWAY_CPU: &str = "served by iobm's built-in gateway in this process: its threads' CPU time is apart (cpu.gateway_s), not in iobm's";
/// The objects a GET read had just been written through the same gateway.
pub const JUST_WRITTEN: &str =
    "the objects were just written: the gateway likely read them from the page cache";
/// The notes documents of schema 1 kept only among their warnings, before phases had `notes`.
pub const LEGACY_NOTES: [&str; 2] = [BUILTIN_GATEWAY_CPU, JUST_WRITTEN];

/// Warnings for one phase of a run on `machine`, as the document holds them: the one place
/// [`Warning`]s become text.
pub fn phase_warnings(phase: &PhaseResult, machine: &Machine) -> Vec<String> {
    warnings(phase, machine)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Warnings for one phase of a run on `machine`: the checks on its records, in a stable order.
pub fn warnings(phase: &PhaseResult, machine: &Machine) -> Vec<Warning> {
    let mut out = records(phase);
    let moved = phase.bytes();
    let ram = crate::storage::ram(&phase.cache.below);
    if (machine.memory_fs || ram.is_some()) && moved > 0 {
        // No remedy applies: the storage itself is memory.
        out.push(ram.map_or(Warning::MemoryFs, |ram| Warning::MemoryDevice { ram }));
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
        out.extend(storage.warnings.iter().cloned().map(Warning::Storage));
    }
    // The servers' own counters, the wire and the line rate.
    out.extend(
        crate::remote::warnings(phase, machine)
            .into_iter()
            .map(Warning::Remote),
    );
    out
}

/// The checks on the records: aggregates that disagree and the workers behind it, how the
/// phase ended, a paced phase that fell behind, failed operations.
fn records(phase: &PhaseResult) -> Vec<Warning> {
    let mut out = Vec::new();
    let disagree = disagreement(&phase.aggregates, AGGREGATE_TOLERANCE);
    let uneven = disagree.is_some();
    out.extend(disagree.map(Warning::Disagree));
    // The workers behind it: those that moved nothing, and those that ran a small part.
    out.extend(workers::named(phase, uneven).map(Warning::Uneven));
    match phase.status {
        RunStatus::Interrupted => out.push(Warning::Interrupted),
        RunStatus::Failed => out.push(Warning::Failed),
        RunStatus::Complete | RunStatus::Running => {}
    }
    if let Some(pace) = &phase.pace {
        out.extend(pace.warnings(&phase.latency).into_iter().map(Warning::Pace));
    }
    let count: u64 = phase.errors.iter().map(|e| e.count).sum();
    if phase.status == RunStatus::Complete && count > 0 {
        out.push(Warning::FailedOperations { count });
    }
    out
}

/// O_DIRECT bypasses this machine's page cache, not a loop device's backing file's.
fn layered(phase: &PhaseResult) -> bool {
    (phase.cache.below.iter()).any(|b| !b.backing_files.is_empty())
}

/// A server's cache, its CPU or the built-in gateway's bounding the phase, the gateway's page
/// cache serving it.
fn servers(phase: &PhaseResult, machine: &Machine, out: &mut Vec<Warning>) {
    let moved = phase.bytes();
    let s = &phase.settings;
    // A server's cache, which no client residency shows and O_DIRECT does not bypass; the
    // servers' own counters, where they tell, say more.
    let reads_data = matches!(
        phase.op,
        OpName::Read | OpName::Get | OpName::Mixed | OpName::Versioned
    );
    let servers_told = phase.cache.servers.iter().any(|e| e.unavailable.is_none());
    let dropped = crate::remote::servers_dropped(phase);
    if let Some((server, source)) = machine
        .server_cache()
        .filter(|_| reads_data && moved > 0 && !servers_told && !dropped)
    {
        if s.data_bytes > 0 && s.data_bytes < server {
            out.push(Warning::Server(ServerWarning::ServerCache {
                data: s.data_bytes,
                server,
                source,
            }));
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
        Some(s) => Some((s, GatewayCpu::BuiltIn)),
        None if !here.is_empty() => Some((
            here.iter().map(|e| e.cpu_s).sum(),
            if here.len() > 1 {
                GatewayCpu::SeveralHere
            } else {
                GatewayCpu::OneHere
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
            out.push(Warning::Server(ServerWarning::CpuBound {
                who,
                used,
                available,
                cpus: machine.cpus,
            }));
        }
    }
    let served: u64 = phase.cache.servers.iter().map(|e| e.served_bytes).sum();
    let resident: u64 = phase.cache.servers.iter().map(|e| e.resident_bytes).sum();
    if served > 0 && pct(resident, served) > 10.0 {
        out.push(Warning::Server(ServerWarning::GatewayCache {
            resident,
            served,
        }));
    }
}

/// A file read's cache effects: residency, the device's share, a data set that fits in RAM.
fn file_reads(
    phase: &PhaseResult,
    machine: &Machine,
    device: Option<&DeviceIo>,
    out: &mut Vec<Warning>,
) {
    let (moved, s, ram_bytes) = (phase.bytes(), &phase.settings, machine.ram_bytes);
    let layered = layered(phase);
    if phase.op == OpName::Read && (!s.direct || layered) && moved > 0 {
        if let Some(resident) = phase.cache.resident_before_bytes {
            if pct(resident, s.data_bytes) > 10.0 {
                out.push(Warning::Files(FileWarning::Resident {
                    resident,
                    data: s.data_bytes,
                }));
            }
        }
        if let Some(dev) = device {
            if pct(dev.read_bytes, moved) < 50.0 {
                out.push(Warning::Files(FileWarning::DeviceDelivered {
                    device: dev.device.clone(),
                    read: dev.read_bytes,
                    moved,
                }));
            }
        } else if !s.direct
            && s.data_bytes < ram_bytes
            && phase.cache.resident_before_bytes.is_none()
        {
            out.push(Warning::Files(FileWarning::FitsInRam {
                data: s.data_bytes,
                ram: ram_bytes,
            }));
        }
    }
}

/// Object reads: a data set read many times over can come from the server's caches, whose
/// residency no client can see; GETs above the line rate or far above the PUTs.
fn object_reads(phase: &PhaseResult, machine: &Machine, out: &mut Vec<Warning>) {
    let s = &phase.settings;
    let servers_told = phase.cache.servers.iter().any(|e| e.unavailable.is_none());
    let reads = matches!(phase.op, OpName::Get | OpName::Mixed | OpName::Versioned);
    if reads && s.data_bytes > 0 {
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
                out.push(Warning::Server(ServerWarning::OverTheLine {
                    rate: rate as u64,
                    line,
                }));
            }
        }
        if let Some(put) = machine
            .put_bytes_per_s
            .filter(|_| seconds > 0.0 && !servers_told && !machine.builtin_gateway)
        {
            let rate = read as f64 / seconds;
            if rate > GET_OVER_PUT * put {
                out.push(Warning::Server(ServerWarning::GetsOutranPuts { rate, put }));
            }
        }
        if passes > 2.0 && !servers_told {
            out.push(Warning::Server(ServerWarning::ReadOver {
                data: s.data_bytes,
                passes,
            }));
        }
    }
}

/// A file write's cache effects: snapshots over unflushed bytes, the device's share, no fsync.
fn file_writes(
    phase: &PhaseResult,
    machine: &Machine,
    device: Option<&DeviceIo>,
    out: &mut Vec<Warning>,
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
        out.push(Warning::Files(FileWarning::UnflushedSnapshots));
    }
    if phase.op == OpName::Write && (!s.direct || layered) && moved > 0 {
        match device {
            Some(dev) if pct(dev.written_bytes, moved) < 50.0 => {
                out.push(Warning::Files(FileWarning::DeviceTook {
                    device: dev.device.clone(),
                    written: dev.written_bytes,
                    moved,
                }))
            }
            None if s.fsync == FsyncPolicy::Never && moved < ram_bytes => {
                out.push(Warning::Files(FileWarning::NoFsync))
            }
            _ => {}
        }
    }
}

/// The phase's warnings (its checks, then its notes) and its cache verdict, on `machine`.
pub fn check(phase: &mut PhaseResult, machine: &Machine) {
    phase.warnings = phase_warnings(phase, machine);
    phase.warnings.extend(phase.notes.iter().cloned());
    phase.cache.verdict = Some(crate::verdict::verdict(phase, machine));
    let path = crate::gds::judge(phase);
    if let Some(gds) = &mut phase.gds {
        gds.path = path;
    }
}

/// GETs faster than this many times the run's PUT rate, from a server that does not count for
/// itself, are flagged.
pub const GET_OVER_PUT: f64 = 5.0;

/// Share of the CPUs' time, client and built-in gateway together, from which a phase is
/// called CPU-bound.
pub const CPU_BOUND: f64 = 0.75;

#[cfg(test)]
pub(crate) mod tests;
