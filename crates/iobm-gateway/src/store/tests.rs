use super::*;
use md5::{Digest, Md5};
use proptest::prelude::*;
use std::fs;
use std::os::unix::fs::symlink;

fn put(store: &Store, bucket: &str, key: &str, body: &[u8]) -> Result<(), StoreError> {
    let fd = store.open_bucket(bucket)?;
    let mut temp = store.create_temp()?;
    io::Write::write_all(&mut temp.file, body)?;
    store_meta(
        &temp.file,
        &Meta {
            etag: hex(&Md5::digest(body)),
            ..Meta::default()
        },
    )?;
    store.publish(temp, fd.as_fd(), bucket, key)
}

/// Every regular file below `dir`, as paths relative to it (links not followed).
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let ty = entry.file_type().unwrap();
            if ty.is_dir() {
                stack.push(entry.path());
            } else if ty.is_file() {
                out.push(entry.path().strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn names_are_plain_relative_paths() {
    assert!(check_key("a/b/c.txt").is_ok());
    for key in [
        "../x",
        "a/../../x",
        "/etc/passwd",
        "a//b",
        "a/./b",
        "x\0y",
        "",
    ] {
        assert!(
            matches!(check_key(key), Err(StoreError::InvalidKey)),
            "{key:?}"
        );
    }
    assert!(matches!(
        check_key(&"k".repeat(2000)),
        Err(StoreError::KeyTooLong)
    ));
    for bucket in ["..", ".iobm-gateway", "a", "UPPER", "a/b", "x..y"] {
        assert!(check_bucket_name(bucket).is_err(), "{bucket}");
    }
    // What S3 refuses besides: labels that are no DNS labels, IP addresses, its own names.
    for bucket in [
        "foo.-bar",
        "foo-.bar",
        "192.168.5.4",
        "xn--bucket",
        "sthree-b",
        "amzn-s3-demo-b",
        "b-s3alias",
        "b--ol-s3",
        "b.mrap",
        "b--x-s3",
        "b--table-s3",
        &"b".repeat(64),
    ] {
        assert!(check_bucket_name(bucket).is_err(), "{bucket}");
    }
    for bucket in ["a-b.c-d", "192.168.5", "1.2.3.4.5", "b-s3", "x-n--b", "abc"] {
        assert!(check_bucket_name(bucket).is_ok(), "{bucket}");
    }
}

#[test]
fn publish_is_atomic_and_delete_prunes_empty_directories() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), true).unwrap();
    store.create_bucket("bk1").unwrap();
    put(&store, "bk1", "x/y/z", b"hello").unwrap();
    let bucket = store.open_bucket("bk1").unwrap();
    let object = store.open_object(bucket.as_fd(), "bk1", "x/y/z").unwrap();
    assert_eq!(object.len, 5);
    assert_eq!(
        load_meta(&object.file).unwrap().etag,
        "5d41402abc4b2a76b9719d911017c592"
    );
    // A directory is not an object, and an object cannot become a prefix or the reverse.
    assert!(matches!(
        store.open_object(bucket.as_fd(), "bk1", "x/y"),
        Err(StoreError::NoSuchKey)
    ));
    assert!(matches!(
        put(&store, "bk1", "x/y", b"no"),
        Err(StoreError::KeyIsPrefix(_))
    ));
    assert!(matches!(
        put(&store, "bk1", "x/y/z/w", b"no"),
        Err(StoreError::PrefixIsObject(_))
    ));
    store.delete_object(bucket.as_fd(), "bk1", "x/y/z").unwrap();
    store.delete_object(bucket.as_fd(), "bk1", "x/y/z").unwrap();
    assert!(dir.path().join("bk1").is_dir());
    assert_eq!(fs::read_dir(dir.path().join("bk1")).unwrap().count(), 0);
    // Failed publishes left no temporary file.
    let tmp = dir.path().join(INTERNAL).join("tmp");
    let own = fs::read_dir(&tmp).unwrap().next().unwrap().unwrap().path();
    assert_eq!(fs::read_dir(own).unwrap().count(), 0);
}

