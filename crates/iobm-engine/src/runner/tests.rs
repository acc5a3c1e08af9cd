use super::*;
use crate::data::{file_key, stamp, Generator, STAMP_LEN};
use crate::workload::{DataKind, FsyncPolicy, Pattern};
use iobm_stats::names::OpName;
use iobm_target::fault::FaultTarget;
use iobm_target::mem::MemTarget;
use iobm_target::null::NullTarget;
use std::time::Duration;

fn phase(op: Op, layout: Layout, block: u64) -> Phase {
    Phase {
        fsync: FsyncPolicy::End,
        ..Phase::new(op.name(), op, block, layout)
    }
}

#[test]
fn direct_io_on_a_target_without_it_fails_before_any_operation() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(1, 4096);
    prepare_objects(&target, &layout).unwrap();
    let p = Phase {
        direct: true,
        ..phase(Op::Write, layout, 4096)
    };
    let out = run_phase(&target, &p, &Control::new(1, 1), &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert_eq!(out.bytes(), 0);
    assert!(out.errors[0].first.contains("O_DIRECT"), "{:?}", out.errors);
}

#[test]
fn write_then_read_moves_every_byte_once() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(3, 10 * 4096 + 100);
    let control = Control::new(99, 3);
    prepare_objects(&target, &layout).unwrap();
    let write = run_phase(
        &target,
        &phase(Op::Write, layout.clone(), 4096),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(write.end, PhaseEnd::Completed);
    assert_eq!(write.bytes(), 3 * (10 * 4096 + 100));
    assert_eq!(write.latency.count(), 3 * 11);
    for (w, worker) in write.workers.iter().enumerate() {
        let s = worker.span;
        assert_eq!(s.ops, 11);
        assert_eq!(worker.series.bytes.iter().sum::<u64>(), s.bytes);
        let timed: u64 = worker.series.latency.iter().map(|h| h.count).sum();
        assert_eq!(timed, s.ops, "every operation's latency is in its interval");
        assert!(s.end_ns >= s.start_ns && s.start_ns >= write.start_ns);
        assert!(s.at_first_done.bytes <= s.bytes);
        let data = target.contents(&format!("data.{w}")).unwrap();
        assert_eq!(data.len() as u64, 10 * 4096 + 100);
        let file = file_key(&format!("data.{w}"));
        assert_eq!(&data[8192..8192 + STAMP_LEN], &stamp(99, file, 8192));
        let mut expected = vec![0u8; data.len()];
        Generator::new(DataKind::Random, 99).fill(&mut expected, file, 0);
        assert!(data == expected, "data.{w} is not what the generator makes");
    }
    let read = run_phase(
        &target,
        &phase(Op::Read, layout, 4096),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(read.end, PhaseEnd::Completed);
    assert_eq!(read.bytes(), write.bytes());
}

#[test]
fn random_order_covers_each_block_of_a_shared_file_once() {
    let target = MemTarget::new();
    let layout = Layout::shared_file(4, 16 * 512);
    let control = Control::new(5, 4);
    prepare_objects(&target, &layout).unwrap();
    let mut p = phase(Op::Write, layout, 512);
    p.pattern = Pattern::Random { seed: 3 };
    let out = run_phase(&target, &p, &control, &Ranked::ALONE);
    assert_eq!(out.bytes(), 4 * 16 * 512);
    // Every block was written once, at its place: the file is the generator's bytes.
    let data = target.contents("data.shared").unwrap();
    let mut expected = vec![0u8; data.len()];
    Generator::new(DataKind::Random, 5).fill(&mut expected, file_key("data.shared"), 0);
    assert!(data == expected);
}

#[test]
fn duration_stop_wraps_and_stops_in_time() {
    let control = Control::new(1, 2);
    let mut p = phase(Op::Write, Layout::file_per_worker(2, 64 * 1024), 4096);
    p.stop = StopRule::Duration(Duration::from_millis(200));
    p.pattern = Pattern::Random { seed: 1 };
    let out = run_phase(&NullTarget, &p, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed);
    assert!(out.bytes() > 2 * 64 * 1024, "should wrap: {}", out.bytes());
    let elapsed = (out.end_ns - out.start_ns) as f64 / 1e9;
    assert!((0.2..5.0).contains(&elapsed), "{elapsed}");
}

#[test]
fn a_full_file_system_fails_the_phase_with_counted_errors() {
    let target = FaultTarget::fail_writes_after(MemTarget::new(), 5 * 4096, libc::ENOSPC);
    let layout = Layout::file_per_worker(2, 64 * 4096);
    prepare_objects(&target, &layout).unwrap();
    let control = Control::new(1, 2);
    let out = run_phase(
        &target,
        &phase(Op::Write, layout, 4096),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Failed);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].kind, "ENOSPC");
    assert!(
        out.errors[0].first.contains("write data."),
        "{}",
        out.errors[0].first
    );
    assert_eq!(out.bytes(), 5 * 4096);
    // Each failure is in its worker's series, in the interval it ended in.
    let in_series: u64 = out.workers.iter().flat_map(|w| &w.series.errors).sum();
    assert_eq!(in_series, out.errors[0].count);
}

