//! Unit tests of the comparison's prose wrapping and its values.

use super::{value_text, wrap, Cell};

#[test]
fn prose_below_a_table_is_wrapped_between_words_to_its_width() {
    let text =
        "  run (tests): the file is smaller than twice the RAM, so rates may include cache effects";
    let wrapped = wrap(text, 40, "    ");
    assert_eq!(
        wrapped,
        "  run (tests): the file is smaller than\n    twice the RAM, so rates may include\n    cache effects\n"
    );
    assert!(wrapped.lines().all(|l| l.chars().count() <= 40));
    // Nothing is lost or reordered.
    let words: Vec<&str> = wrapped.split_whitespace().collect();
    assert_eq!(words, text.split_whitespace().collect::<Vec<_>>());
    // A word longer than the width keeps a line of its own.
    assert_eq!(wrap("a verylongword b", 5, ""), "a\nverylongword\nb\n");
}

#[test]
fn a_repeated_runs_interval_is_printed_as_its_bounds() {
    // The median of skewed repetitions and the interval of their geometric mean: not
    // "381.52 +-1427.49", which would reach below zero.
    let cell = Cell {
        value: Some(381.52),
        ci95: Some([78.0, 2933.0]),
        ..Cell::default()
    };
    assert_eq!(value_text(&cell, false), "381.52 [78.00, 2933.00]");
}
