//! `Engine::Mmap` against a real file system: the bytes it writes are the synchronous path's,
//! what it reads is verified, a file shorter than the data set fails its worker before any
//! operation, a target without descriptors is refused; pinned workers record their CPU.

use super::*;
use crate::workload::{Engine, Fadvise, FsyncPolicy, Madvise, Pattern};
use iobm_target::mem::MemTarget;
use iobm_target::posix::PosixTarget;

fn phase(op: Op, layout: &Layout, engine: Engine) -> Phase {
    Phase {
        fsync: FsyncPolicy::End,
        engine,
        ..Phase::new(op.name(), op, 4096, layout.clone())
    }
}

#[test]
fn mmap_moves_the_same_bytes_as_sync_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let target = PosixTarget::new(dir.path());
    // Two workers in one shared file, each region with a short last block.
    let layout = Layout::shared_file(2, 64 * 4096 + 100);
    let control = Control::new(7, 2);
    prepare_objects(&target, &layout).unwrap();
    let mapped = |op, verify| Phase {
        pattern: Pattern::Random { seed: 3 },
        verify,
        madvise: Some(Madvise::Random),
        fsync: FsyncPolicy::Each,
        ..phase(op, &layout, Engine::Mmap)
    };
    let write = run_phase(&target, &mapped(Op::Write, None), &control, &Ranked::ALONE);
    assert_eq!(write.end, PhaseEnd::Completed, "{:?}", write.errors);
    assert_eq!(write.bytes(), 2 * (64 * 4096 + 100));
    assert_eq!(write.latency.count(), 2 * 65);
    let size = std::fs::metadata(dir.path().join(&layout.files[0].name))
        .unwrap()
        .len();
    assert_eq!(size, 2 * (64 * 4096 + 100));
    // What the mapping wrote is what pread reads back, stamp for stamp.
    let sync_read = Phase {
        verify: Some(7),
        fadvise: Some(Fadvise::Sequential),
        ..phase(Op::Read, &layout, Engine::Sync)
    };
    let read = run_phase(&target, &sync_read, &control, &Ranked::ALONE);
    assert_eq!(read.end, PhaseEnd::Completed, "{:?}", read.errors);
    let read = run_phase(
        &target,
        &mapped(Op::Read, Some(7)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(read.end, PhaseEnd::Completed, "{:?}", read.errors);
    assert_eq!(read.bytes(), write.bytes());
    assert!(read.workers.iter().all(|w| w.verify_ns > 0));
    // Data of another run is caught in what the mapping gave (as corrupt where a 4 KiB of
    // the file straddles the two regions' stamps).
    let stale = run_phase(
        &target,
        &mapped(Op::Read, Some(8)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(stale.end, PhaseEnd::Failed);
    let error = &stale.errors[0].first;
    assert!(error.contains("are not what was written there"), "{error}");
}

#[test]
fn a_mapped_reader_of_a_short_file_fails_before_any_operation() {
    let dir = tempfile::tempdir().unwrap();
    let target = PosixTarget::new(dir.path());
    let layout = Layout::file_per_worker(1, 8 * 4096);
    prepare_objects(&target, &layout).unwrap();
    let file = dir.path().join(&layout.files[0].name);
    std::fs::write(&file, vec![0u8; 4096]).unwrap();
    let control = Control::new(1, 1);
    let read = run_phase(
        &target,
        &phase(Op::Read, &layout, Engine::Mmap),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(read.end, PhaseEnd::Failed);
    assert_eq!(read.bytes(), 0);
    let error = &read.errors[0].first;
    assert!(error.contains("fewer than the 32768"), "{error}");
}

#[test]
fn mmap_on_a_target_without_descriptors_is_refused() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(1, 4096);
    prepare_objects(&target, &layout).unwrap();
    let out = run_phase(
        &target,
        &phase(Op::Write, &layout, Engine::Mmap),
        &Control::new(1, 1),
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Failed);
    assert!(out.errors[0].first.contains("RAW_FD"), "{:?}", out.errors);
}

#[test]
fn a_pinned_worker_runs_on_its_own_thread_and_records_its_cpu() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(3, 4096);
    prepare_objects(&target, &layout).unwrap();
    let allowed = crate::pin::CpuList::allowed().unwrap();
    let last = *allowed.cpus().last().unwrap();
    let list = crate::pin::CpuList::parse(&last.to_string()).unwrap();
    let pinned = Phase {
        cpus: Some(list),
        ..phase(Op::Write, &layout, Engine::Sync)
    };
    let out = run_phase(&target, &pinned, &Control::new(1, 3), &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    let seen: Vec<_> = out.workers.iter().map(|w| w.cpus.clone()).collect();
    assert_eq!(seen, vec![Some(last.to_string()); 3]);
    // The calling thread was not pinned.
    assert_eq!(crate::pin::allowed_here(), Some(allowed.to_string()));
    let one = Phase {
        workers: 1,
        ..pinned.clone()
    };
    let one = Phase {
        layout: Layout::file_per_worker(1, 4096),
        ..one
    };
    let out = run_phase(&target, &one, &Control::new(1, 1), &Ranked::ALONE);
    assert_eq!(out.workers[0].cpus, Some(last.to_string()));
    assert_eq!(crate::pin::allowed_here(), Some(allowed.to_string()));
}