#[test]
fn stop_request_interrupts() {
    let control = Control::new(1, 1);
    let mut p = phase(Op::Read, Layout::file_per_worker(1, 4096), 4096);
    p.stop = StopRule::Duration(Duration::from_secs(60));
    std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(100));
            control.request_stop();
        });
        let out = run_phase(&NullTarget, &p, &control, &Ranked::ALONE);
        assert_eq!(out.end, PhaseEnd::Interrupted);
        assert!(out.bytes() > 0);
    });
}

#[test]
fn the_bonnie_suite_runs_every_test() {
    use crate::suite::{bonnie, BonnieSpec, MetaSpec};
    use crate::workload::PerChar;
    for per_char in [PerChar::Buffered, PerChar::Syscall] {
        let target = MemTarget::new();
        let spec = BonnieSpec {
            size: 256 * 1024,
            chunk: 8192,
            per_char,
            fsync: FsyncPolicy::End,
            direct: false,
            drop_cache: true,
            drop_system_cache: false,
            data: DataKind::Random,
            seeks: 101,
            seekers: 5,
            seek_rewrite_pct: 10,
            files: Some(MetaSpec {
                count: 40,
                max_size: 3000,
                min_size: 0,
                dirs: 4,
            }),
            seed: 9,
            prefix: String::new(),
        };
        let plan = bonnie(&spec);
        for dir in &plan.dirs {
            target.create_dir(dir).unwrap();
        }
        let control = Control::new(3, 5);
        let mut outcomes = Vec::new();
        for phase in &plan.phases {
            let out = run_phase(&target, phase, &control, &Ranked::ALONE);
            assert_eq!(
                out.end,
                PhaseEnd::Completed,
                "{}: {:?}",
                phase.name,
                out.errors
            );
            outcomes.push(out);
        }
        let per_char_bytes = if per_char == PerChar::Buffered {
            256 * 1024
        } else {
            8192
        };
        assert_eq!(outcomes[0].bytes(), per_char_bytes);
        for i in [1, 2, 4] {
            assert_eq!(outcomes[i].bytes(), 256 * 1024, "{}", outcomes[i].name);
        }
        assert_eq!(outcomes[3].bytes(), per_char_bytes);
        let seeks: u64 = outcomes[5].workers.iter().map(|w| w.span.ops).sum();
        assert_eq!(seeks, 101);
        let files = &plan.phases[6].layout.files;
        let file_bytes: u64 = files.iter().map(|f| f.size).sum();
        for meta in &outcomes[6..12] {
            let ops: u64 = meta.workers.iter().map(|w| w.span.ops).sum();
            assert_eq!(ops, 40, "{}", meta.name);
        }
        assert_eq!(outcomes[6].bytes(), file_bytes);
        assert_eq!(outcomes[7].bytes(), file_bytes);
        // Both delete phases left nothing but the byte tests' file behind.
        assert_eq!(target.names(), ["bonnie.dat"]);
        // The block write replaced what the per-char write left: one file of full size.
        assert_eq!(target.contents("bonnie.dat").unwrap().len(), 256 * 1024);
    }
}

