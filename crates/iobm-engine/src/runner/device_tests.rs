//! Buffers on a (fake) device: every operation moves its bytes through the host bounce buffer
//! with the copy inside its latency and counted apart, and `--verify` checks what the device
//! holds, not what passed through the bounce buffer.

use super::*;
use crate::workload::FsyncPolicy;
use iobm_target::mem::MemTarget;
use iobm_target::memory::{DeviceKind, DevicePath, Devices, FakeGpu, Placement};
use std::time::Duration;

const DELAY: Duration = Duration::from_millis(2);

fn on_fake_gpu(op: Op, layout: Layout, corrupt: bool) -> Phase {
    let fake = FakeGpu {
        count: 2,
        copy_delay: DELAY,
        corrupt,
        cufile: None,
    };
    Phase {
        fsync: FsyncPolicy::End,
        memory: Placement::Device(Devices {
            kind: DeviceKind::Fake(fake),
            ids: vec![1, 0],
            path: DevicePath::Bounce,
        }),
        ..Phase::new(op.name(), op, 4096, layout)
    }
}

#[test]
fn each_operation_times_its_copy_and_verify_reads_the_device() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(2, 4 * 4096);
    let control = Control::new(7, 2);
    prepare_objects(&target, &layout).unwrap();
    let write = on_fake_gpu(Op::Write, layout.clone(), false);
    let written = run_phase(&target, &write, &control, &Ranked::ALONE);
    assert_eq!(written.end, PhaseEnd::Completed, "{:?}", written.errors);
    assert_eq!(written.bytes(), 2 * 4 * 4096);
    let mut read = on_fake_gpu(Op::Read, layout.clone(), false);
    read.verify = Some(7);
    let back = run_phase(&target, &read, &control, &Ranked::ALONE);
    assert_eq!(back.end, PhaseEnd::Completed, "{:?}", back.errors);
    for out in [&written, &back] {
        // One timed copy of DELAY per operation, inside every operation's latency.
        assert!(out.latency.min().unwrap() >= DELAY.as_nanos() as u64);
        for w in &out.workers {
            assert!(w.copy_ns >= 4 * DELAY.as_nanos() as u64, "{}", w.copy_ns);
        }
    }
    // Verification copies the device's bytes back, outside the operations' time.
    assert!(back
        .workers
        .iter()
        .all(|w| w.verify_ns >= 4 * DELAY.as_nanos() as u64));
    // A device that does not hold what the read brought fails the check.
    let mut bad = on_fake_gpu(Op::Read, layout, true);
    bad.verify = Some(7);
    let failed = run_phase(&target, &bad, &control, &Ranked::ALONE);
    assert_eq!(failed.end, PhaseEnd::Failed);
    assert!(
        failed.errors[0].first.contains("corrupt"),
        "{:?}",
        failed.errors
    );
}

/// A fake GPU whose bytes the fake cuFile moves, on the direct path.
fn direct_on_fake_gpu(op: Op, layout: Layout) -> Phase {
    let fake = FakeGpu {
        count: 1,
        cufile: Some(iobm_target::memory::FakeCuFile::Compat),
        ..FakeGpu::default()
    };
    Phase {
        fsync: FsyncPolicy::End,
        direct: true,
        memory: Placement::Device(Devices {
            kind: DeviceKind::Fake(fake),
            ids: vec![0],
            path: DevicePath::Direct,
        }),
        ..Phase::new(op.name(), op, 4096, layout)
    }
}

#[test]
fn on_the_direct_path_cufile_moves_every_byte_and_nothing_bounces() {
    let dir = tempfile::tempdir().unwrap();
    let target = iobm_target::posix::PosixTarget::new(dir.path());
    let layout = Layout::file_per_worker(2, 4 * 4096);
    let control = Control::new(9, 2);
    prepare_objects(&target, &layout).unwrap();
    let write = direct_on_fake_gpu(Op::Write, layout.clone());
    let written = run_phase(&target, &write, &control, &Ranked::ALONE);
    assert_eq!(written.end, PhaseEnd::Completed, "{:?}", written.errors);
    let mut read = direct_on_fake_gpu(Op::Read, layout.clone());
    read.verify = Some(9);
    let back = run_phase(&target, &read, &control, &Ranked::ALONE);
    assert_eq!(back.end, PhaseEnd::Completed, "{:?}", back.errors);
    assert_eq!(back.bytes(), 2 * 4 * 4096);
    for out in [&written, &back] {
        assert!(out.workers.iter().all(|w| w.copy_ns == 0), "no bounce copy");
    }
    // What cuFile wrote is on storage: read back through host memory, every byte checked.
    let mut plain = Phase::new("read", Op::Read, 4096, layout);
    plain.verify = Some(9);
    let checked = run_phase(&target, &plain, &control, &Ranked::ALONE);
    assert_eq!(checked.end, PhaseEnd::Completed, "{:?}", checked.errors);
    // Buffered, the file's descriptor is not O_DIRECT: cuFile refuses to register it.
    let mut buffered = direct_on_fake_gpu(Op::Read, Layout::file_per_worker(1, 4096));
    buffered.direct = false;
    let refused = run_phase(&target, &buffered, &control, &Ranked::ALONE);
    assert_eq!(refused.end, PhaseEnd::Failed);
    assert!(
        refused.errors[0]
            .first
            .contains("cuFileHandleRegister failed"),
        "{:?}",
        refused.errors
    );
}
