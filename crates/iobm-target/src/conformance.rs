//! The one suite every target runs (object_store's `integration.rs`): each capability the
//! target declares is exercised, and each it does not declare must be refused with
//! [`crate::Unsupported`] naming the flag. A new target passes it, or says what it lacks.

use crate::objects::{Body, Content};
use crate::{Access, Capability, Handle, OpenOptions, Target};
use std::io;

/// What a target keeps of what it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keeps {
    /// Bytes and names, read back as written (every real store).
    Data,
    /// Nothing: writes vanish and reads return whatever the buffer held (the null target).
    Nothing,
}

/// Runs the whole suite on `target`, whose objects are named `conformance-*`; panics at the
/// first thing it does wrong. The objects it makes are removed when every check passes.
pub fn run(target: &dyn Target, keeps: Keeps) {
    objects(target, keeps);
    let caps = target.capabilities();
    for flag in Capability::ALL {
        match (flag, caps.has(flag)) {
            (Capability::Files, true) => files(target, keeps),
            (Capability::DirectIo, true) => direct_io(target),
            (Capability::RawFd, has) => raw_fd(target, has),
            (Capability::Directories, true) => directories(target, keeps),
            (Capability::Rename, true) => rename(target, keeps),
            (Capability::RangedReads, true) => ranged_reads(target, keeps),
            (Capability::Listing, true) => listing(target),
            (Capability::Multipart, true) => multipart(target, keeps),
            (Capability::Versions, true) => versions(target, keeps),
            // Buffers in device memory are refused by the engine before the run
            // (`Phase::needs`); no method of the target takes them yet.
            (Capability::DeviceBuffers, _) => {}
            (flag, false) => refused(target, flag),
        }
    }
}

/// Content whose byte at `offset` of `id` is a simple function of both.
struct Counting;

impl Content for Counting {
    fn fill(&self, out: &mut [u8], id: u64, offset: u64) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = ((offset + i as u64) * 7 + id * 13) as u8;
        }
    }
}

fn expected(id: u64, from: u64, len: usize) -> Vec<u8> {
    let mut out = vec![0; len];
    Counting.fill(&mut out, id, from);
    out
}

/// Asserts that `result` is the refusal of `flag`: kind `Unsupported`, the flag named.
#[track_caller]
pub fn assert_refused<T>(result: io::Result<T>, flag: Capability) {
    match result {
        Ok(_) => panic!("{flag} is not declared, yet the call succeeded"),
        Err(e) => {
            assert_eq!(e.kind(), io::ErrorKind::Unsupported, "{flag}: {e}");
            assert!(e.to_string().contains(flag.name()), "{flag} not named: {e}");
        }
    }
}

/// What a target lacks, refused when asked for.
fn refused(target: &dyn Target, flag: Capability) {
    let name = "conformance-refused";
    match flag {
        Capability::Files => assert_refused(target.open(name, opening(Access::Create)), flag),
        Capability::DirectIo => assert_refused(target.probe_direct(name), flag),
        Capability::Directories => assert_refused(target.list_dir(""), flag),
        Capability::Rename => assert_refused(target.rename(name, "conformance-other"), flag),
        Capability::RangedReads => {
            let got = target
                .objects(0)
                .and_then(|mut o| o.get(name, Some((0, 0)), &mut |_| {}));
            assert_refused(got, flag)
        }
        Capability::Listing => {
            assert_refused(target.objects(0).and_then(|mut o| o.list(None, 1)), flag)
        }
        Capability::Multipart => {
            let body = Body::new(&Counting, 0, 1);
            let stored = target
                .objects(0)
                .and_then(|mut o| o.multipart(name, &body, 1, 1));
            assert_refused(stored, flag)
        }
        Capability::Versions => {
            let got = (target.objects(0)).and_then(|mut o| o.get_version(name, "1", &mut |_| {}));
            assert_refused(got, flag)
        }
        Capability::RawFd | Capability::DeviceBuffers => {}
    }
}

fn opening(access: Access) -> OpenOptions {
    OpenOptions {
        access,
        direct: false,
    }
}

/// Whole objects: put, get, head, delete, which every target does.
fn objects(target: &dyn Target, keeps: Keeps) {
    let name = "conformance-object";
    let mut objects = target.objects(0).expect("a session for whole objects");
    let body = Body::new(&Counting, 3, 9000);
    objects.put(name, &body).expect("put");
    let mut got = Vec::new();
    let mut first = None;
    // A target that keeps nothing has no length to read to (null's objects are endless).
    let whole = (keeps == Keeps::Nothing).then_some((0, 8999));
    let n = objects
        .get(name, whole, &mut |b| {
            first.get_or_insert(b.len());
            got.extend_from_slice(b)
        })
        .expect("get");
    assert_eq!(n, 9000, "a get says how many bytes it read");
    assert_eq!(
        first,
        Some(0),
        "a get's sink is first called with nothing (first byte)"
    );
    if keeps == Keeps::Data {
        assert_eq!(
            got,
            expected(3, 0, 9000),
            "a get returns what the put stored"
        );
        assert_eq!(objects.head(name).expect("head"), 9000);
    }
    objects.delete(name).expect("delete");
    if keeps == Keeps::Data {
        let gone = objects.head(name).expect_err("a deleted object is gone");
        assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{gone}");
    }
}

