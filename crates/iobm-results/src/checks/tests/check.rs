//! `check`: what it leaves in the phase.

use super::*;

#[test]
fn check_sets_the_warnings_then_the_notes_and_the_verdict() {
    // Uneven workers over a data set that fits in the RAM: warnings to tell.
    let mut p = phase(
        "read",
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
