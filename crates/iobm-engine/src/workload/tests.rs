//! Unit tests of workloads: data-set sizes, layouts and their serialised form.

use super::*;

#[test]
fn the_data_set_counts_each_byte_once_however_many_workers_cover_it() {
    let region = |file, offset, len| Region {
        file,
        offset,
        len,
        visit: None,
    };
    let file = |size| FileSpec {
        name: "f".into(),
        size,
    };
    // Five seekers over one 2 GiB file: 2 GiB, not 10.
    let seekers = Layout {
        shared: false,
        files: vec![file(2 << 30)],
        regions: (0..5).map(|_| region(0, 0, 2 << 30)).collect(),
    };
    assert_eq!(seekers.total_bytes(), 10 << 30);
    assert_eq!(seekers.data_bytes(), 2 << 30);
    // Disjoint regions of a shared file, and overlapping ones, and other files.
    let mixed = Layout {
        shared: true,
        files: vec![file(300), file(100)],
        regions: vec![
            region(0, 0, 100),
            region(0, 100, 100),
            region(0, 150, 100),
            region(1, 0, 100),
        ],
    };
    assert_eq!(mixed.data_bytes(), 350);
    assert_eq!(Layout::for_rank(false, 0, 1, 3, 64).data_bytes(), 3 * 64);
}

#[test]
fn a_phase_of_known_length_gets_at_least_twenty_readable_intervals() {
    let of = |ms| StopRule::Duration(Duration::from_millis(ms)).default_interval();
    let ms = Duration::from_millis;
    assert_eq!(of(2_000), ms(100));
    assert_eq!(of(3_000), ms(100));
    assert_eq!(of(10_000), ms(500));
    assert_eq!(of(19_999), ms(500));
    assert_eq!(of(20_000), ms(1000));
    assert_eq!(of(3_600_000), ms(1000));
    assert_eq!(of(1_000), ms(50));
    // Never below 10ms, however short the phase.
    assert_eq!(of(100), ms(10));
    for length in [250, 900, 2_500, 7_000, 15_000] {
        assert!(ms(length) >= of(length) * 20, "{length} ms");
    }
    // Phases of unknown length keep 1s.
    assert_eq!(StopRule::Once.default_interval(), ms(1000));
    assert_eq!(StopRule::Ops(10).default_interval(), ms(1000));
}

#[test]
fn operations_that_move_data_are_named_so_for_readers_of_results() {
    let moving = [
        Op::Write,
        Op::Read,
        Op::Rewrite,
        Op::PutChar(PerChar::Buffered),
        Op::GetChar(PerChar::Syscall),
        Op::Object(ObjectOp::Put),
        Op::Object(ObjectOp::Get),
        Op::Object(ObjectOp::Multipart),
        Op::Object(ObjectOp::Mixed),
    ];
    let counted = [
        Op::Seek { rewrite_pct: 10 },
        Op::Create,
        Op::Stat,
        Op::Delete,
        Op::Object(ObjectOp::Head),
        Op::Object(ObjectOp::Delete),
        Op::Object(ObjectOp::List),
    ];
    assert!(moving.iter().all(|op| op.name().moves_data()));
    assert!(!counted.iter().any(|op| op.name().moves_data()));
}

fn phase(pattern: Pattern, block: u64) -> Phase {
    Phase {
        pattern,
        ..Phase::new("p", Op::Read, block, Layout::file_per_worker(2, 1 << 20))
    }
}

#[test]
fn ranks_get_disjoint_parts_of_one_layout() {
    let one = Layout::file_per_worker(3, 10);
    assert_eq!(one.files[2].name, "data.2");
    assert_eq!((one.regions[2].file, one.regions[2].offset), (2, 0));
    let shared = Layout::shared_file(3, 10);
    assert_eq!(shared.files.len(), 1);
    assert_eq!(shared.regions[2].offset, 20);
    let r1 = Layout::for_rank(false, 1, 2, 2, 10);
    assert_eq!(r1.files[0].name, "data.2");
    let s1 = Layout::for_rank(true, 1, 2, 2, 10);
    assert_eq!(s1.files[0].size, 40);
    assert_eq!((s1.regions[0].offset, s1.regions[1].offset), (20, 30));
}