/// Files at offsets through handles: create, write, read back, sync, close, length, remove.
fn files(target: &dyn Target, keeps: Keeps) {
    let name = "conformance-file";
    let data = expected(5, 0, 8192);
    let mut file = target.open(name, opening(Access::Create)).expect("create");
    file.write_at(&data[..4096], 0).expect("write_at");
    file.seek(4096).expect("seek");
    file.write_next(&data[4096..]).expect("write_next");
    file.sync().expect("sync");
    file.close().expect("close");
    let mut file = target
        .open(name, opening(Access::Read))
        .expect("open to read");
    let mut back = vec![0; 8192];
    file.read_at(&mut back[..100], 4000).expect("read_at");
    file.seek(0).expect("seek");
    file.read_next(&mut back[100..]).expect("read_next");
    if keeps == Keeps::Data {
        assert_eq!(
            &back[..100],
            &data[4000..4100],
            "read_at returns what was written there"
        );
        assert_eq!(
            &back[100..],
            &data[..8092],
            "read_next reads from the position"
        );
        let short = file
            .read_at(&mut back, 4096)
            .expect_err("a short read is an error");
        assert_eq!(short.kind(), io::ErrorKind::UnexpectedEof, "{short}");
        assert_eq!(target.len(name).expect("len"), 8192);
        let stat = target.stat(name).expect("stat");
        assert!(!stat.dir && stat.len == 8192, "{stat:?}");
        let again = target
            .open(name, opening(Access::Create))
            .err()
            .expect("create never overwrites");
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists, "{again}");
    }
    file.close().expect("close");
    target.remove(name).expect("remove");
    if keeps == Keeps::Data {
        let gone = target
            .open(name, opening(Access::Read))
            .err()
            .expect("removed");
        assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{gone}");
    }
}

/// `O_DIRECT`: the probe passes and an aligned write and read through a direct handle work.
fn direct_io(target: &dyn Target) {
    target
        .probe_direct("conformance-probe")
        .expect("probe_direct");
    let name = "conformance-direct";
    let options = |access| OpenOptions {
        access,
        direct: true,
    };
    let mut buf = crate::memory::AlignedHostMemory.host(4096);
    buf.fill(7);
    let mut file = target
        .open(name, options(Access::Create))
        .expect("create with O_DIRECT");
    file.write_at(&buf, 0).expect("aligned write");
    file.close().expect("close");
    let mut file = target
        .open(name, options(Access::Read))
        .expect("open with O_DIRECT");
    file.read_at(&mut buf, 0).expect("aligned read");
    file.close().expect("close");
    target.remove(name).expect("remove");
}

/// A handle gives its descriptor exactly when the target says it does.
fn raw_fd(target: &dyn Target, declared: bool) {
    if !target.capabilities().has(Capability::Files) {
        return;
    }
    let name = "conformance-fd";
    let file = target.open(name, opening(Access::Create)).expect("create");
    assert_eq!(file.raw_fd().is_some(), declared, "raw_fd against RAW_FD");
    close_and_remove(target, name, file);
}

fn close_and_remove(target: &dyn Target, name: &str, file: Box<dyn Handle>) {
    file.close().expect("close");
    target.remove(name).expect("remove");
}

/// Directories: made, listed (with the root), stated, removed once empty.
fn directories(target: &dyn Target, keeps: Keeps) {
    let dir = "conformance-dir";
    target.create_dir(dir).expect("create_dir");
    let file = target
        .open("conformance-dir/f", opening(Access::Create))
        .expect("create inside");
    file.close().expect("close");
    if keeps == Keeps::Data {
        let inside = target.list_dir(dir).expect("list_dir");
        assert_eq!(
            inside,
            [crate::DirEntry {
                name: "f".into(),
                dir: false
            }]
        );
        let root = target.list_dir("").expect("list the root");
        assert!(root.iter().any(|e| e.name == dir && e.dir), "{root:?}");
        assert!(target.stat(dir).expect("stat a directory").dir);
    }
    target.remove("conformance-dir/f").expect("remove inside");
    target.remove_dir(dir).expect("remove_dir");
    if keeps == Keeps::Data {
        let gone = target
            .list_dir(dir)
            .expect_err("a removed directory is gone");
        assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{gone}");
    }
}