#[test]
fn verify_finds_a_misplaced_block() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(1, 8 * 4096);
    let control = Control::new(42, 1);
    prepare_objects(&target, &layout).unwrap();
    run_phase(
        &target,
        &phase(Op::Write, layout.clone(), 4096),
        &control,
        &Ranked::ALONE,
    );
    let mut read = phase(Op::Read, layout, 4096);
    read.verify = Some(42);
    assert_eq!(
        run_phase(&target, &read, &control, &Ranked::ALONE).end,
        PhaseEnd::Completed
    );
    // Swap two blocks, as a broken storage might.
    let mut data = target.contents("data.0").unwrap();
    let (a, b) = data.split_at_mut(4096 * 4);
    a[..4096].swap_with_slice(&mut b[..4096]);
    let mut h = target
        .open(
            "data.0",
            OpenOptions {
                access: Access::Write,
                direct: false,
            },
        )
        .unwrap();
    h.write_at(&data, 0).unwrap();
    let out = run_phase(&target, &read, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert_eq!(out.errors[0].kind, "bad data");
    assert!(
        out.errors[0].first.contains("offset 0"),
        "{}",
        out.errors[0].first
    );
    // Another run's stamps are not this run's.
    read.verify = Some(43);
    assert_eq!(
        run_phase(&target, &read, &control, &Ranked::ALONE).end,
        PhaseEnd::Failed
    );
}

#[test]
fn missing_object_is_an_error_not_a_panic() {
    let control = Control::new(1, 1);
    let out = run_phase(
        &MemTarget::new(),
        &phase(Op::Read, Layout::file_per_worker(1, 4096), 4096),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Failed);
    assert!(out.errors[0].first.starts_with("open data.0"));
}