#[test]
fn limits_follow_what_was_written() {
    let seq_write = phase(Pattern::Sequential, 65536);
    let mut read = phase(Pattern::Random { seed: 1 }, 4096);
    read.limit_to_written(&seq_write, &[1 << 20, 100_000]);
    assert_eq!(read.layout.regions[0].len, 1 << 20);
    assert_eq!(read.layout.regions[1].len, 98_304);

    let random_write = phase(Pattern::Random { seed: 1 }, 4096);
    let mut reread = random_write.clone();
    reread.limit_to_written(&random_write, &[40960, 1 << 20]);
    assert_eq!(reread.layout.regions[0].visit, Some(10));
    assert_eq!(reread.layout.regions[1].visit, None);
}

#[test]
fn a_strided_file_interleaves_every_workers_transfers_and_covers_it_exactly() {
    // IO500's transfer size, 3 ranks of 2 workers, 5 segments.
    let (t, ranks, jobs, segments) = (47008u64, 3, 2, 5u64);
    let workers = (ranks * jobs) as u64;
    let interleave = Interleave::of(ranks * jobs, t, segments);
    let mut transfers = Vec::new();
    for rank in 0..ranks {
        let layout = Layout::strided(rank, ranks, jobs, t, segments);
        assert_eq!(layout.files.len(), 1);
        assert_eq!(layout.files[0].size, workers * segments * t);
        assert_eq!(layout.workers(), jobs);
        assert_eq!(layout.data_bytes(), jobs as u64 * segments * t);
        for (w, region) in layout.regions.iter().enumerate() {
            let g = (rank * jobs + w) as u64;
            for s in 0..segments {
                let at = interleave.place(region.offset + s * t);
                assert_eq!(at, (s * workers + g) * t, "segment {s} of worker {g}");
                // A transfer stays whole: its last byte is right after its first.
                assert_eq!(interleave.place(region.offset + s * t + t - 1), at + t - 1);
                transfers.push((at, g));
            }
        }
    }
    transfers.sort_unstable();
    // Never overlapping, no gap: the file exactly.
    let starts: Vec<u64> = transfers.iter().map(|&(at, _)| at).collect();
    let tiled: Vec<u64> = (0..workers * segments).map(|k| k * t).collect();
    assert_eq!(starts, tiled);
    // Neighbours are different workers': the transfers interleave.
    assert!(transfers.windows(2).all(|p| p[0].1 != p[1].1));
    let phase = Phase::strided("write", Op::Write, 1, ranks, jobs, t, segments);
    assert_eq!((phase.block, phase.interleave), (t, Some(interleave)));
    assert_eq!(phase.layout, Layout::strided(1, ranks, jobs, t, segments));
}

#[test]
fn a_stonewalled_creation_limits_exactly_the_phases_on_what_it_made() {
    let tree = Tree {
        base: "t".into(),
        depth: 0,
        branch: 1,
        items: 100,
        per: ItemsPer::Worker,
        unique: false,
        leaves_only: false,
        ranks: 1,
        jobs: 2,
    };
    let work = TreeWork::new(tree, 0);
    let phase = |op: MetaOp| Phase::meta(op.name(), op, work.clone());
    let limited = |create: MetaOp, later: MetaOp| {
        let mut p = phase(later);
        p.limit_to_made(&phase(create), 7);
        p.tree.unwrap().limit
    };
    for later in [
        MetaOp::FileStat,
        MetaOp::FileRead,
        MetaOp::FileRename,
        MetaOp::FileRemove,
    ] {
        assert_eq!(limited(MetaOp::FileCreate, later), Some(7), "{later:?}");
        assert_eq!(limited(MetaOp::DirCreate, later), None, "{later:?}");
    }
    for later in [MetaOp::DirStat, MetaOp::DirRemove] {
        assert_eq!(limited(MetaOp::DirCreate, later), Some(7), "{later:?}");
        assert_eq!(limited(MetaOp::FileCreate, later), None, "{later:?}");
    }
    // Neither another creation nor the tree's own directories.
    for later in [
        MetaOp::FileCreate,
        MetaOp::DirCreate,
        MetaOp::TreeCreate,
        MetaOp::TreeRemove,
    ] {
        assert_eq!(limited(MetaOp::FileCreate, later), None, "{later:?}");
        assert_eq!(limited(MetaOp::DirCreate, later), None, "{later:?}");
    }
    // A phase that is no metadata phase is left alone.
    let mut write = Phase::new("w", Op::Write, 4096, Layout::file_per_worker(1, 4096));
    write.limit_to_made(&phase(MetaOp::FileCreate), 7);
    assert!(write.tree.is_none());
}
