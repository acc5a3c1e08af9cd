//! Unit tests of the POSIX target: files, names kept inside the root, page-cache residency.

use super::*;

#[test]
fn create_write_read_and_never_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let t = PosixTarget::new(dir.path());
    let create = OpenOptions {
        access: Access::Create,
        direct: false,
    };
    let mut h = t.open("a", create).unwrap();
    h.write_at(b"hello", 3).unwrap();
    h.sync().unwrap();
    h.close().unwrap();
    assert_eq!(t.len("a").unwrap(), 8);
    let err = t.open("a", create).err().unwrap();
    assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
    let mut h = t
        .open(
            "a",
            OpenOptions {
                access: Access::Read,
                direct: false,
            },
        )
        .unwrap();
    let mut buf = [0u8; 5];
    h.read_at(&mut buf, 3).unwrap();
    assert_eq!(&buf, b"hello");
    let short = h.read_at(&mut buf, 6).unwrap_err();
    assert_eq!(short.kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(t.place(), crate::Place::Dir(dir.path()));
    let a = dir.path().join("a");
    assert!(resident_bytes(&a).unwrap() <= 8);
    drop_cache(&a).unwrap();
    t.remove("a").unwrap();
    assert!(t.path("../x").is_err());
    assert!(t.path("a/../../x").is_err());
    assert!(t.path("/etc/passwd").is_err());
    assert!(t.path("a//b").is_err());
    t.create_dir("d").unwrap();
    let mut h = t.open("d/f", create).unwrap();
    h.write_at(b"12345678", 0).unwrap();
    h.close().unwrap();
    let replace = OpenOptions {
        access: Access::Replace,
        direct: false,
    };
    t.open("d/f", replace).unwrap().close().unwrap();
    assert_eq!(t.len("d/f").unwrap(), 0);
    t.remove("d/f").unwrap();
    t.remove_dir("d").unwrap();
}

#[test]
fn residency_of_a_range_by_cachestat_and_by_mincore_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
    let file = File::open(&path).unwrap();
    // Just written: every page is in the page cache (or is the file itself, on tmpfs).
    assert_eq!(resident_range(&file, 0, 1 << 20).unwrap(), 1 << 20);
    assert_eq!(resident_range(&file, 4096 * 3 + 100, 5000).unwrap(), 5000);
    assert_eq!(resident_range(&file, 0, 0).unwrap(), 0);
    let page = 4096;
    let by_mincore = mincore_bytes(&file, 256 << 10, 256 << 10, page).unwrap();
    assert_eq!(by_mincore, 256 << 10);
    // This kernel has cachestat (6.5 or later) and it counts the same pages.
    if let Some(pages) = cachestat_pages(&file, 256 << 10, 256 << 10) {
        assert_eq!(pages * page, by_mincore);
    }
}

#[test]
fn dirty_bytes_are_those_not_yet_written_back() {
    // A file system with a device, where written pages wait for write-back.
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = dir.path().join("f");
    let mut file = File::create(&path).unwrap();
    std::io::Write::write_all(&mut file, &vec![1u8; 4 << 20]).unwrap();
    let dirty = dirty_bytes(&path).expect("cachestat (Linux 6.5)");
    assert!(dirty > 0 && dirty <= 4 << 20, "{dirty}");
    file.sync_all().unwrap();
    assert_eq!(dirty_bytes(&path), Some(0));
}

#[test]
fn open_flags_follow_the_access_and_names_stay_inside() {
    let dir = tempfile::tempdir().unwrap();
    let t = PosixTarget::new(dir.path());
    let with = |access| OpenOptions {
        access,
        direct: false,
    };
    for name in ["../x", "/etc/passwd", "a/../../x", ""] {
        let e = t.open(name, with(Access::Create)).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{name}");
    }
    let missing = t.open("none", with(Access::Read)).err().unwrap();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);
    let missing = t.open("none", with(Access::Write)).err().unwrap();
    assert_eq!(missing.kind(), io::ErrorKind::NotFound);

    let mut h = t.open("f", with(Access::Create)).unwrap();
    let fd = h.raw_fd().unwrap();
    // SAFETY: fcntl on a descriptor the handle holds open.
    let fd_flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
    assert_ne!(fd_flags & libc::FD_CLOEXEC, 0, "close-on-exec");
    h.write_at(b"abcd", 0).unwrap();
    h.close().unwrap();
    // SAFETY: umask has no preconditions; set back at once.
    let mask = unsafe { libc::umask(0) };
    unsafe { libc::umask(mask) };
    let mode = fs::metadata(dir.path().join("f")).unwrap().mode() & 0o777;
    assert_eq!(mode, 0o666 & !mask as u32);

    // Read: no writes; Write: keeps the contents.
    let mut h = t.open("f", with(Access::Read)).unwrap();
    assert!(h.write_at(b"x", 0).is_err());
    h.close().unwrap();
    let mut h = t.open("f", with(Access::Write)).unwrap();
    h.write_at(b"X", 1).unwrap();
    let mut buf = [0u8; 4];
    h.read_at(&mut buf, 0).unwrap();
    assert_eq!(&buf, b"aXcd");
    h.close().unwrap();
    // Replace: a new, empty file (and a missing one is made).
    t.open("f", with(Access::Replace)).unwrap().close().unwrap();
    assert_eq!(t.len("f").unwrap(), 0);
    t.open("g", with(Access::Replace)).unwrap().close().unwrap();
    assert_eq!(t.stat("g").unwrap(), Stat { len: 0, dir: false });
    // A Replace that cannot remove the old one fails with the removal's error.
    t.create_dir("d").unwrap();
    let e = t.open("d", with(Access::Replace)).err().unwrap();
    assert_eq!(e.raw_os_error(), Some(libc::EISDIR), "{e}");

    // O_DIRECT asked is O_DIRECT opened, where the file system takes it (not tmpfs: EINVAL).
    let direct = OpenOptions {
        access: Access::Create,
        direct: true,
    };
    match t.open("o", direct) {
        Ok(h) => {
            // SAFETY: fcntl on a descriptor the handle holds open.
            let status = unsafe { libc::fcntl(h.raw_fd().unwrap(), libc::F_GETFL) };
            assert_ne!(status & libc::O_DIRECT, 0);
            h.close().unwrap();
        }
        Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EINVAL), "{e}"),
    }
}
