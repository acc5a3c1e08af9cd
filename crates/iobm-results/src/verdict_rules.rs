//! One unit test per rule of the cache verdict on files and of the object rules that judge by
//! bytes (a read/write mix, a rewrite, writes the device counted, `--fsync each`, a PUT judged
//! by what the gateway received, GETs over PUTs at the exact factor); the layers' and other
//! I/O's rules are tested in `storage`; and the edges of each rule the mutation testing of
//! `verdict.rs` found untested (TESTING.md).

use crate::checks::tests::{phase, says, MIB, RAM};
use crate::checks::{Machine, GET_OVER_PUT};
use crate::verdict::rules::tests::operation;
use crate::verdict::verdict;
use crate::{DeviceIo, PhaseResult, ServerEvidence, Verdict};
use iobm_stats::names::OpName;
use iobm_stats::names::{FsyncPolicy, Picks};

fn device(read: u64, written: u64) -> Option<DeviceIo> {
    Some(DeviceIo {
        device: "8:0".into(),
        read_bytes: read * MIB,
        written_bytes: written * MIB,
    })
}

fn of(p: &PhaseResult) -> (Verdict, String) {
    let v = verdict(p, &Machine::with_ram(RAM));
    (v.verdict, v.evidence)
}

#[test]
fn a_read_write_mix_is_as_cached_as_the_more_cached_half() {
    let mut mix = phase(
        OpName::Readwrite,
        [100 * MIB, 100 * MIB],
        [1_000_000_000; 2],
    );
    mix.operations = vec![
        operation(&mix, OpName::Read, 100 * MIB),
        operation(&mix, OpName::Write, 100 * MIB),
    ];
    for ((read, written), expected) in [
        ((100, 100), Verdict::Uncached),
        ((100, 50), Verdict::PartlyCached),
        ((100, 5), Verdict::Cached),
        ((5, 100), Verdict::Cached),
    ] {
        mix.cache.device = device(read, written);
        let (v, evidence) = of(&mix);
        assert_eq!(v, expected, "{read}/{written}: {evidence}");
    }
    mix.cache.device = device(100, 50);
    let (_, evidence) = of(&mix);
    assert!(
        evidence.contains("delivered 100.00 MiB of the 100.00 MiB read (100%) and took 50.00 MiB of the 100.00 MiB written (50%)"),
        "{evidence}"
    );
}

