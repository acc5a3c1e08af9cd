//! What beyond the client tells of a phase: the storage servers' own counters (node_exporter's
//! devices, page cache, memory and CPU), the client's network interfaces against what the
//! phase moved, and the line rate; what the verdict's rules (`verdict/rules/`) judge by, and the
//! warnings they give where the storage is across a network.

use crate::machine::Machine;
use crate::server::{GATEWAY, NODE_EXPORTER};
use crate::share::{pct, Margin};
use crate::{PhaseResult, ServerEvidence};
use iobm_stats::names::OpName;

/// A server's CPUs busy this share of their time (or more) bounded the phase.
pub const SERVER_CPU_BOUND: f64 = 0.90;

/// A server's CPU time below this many CPU-seconds over a phase is too few ticks of its
/// counters (1/100 s each) to judge how busy it was.
pub const SERVER_CPU_MIN_S: f64 = 2.0;

/// Whether the entry is node_exporter's (not an iobm gateway's own counters).
pub fn is_node(e: &ServerEvidence) -> bool {
    e.source == NODE_EXPORTER
}

/// Whether the entry is an iobm gateway's counters (documents from before say no source).
pub fn is_gateway(e: &ServerEvidence) -> bool {
    e.source.is_empty() || e.source == GATEWAY
}

/// Whether the phase's storage is across a network from this client: a network file system,
/// or an S3 server other than the built-in gateway. Only then are the servers' counters and
/// the wire evidence of it (a local file system's server is this machine).
pub fn remote(phase: &PhaseResult, machine: &Machine) -> bool {
    let object =
        (phase.op.on_objects() || phase.op == OpName::Delete) && !phase.operations.is_empty();
    machine.network_fs || (object && !machine.builtin_gateway)
}

/// The servers' caches were dropped before the phase (`--server-drop-cmd`).
pub fn servers_dropped(phase: &PhaseResult) -> bool {
    phase.settings.cache_dropped.servers
}

/// Bytes the phase read and wrote (GETs and PUTs for an object phase).
pub fn read_and_written(phase: &PhaseResult) -> (u64, u64) {
    let moved = phase.bytes();
    let of = |ops: &[OpName]| phase.bytes_of(ops);
    match phase.op {
        op if op.reads_blocks() => (moved, 0),
        op if op.writes_blocks() => (0, moved),
        OpName::Rewrite => (moved, moved),
        OpName::Readwrite => (of(&[OpName::Read]), of(&[OpName::Write])),
        _ => (of(&[OpName::Get]), of(&[OpName::Put, OpName::Multipart])),
    }
}

/// One way a phase moved bytes, as the servers' devices count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    Read,
    Write,
}

impl Way {
    /// Both ways, reads first.
    pub const BOTH: [Way; 2] = [Way::Read, Way::Write];

    /// What the servers' devices did.
    pub fn did(self) -> &'static str {
        match self {
            Way::Read => "read",
            Way::Write => "wrote",
        }
    }

    /// What the phase did with those bytes, seen from the servers.
    pub fn moved(self) -> &'static str {
        match self {
            Way::Read => "served",
            Way::Write => "written",
        }
    }

    /// What the servers themselves may add to the devices' bytes beyond the phase's, besides
    /// other I/O: a write's copies on a mirror, its parity.
    pub fn besides(self) -> &'static str {
        match self {
            Way::Read => "",
            Way::Write => " (or a mirror's copies, parity)",
        }
    }

    /// Of (read, written), this way's bytes.
    pub fn of(self, (read, written): (u64, u64)) -> u64 {
        match self {
            Way::Read => read,
            Way::Write => written,
        }
    }
}

/// What the servers' node_exporters counted over a phase, added up over those that answered.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTotals {
    pub read: u64,
    pub written: u64,
    /// The page caches' growth over the phase (negative: they shrank).
    pub cache_growth: i128,
    /// How many servers answered with device counters.
    pub servers: usize,
    /// Their data devices, as "host: dev,dev".
    pub devices: Vec<String>,
}

/// The node_exporter evidence of the phase, from the servers that answered and have data
/// devices; None when none did.
pub fn node_totals(phase: &PhaseResult) -> Option<NodeTotals> {
    let told: Vec<&ServerEvidence> = phase
        .cache
        .servers
        .iter()
        .filter(|e| is_node(e) && e.unavailable.is_none() && e.device_read_bytes.is_some())
        .collect();
    if told.is_empty() {
        return None;
    }
    Some(NodeTotals {
        read: told.iter().filter_map(|e| e.device_read_bytes).sum(),
        written: told.iter().filter_map(|e| e.device_written_bytes).sum(),
        cache_growth: told
            .iter()
            .filter_map(|e| {
                Some(e.page_cache_after_bytes? as i128 - e.page_cache_before_bytes? as i128)
            })
            .sum(),
        servers: told.len(),
        devices: told
            .iter()
            .map(|e| {
                let host = crate::wire::url_host(&e.endpoint).unwrap_or_else(|| e.endpoint.clone());
                format!("{host}: {}", e.device.as_deref().unwrap_or("-"))
            })
            .collect(),
    })
}

