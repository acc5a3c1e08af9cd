//! Unit tests of the checks, and the phase the other modules' tests build theirs from.

use super::*;
use crate::{
    CacheEvidence, CpuUsage, DeviceIo, Latency, OperationResult, PhaseSettings, Series,
    WorkerResult,
};
use iobm_stats::{aggregates, Histogram, Progress, WorkerSpan};

pub(crate) const MIB: u64 = 1 << 20;

pub(crate) fn phase(op: OpName, bytes: [u64; 2], ends: [u64; 2]) -> PhaseResult {
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
            copy_ns: 0,
            series: Series {
                bytes: vec![bytes[i]],
                ops: vec![bytes[i] / MIB],
                ..Series::new(std::time::Duration::from_secs(1))
            },
            endpoint: None,
            items_of: None,
            cpus: None,
        })
        .collect();
    let spans: Vec<_> = workers.iter().map(|w| w.span).collect();
    PhaseResult {
        name: op.into(),
        op,
        status: RunStatus::Complete,
        settings: PhaseSettings {
            block_bytes: MIB,
            pattern: iobm_stats::names::PatternName::Sequential,
            fsync: FsyncPolicy::Never,
            direct: false,
            engine: Some(iobm_stats::names::Engine::Sync),
            iodepth: 1,
            drop_cache: false,
            cache_dropped: iobm_stats::names::CacheDropped::client(
                iobm_stats::names::CacheDrop::Nothing,
            ),
            duration_s: None,
            ramp_s: None,
            verify: false,
            data_bytes: bytes[0] + bytes[1],
            stonewall_s: None,
            access: None,
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
        stonewall: None,
        until_stable: None,
        device_copy: None,
        gds: None,
        gather_s: None,
        series: None,
        rank_series: Vec::new(),
        endpoint_series: Vec::new(),
        worker_series_detached: false,
        pace: None,
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
        OpName::Read,
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
        OpName::Read,
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
        OpName::Read,
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
        OpName::Read,
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
        OpName::Read,
        [100 * MIB, 100 * MIB],
        [1_000_000_000, 1_000_000_000],
    );
    let memory = Machine {
        memory_fs: true,
        ..Machine::with_ram(RAM)
    };
    assert_eq!(phase_warnings(&p, &memory), vec!["memory: the data lives in RAM (tmpfs or ramfs), so these rates are memory rates, not a storage device's, whether O_DIRECT or not"]);
}

#[test]
fn ram_devices_are_said_to_be_memory_with_no_other_advice() {
    let mut p = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    p.cache.device = Some(DeviceIo {
        device: "253:1".into(),
        read_bytes: 200 * MIB,
        written_bytes: 0,
    });
    p.cache.below = vec![crate::storage::Below {
        top: "253:1".into(),
        devices: vec![crate::storage::BottomIo {
            device: "253:1".into(),
            name: "zram1".into(),
            ram: Some("zram, compressed RAM".into()),
            ..Default::default()
        }],
        ..Default::default()
    }];
    let machine = Machine::with_ram(RAM);
    assert_eq!(
        phase_warnings(&p, &machine),
        vec!["memory: the data lives in RAM (253:1 (zram1) is zram, compressed RAM, by its driver), so these rates are memory rates, not a storage device's, whether O_DIRECT or not"]
    );
    // A disk of its own: the data set fits in RAM, and nothing says memory.
    p.cache.below[0].devices[0].ram = None;
    let warnings = phase_warnings(&p, &machine);
    assert!(
        !warnings.iter().any(|w| w.starts_with("memory")),
        "{warnings:?}"
    );
}

#[test]
fn writes_that_never_reached_the_device_are_flagged() {
    let mut p = phase(
        OpName::Write,
        [100 * MIB, 100 * MIB],
        [1_000_000_000, 1_000_000_000],
    );
    p.settings.fsync = FsyncPolicy::End;
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
        OpName::Get,
        [100 * MIB, 100 * MIB],
        [1_000_000_000, 1_000_000_000],
    );
    let get = |bytes| OperationResult {
        op: OpName::Get,
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
        OpName::Read,
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
    write.op = OpName::Write;
    assert!(!says(&write, &stated(1 << 30), "possible server cache"));
}

