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
