//! Checks on a phase's numbers that become warnings: aggregates that disagree, and the signs
//! of a cache effect (data resident before a read, a device that moved less than the benchmark,
//! a data set that fits in memory), and what the checks know of the machine ([`Machine`]).
//! Computed from the result alone, so saved runs re-check; [`check`] also sets the phase's
//! verdict ([`crate::verdict`]).

use crate::{PhaseResult, RunStatus};
use iobm_stats::names::ops;
use iobm_stats::{aggregate::disagreement, format_bytes, AggregateKind};

/// Aggregates further apart than this (relative) are reported.
pub const AGGREGATE_TOLERANCE: f64 = 0.10;

pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

/// A phase's S3 operations went through iobm's own gateway in the same process.
pub const BUILTIN_GATEWAY_CPU: &str = "served by iobm's built-in gateway in this process: its threads' CPU time is apart (cpu.gateway_s), not in iobm's";
/// The objects a GET read had just been written through the same gateway.
pub const JUST_WRITTEN: &str =
    "the objects were just written: the gateway likely read them from the page cache";
/// The notes documents of schema 1 kept only among their warnings, before phases had `notes`.
pub const LEGACY_NOTES: [&str; 2] = [BUILTIN_GATEWAY_CPU, JUST_WRITTEN];

/// What the checks know of the machine the data lived on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Machine {
    pub ram_bytes: u64,
    /// The directory measured is in RAM (tmpfs, ramfs): every rate is a memory rate.
    pub memory_fs: bool,
    /// The network's speed to the storage (S3 endpoints, a network file system's servers) as
    /// stated with --line-rate or read from the link, bytes per second.
    pub line_rate_bytes_per_s: Option<u64>,
    /// The directory is on a network file system, whose server has a cache of its own.
    pub network_fs: bool,
    /// The server's memory as stated with --server-ram.
    pub server_ram_bytes: Option<u64>,
    /// The S3 endpoint was iobm's built-in gateway on this machine (its memory is `ram_bytes`).
    pub builtin_gateway: bool,
    /// CPUs iobm could use (0: not known).
    pub cpus: u32,
    /// The fastest PUT rate of the run (a put phase, the puts of a mixed one, or the upload of
    /// a GET's data set), bytes per second.
    pub put_bytes_per_s: Option<f64>,
    /// The data set read was kept by an earlier run (`--reuse`), not uploaded just before.
    pub reused_data_set: bool,
}

/// File systems recognised by type as network file systems (a server cache is possible).
pub const NETWORK_FS_TYPES: [&str; 9] = [
    "nfs",
    "nfs4",
    "lustre",
    "beegfs",
    "gpfs",
    "ceph",
    "fuse.ceph",
    "fuse.glusterfs",
    "cifs",
];

impl Machine {
    /// A machine with this much RAM whose storage is not memory.
    pub fn with_ram(ram_bytes: u64) -> Machine {
        Machine {
            ram_bytes,
            memory_fs: false,
            line_rate_bytes_per_s: None,
            network_fs: false,
            server_ram_bytes: None,
            builtin_gateway: false,
            cpus: 0,
            put_bytes_per_s: None,
            reused_data_set: false,
        }
    }

    /// The memory of the server behind the storage, and where that figure comes from: stated
    /// with --server-ram, this machine's for the built-in gateway, twice this client's for a
    /// network file system; None for local storage.
    pub fn server_cache(&self) -> Option<(u64, &'static str)> {
        match (self.server_ram_bytes, self.builtin_gateway, self.network_fs) {
            (Some(stated), _, _) => Some((stated, "--server-ram")),
            (None, true, _) => Some((self.ram_bytes, "the built-in gateway's, this machine's RAM")),
            (None, false, true) => Some((
                2 * self.ram_bytes,
                "assumed twice this client's RAM; state it with --server-ram",
            )),
            (None, false, false) => None,
        }
    }

