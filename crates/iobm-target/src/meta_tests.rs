//! Unit tests of the namespace calls (directories, stat, rename) on every target that has them.

use crate::fault::FaultTarget;
use crate::mem::MemTarget;
use crate::null::NullTarget;
use crate::posix::PosixTarget;
use crate::{Access, OpenOptions, Stat, Target};
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