#[test]
fn snapshots_of_buffered_writes_synced_at_the_end_say_they_count_unflushed_bytes() {
    let mut p = phase(
        OpName::Write,
        [100 * MIB, 100 * MIB],
        [1_000_000_000, 2_000_000_000],
    );
    let said = |p: &PhaseResult| {
        phase_warnings(p, &Machine::with_ram(RAM)).contains(&"first done and steady state count the bytes other workers had handed to the page cache, not yet flushed by their final fsync (--fsync end); the makespan includes every flush".to_string())
    };
    p.settings.fsync = FsyncPolicy::End;
    assert!(said(&p));
    p.settings.direct = true;
    assert!(!said(&p));
    p.settings.direct = false;
    p.settings.fsync = FsyncPolicy::Each;
    assert!(!said(&p));
    p.settings.fsync = FsyncPolicy::End;
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
fn the_machine_of_a_run_takes_its_line_rate_and_put_rate_as_they_apply() {
    let mut run: crate::RunResult =
        serde_json::from_str(include_str!("../../../iobm/tests/fixtures/s3-mixed.json")).unwrap();
    run.config.line_rate_bytes_per_s = Some(1000);
    // The built-in gateway's bytes cross no network; another server's do.
    assert!(run.config.s3.as_ref().unwrap().builtin_gateway);
    assert_eq!(Machine::of(&run).line_rate_bytes_per_s, None);
    run.config.s3.as_mut().unwrap().builtin_gateway = false;
    assert_eq!(Machine::of(&run).line_rate_bytes_per_s, Some(1000));
    // The fastest PUT rate; a rate of zero is none.
    let mut puts = 0;
    for o in run.phases.iter_mut().flat_map(|p| &mut p.operations) {
        if o.op == OpName::Put {
            o.bytes_per_s = 5.0;
            puts += 1;
        }
    }
    assert!(puts > 0);
    run.config.s3.as_mut().unwrap().upload_bytes_per_s = Some(3.0);
    assert_eq!(Machine::of(&run).put_bytes_per_s, Some(5.0));
    run.config.s3.as_mut().unwrap().upload_bytes_per_s = Some(0.0);
    for o in run.phases.iter_mut().flat_map(|p| &mut p.operations) {
        o.bytes_per_s = 0.0;
    }
    assert_eq!(Machine::of(&run).put_bytes_per_s, None);
    // A network file system's server: assumed twice this client's RAM.
    let nfs = Machine {
        network_fs: true,
        ..Machine::with_ram(10 * MIB)
    };
    assert_eq!(nfs.server_cache().unwrap().0, 20 * MIB);
}

#[test]
fn failed_operations_are_told_apart_from_a_failed_phase() {
    let mut p = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    let machine = Machine::with_ram(0);
    assert!(!says(&p, &machine, "3 operations failed"));
    p.errors = vec![crate::ErrorCount {
        kind: "EIO".into(),
        count: 3,
        first: "read data.0 at offset 0".into(),
    }];
    assert!(says(
        &p,
        &machine,
        "3 operations failed and are not in these numbers"
    ));
    p.status = RunStatus::Failed;
    assert!(says(&p, &machine, "failed: these numbers cover the phase"));
    assert!(!says(&p, &machine, "3 operations failed"));
}

#[test]
fn phases_that_moved_nothing_get_no_memory_or_cache_warning() {
    let memory = Machine {
        memory_fs: true,
        ..Machine::with_ram(RAM)
    };
    let meta = phase(OpName::Create, [0, 0], [1_000_000_000; 2]);
    assert!(!says(&meta, &memory, "memory: the data lives in RAM"));
    let mut read = phase(OpName::Read, [0, 0], [1_000_000_000; 2]);
    read.settings.data_bytes = 100 * MIB;
    read.cache.resident_before_bytes = Some(100 * MIB);
    assert!(!says(&read, &Machine::with_ram(RAM), "cache effect"));
    let nfs = Machine {
        network_fs: true,
        ..Machine::with_ram(RAM)
    };
    assert!(!says(&read, &nfs, "possible server cache"));
}

#[test]
fn cache_warnings_start_just_past_their_thresholds() {
    let machine = Machine::with_ram(0);
    let mut read = phase(OpName::Read, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    // Resident: 10% is not a cache effect, 11% is.
    read.settings.data_bytes = 100 * MIB;
    read.cache.resident_before_bytes = Some(10 * MIB);
    assert!(!says(&read, &machine, "cache effect"));
    read.cache.resident_before_bytes = Some(11 * MIB);
    assert!(says(&read, &machine, "cache effect: 11% of the data"));
    // The device: half of what was read is not a cache effect, less is.
    read.cache.resident_before_bytes = Some(0);
    for (device_read, said) in [(50, false), (49, true)] {
        read.cache.device = Some(DeviceIo {
            device: "8:0".into(),
            read_bytes: device_read * MIB,
            written_bytes: 0,
        });
        assert_eq!(
            says(&read, &machine, "cache effect: the block device"),
            said,
            "{device_read}"
        );
    }
    // The gateway's page cache: 10% of what it served is not, 11% is.
    let mut get = phase(OpName::Get, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    for (resident, said) in [(10, false), (11, true)] {
        get.cache.servers = vec![crate::ServerEvidence {
            endpoint: "http://h:9000".into(),
            served_bytes: 100 * MIB,
            resident_bytes: resident * MIB,
            ..crate::ServerEvidence::default()
        }];
        assert_eq!(
            says(
                &get,
                &machine,
                "cache effect: the gateway's page cache held"
            ),
            said
        );
    }
    // A server's memory holds a data set smaller than it, not one of its size or of none.
    let nfs = Machine {
        network_fs: true,
        ..Machine::with_ram(50 * MIB)
    };
    read.cache.device = None;
    for (data, said) in [(100 * MIB - 1, true), (100 * MIB, false), (0, false)] {
        read.settings.data_bytes = data;
        assert_eq!(says(&read, &nfs, "possible server cache"), said, "{data}");
    }
}

#[test]
fn o_direct_reads_are_checked_for_a_cache_only_over_a_backing_file() {
    // A partition under the device (no backing file): O_DIRECT bypasses the cache, nothing to
    // say of what was resident.
    let mut p = phase(OpName::Read, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    p.cache.resident_before_bytes = Some(100 * MIB);
    p.cache.below = vec![crate::storage::Below {
        top: "8:1".into(),
        steps: vec!["8:1 is a partition of 8:0".into()],
        ..Default::default()
    }];
    let machine = Machine::with_ram(RAM);
    assert!(says(&p, &machine, "cache effect: 100% of the data"));
    p.settings.direct = true;
    assert!(
        !says(&p, &machine, "cache effect: 100% of the data"),
        "{:?}",
        phase_warnings(&p, &machine)
    );
}

mod check;
mod cpu;
mod gets;

#[test]
fn buffered_writes_are_judged_by_half_of_them_reaching_the_device() {
    let machine = Machine::with_ram(RAM);
    let reached = "cache effect: only ";
    let mut p = phase(
        OpName::Write,
        [50 * MIB, 50 * MIB],
        [1_000_000_000, 1_000_000_000],
    );
    p.settings.fsync = FsyncPolicy::End;
    let device = |written_bytes| DeviceIo {
        device: "8:0".into(),
        read_bytes: 0,
        written_bytes,
    };
    // Half of the 100 MiB is enough; a byte less is not.
    p.cache.device = Some(device(50 * MIB));
    assert!(!says(&p, &machine, reached));
    p.cache.device = Some(device(50 * MIB - 1));
    assert!(says(&p, &machine, reached));
    // O_DIRECT writes bypass the page cache: no such warning however little the device took.
    p.settings.direct = true;
    assert!(!says(&p, &machine, reached));
    // A read is not judged by what the device took in.
    let mut read = p.clone();
    read.op = OpName::Read;
    read.settings.direct = false;
    assert!(!says(&read, &machine, reached));
    // Without device counters: only a write never synced, smaller than the RAM, is said to
    // be possibly still in the page cache.
    let unsynced = "possible cache effect: without --fsync or --direct";
    p.settings.direct = false;
    p.cache.device = None;
    assert!(!says(&p, &machine, unsynced), "fsync end syncs it");
    p.settings.fsync = FsyncPolicy::Never;
    assert!(says(&p, &machine, unsynced));
    assert!(
        !says(&p, &Machine::with_ram(100 * MIB), unsynced),
        "as large as the RAM"
    );
    assert!(says(&p, &Machine::with_ram(100 * MIB + 1), unsynced));
}