    /// The machine of a run: its environment, and what the user stated about its network.
    pub fn of(run: &crate::RunResult) -> Machine {
        let environment = &run.environment;
        let fs_type = environment.storage.as_ref().map(|s| s.fs_type.as_str());
        Machine {
            network_fs: fs_type.is_some_and(|t| NETWORK_FS_TYPES.contains(&t)),
            server_ram_bytes: run.config.server_ram_bytes,
            // The built-in gateway's bytes cross no network; documents from before kept an
            // S3 run's line rate among its S3 settings.
            line_rate_bytes_per_s: match run.config.s3.as_ref() {
                Some(s) if s.builtin_gateway => None,
                s3 => run
                    .config
                    .line_rate_bytes_per_s
                    .or(s3.and_then(|s| s.line_rate_bytes_per_s)),
            },
            builtin_gateway: run.config.s3.as_ref().is_some_and(|s| s.builtin_gateway),
            reused_data_set: run.config.s3.as_ref().is_some_and(|s| s.reused.is_some()),
            cpus: environment.cpus,
            put_bytes_per_s: run
                .phases
                .iter()
                .flat_map(|p| &p.operations)
                .filter(|o| matches!(o.op.as_str(), ops::PUT | ops::MULTIPART))
                .map(|o| o.bytes_per_s)
                .chain(run.config.s3.as_ref().and_then(|s| s.upload_bytes_per_s))
                .filter(|r| *r > 0.0)
                .reduce(f64::max),
            ram_bytes: environment.ram_bytes,
            memory_fs: environment
                .storage
                .as_ref()
                .is_some_and(|s| matches!(s.fs_type.as_str(), "tmpfs" | "ramfs")),
        }
    }
}

/// Said of every phase on a file system that is memory.
pub const MEMORY_FS: &str = "memory: the data lives in RAM (tmpfs or ramfs), so these rates are memory rates, not a storage device's, whether O_DIRECT or not";

/// Said of buffered writes with one fsync per worker at its end, by several workers.
pub const UNFLUSHED_SNAPSHOTS: &str = "first done and steady state count the bytes other workers had handed to the page cache, not yet flushed by their final fsync (--fsync end); the makespan includes every flush";

