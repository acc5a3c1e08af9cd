//! `--verify` checks every byte a read returns and names what it found instead: corrupt bytes,
//! a block of another place (misplaced), a block of another run (stale), or a file cut short;
//! with either engine, the read that found it.

mod common;

use common::{entries, iobm};
use std::path::{Path, PathBuf};

/// A kept data set of 1 MiB in `parent`; returns its directory.
fn kept(parent: &Path) -> PathBuf {
    let before = entries(parent);
    iobm()
        .args(["write", "--keep", "--size", "1MiB", "--block", "64k"])
        .arg(parent)
        .assert()
        .success();
    let made = entries(parent)
        .into_iter()
        .find(|e| !before.contains(e))
        .unwrap();
    parent.join(made)
}

/// `iobm read --verify` of `dir`, which must fail with `code`; its standard error.
fn verify_fails(dir: &Path, code: i32) -> String {
    verify_fails_with(dir, code, &[])
}

/// `iobm read --verify EXTRA...` of `dir`, which must fail with `code`; its standard error.
fn verify_fails_with(dir: &Path, code: i32, extra: &[&str]) -> String {
    let out = iobm()
        .args(["read", "--verify"])
        .args(extra)
        .arg(dir)
        .assert()
        .code(code)
        .get_output()
        .clone();
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn every_kind_of_damage_is_caught_and_named() {
    let parent = tempfile::tempdir().unwrap();
    let ours = kept(parent.path());
    let other = kept(parent.path());
    let file = ours.join("data.0");
    let pristine = std::fs::read(&file).unwrap();
    let theirs = std::fs::read(other.join("data.0")).unwrap();
    iobm()
        .args(["read", "--verify"])
        .arg(&ours)
        .assert()
        .success();
    let damaged_with = |change: &dyn Fn(&mut Vec<u8>), code: i32| {
        let mut bytes = pristine.clone();
        change(&mut bytes);
        std::fs::write(&file, &bytes).unwrap();
        verify_fails(&ours, code)
    };
    let damaged = |change: &dyn Fn(&mut Vec<u8>)| damaged_with(change, 3);

    // One byte in the middle of a 4 KiB chunk, where no stamp is.
    let err = damaged(&|b| b[100_000] ^= 0x01);
    assert!(
        err.contains("the 4 KiB at offset 98304")
            && err.contains("corrupt: 1 of their bytes differ")
            && err.contains("first at offset 100000")
            && err.contains("bad data"),
        "{err}"
    );
    // Two blocks swapped.
    let err = damaged(&|b| {
        let (a, c) = b.split_at_mut(16384);
        a[8192..12288].swap_with_slice(&mut c[..4096]);
    });
    assert!(
        err.contains("the 4 KiB at offset 8192")
            && err.contains("misplaced: they hold the data of data.0 offset 16384"),
        "{err}"
    );
    // A block another run wrote at the same place.
    let err = damaged(&|b| b[32768..36864].copy_from_slice(&theirs[32768..36864]));
    assert!(
        err.contains("the 4 KiB at offset 32768")
            && err.contains("stale: they hold data another run"),
        "{err}"
    );
    // The file cut short: found before anything is read.
    let err = damaged_with(&|b| b.truncate(500_000), 2);
    assert!(err.contains("data.0"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

/// The 64 KiB reads of a 1 MiB file, one byte flipped in the second: the error names that read
/// (at 65536), whether it was the last one prepared (sync) or one of eight in flight while the
/// worker had prepared later ones (io_uring), or copied out of the mapping (mmap).
#[test]
fn the_read_that_found_bad_data_is_named_with_either_engine() {
    let parent = tempfile::tempdir().unwrap();
    let ours = kept(parent.path());
    let file = ours.join("data.0");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[100_000] ^= 0x01;
    std::fs::write(&file, &bytes).unwrap();
    for extra in [
        &["--engine", "sync"][..],
        &["--iodepth", "8"],
        &["--engine", "mmap"],
    ] {
        let err = verify_fails_with(&ours, 3, extra);
        assert!(
            err.contains("read data.0 at offset 65536: the 4 KiB at offset 98304")
                && err.contains("first at offset 100000"),
            "{extra:?}: {err}"
        );
    }
}