#[test]
fn components_longer_than_a_name_are_stored_read_listed_and_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), false).unwrap();
    store.create_bucket("bk1").unwrap();
    let bucket = store.open_bucket("bk1").unwrap();
    let long = "l".repeat(300);
    let keys = [
        format!("{long}/{long}"),
        format!("d/{long}"),
        format!("{}{long}", names::MARK),
        "~iobm~short".to_string(),
        "p".repeat(1024),
    ];
    for (i, key) in keys.iter().enumerate() {
        put(&store, "bk1", key, key.as_bytes()).unwrap();
        let object = store.open_object(bucket.as_fd(), "bk1", key).unwrap();
        assert_eq!(object.len, key.len() as u64, "{i}");
    }
    let folder = format!("f/{long}/");
    let meta = Meta::default();
    store
        .put_folder(bucket.as_fd(), "bk1", &folder, &meta)
        .unwrap();
    store.open_object(bucket.as_fd(), "bk1", &folder).unwrap();
    let mut listed = keys.to_vec();
    listed.push(folder.clone());
    listed.sort();
    assert_eq!(store.keys(bucket.as_fd(), "").unwrap(), listed);
    // No name on disk is longer than the file system takes, nor one of a key's parts.
    for path in files_below(dir.path()) {
        assert!(path.iter().all(|c| c.len() <= 255), "{path:?}");
        assert!(!path.iter().any(|c| c == "~iobm~short"), "{path:?}");
    }
    // A conditional write sees the object under its derived name.
    let temp = store.create_temp().unwrap();
    let absent = crate::store::WriteCondition {
        if_match: None,
        if_none_match: Some(crate::store::Etag::Any),
    };
    assert!(matches!(
        store.publish_if(temp, bucket.as_fd(), "bk1", &keys[1], &absent),
        Err(StoreError::PreconditionFailed)
    ));
    for key in keys.iter().chain([&folder]) {
        store.delete_object(bucket.as_fd(), "bk1", key).unwrap();
    }
    assert_eq!(fs::read_dir(dir.path().join("bk1")).unwrap().count(), 0);
}

/// A tree with links out of the root at every level a request can name.
struct Planted {
    root: tempfile::TempDir,
    outside: tempfile::TempDir,
    store: Store,
}

fn planted() -> Planted {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("passwd"), b"root:x:0:0").unwrap();
    fs::create_dir(outside.path().join("sub")).unwrap();
    fs::write(outside.path().join("sub/f.txt"), b"outside").unwrap();
    let store = Store::open(root.path(), false).unwrap();
    store.create_bucket("bkt").unwrap();
    put(&store, "bkt", "real/file", b"inside").unwrap();
    symlink(outside.path(), root.path().join("etcbkt")).unwrap();
    symlink(outside.path(), root.path().join("bkt/lnkdir")).unwrap();
    symlink(
        outside.path().join("passwd"),
        root.path().join("bkt/lnkfile"),
    )
    .unwrap();
    symlink("real", root.path().join("bkt/inner")).unwrap();
    Planted {
        root,
        outside,
        store,
    }
}

fn outside_state(p: &Planted) -> Vec<(PathBuf, Vec<u8>)> {
    files_below(p.outside.path())
        .into_iter()
        .map(|f| {
            let bytes = fs::read(p.outside.path().join(&f)).unwrap();
            (f, bytes)
        })
        .collect()
}

#[test]
fn no_request_crosses_a_planted_link() {
    let p = planted();
    let before = outside_state(&p);
    let s = &p.store;
    assert!(matches!(
        s.open_bucket("etcbkt"),
        Err(StoreError::SymlinkCrossed(_))
    ));
    assert!(matches!(
        s.delete_bucket("etcbkt"),
        Err(StoreError::SymlinkCrossed(_))
    ));
    let b = s.open_bucket("bkt").unwrap();
    for key in ["lnkdir/passwd", "lnkfile", "inner/file", "lnkdir/sub/f.txt"] {
        assert!(
            matches!(
                s.open_object(b.as_fd(), "bkt", key),
                Err(StoreError::SymlinkCrossed(_))
            ),
            "{key}"
        );
        assert!(
            matches!(
                s.delete_object(b.as_fd(), "bkt", key),
                Err(StoreError::SymlinkCrossed(_))
            ),
            "{key}"
        );
    }
    for key in ["lnkdir/new.txt", "lnkdir/newsub/deep.txt", "inner/new"] {
        assert!(
            matches!(put(s, "bkt", key, b"x"), Err(StoreError::SymlinkCrossed(_))),
            "{key}"
        );
    }
    // Listings and the bucket list leave links out.
    assert_eq!(s.keys(b.as_fd(), "").unwrap(), vec!["real/file"]);
    assert!(s.keys(b.as_fd(), "lnkdir/").unwrap().is_empty());
    let names: Vec<_> = s.buckets().unwrap().into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec!["bkt"]);
    assert_eq!(outside_state(&p), before);
}

