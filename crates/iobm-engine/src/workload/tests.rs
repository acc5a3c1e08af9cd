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
    use iobm_stats::names::ops::moves_data;
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
    assert!(moving.iter().all(|op| moves_data(op.name())));
    assert!(!counted.iter().any(|op| moves_data(op.name())));
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
