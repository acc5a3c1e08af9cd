//! The limits' judgement: impossible only above a limit measured at the phase's shape, which it
//! names; a shape not measured said, not judged; every figure labelled with what was measured.

use super::*;
use crate::checks::tests::{phase, MIB};
use crate::limits::{DevicePoint, GpuCopyRate, GpuLimits, FORMAT};
use crate::verdict::rules::tests::operation;

const KIB4: u64 = 4 << 10;

fn disk(points: Vec<DevicePoint>) -> DeviceLimits {
    DeviceLimits {
        dir: "/d".into(),
        fs_type: "ext4".into(),
        device: "8:0".into(),
        bytes: 1 << 30,
        block_bytes: 4 * MIB,
        write_bytes_per_s: 400.0 * MIB as f64,
        read_bytes_per_s: 500.0 * MIB as f64,
        points,
        judged_run: None,
    }
}

/// A point reading `read` and writing half of it, in MiB/s.
fn point(block: u64, iodepth: u32, read: f64) -> DevicePoint {
    DevicePoint {
        block_bytes: block,
        iodepth,
        read_bytes_per_s: read * MIB as f64,
        write_bytes_per_s: read * MIB as f64 / 2.0,
    }
}

fn limits(device: Option<DeviceLimits>) -> Limits {
    Limits {
        format: FORMAT.into(),
        hostname: "h".into(),
        measured_at: String::new(),
        threads: 2,
        memcpy_one_thread_bytes_per_s: 1e10,
        memcpy_all_threads_bytes_per_s: 2e10,
        loopback_tcp_bytes_per_s: 1e9,
        md5_bytes_per_s_per_core: 6e8,
        sha256_bytes_per_s_per_core: 1e9,
        crc32c_bytes_per_s_per_core: 1e10,
        device,
        memcpy_method: String::new(),
        loopback_tcp_connections: 4,
        loopback_tcp_many_bytes_per_s: 3e9,
        md5_implementation: String::new(),
        md5_many_bytes_per_s_per_core: 0.0,
        md5_many_lanes: 0,
        gpu: None,
    }
}

const ON_THE_DEVICE: Place = Place {
    loopback: false,
    same_device: true,
    gpus: 0,
};

/// A direct read of `mib_s` MiB/s in `block` blocks by `workers` workers at `iodepth` each.
fn read(mib_s: u64, block: u64, workers: usize, iodepth: u32) -> PhaseResult {
    let mut p = phase(
        OpName::Read,
        [mib_s * MIB / 2, mib_s * MIB / 2],
        [1_000_000_000; 2],
    );
    p.workers.truncate(workers);
    if workers == 1 {
        p.workers[0].span.bytes = mib_s * MIB;
    }
    p.aggregates = iobm_stats::aggregates(&p.spans());
    p.settings.block_bytes = block;
    p.settings.direct = true;
    p.settings.iodepth = iodepth;
    p
}

/// The device's judgement of a phase (the rule after memory's).
fn of_device(p: &PhaseResult, l: &Limits) -> (Judged, Judgement) {
    let judged = judge(p, l, ON_THE_DEVICE).expect("moves data");
    let device = judged.judgements[1].clone();
    (judged, device)
}

#[test]
fn a_run_deeper_than_the_device_was_measured_is_not_judged() {
    // The case of the issue: 113 MiB/s of 4 KiB reads, 2 workers at depth 8 (16 in flight),
    // against a sweep that stopped at depth 4 (23.20 then 21.67 MiB/s) and the sequential
    // figure of 4 MiB blocks.
    let l = limits(Some(disk(vec![
        point(KIB4, 1, 23.20),
        point(KIB4, 4, 21.67),
        point(MIB, 64, 2000.0),
    ])));
    let (judged, device) = of_device(&read(113, KIB4, 2, 8), &l);
    assert_eq!(
        device,
        Judgement::NotMeasured {
            wanted: Bound::Device {
                read: true,
                block: KIB4,
                in_flight: 16
            },
            closest: Some(Bound::Device {
                read: true,
                block: KIB4,
                in_flight: 4
            }),
        }
    );
    assert!(judged.warnings().is_empty(), "{:?}", judged.warnings());
    assert_eq!(
        judged.not_measured(),
        vec![
            "not judged against the device's O_DIRECT read: not measured at 4.00 KiB blocks, \
             16 in flight (measured up to 4.00 KiB blocks, 4 in flight)"
        ]
    );
    assert!(!judged.shares().contains("device"), "{}", judged.shares());
    // A block size never measured, and a document of before with no points (only its
    // sequential figure of 4 MiB blocks, one at a time): not judged either.
    for l in [l.clone(), limits(Some(disk(Vec::new())))] {
        let (judged, device) = of_device(&read(1130, 128 << 10, 1, 32), &l);
        assert!(matches!(
            device,
            Judgement::NotMeasured { closest: None, .. }
        ));
        assert!(judged.warnings().is_empty(), "{:?}", judged.warnings());
    }
    let (_, device) = of_device(&read(1130, 4 * MIB, 1, 32), &limits(Some(disk(Vec::new()))));
    assert!(
        matches!(device, Judgement::NotMeasured { .. }),
        "{device:?}"
    );
}