#[test]
fn io_uring_keeps_requests_in_flight_and_moves_the_same_bytes_as_sync() {
    use crate::workload::Engine;
    use iobm_target::posix::PosixTarget;
    let dir = tempfile::tempdir().unwrap();
    let target = PosixTarget::new(dir.path());
    // Two workers, a region each with a short last block.
    let layout = Layout::file_per_worker(2, 64 * 4096 + 100);
    let control = Control::new(7, 2);
    prepare_objects(&target, &layout).unwrap();
    let queued = |op, pattern, verify| Phase {
        engine: Engine::IoUring,
        iodepth: 8,
        pattern,
        verify,
        ..phase(op, layout.clone(), 4096)
    };
    let write = run_phase(
        &target,
        &queued(Op::Write, Pattern::Random { seed: 3 }, None),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(write.end, PhaseEnd::Completed, "{:?}", write.errors);
    assert_eq!(write.bytes(), 2 * (64 * 4096 + 100));
    assert_eq!(write.latency.count(), 2 * 65);
    // What io_uring wrote is what the synchronous path reads back, stamp for stamp.
    let sync_read = Phase {
        verify: Some(7),
        ..phase(Op::Read, layout.clone(), 4096)
    };
    let read = run_phase(&target, &sync_read, &control, &Ranked::ALONE);
    assert_eq!(read.end, PhaseEnd::Completed, "{:?}", read.errors);
    // And the other way round, with every byte checked as it completes.
    let read = run_phase(
        &target,
        &queued(Op::Read, Pattern::Sequential, Some(7)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(read.end, PhaseEnd::Completed, "{:?}", read.errors);
    assert_eq!(read.bytes(), write.bytes());
    assert_eq!(read.latency.count(), 2 * 65);
    assert!(read.workers.iter().all(|w| w.verify_ns > 0));
    // Data from another run is caught.
    let stale = run_phase(
        &target,
        &queued(Op::Read, Pattern::Sequential, Some(8)),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(stale.end, PhaseEnd::Failed);
    assert!(
        stale.errors[0].first.contains("stale"),
        "{:?}",
        stale.errors
    );
}

#[test]
fn io_uring_on_a_target_without_descriptors_fails_before_any_operation() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(1, 4096);
    prepare_objects(&target, &layout).unwrap();
    let p = Phase {
        engine: crate::workload::Engine::IoUring,
        iodepth: 4,
        ..phase(Op::Write, layout, 4096)
    };
    let out = run_phase(&target, &p, &Control::new(1, 1), &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Failed);
    assert_eq!(out.bytes(), 0);
    assert!(out.errors[0].first.contains("RAW_FD"), "{:?}", out.errors);
}

#[test]
fn a_read_write_phase_keeps_each_kinds_books_and_reads_back_what_it_wrote() {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(2, 100 * 4096);
    let control = Control::new(5, 2);
    prepare_objects(&target, &layout).unwrap();
    let write = run_phase(
        &target,
        &phase(Op::Write, layout.clone(), 4096),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(write.end, PhaseEnd::Completed);
    let mixed = Phase {
        verify: Some(5),
        pattern: Pattern::Random { seed: 9 },
        ..phase(Op::ReadWrite { read_pct: 70 }, layout, 4096)
    };
    let out = run_phase(&target, &mixed, &control, &Ranked::ALONE);
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    let (reads, writes) = (&out.by_op[0], &out.by_op[1]);
    assert_eq!((reads.name, writes.name), (OpName::Read, OpName::Write));
    assert_eq!(reads.ops + writes.ops, 200);
    assert_eq!(reads.bytes + writes.bytes, out.bytes());
    // 70% reads, drawn per operation: well within these bounds for 200 draws.
    assert!((110..=170).contains(&reads.ops), "{} reads", reads.ops);
    assert_eq!(reads.latency.count() + writes.latency.count(), 200);
}

/// `--verify` (run `run`) of a read in blocks of `block` over the files of `layout` as they
/// are in `target`: the first error, or "ok".
fn verified(target: &MemTarget, layout: &Layout, block: u64, run: u64) -> String {
    let read = Phase {
        verify: Some(run),
        ..phase(Op::Read, layout.clone(), block)
    };
    let out = run_phase(
        target,
        &read,
        &Control::new(run, layout.files.len()),
        &Ranked::ALONE,
    );
    match out.end {
        PhaseEnd::Completed => "ok".into(),
        _ => {
            assert_eq!(out.errors[0].kind, "bad data", "{:?}", out.errors);
            out.errors[0].first.clone()
        }
    }
}

/// Writes `bytes` over file `name` of `target` at `offset`.
fn overwrite(target: &MemTarget, name: &str, offset: u64, bytes: &[u8]) {
    let mut h = target
        .open(
            name,
            OpenOptions {
                access: Access::Write,
                direct: false,
            },
        )
        .unwrap();
    h.write_at(bytes, offset).unwrap();
}

/// Two files of eight 4 KiB blocks and 10 bytes, written by run 42.
fn written() -> (MemTarget, Layout) {
    let target = MemTarget::new();
    let layout = Layout::file_per_worker(2, 8 * 4096 + 10);
    prepare_objects(&target, &layout).unwrap();
    let out = run_phase(
        &target,
        &phase(Op::Write, layout.clone(), 4096),
        &Control::new(42, 2),
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Completed, "{:?}", out.errors);
    (target, layout)
}

#[test]
fn verify_names_the_4k_that_differ_and_what_they_hold() {
    let (target, layout) = written();
    assert_eq!(verified(&target, &layout, 4096, 42), "ok");
    let data = target.contents("data.0").unwrap();
    let told = |target: &MemTarget| verified(target, &layout, 4096, 42);
    let at = |chunk: u64, what: &str| {
        format!("the 4 KiB at offset {chunk} are not what was written there: {what}")
    };
    // Bytes flipped past the stamp: how many, and the first.
    let mut bad = data[8192..12288].to_vec();
    for i in [100, 101, 3000] {
        bad[i] ^= 0xff;
    }
    overwrite(&target, "data.0", 8192, &bad);
    assert!(
        told(&target).ends_with(&at(
            8192,
            "corrupt: 3 of their bytes differ from what was written there, the first at offset 8292"
        )),
        "{}",
        told(&target)
    );
    // A stamp broken: no data it names is what the block holds.
    overwrite(&target, "data.0", 8192, &data[8192..12288]);
    let mut bad = data[12288..16384].to_vec();
    bad[5] ^= 1;
    overwrite(&target, "data.0", 12288, &bad);
    assert!(
        told(&target).ends_with(&at(
            12288,
            "corrupt: 1 of their bytes differ from what was written there, the first at offset 12293, its stamp among them"
        )),
        "{}",
        told(&target)
    );
    overwrite(&target, "data.0", 12288, &data[12288..16384]);
    assert_eq!(told(&target), "ok");
    // The block at 4096 holds the one at 20480 of the same file.
    overwrite(&target, "data.0", 4096, &data[20480..24576]);
    assert!(
        told(&target).ends_with(&at(
            4096,
            "misplaced: they hold the data of data.0 offset 20480"
        )),
        "{}",
        told(&target)
    );
    // ... of the other file.
    let other = target.contents("data.1").unwrap();
    overwrite(&target, "data.0", 4096, &other[8192..12288]);
    assert!(
        told(&target).ends_with(&at(
            4096,
            "misplaced: they hold the data of data.1 offset 8192"
        )),
        "{}",
        told(&target)
    );
    // ... of a file the layout does not have, named by its id.
    let mut foreign = vec![0u8; 4096];
    Generator::new(DataKind::Random, 42).fill(&mut foreign, 0x3039, 0);
    overwrite(&target, "data.0", 4096, &foreign);
    assert!(
        told(&target).ends_with(&at(
            4096,
            "misplaced: they hold the data of file id 0x3039 offset 0"
        )),
        "{}",
        told(&target)
    );
    // Another run's data, from another place.
    let mut stale = vec![0u8; 4096];
    Generator::new(DataKind::Random, 7).fill(&mut stale, file_key("data.0"), 16384);
    overwrite(&target, "data.0", 4096, &stale);
    assert!(
        told(&target).ends_with(&at(
            4096,
            "stale: they hold data another run (id 0x7) wrote at data.0 offset 16384"
        )),
        "{}",
        told(&target)
    );
    overwrite(&target, "data.0", 4096, &data[4096..8192]);
    assert_eq!(told(&target), "ok");
    // Read as another run's: the first block is stale, from its own place (of the file whose
    // worker failed first: the first failure stops the other).
    let as_another = verified(&target, &layout, 4096, 43);
    assert!(
        ["data.0", "data.1"]
            .iter()
            .any(|f| as_another.ends_with(&at(
                0,
                &format!("stale: they hold data another run (id 0x2a) wrote at {f} offset 0")
            ))),
        "{as_another}"
    );
}

#[test]
fn verify_of_reads_across_4k_boundaries_and_of_a_short_last_block() {
    let (target, layout) = written();
    let data = target.contents("data.1").unwrap();
    let at = |chunk: u64, what: &str| {
        format!("the 4 KiB at offset {chunk} are not what was written there: {what}")
    };
    // Blocks of 6 KiB: the read at 6144 starts inside the 4 KiB at 4096, whose stamp it does
    // not hold; a byte flipped there is corrupt, and its stamp is not told of.
    assert_eq!(verified(&target, &layout, 6144, 42), "ok");
    overwrite(&target, "data.1", 7000, &[data[7000] ^ 0x10]);
    assert!(
        verified(&target, &layout, 6144, 42).ends_with(&at(
            4096,
            "corrupt: 1 of their bytes differ from what was written there, the first at offset 7000"
        )),
        "{}",
        verified(&target, &layout, 6144, 42)
    );
    // The same byte read in 4 KiB blocks: inside the 4 KiB at 4096, past its stamp.
    assert!(
        verified(&target, &layout, 4096, 42).ends_with(&at(
            4096,
            "corrupt: 1 of their bytes differ from what was written there, the first at offset 7000"
        )),
        "{}",
        verified(&target, &layout, 4096, 42)
    );
    overwrite(&target, "data.1", 7000, &data[7000..7001]);
    // The last block is 10 bytes, shorter than a stamp: a byte of it flipped is corrupt.
    let end = 8 * 4096;
    overwrite(&target, "data.1", end + 3, &[data[end as usize + 3] ^ 1]);
    assert!(
        verified(&target, &layout, 4096, 42).ends_with(&at(
            end,
            "corrupt: 1 of their bytes differ from what was written there, the first at offset 32771"
        )),
        "{}",
        verified(&target, &layout, 4096, 42)
    );
}
