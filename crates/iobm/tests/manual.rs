//! The man pages and shell completions the repository keeps (`docs/man/`, `completions/`) are
//! what `iobm generate` makes of the command line's definitions today.

use iobm::manual::{COMPLETIONS_DIR, MAN_DIR};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

const REGENERATE: &str = "rm -rf docs/man completions && cargo run --locked -p iobm -- generate .";

/// The files of `dir` by name, with their contents (none when `dir` is missing).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn the_checked_in_man_pages_and_completions_are_made_from_the_flags() {
    let made = tempfile::tempdir().unwrap();
    assert_cmd::Command::cargo_bin("iobm")
        .unwrap()
        .arg("generate")
        .arg(made.path())
        .assert()
        .success();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for dir in [MAN_DIR, COMPLETIONS_DIR] {
        let (kept, now) = (files(&root.join(dir)), files(&made.path().join(dir)));
        assert!(!now.is_empty(), "iobm generate made nothing in {dir}");
        let names: BTreeSet<&String> = kept.keys().chain(now.keys()).collect();
        let differing: Vec<&String> = names
            .into_iter()
            .filter(|name| kept.get(*name) != now.get(*name))
            .collect();
        assert!(
            differing.is_empty(),
            "{dir}: {differing:?} differ from what iobm makes of its flags; make them again from \
             the repository's root: {REGENERATE}"
        );
    }
}