#[test]
fn above_a_limit_measured_at_its_shape_is_impossible_and_names_it() {
    let l = limits(Some(disk(vec![
        point(KIB4, 1, 23.20),
        point(KIB4, 4, 21.67),
        point(KIB4, 16, 60.0),
        point(KIB4, 64, 200.0),
    ])));
    // At 16 in flight the limit is the depth-16 point (not the deeper 200 MiB/s).
    let (judged, device) = of_device(&read(113, KIB4, 2, 8), &l);
    let at = |in_flight| Bound::Device {
        read: true,
        block: KIB4,
        in_flight,
    };
    assert_eq!(
        device,
        Judgement::Measured {
            bound: at(16),
            limit: 60.0 * MIB as f64
        }
    );
    assert_eq!(
        judged.warnings(),
        vec![
            "impossible without a cache: 113.00 MiB/s is above the device's O_DIRECT read \
             (4.00 KiB blocks, 16 in flight) measured by iobm limits (60.00 MiB/s)"
        ]
    );
    assert!(
        judged
            .shares()
            .contains("188% of the device's O_DIRECT read (4.00 KiB blocks, 16 in flight)"),
        "{}",
        judged.shares()
    );
    assert!(judged.not_measured().is_empty());
    // A limit is the most measured up to the least depth at least the phase's: a shallower
    // point faster than the deeper one is the limit, named for its own depth.
    let mut faster = l.clone();
    faster.device.as_mut().unwrap().points[1] = point(KIB4, 4, 150.0);
    let (judged, _) = of_device(&read(113, KIB4, 2, 8), &faster);
    assert!(judged.warnings().is_empty(), "{:?}", judged.warnings());
    assert!(
        judged
            .shares()
            .contains("(4.00 KiB blocks, 4 in flight) (150.00 MiB/s)"),
        "{}",
        judged.shares()
    );
    // 17 in flight: the depth-64 point; the sequential figure is the 4 MiB blocks' depth 1.
    let (_, device) = of_device(&read(113, KIB4, 1, 17), &l);
    assert!(matches!(device, Judgement::Measured { bound, .. } if bound == at(64)));
    let (_, device) = of_device(&read(600, 4 * MIB, 1, 1), &l);
    let Judgement::Measured { bound, limit } = device else {
        panic!("{device:?}")
    };
    assert_eq!(
        (bound.to_string(), limit),
        (
            "the device's O_DIRECT read (4.00 MiB blocks, 1 in flight)".to_string(),
            500.0 * MIB as f64
        )
    );
}

#[test]
fn each_limit_is_labelled_with_what_was_measured() {
    let mut l = limits(None);
    let loopback = Place {
        loopback: true,
        same_device: false,
        gpus: 0,
    };
    let mut get = phase(OpName::Get, [500 * MIB, 500 * MIB], [1_000_000_000; 2]);
    get.operations
        .push(operation(&get, OpName::Get, 1000 * MIB));
    let labels = |l: &Limits, p: &PhaseResult| judge(p, l, loopback).unwrap().shares();
    // Two workers, within the 4 connections measured: the most of 1 and 4 connections, named
    // for the one it is.
    assert!(
        labels(&l, &get).ends_with(
            "of memory copy with all 2 threads (18.63 GiB/s), 35% of loopback TCP over 4 connections (2.79 GiB/s)"
        ),
        "{}",
        labels(&l, &get)
    );
    l.loopback_tcp_many_bytes_per_s = 0.9e9;
    l.memcpy_all_threads_bytes_per_s = 0.5e10;
    assert!(
        labels(&l, &get).ends_with(
            "of memory copy with one thread (9.31 GiB/s), 105% of loopback TCP over one connection (953.67 MiB/s)"
        ),
        "{}",
        labels(&l, &get)
    );
    // More workers than connections measured: not judged.
    get.workers.extend(get.workers.clone());
    get.workers.extend(get.workers.clone());
    get.workers.extend(get.workers.clone());
    let judged = judge(&get, &l, loopback).unwrap();
    assert_eq!(
        judged.not_measured(),
        vec!["not judged against loopback TCP: not measured at 16 connections (measured up to 4 connections)"]
    );
    // One worker: one connection.
    get.workers.truncate(1);
    assert!(labels(&l, &get).contains("loopback TCP over one connection"));
}