/// Warnings for one phase of a run on `machine`: the checks on its records, in a stable order.
pub fn phase_warnings(phase: &PhaseResult, machine: &Machine) -> Vec<String> {
    let ram_bytes = machine.ram_bytes;
    let mut out = Vec::new();
    if let Some(w) = disagreement(&phase.aggregates, AGGREGATE_TOLERANCE) {
        out.push(w);
    }
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
    let failed: u64 = phase.errors.iter().map(|e| e.count).sum();
    if phase.status == RunStatus::Complete && failed > 0 {
        out.push(format!(
            "{failed} operations failed and are not in these numbers (see errors)"
        ));
    }
    let moved = phase.bytes();
    let s = &phase.settings;
    // The counters that are this run's evidence (the layers below, other I/O set aside).
    let storage = crate::storage::judge(phase);
    let device = storage.device.as_ref();
    // O_DIRECT bypasses this machine's page cache, not a loop device's backing file's.
    let layered = phase
        .cache
        .below
        .iter()
        .any(|b| !b.backing_files.is_empty());
    let cache_hint = "use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM";
    if machine.memory_fs && moved > 0 {
        // No remedy applies: the storage itself is memory.
        out.push(MEMORY_FS.to_string());
        return out;
    }
    // A server's cache, which no client residency shows and O_DIRECT does not bypass; the
    // servers' own counters, where they tell, say more.
    let reads_data = matches!(phase.op.as_str(), "read" | "get" | "mixed");
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
    if let Some((gateway_s, who)) = gateway_cpu.filter(|_| machine.cpus > 0) {
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
            if pct(resident, served) >= crate::verdict::MOST { "mostly" } else { "partly" }
        ));
    }
    if phase.op == "read" && (!s.direct || layered) && moved > 0 {
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
    // Object reads: a data set read many times over can come from the server's caches, whose
    // residency no client can see.
    if matches!(phase.op.as_str(), "get" | "mixed") && s.data_bytes > 0 {
        let read: u64 = phase
            .operations
            .iter()
            .filter(|o| o.op == "get")
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
    let snapshots_given = [AggregateKind::FirstDone, AggregateKind::SteadyState]
        .iter()
        .any(|&k| phase.aggregate(k).is_some());
    if phase.op == "write"
        && !s.direct
        && s.fsync == "end"
        && phase.workers.len() > 1
        && snapshots_given
    {
        out.push(UNFLUSHED_SNAPSHOTS.to_string());
    }
    if phase.op == "write" && (!s.direct || layered) && moved > 0 {
        match device {
            Some(dev) if pct(dev.written_bytes, moved) < 50.0 => out.push(format!(
                "cache effect: only {} of the {} written reached the block device {} during the phase; the rest stayed in or was overwritten in the page cache (use --direct, or --fsync end with a data set that is written once)",
                format_bytes(dev.written_bytes),
                format_bytes(moved),
                dev.device
            )),
            None if s.fsync == "never" && moved < ram_bytes => out.push(
                "possible cache effect: without --fsync or --direct, written data may still be in the page cache when the phase ends".into(),
            ),
            _ => {}
        }
    }
    if moved > 0 && phase.operations.iter().all(|o| o.op != "put") {
        out.extend(storage.warnings);
    }
    // The servers' own counters, the wire and the line rate.
    out.extend(crate::remote::warnings(phase, machine));
    out
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
pub(crate) mod tests {
    use super::*;
    use crate::{
        CacheEvidence, CpuUsage, DeviceIo, Latency, OperationResult, PhaseSettings, Series,
        WorkerResult,
    };
    use iobm_stats::{aggregates, Histogram, Progress, WorkerSpan};

    pub(crate) const MIB: u64 = 1 << 20;

    pub(crate) fn phase(op: &str, bytes: [u64; 2], ends: [u64; 2]) -> PhaseResult {
        let workers: Vec<WorkerResult> = (0..2)
            .map(|i| WorkerResult {
                worker: i as u32,
                rank: 0,
                host: "h".into(),
                span: WorkerSpan {
                    start_ns: 0,
                    end_ns: ends[i],
                    bytes: bytes[i],
                    ops: bytes[i] / MIB,
                    at_all_started: Progress::default(),
                    at_first_done: Progress {
                        bytes: bytes[i] * ends[0].min(ends[1]) / ends[i],
                        ops: 0,
                    },
                    ..WorkerSpan::default()
                },
                final_sync_ns: 0,
                verify_ns: 0,
                series: Series {
                    bytes: vec![bytes[i]],
                    ops: vec![bytes[i] / MIB],
                    ..Series::new(std::time::Duration::from_secs(1))
                },
                endpoint: None,
            })
            .collect();
        let spans: Vec<_> = workers.iter().map(|w| w.span).collect();
        PhaseResult {
            name: op.into(),
            op: op.into(),
            status: RunStatus::Complete,
            settings: PhaseSettings {
                block_bytes: MIB,
                pattern: "sequential".into(),
                fsync: "never".into(),
                direct: false,
                engine: "sync".into(),
                iodepth: 1,
                drop_cache: false,
                cache_dropped: "nothing".into(),
                duration_s: None,
                ramp_s: None,
                verify: false,
                data_bytes: bytes[0] + bytes[1],
            },
            start_ns: 0,
            end_ns: ends[0].max(ends[1]),
            workers,
            latency: Latency {
                measures: "test".into(),
                mean_ns: None,
                p50_ns: None,
                p90_ns: None,
                p99_ns: None,
                p999_ns: None,
                max_ns: None,
                histogram: Histogram::new().to_data(),
            },
            aggregates: aggregates(&spans),
            cpu: CpuUsage {
                user_s: 0.0,
                system_s: 0.0,
                cpu_s_per_gib: None,
                gateway_s: None,
            },
            cache: CacheEvidence {
                resident_before_bytes: None,
                device: None,
                own_io: None,
                below: Vec::new(),
                servers: Vec::new(),
                verdict: None,
                wire: Vec::new(),
            },
            errors: Vec::new(),
            warnings: Vec::new(),
            notes: Vec::new(),
            offered: None,
            operations: Vec::new(),
            gather_s: None,
            series: None,
            rank_series: Vec::new(),
            endpoint_series: Vec::new(),
            worker_series_detached: false,
            detached: Default::default(),
        }
    }

    pub(crate) const RAM: u64 = 1 << 40;

    /// Whether a warning of the phase on this machine begins with `prefix`.
    pub(crate) fn says(p: &PhaseResult, machine: &Machine, prefix: &str) -> bool {
        phase_warnings(p, machine)
            .iter()
            .any(|w| w.starts_with(prefix))
    }

    #[test]
    fn even_workers_on_a_device_that_moved_everything_need_no_warning() {
        let mut p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        p.cache.resident_before_bytes = Some(0);
        p.cache.device = Some(DeviceIo {
            device: "8:0".into(),
            read_bytes: 200 * MIB,
            written_bytes: 0,
        });
        assert!(
            phase_warnings(&p, &Machine::with_ram(RAM)).is_empty(),
            "{:?}",
            phase_warnings(&p, &Machine::with_ram(RAM))
        );
    }

    #[test]
    fn uneven_workers_are_reported() {
        let mut p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 2_000_000_000],
        );
        p.cache.resident_before_bytes = Some(0);
        let w = phase_warnings(&p, &Machine::with_ram(0));
        assert!(
            w.iter().any(|w| w.starts_with("aggregates differ")),
            "{w:?}"
        );
    }

    #[test]
    fn resident_data_and_a_quiet_device_mean_a_cache_effect() {
        let mut p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        p.cache.resident_before_bytes = Some(150 * MIB);
        p.cache.device = Some(DeviceIo {
            device: "8:0".into(),
            read_bytes: 10 * MIB,
            written_bytes: 0,
        });
        let w = phase_warnings(&p, &Machine::with_ram(RAM));
        assert!(w.iter().any(|w| w.contains("75% of the data")), "{w:?}");
        assert!(w.iter().any(|w| w.contains("delivered 10.00 MiB")), "{w:?}");
        // O_DIRECT reads bypass the cache: nothing to warn about.
        p.settings.direct = true;
        assert!(phase_warnings(&p, &Machine::with_ram(RAM)).is_empty());
    }

    #[test]
    fn data_that_fits_in_ram_without_evidence_is_flagged() {
        let p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        let w = phase_warnings(&p, &Machine::with_ram(RAM));
        assert!(w.iter().any(|w| w.contains("fits in RAM")), "{w:?}");
        assert!(phase_warnings(&p, &Machine::with_ram(100 * MIB)).is_empty());
    }

    #[test]
    fn memory_file_systems_are_said_to_be_memory_with_no_other_advice() {
        let p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        let memory = Machine {
            memory_fs: true,
            ..Machine::with_ram(RAM)
        };
        assert_eq!(phase_warnings(&p, &memory), vec![MEMORY_FS.to_string()]);
    }

    #[test]
    fn writes_that_never_reached_the_device_are_flagged() {
        let mut p = phase(
            "write",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        p.settings.fsync = "end".into();
        p.cache.device = Some(DeviceIo {
            device: "8:0".into(),
            read_bytes: 0,
            written_bytes: 20 * MIB,
        });
        let w = phase_warnings(&p, &Machine::with_ram(RAM));
        assert!(
            w.iter().any(|w| w.contains("reached the block device")),
            "{w:?}"
        );
        p.status = RunStatus::Failed;
        assert!(phase_warnings(&p, &Machine::with_ram(RAM))
            .iter()
            .any(|w| w.starts_with("failed")));
    }

    #[test]
    fn gets_faster_than_the_stated_line_rate_are_flagged() {
        // 200 MiB of GETs in one second.
        let mut p = phase(
            "get",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        let get = |bytes| OperationResult {
            op: "get".into(),
            ops: 200,
            bytes,
            errors: 0,
            retried: 0,
            keys: 0,
            ops_per_s: 200.0,
            bytes_per_s: bytes as f64,
            latency: p.latency.clone(),
            ttfb: None,
            series: None,
        };
        p.operations = vec![get(200 * MIB)];
        p.settings.data_bytes = 1 << 40;
        let over_the_line = |line| {
            let machine = Machine {
                line_rate_bytes_per_s: line,
                ..Machine::with_ram(RAM)
            };
            says(&p, &machine, "impossible over the network")
        };
        assert!(over_the_line(Some(100 * MIB)));
        assert!(!over_the_line(Some(400 * MIB)));
        assert!(!over_the_line(None));
    }

    #[test]
    fn data_sets_smaller_than_the_servers_memory_are_flagged() {
        let p = phase(
            "read",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 1_000_000_000],
        );
        let server_cache = |machine: Machine| says(&p, &machine, "possible server cache");
        // Stated: a server with more memory than the data set.
        let stated = |server| Machine {
            server_ram_bytes: Some(server),
            ..Machine::with_ram(RAM)
        };
        assert!(server_cache(stated(1 << 30)));
        assert!(!server_cache(stated(100 * MIB)));
        // Not stated: assumed on network file systems only.
        let nfs = |ram| Machine {
            network_fs: true,
            ..Machine::with_ram(ram)
        };
        assert!(server_cache(nfs(200 * MIB)));
        assert!(!server_cache(nfs(50 * MIB)));
        assert!(!server_cache(Machine::with_ram(RAM)));
        // Writes do not read from a cache.
        let mut write = p.clone();
        write.op = "write".into();
        assert!(!says(&write, &stated(1 << 30), "possible server cache"));
    }

    #[test]
    fn snapshots_of_buffered_writes_synced_at_the_end_say_they_count_unflushed_bytes() {
        let mut p = phase(
            "write",
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 2_000_000_000],
        );
        let said = |p: &PhaseResult| {
            phase_warnings(p, &Machine::with_ram(RAM)).contains(&UNFLUSHED_SNAPSHOTS.to_string())
        };
        p.settings.fsync = "end".into();
        assert!(said(&p));
        p.settings.direct = true;
        assert!(!said(&p));
        p.settings.direct = false;
        p.settings.fsync = "each".into();
        assert!(!said(&p));
        p.settings.fsync = "end".into();
        // Nothing to say where neither figure is given (a phase of a few trace intervals).
        let mut short = p.clone();
        short
            .aggregates
            .retain(|a| ![AggregateKind::FirstDone, AggregateKind::SteadyState].contains(&a.kind));
        assert!(!said(&short));
        p.workers.truncate(1);
        assert!(!said(&p));
    }

    #[test]
    fn a_gateway_on_this_host_that_takes_the_cpus_is_said_to_bound_the_rate() {
        // 1 s on 2 CPUs: iobm 0.5 CPU-s, the gateway's counters 1.2 more (85%).
        let mut p = phase("get", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        p.cpu.user_s = 0.5;
        let machine = Machine {
            cpus: 2,
            ..Machine::with_ram(RAM)
        };
        let server = |same_host| crate::ServerEvidence {
            endpoint: "http://127.0.0.1:9000".into(),
            served_bytes: 200 * MIB,
            resident_bytes: 0,
            received_bytes: 0,
            device_read_bytes: None,
            device_written_bytes: None,
            device: None,
            cpu_s: 1.2,
            same_host,
            ..crate::ServerEvidence::default()
        };
        let bound = "bounded by this machine's CPU, not by the storage: iobm and the gateway on this machine (its counters) used 1.7 of the 2.0 CPU-s its 2 CPUs had in the phase (85%)";
        p.cache.servers = vec![server(true)];
        assert!(
            says(&p, &machine, bound),
            "{:?}",
            phase_warnings(&p, &machine)
        );
        // Another machine's CPUs are not this one's.
        p.cache.servers = vec![server(false)];
        assert!(!says(&p, &machine, "bounded by this machine's CPU"));
        // Under the bound: nothing.
        p.cache.servers = vec![crate::ServerEvidence {
            cpu_s: 0.5,
            ..server(true)
        }];
        assert!(!says(&p, &machine, "bounded by this machine's CPU"));
        // The built-in gateway's own CPU, told apart in the phase.
        p.cache.servers = vec![server(true)];
        p.cpu.gateway_s = Some(1.2);
        assert!(says(
            &p,
            &machine,
            "bounded by this machine's CPU, not by the storage: iobm and its built-in gateway used 1.7"
        ));
    }
}