/// Rename: the file has its new name, and the old one is free.
fn rename(target: &dyn Target, keeps: Keeps) {
    let (from, to) = ("conformance-from", "conformance-to");
    let file = target.open(from, opening(Access::Create)).expect("create");
    file.close().expect("close");
    target.rename(from, to).expect("rename");
    if keeps == Keeps::Data {
        assert!(target.stat(to).is_ok(), "the new name is there");
        let old = target.stat(from).expect_err("the old name is free");
        assert_eq!(old.kind(), io::ErrorKind::NotFound, "{old}");
    }
    target.remove(to).expect("remove");
}

/// A range of an object: just its bytes.
fn ranged_reads(target: &dyn Target, keeps: Keeps) {
    let name = "conformance-ranged";
    let mut objects = target.objects(0).expect("a session");
    objects
        .put(name, &Body::new(&Counting, 4, 10_000))
        .expect("put");
    let mut part = Vec::new();
    let n = objects
        .get(name, Some((1000, 1999)), &mut |b| part.extend_from_slice(b))
        .expect("ranged get");
    assert_eq!(n, 1000, "a range's bytes, both ends included");
    if keeps == Keeps::Data {
        assert_eq!(part, expected(4, 1000, 1000));
    }
    objects.delete(name).expect("delete");
}

/// Listing: the run's objects, page by page.
fn listing(target: &dyn Target) {
    let mut objects = target.objects(0).expect("a session");
    let names = [
        "conformance-list-a",
        "conformance-list-b",
        "conformance-list-c",
    ];
    for (id, name) in names.iter().enumerate() {
        objects
            .put(name, &Body::new(&Counting, id as u64, 10))
            .expect("put");
    }
    let first = objects.list(None, 2).expect("list");
    assert_eq!(first.keys, 2, "a page holds at most max keys");
    let next = first.next.as_deref().expect("a next page");
    let rest = objects.list(Some(next), 1000).expect("list on");
    assert!(rest.keys >= 1, "the rest after the first page: {rest:?}");
    assert_eq!(
        objects
            .delete_batch(&names.map(String::from))
            .expect("delete"),
        3
    );
}

/// Multipart: an object stored in parts reads back whole.
fn multipart(target: &dyn Target, keeps: Keeps) {
    let name = "conformance-multipart";
    let (part, len) = (5 << 20, (5 << 20) + 1000);
    let mut objects = target.objects(0).expect("a session");
    objects
        .multipart(name, &Body::new(&Counting, 6, len), part, 2)
        .expect("multipart");
    if keeps == Keeps::Data {
        assert_eq!(objects.head(name).expect("head"), len);
        let mut tail = Vec::new();
        objects
            .get(name, Some((len - 2000, len - 1)), &mut |b| {
                tail.extend_from_slice(b)
            })
            .expect("get");
        assert_eq!(tail, expected(6, len - 2000, 2000), "the parts in order");
    }
    objects.delete(name).expect("delete");
}

/// Versions: two PUTs of one name keep two versions, each named by the store and read, sized,
/// listed and deleted by its id; once both are deleted the name is gone.
fn versions(target: &dyn Target, keeps: Keeps) {
    let name = "conformance-versions";
    let mut objects = target.objects(0).expect("a session for whole objects");
    let mut ids = Vec::new();
    for (id, len) in [(5, 3000), (6, 5000)] {
        objects
            .put(name, &Body::new(&Counting, id, len))
            .expect("put");
        let version = objects
            .last_version()
            .expect("a PUT names the version it stored");
        ids.push(version.to_string());
    }
    assert_ne!(ids[0], ids[1], "each PUT stores a version of its own");
    if keeps == Keeps::Data {
        let mut old = Vec::new();
        let n = (objects.get_version(name, &ids[0], &mut |b| old.extend_from_slice(b)))
            .expect("get of the first version");
        assert_eq!(
            (n, old),
            (3000, expected(5, 0, 3000)),
            "the old version as stored"
        );
        assert_eq!(objects.head_version(name, &ids[1]).expect("head"), 5000);
        let page = objects
            .list_versions(None, 100)
            .expect("a listing of versions");
        assert!(page.keys >= 2, "both versions listed: {page:?}");
    }
    for id in &ids {
        objects
            .delete_version(name, id)
            .expect("delete of a version");
    }
    if keeps == Keeps::Data {
        let gone = objects
            .head(name)
            .expect_err("a name whose versions are deleted is gone");
        assert_eq!(gone.kind(), io::ErrorKind::NotFound, "{gone}");
    }
}
