//! `check`: what it leaves in the phase; the storage warnings it passes on, and a write of nothing.

use super::*;

#[test]
fn check_sets_the_warnings_then_the_notes_and_the_verdict() {
    // Uneven workers over a data set that fits in the RAM: warnings to tell.
    let mut p = phase(
        OpName::Read,
        [100 * MIB, 100 * MIB],
        [1_000_000_000, 2_000_000_000],
    );
    p.notes = vec!["a note".into()];
    let machine = Machine::with_ram(RAM);
    let mut expected = phase_warnings(&p, &machine);
    assert!(!expected.is_empty());
    expected.push("a note".into());
    let verdict = crate::verdict::verdict(&p, &machine);
    // What a saved run held before is replaced, not added to.
    p.warnings = vec!["an old warning".into()];
    check(&mut p, &machine);
    assert_eq!(p.warnings, expected);
    assert_eq!(p.cache.verdict, Some(verdict.clone()));
    check(&mut p, &machine);
    assert_eq!(p.warnings, expected, "checked twice, told once");
    assert_eq!(p.cache.verdict, Some(verdict));
}

/// One kind of operation's figures, `bytes` of them.
fn operation(op: OpName, bytes: u64, p: &PhaseResult) -> OperationResult {
    OperationResult {
        op,
        ops: bytes / MIB,
        bytes,
        errors: 0,
        retried: 0,
        keys: 0,
        ops_per_s: 0.0,
        bytes_per_s: 0.0,
        latency: p.latency.clone(),
        ttfb: None,
        series: None,
    }
}

#[test]
fn the_storage_counters_warnings_are_told_of_phases_without_puts() {
    let machine = Machine::with_ram(RAM);
    let other_io = "the device 8:0 delivered";
    // A device that delivered a hundred times what the GETs read: other I/O ran on it.
    let mut get = phase(OpName::Get, [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    get.operations = vec![operation(OpName::Get, 100 * MIB, &get)];
    get.cache.device = Some(DeviceIo {
        device: "8:0".into(),
        read_bytes: 10_000 * MIB,
        written_bytes: 0,
    });
    assert!(
        says(&get, &machine, other_io),
        "{:?}",
        phase_warnings(&get, &machine)
    );
    // A PUT phase's device counters are not the evidence of what it did.
    let mut put = get.clone();
    put.op = OpName::Put;
    put.operations = vec![operation(OpName::Put, 100 * MIB, &put)];
    assert!(
        !says(&put, &machine, other_io),
        "{:?}",
        phase_warnings(&put, &machine)
    );
}

#[test]
fn a_write_that_moved_nothing_gets_no_cache_warning() {
    let machine = Machine::with_ram(RAM);
    let mut p = phase(OpName::Write, [0, 0], [1_000_000_000; 2]);
    p.settings.fsync = FsyncPolicy::Never;
    assert!(
        !says(&p, &machine, "possible cache effect"),
        "{:?}",
        phase_warnings(&p, &machine)
    );
    p.cache.device = Some(DeviceIo {
        device: "8:0".into(),
        read_bytes: 0,
        written_bytes: 0,
    });
    assert!(
        !says(&p, &machine, "cache effect: only"),
        "{:?}",
        phase_warnings(&p, &machine)
    );
    // The same write of a byte: told.
    let mut one = phase(OpName::Write, [1, 0], [1_000_000_000; 2]);
    one.settings.fsync = FsyncPolicy::Never;
    assert!(says(
        &one,
        &machine,
        "possible cache effect: without --fsync"
    ));
}