/// The servers' memory as node_exporter reports it (added up over the servers, each host
/// once), else what the machine knows or guesses ([`Machine::server_cache`]).
pub fn server_memory(phase: &PhaseResult, machine: &Machine) -> Option<(u64, &'static str)> {
    if !remote(phase, machine) {
        return machine.server_cache();
    }
    let mut hosts: Vec<String> = Vec::new();
    let mut total = 0;
    for e in phase
        .cache
        .servers
        .iter()
        .filter(|e| e.unavailable.is_none())
    {
        let (Some(memory), Some(host)) = (e.memory_bytes, crate::wire::url_host(&e.endpoint))
        else {
            continue;
        };
        if !hosts.contains(&host) {
            hosts.push(host);
            total += memory;
        }
    }
    if total > 0 {
        return Some((total, "node_exporter's MemTotal"));
    }
    machine.server_cache()
}

/// The bytes the client's interfaces towards the storage received and sent, and their names;
/// None when the phase has no such counters.
pub fn wire_totals(phase: &PhaseResult) -> Option<(u64, u64, String)> {
    let towards: Vec<_> = phase
        .cache
        .wire
        .iter()
        .filter(|n| n.towards_storage)
        .collect();
    if towards.is_empty() {
        return None;
    }
    let mut names: Vec<&str> = towards.iter().map(|n| n.nic.as_str()).collect();
    names.sort();
    names.dedup();
    Some((
        towards.iter().map(|n| n.received_bytes).sum(),
        towards.iter().map(|n| n.sent_bytes).sum(),
        names.join(", "),
    ))
}

/// The busiest client host's rate over the phase when it is above the line rate: (host, bytes
/// per second, line rate). The line rate is each client's own link.
pub fn over_the_line(phase: &PhaseResult, machine: &Machine) -> Option<(String, f64, u64)> {
    let line = machine.line_rate_bytes_per_s?;
    let seconds = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
    if seconds <= 0.0 {
        return None;
    }
    let mut hosts: Vec<(String, u64)> = Vec::new();
    for w in &phase.workers {
        match hosts.iter_mut().find(|(h, _)| *h == w.host) {
            Some((_, b)) => *b += w.span.bytes,
            None => hosts.push((w.host.clone(), w.span.bytes)),
        }
    }
    let (host, bytes) = hosts.into_iter().max_by_key(|(_, b)| *b)?;
    let rate = bytes as f64 / seconds;
    (rate > line as f64).then_some((host, rate, line))
}

/// The warnings from beyond the client: servers that did not answer, a server's CPU that
/// bounded the phase, a rate above the line rate of a network file system, and the servers'
/// devices or the wire showing that a cache moved most of the bytes.
pub fn warnings(phase: &PhaseResult, machine: &Machine) -> Vec<RemoteWarning> {
    let mut out = Vec::new();
    for e in &phase.cache.servers {
        if let Some(why) = &e.unavailable {
            out.push(RemoteWarning::Unanswered {
                endpoint: e.endpoint.clone(),
                why: why.clone(),
            });
        }
    }
    if !remote(phase, machine) {
        return out;
    }
    out.extend(server_cpu(phase));
    let (read, written) = read_and_written(phase);
    if machine.network_fs {
        if let Some((host, rate, line)) = over_the_line(phase, machine) {
            let rate = rate as u64;
            out.push(RemoteWarning::OverTheLine { host, rate, line });
        }
    }
    if let Some((received, sent, nics)) = wire_totals(phase) {
        if read > 0 && pct(received, read) < 50.0 {
            let nics = nics.clone();
            out.push(RemoteWarning::WireReceived {
                received,
                read,
                nics,
            });
        }
        if written > 0 && pct(sent, written) < 50.0 {
            out.push(RemoteWarning::WireSent {
                sent,
                written,
                nics,
            });
        }
    }
    if let Some(t) = node_totals(phase) {
        for way in Way::BOTH {
            let (counted, moved) = (way.of((t.read, t.written)), way.of((read, written)));
            if moved > 0 && Margin::SERVER.share(counted, moved).is_none() {
                out.push(RemoteWarning::OtherServerIo {
                    way,
                    counted,
                    moved,
                });
            }
        }
        if read > 0 && pct(t.read, read) < 50.0 {
            out.push(RemoteWarning::ServersRead {
                read: t.read,
                served: read,
            });
        }
        if written > 0 && pct(t.written, written) < 50.0 {
            out.push(RemoteWarning::ServersWrote {
                wrote: t.written,
                written,
            });
        }
    }
    out
}

/// The servers whose CPUs were busy enough to bound the phase (none bounded a phase that held
/// its --rate: its rate did).
fn server_cpu(phase: &PhaseResult) -> Vec<RemoteWarning> {
    let mut out = Vec::new();
    if crate::pace::held(phase) {
        return out;
    }
    for e in phase
        .cache
        .servers
        .iter()
        .filter(|e| e.unavailable.is_none())
    {
        let (Some(busy), Some(all)) = (e.cpu_busy_s, e.cpu_all_s) else {
            continue;
        };
        if all >= SERVER_CPU_MIN_S && busy / all >= SERVER_CPU_BOUND {
            out.push(RemoteWarning::ServerCpu {
                endpoint: e.endpoint.clone(),
                same_host: e.same_host,
                busy_pct: 100.0 * busy / all,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
mod warning;
pub use warning::RemoteWarning;