#[test]
fn above_a_path_every_byte_crossed_is_a_low_limit_not_a_cache() {
    let l = limits(None);
    let loopback = Place {
        loopback: true,
        same_device: false,
        gpus: 0,
    };
    // 1.24 GiB/s of GETs over two connections, above the one-connection 953.67 MiB/s: the bytes
    // crossed loopback TCP whatever the server cached.
    let mut get = phase(OpName::Get, [635 * MIB, 635 * MIB], [1_000_000_000; 2]);
    get.operations
        .push(operation(&get, OpName::Get, 1270 * MIB));
    let mut low = l.clone();
    low.loopback_tcp_many_bytes_per_s = 0.9e9;
    let judged = judge(&get, &low, loopback).unwrap();
    assert_eq!(
        judged.warnings(),
        vec![
            "above loopback TCP over one connection measured by iobm limits (953.67 MiB/s): every \
             byte crossed that path whatever was cached, so 1.24 GiB/s shows the figure measured \
             was not its most (run iobm limits again, on an idle machine)"
        ]
    );
    assert!(judged.warnings().iter().all(|w| !w.contains("cache:")));
    // Within the limits: nothing to say.
    assert!(judge(&get, &l, loopback).unwrap().warnings().is_empty());
}

/// A GPU copying 8 GiB/s host to device and 4 GiB/s device to host from pinned memory, and
/// half that from pageable memory.
fn gpu() -> GpuLimits {
    let rate = |direction, host, gib: f64| GpuCopyRate {
        direction,
        host,
        bytes_per_s: gib * (1u64 << 30) as f64,
    };
    GpuLimits {
        id: 0,
        name: "g".into(),
        memory: crate::device::DeviceMemory::FakeGpu,
        copy_bytes: 64 * MIB,
        rates: vec![
            rate(CopyDirection::HostToDevice, HostMemoryKind::Pinned, 8.0),
            rate(CopyDirection::HostToDevice, HostMemoryKind::Pageable, 4.0),
            rate(CopyDirection::DeviceToHost, HostMemoryKind::Pinned, 4.0),
            rate(CopyDirection::DeviceToHost, HostMemoryKind::Pageable, 2.0),
        ],
    }
}

#[test]
fn a_phase_on_the_measured_gpu_is_a_share_of_its_pinned_copy_that_way() {
    let mut l = limits(None);
    l.gpu = Some(gpu());
    let on = |gpus| Place {
        loopback: false,
        same_device: false,
        gpus,
    };
    let mut read = read(2048, MIB, 2, 1);
    let mut write = read.clone();
    write.op = OpName::Write;
    // Buffers in host memory: no copy, no GPU limit.
    assert_eq!(judge(&read, &l, on(1)).unwrap().judgements.len(), 1);
    let copy = crate::device::DeviceCopy {
        copy_ns: 1,
        op_ns: 2,
        share_pct: 50.0,
    };
    read.device_copy = Some(copy.clone());
    write.device_copy = Some(copy);
    let shares = judge(&read, &l, on(1)).unwrap().shares();
    assert!(
        shares.ends_with("25% of the GPU's pinned host-to-device copy on one GPU (8.00 GiB/s)"),
        "{shares}"
    );
    let shares = judge(&write, &l, on(1)).unwrap().shares();
    assert!(
        shares.ends_with("50% of the GPU's pinned device-to-host copy on one GPU (4.00 GiB/s)"),
        "{shares}"
    );
    // Not the measured GPU: no judgement; spread over two: not measured, said.
    assert_eq!(judge(&read, &l, on(0)).unwrap().judgements.len(), 1);
    let judged = judge(&read, &l, on(2)).unwrap();
    assert_eq!(
        judged.not_measured(),
        vec!["not judged against the GPU's pinned host-to-device copy: not measured at 2 GPUs together (measured up to one GPU)"]
    );
    // Above the copy every byte crossed: the copy was measured low, not a cache.
    read.aggregates =
        iobm_stats::aggregates(&phase(OpName::Read, [5 << 30; 2], [1_000_000_000; 2]).spans());
    let warnings = judge(&read, &l, on(1)).unwrap().warnings();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("above the GPU's pinned host-to-device copy on one GPU measured by iobm limits (8.00 GiB/s): every byte crossed that path"), "{warnings:?}");
}