#[test]
fn a_rewrite_counts_both_halves_neither_for_more_than_its_own() {
    let mut rewrite = phase(OpName::Rewrite, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    rewrite.cache.device = device(100, 100);
    assert_eq!(of(&rewrite).0, Verdict::Uncached);
    // Read from the device, written back into the page cache: half of it.
    rewrite.cache.device = device(100, 0);
    let (v, evidence) = of(&rewrite);
    assert_eq!(v, Verdict::PartlyCached, "{evidence}");
    assert!(
        evidence.ends_with("read and written back (50%)"),
        "{evidence}"
    );
    // Readahead's extra reads (this run's own, by /proc/self/io) do not make up for the writes
    // that stayed in memory.
    rewrite.cache.device = device(300, 0);
    rewrite.cache.own_io = Some(crate::storage::OwnIo {
        read_bytes: 300 * MIB,
        written_bytes: 100 * MIB,
    });
    let (v, evidence) = of(&rewrite);
    assert_eq!(v, Verdict::PartlyCached, "{evidence}");
    rewrite.cache.device = device(5, 5);
    assert_eq!(of(&rewrite).0, Verdict::Cached);
}

#[test]
fn writes_are_judged_by_what_the_device_took_before_any_flag() {
    let mut write = phase(OpName::Write, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    for (written, expected) in [
        (95, Verdict::Uncached),
        (50, Verdict::PartlyCached),
        (5, Verdict::Cached),
    ] {
        write.cache.device = device(0, written);
        assert_eq!(of(&write).0, expected, "{written} MiB");
    }
    // The device's counters outrank O_DIRECT and the flush policy.
    write.settings.direct = true;
    write.settings.fsync = FsyncPolicy::Each;
    write.cache.device = device(0, 5);
    let (v, evidence) = of(&write);
    assert_eq!(v, Verdict::Cached, "{evidence}");
    assert!(
        evidence.starts_with(
            "the block device 8:0 took 5.00 MiB of the 100.00 MiB written during the phase (5%)"
        ),
        "{evidence}"
    );
}

#[test]
fn without_device_counters_writes_are_judged_by_o_direct_and_fsync() {
    let mut write = phase(OpName::Write, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    let (v, evidence) = of(&write);
    assert_eq!(v, Verdict::PossiblyCached, "{evidence}");
    write.settings.fsync = FsyncPolicy::Each;
    let (v, evidence) = of(&write);
    assert_eq!(v, Verdict::Uncached);
    assert!(
        evidence.starts_with("every write was followed by fsync inside its time"),
        "{evidence}"
    );
    write.settings.fsync = FsyncPolicy::End;
    assert!(of(&write).1.starts_with("each worker's final fsync"));
    write.settings.fsync = FsyncPolicy::Never;
    write.settings.direct = true;
    let (v, evidence) = of(&write);
    assert_eq!(v, Verdict::Uncached);
    assert!(evidence.starts_with("O_DIRECT writes bypass"), "{evidence}");
}

fn put_phase(received: u64, device_written: Option<u64>) -> PhaseResult {
    let mut put = phase(OpName::Put, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    put.operations = vec![operation(&put, OpName::Put, 100 * MIB)];
    put.settings.data_bytes = 0;
    // From its JSON, which leaves every field it does not name at its default.
    let gateway: ServerEvidence = serde_json::from_value(serde_json::json!({
        "endpoint": "http://h:9000",
        "served_bytes": 0,
        "resident_bytes": 0,
        "received_bytes": received * MIB,
        "device_read_bytes": device_written.map(|_| 0),
        "device_written_bytes": device_written.map(|w| w * MIB),
        "device": device_written.map(|_| "8:0"),
        "cpu_s": 0.0,
    }))
    .unwrap();
    put.cache.servers = vec![gateway];
    put
}

#[test]
fn a_put_is_judged_by_what_the_gateway_received_and_its_device_wrote() {
    for (written, expected) in [
        (100, Verdict::Uncached),
        (40, Verdict::PartlyCached),
        (2, Verdict::Cached),
    ] {
        let (v, evidence) = of(&put_phase(100, Some(written)));
        assert_eq!(v, expected, "{written}: {evidence}");
    }
    let (_, evidence) = of(&put_phase(100, Some(40)));
    assert!(
        evidence.starts_with(
            "the gateway received 100.00 MiB; its storage wrote 40.00 MiB during the phase (40%)"
        ),
        "{evidence}"
    );
    // Shares are of what the gateway received, not of what the clients sent.
    let (v, _) = of(&put_phase(50, Some(48)));
    assert_eq!(v, Verdict::Uncached);
    let (v, evidence) = of(&put_phase(100, None));
    assert_eq!(v, Verdict::PossiblyCached);
    assert!(evidence.contains("no device counters"), "{evidence}");
}

#[test]
fn gets_over_puts_are_flagged_only_beyond_the_exact_factor() {
    // 200 MiB of GETs in one second.
    let mut get = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    get.operations = vec![operation(&get, OpName::Get, 200 * MIB)];
    get.settings.data_bytes = 1 << 40;
    let after_puts_of = |put: f64| Machine {
        put_bytes_per_s: Some(put),
        ..Machine::with_ram(RAM)
    };
    let at_factor = 200.0 * MIB as f64 / GET_OVER_PUT;
    assert!(!says(
        &get,
        &after_puts_of(at_factor),
        "possible cache effect"
    ));
    assert!(says(
        &get,
        &after_puts_of(at_factor * 0.999),
        "possible cache effect: the GETs moved 200.00 MiB/s, 5.0 times"
    ));
}

#[test]
fn a_mix_judges_each_half_by_its_own_bytes() {
    // 100 MiB read, 50 MiB written, each all through the device: uncached. Either half judged
    // by the other's bytes would be 200% and 50%.
    let mut mix = phase(OpName::Readwrite, [75 * MIB, 75 * MIB], [1_000_000_000; 2]);
    mix.operations = vec![
        operation(&mix, OpName::Read, 100 * MIB),
        operation(&mix, OpName::Write, 50 * MIB),
    ];
    mix.cache.device = device(100, 50);
    assert_eq!(of(&mix).0, Verdict::Uncached, "{}", of(&mix).1);
    // A half with no bytes is not judged: all writes, all on the device.
    mix.operations = vec![
        operation(&mix, OpName::Read, 0),
        operation(&mix, OpName::Write, 150 * MIB),
    ];
    mix.cache.device = device(0, 150);
    assert_eq!(of(&mix).0, Verdict::Uncached, "{}", of(&mix).1);
    mix.operations = vec![
        operation(&mix, OpName::Read, 150 * MIB),
        operation(&mix, OpName::Write, 0),
    ];
    mix.cache.device = device(150, 0);
    assert_eq!(of(&mix).0, Verdict::Uncached, "{}", of(&mix).1);
}

#[test]
fn a_data_set_is_over_twice_the_ram_only_from_twice_the_ram() {
    let mut read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    for (ram, expected) in [
        (100, Verdict::Uncached),
        (101, Verdict::PossiblyCached),
        (150, Verdict::PossiblyCached),
    ] {
        read.settings.data_bytes = 200 * MIB;
        let v = verdict(&read, &Machine::with_ram(ram * MIB));
        assert_eq!(v.verdict, expected, "RAM {ram} MiB: {}", v.evidence);
    }
}

#[test]
fn a_network_file_systems_server_memory_counts_for_a_data_set_smaller_than_it() {
    // O_DIRECT reads on NFS: the server's memory (twice this client's RAM, 100 MiB) may hold
    // a data set under it, not one of its size or one of no size.
    let nfs = Machine {
        network_fs: true,
        ..Machine::with_ram(50 * MIB)
    };
    let mut read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    read.settings.direct = true;
    for (data, expected) in [
        (100 * MIB - 1, Verdict::PossiblyCached),
        (100 * MIB, Verdict::Uncached),
        (0, Verdict::Uncached),
    ] {
        read.settings.data_bytes = data;
        let v = verdict(&read, &nfs);
        assert_eq!(v.verdict, expected, "{data}: {}", v.evidence);
        assert_eq!(
            v.evidence.contains("fits in the server's memory"),
            expected != Verdict::Uncached
        );
    }
}

/// A GET phase of `get` MiB in `seconds` over a data set of `data` MiB, served by a gateway
/// that found `resident` of its 100 MiB in its page cache (None: no gateway counters).
fn get_phase(get: u64, seconds: u64, data: u64, resident: Option<u64>) -> PhaseResult {
    let mut p = phase(
        OpName::Get,
        [get * MIB / 2, get * MIB / 2],
        [seconds * 1_000_000_000; 2],
    );
    p.operations = vec![operation(&p, OpName::Get, get * MIB)];
    p.settings.data_bytes = data * MIB;
    p.cache.servers = resident
        .map(|r| ServerEvidence {
            endpoint: "http://h:9000".into(),
            served_bytes: 100 * MIB,
            resident_bytes: r * MIB,
            ..ServerEvidence::default()
        })
        .into_iter()
        .collect();
    p
}

#[test]
fn a_versioned_phase_is_never_told_to_drop_caches_before_it_or_to_keep_its_data_set() {
    let builtin = Machine {
        builtin_gateway: true,
        ..Machine::with_ram(RAM)
    };
    let mut versioned = get_phase(200, 1, 100, Some(95));
    let advice = |p: &PhaseResult| verdict(p, &builtin).evidence;
    assert!(advice(&versioned).contains("--drop-caches"));
    assert!(advice(&versioned).contains("--keep"));
    versioned.op = OpName::Versioned;
    let told = advice(&versioned);
    assert!(told.contains("versions it stored itself"), "{told}");
    for untrue in ["--drop-caches", "--keep", "--reuse", "--server-drop-cmd"] {
        assert!(!told.contains(untrue), "{untrue}: {told}");
    }
}

#[test]
fn a_gateways_share_from_its_storage_decides_and_passes_are_told_only_when_known() {
    for (resident, expected) in [
        (50, Verdict::PartlyCached),
        (95, Verdict::Cached),
        (2, Verdict::Uncached),
    ] {
        let v = verdict(
            &get_phase(200, 1, 100, Some(resident)),
            &Machine::with_ram(RAM),
        );
        assert_eq!(v.verdict, expected, "{resident}: {}", v.evidence);
        assert!(
            v.evidence
                .contains("the GETs read the data set (100.00 MiB) 2.0 times over"),
            "{}",
            v.evidence
        );
    }
    // No data set, or no GET bytes (HEADs): no passes.
    // (The workers still moved bytes, or the phase would have moved nothing.)
    let mut no_get_bytes = get_phase(200, 1, 100, Some(50));
    no_get_bytes.operations[0].bytes = 0;
    for p in [get_phase(200, 1, 0, Some(50)), no_get_bytes] {
        let v = verdict(&p, &Machine::with_ram(RAM));
        assert!(!v.evidence.contains("times over"), "{}", v.evidence);
    }
}

#[test]
fn without_counters_gets_are_judged_by_the_line_rate_passes_and_server_memory() {
    let machine = |line: Option<u64>, server_ram: Option<u64>| Machine {
        line_rate_bytes_per_s: line.map(|l| l * MIB),
        server_ram_bytes: server_ram.map(|r| r * MIB),
        ..Machine::with_ram(RAM)
    };
    let of_on = |p: &PhaseResult, m: Machine| verdict(p, &m);
    // 200 MiB in 2 s is 100 MiB/s: above a line rate of 99, not of 100 or 150.
    let get = get_phase(200, 2, 1 << 20, None);
    assert_eq!(
        of_on(&get, machine(Some(99), None)).verdict,
        Verdict::Cached
    );
    for line in [100, 150] {
        let v = of_on(&get, machine(Some(line), None));
        assert_eq!(v.verdict, Verdict::Unknown, "{line}: {}", v.evidence);
    }
    // A phase of no time has no rate.
    let mut instant = get_phase(200, 1, 1 << 20, None);
    instant.end_ns = instant.start_ns;
    assert_eq!(
        of_on(&instant, machine(Some(1), None)).verdict,
        Verdict::Unknown
    );
    // Read more than twice over: possibly cached; twice, or 1.5 times, or of no data set: not.
    assert_eq!(
        of_on(&get_phase(201, 1, 100, None), machine(None, None)).verdict,
        Verdict::PossiblyCached
    );
    for (get, data) in [(200, 100), (150, 100), (200, 0)] {
        let v = of_on(&get_phase(get, 1, data, None), machine(None, None));
        assert_eq!(v.verdict, Verdict::Unknown, "{get}/{data}: {}", v.evidence);
    }
    // A data set under the stated server memory, not one of its size or of no size.
    let v = of_on(&get_phase(100, 1, 99, None), machine(None, Some(100)));
    assert_eq!(v.verdict, Verdict::PossiblyCached, "{}", v.evidence);
    for data in [100, 0] {
        let v = of_on(&get_phase(100, 1, data, None), machine(None, Some(100)));
        assert_eq!(v.verdict, Verdict::Unknown, "{data}: {}", v.evidence);
    }
}

#[test]
fn the_ways_to_an_uncached_figure_are_only_those_that_apply() {
    let advice = |p: &PhaseResult, m: Machine| verdict(p, &m).evidence;
    let builtin = Machine {
        builtin_gateway: true,
        ..Machine::with_ram(100 * MIB)
    };
    // The built-in gateway, 95% resident: --drop-caches, a larger data set, no
    // --server-drop-cmd.
    let cached = get_phase(200, 1, 50, Some(95));
    let told = advice(&cached, builtin);
    assert!(
        told.contains("; for an uncached figure: --drop-caches"),
        "{told}"
    );
    assert!(
        told.contains(
            "a data set larger than the server's RAM (100.00 MiB; this one is 50.00 MiB)"
        ),
        "{told}"
    );
    assert!(!told.contains("--server-drop-cmd"), "{told}");
    // Already with --drop-caches: not again; a data set the size of the RAM: no larger one.
    let mut dropped = get_phase(200, 1, 100, Some(95));
    dropped.settings.drop_cache = true;
    let told = advice(&dropped, builtin);
    assert!(!told.contains("--drop-caches"), "{told}");
    assert!(!told.contains("a data set larger"), "{told}");
    // Another gateway on a stated server RAM: --server-drop-cmd, no --drop-caches.
    let other = Machine {
        server_ram_bytes: Some(1 << 40),
        ..Machine::with_ram(100 * MIB)
    };
    let told = advice(&cached, other);
    assert!(told.contains("--server-drop-cmd"), "{told}");
    assert!(!told.contains("--drop-caches"), "{told}");
    // A kept set read at random after the run dropped the cache: --once, and no drop asked for
    // as if none had happened.
    let reused = |picks| Machine {
        reused_data_set: true,
        picks: Some(picks),
        ..builtin
    };
    let told = advice(&dropped, reused(Picks::Random));
    assert!(told.contains("; for an uncached figure: --once, to read each object once: this run picked objects at random"), "{told}");
    assert!(!told.contains("page cache dropped just before"), "{told}");
    // Each read once, nothing dropped by the run: a drop, said as not recorded.
    let told = advice(&cached, reused(Picks::Once));
    assert!(!told.contains("--once"), "{told}");
    assert!(told.contains("reading the kept data set again (this run dropped none; a drop by hand on the server is not recorded)"), "{told}");
    // Uncached GETs, or a cached phase without GET bytes: no advice.
    assert!(!advice(&get_phase(200, 1, 50, Some(0)), builtin).contains("for an uncached figure"));
    let (v, told) = of(&put_phase(100, Some(2)));
    assert_eq!(v, Verdict::Cached);
    assert!(!told.contains("for an uncached figure"), "{told}");
    let mut head = put_phase(100, Some(2));
    head.operations.push(operation(&head, OpName::Get, 0));
    assert!(
        !of(&head).1.contains("for an uncached figure"),
        "{}",
        of(&head).1
    );
}

#[test]
fn the_built_in_gateway_without_its_counters_in_the_document_is_unknown_and_says_so() {
    // Documents saved before the built-in gateway's counters were kept.
    let builtin = Machine {
        builtin_gateway: true,
        ..Machine::with_ram(RAM)
    };
    let mut get = get_phase(100, 1, 100, None);
    get.settings.data_bytes = 2 * RAM;
    let v = verdict(&get, &builtin);
    assert_eq!(
        (
            v.verdict.clone(),
            v.evidence
                .starts_with("the built-in gateway's counters are not in this document")
        ),
        (Verdict::Unknown, true),
        "{}",
        v.evidence
    );
}
