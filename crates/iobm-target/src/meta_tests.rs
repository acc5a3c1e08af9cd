//! Unit tests of the namespace calls (directories, stat, rename) on every target that has them.

use crate::fault::FaultTarget;
use crate::mem::MemTarget;
use crate::null::NullTarget;
use crate::posix::PosixTarget;
use crate::{Access, DirEntry, OpenOptions, Stat, Target};
use std::io;

fn write(t: &dyn Target, name: &str, bytes: &[u8]) -> io::Result<()> {
    let create = OpenOptions {
        access: Access::Create,
        direct: false,
    };
    let mut h = t.open(name, create)?;
    h.write_at(bytes, 0)?;
    h.close()
}

/// What mdtest's phases need of a target, in their order.
fn namespace_calls(t: &dyn Target) {
    t.create_dir("a").unwrap();
    t.create_dir("a/b").unwrap();
    assert_eq!(
        t.create_dir("a").unwrap_err().kind(),
        io::ErrorKind::AlreadyExists
    );
    let missing = t.create_dir("x/y").unwrap_err();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    assert!(t.stat("a").unwrap().dir);
    assert!(t.stat("a/b").unwrap().dir);
    write(t, "a/b/f", b"12345").unwrap();
    assert_eq!(t.stat("a/b/f").unwrap(), Stat { len: 5, dir: false });
    assert_eq!(t.stat("a/f").unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(
        write(t, "nowhere/f", b"1").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    t.rename("a/b/f", "a/b/g").unwrap();
    assert_eq!(t.stat("a/b/f").unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(t.stat("a/b/g").unwrap().len, 5);
    assert_eq!(
        t.rename("a/b/f", "a/b/h").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    let full = t.remove_dir("a/b").unwrap_err();
    assert_eq!(full.raw_os_error(), Some(libc::ENOTEMPTY), "{full}");
    t.remove("a/b/g").unwrap();
    assert_eq!(
        t.remove("a/b/g").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    t.remove_dir("a/b").unwrap();
    assert_eq!(
        t.remove_dir("a/b").unwrap_err().kind(),
        io::ErrorKind::NotFound
    );
    // A directory renamed moves what is in it.
    t.create_dir("a/c").unwrap();
    write(t, "a/c/f", b"1").unwrap();
    t.rename("a/c", "a/d").unwrap();
    assert_eq!(t.stat("a/d/f").unwrap().len, 1);
    assert_eq!(t.stat("a/c").unwrap_err().kind(), io::ErrorKind::NotFound);
    t.remove("a/d/f").unwrap();
    t.remove_dir("a/d").unwrap();
    t.remove_dir("a").unwrap();
    assert_eq!(t.stat("a").unwrap_err().kind(), io::ErrorKind::NotFound);
}

/// A directory's entries, sorted.
fn listed(t: &dyn Target, dir: &str) -> Vec<DirEntry> {
    let mut entries = t.list_dir(dir).unwrap();
    entries.sort();
    entries
}

fn entry(name: &str, dir: bool) -> DirEntry {
    DirEntry {
        name: name.to_string(),
        dir,
    }
}

/// What find needs of a target: the entries directly inside a directory, its root's too, each
/// said to be a directory or not; nothing of a deeper level, of a sibling with a longer name, or
/// of a directory that is not there.
fn listing_calls(t: &dyn Target) {
    t.create_dir("a").unwrap();
    t.create_dir("a/b").unwrap();
    t.create_dir("ab").unwrap();
    write(t, "a/f.1", b"1").unwrap();
    write(t, "a/b/f.2", b"22").unwrap();
    write(t, "ab/g", b"").unwrap();
    write(t, "top", b"").unwrap();
    assert_eq!(listed(t, "a"), vec![entry("b", true), entry("f.1", false)]);
    assert_eq!(listed(t, "a/b"), vec![entry("f.2", false)]);
    assert_eq!(listed(t, "ab"), vec![entry("g", false)]);
    assert_eq!(
        listed(t, ""),
        vec![entry("a", true), entry("ab", true), entry("top", false)]
    );
    let missing = t.list_dir("nowhere").unwrap_err();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound, "{missing}");
    for (file, dir) in [
        ("a/b/f.2", "a/b"),
        ("a/f.1", "a"),
        ("ab/g", "ab"),
        ("top", ""),
    ] {
        t.remove(file).unwrap();
        if !dir.is_empty() {
            assert!(!listed(t, dir).iter().any(|e| !e.dir), "{dir}");
        }
    }
    t.remove_dir("a/b").unwrap();
    assert!(listed(t, "a").is_empty());
    for dir in ["a", "ab"] {
        t.remove_dir(dir).unwrap();
    }
    assert!(listed(t, "").is_empty());
}

#[test]
fn the_memory_target_lists_its_directories() {
    listing_calls(&MemTarget::new());
}

#[test]
fn the_posix_target_lists_its_directories() {
    let dir = tempfile::tempdir().unwrap();
    let t = PosixTarget::new(dir.path());
    listing_calls(&t);
    for bad in ["../x", "a/../..", "/etc", "a//b"] {
        let kind = io::ErrorKind::InvalidInput;
        assert_eq!(t.list_dir(bad).unwrap_err().kind(), kind, "{bad}");
    }
}

#[test]
fn the_fault_target_passes_listings_through() {
    listing_calls(&FaultTarget::fail_writes_after(
        MemTarget::new(),
        1 << 20,
        libc::ENOSPC,
    ));
}

#[test]
fn the_null_target_cannot_list() {
    let e = NullTarget.list_dir("").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::Unsupported);
}

#[test]
fn the_memory_target_keeps_a_namespace() {
    let t = MemTarget::new();
    namespace_calls(&t);
    assert!(t.names().is_empty() && t.dir_names().is_empty());
}

#[test]
fn the_posix_target_keeps_a_namespace_in_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let t = PosixTarget::new(dir.path());
    namespace_calls(&t);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // Names stay inside the root, for the allocation-free calls too.
    for bad in ["../x", "a/../../x", "/etc", "a//b", ""] {
        let kind = io::ErrorKind::InvalidInput;
        assert_eq!(t.stat(bad).unwrap_err().kind(), kind, "{bad}");
        assert_eq!(t.rename("f", bad).unwrap_err().kind(), kind, "{bad}");
        assert_eq!(t.create_dir(bad).unwrap_err().kind(), kind, "{bad}");
        assert_eq!(t.remove(bad).unwrap_err().kind(), kind, "{bad}");
    }
}

#[test]
fn the_fault_target_passes_namespace_calls_through() {
    let t = FaultTarget::fail_writes_after(MemTarget::new(), 1 << 20, libc::ENOSPC);
    namespace_calls(&t);
}

#[test]
fn the_null_target_has_every_name() {
    let t = NullTarget;
    assert_eq!(t.stat("any/thing").unwrap(), Stat { len: 0, dir: false });
    t.rename("a", "b").unwrap();
    t.create_dir("a").unwrap();
    t.remove_dir("a").unwrap();
}
