//! Unit tests of the comparison's prose wrapping.

use super::wrap;

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