#[test]
fn planted_fifos_and_devices_are_not_objects() {
    let p = planted();
    let fifo = p.root.path().join("bkt/fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let b = p.store.open_bucket("bkt").unwrap();
    assert!(matches!(
        p.store.open_object(b.as_fd(), "bkt", "fifo"),
        Err(StoreError::NoSuchKey)
    ));
    assert!(!p
        .store
        .keys(b.as_fd(), "")
        .unwrap()
        .contains(&"fifo".into()));
}

/// Keys made of the characters that matter to paths, and of the planted links' names.
fn hostile_key() -> impl Strategy<Value = String> {
    let part = prop_oneof![
        Just("lnkdir".to_string()),
        Just("inner".to_string()),
        Just("lnkfile".to_string()),
        Just("..".to_string()),
        Just(".".to_string()),
        Just(String::new()),
        "[a-c./%\\\\\u{0}]{1,6}",
        "[a-z]{200,300}",
    ];
    prop::collection::vec(part, 1..6).prop_map(|parts| parts.join("/"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_accepted_key_stays_in_its_bucket(keys in prop::collection::vec(hostile_key(), 1..8)) {
        let p = planted();
        let before = outside_state(&p);
        let bucket_dir = p.root.path().join("bkt").canonicalize().unwrap();
        for key in &keys {
            if is_folder_key(key) {
                let b = p.store.open_bucket("bkt").unwrap();
                match p.store.put_folder(b.as_fd(), "bkt", key, &Meta::default()) {
                    Ok(()) => {
                        // The marker is a directory under the bucket, reached without a link.
                        let path = bucket_dir.join(&*p.store.names.disk_path(key.trim_end_matches('/')));
                        prop_assert!(path.canonicalize().unwrap().starts_with(&bucket_dir));
                        prop_assert!(fs::symlink_metadata(&path).unwrap().is_dir());
                        prop_assert_eq!(p.store.open_object(b.as_fd(), "bkt", key).unwrap().len, 0);
                        p.store.delete_object(b.as_fd(), "bkt", key).unwrap();
                        prop_assert!(p.store.open_object(b.as_fd(), "bkt", key).is_err());
                    }
                    Err(StoreError::InvalidKey | StoreError::KeyTooLong | StoreError::SymlinkCrossed(_)
                        | StoreError::PrefixIsObject(_)) => {}
                    Err(StoreError::Io(e)) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {}
                    Err(e) => prop_assert!(false, "{key:?}: {e:?}"),
                }
                continue;
            }
            match put(&p.store, "bkt", key, key.as_bytes()) {
                Ok(()) => {
                    // The object is a regular file under the bucket, reached without a link.
                    let path = bucket_dir.join(&*p.store.names.disk_path(key));
                    prop_assert!(path.canonicalize().unwrap().starts_with(&bucket_dir));
                    prop_assert!(fs::symlink_metadata(&path).unwrap().is_file());
                    let b = p.store.open_bucket("bkt").unwrap();
                    let got = p.store.open_object(b.as_fd(), "bkt", key).unwrap();
                    let mut body = Vec::new();
                    io::Read::read_to_end(&mut &got.file, &mut body).unwrap();
                    prop_assert_eq!(body, key.as_bytes());
                    p.store.delete_object(b.as_fd(), "bkt", key).unwrap();
                }
                Err(StoreError::InvalidKey | StoreError::KeyTooLong | StoreError::SymlinkCrossed(_)
                    | StoreError::KeyIsPrefix(_) | StoreError::PrefixIsObject(_)) => {}
                Err(StoreError::Io(e)) if e.raw_os_error() == Some(libc::ENAMETOOLONG) => {}
                Err(e) => prop_assert!(false, "{key:?}: {e:?}"),
            }
        }
        prop_assert_eq!(outside_state(&p), before);
        prop_assert_eq!(files_below(&bucket_dir), vec![PathBuf::from("real/file")]);
    }
}

#[test]
fn puts_racing_deletes_of_their_directories_always_land() {
    // Each delete prunes the key's emptied directories, even ones a concurrent put has just
    // opened to make the next level in: the put walks the path again instead of failing.
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), false).unwrap();
    store.create_bucket("race").unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let failed = std::thread::scope(|s| {
        let deleter = s.spawn(|| {
            let fd = store.open_bucket("race").unwrap();
            let mut failed = None;
            while !stop.load(Ordering::Relaxed) && failed.is_none() {
                failed = store.delete_object(fd.as_fd(), "race", "a/b/c/d/k").err();
            }
            failed
        });
        let failed =
            (0..3000).find_map(|i| put(&store, "race", "a/b/c/d/k", b"x").err().map(|e| (i, e)));
        stop.store(true, Ordering::Relaxed);
        (failed, deleter.join().unwrap())
    });
    assert!(matches!(failed, (None, None)), "{failed:?}");
}
