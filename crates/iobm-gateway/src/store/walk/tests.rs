use super::*;
use proptest::prelude::*;
use std::fs;
use std::path::Path;

/// Makes `keys` as empty files under `root`, named on disk as `names` names them, leaving out
/// those that clash with a file or directory already there; returns the keys made.
fn make_named(root: &Path, names: Names, keys: &[String]) -> Vec<String> {
    let mut made = Vec::new();
    for key in keys {
        let path = key.strip_suffix('/').unwrap_or(key);
        let (dirs, leaf) = path.rsplit_once('/').unwrap_or(("", path));
        let mut dir = root.to_path_buf();
        let mut dirs_ok = true;
        let folder = key.ends_with('/').then_some(leaf);
        for component in dirs.split('/').filter(|c| !c.is_empty()).chain(folder) {
            dir.push(&*names.disk_name(component));
            dirs_ok = dirs_ok && (dir.is_dir() || fs::create_dir(&dir).is_ok());
            if dirs_ok && names.derives(component) {
                let fd = fs::File::open(&dir).unwrap();
                crate::store::names::label(&fd, component).unwrap();
            }
        }
        if !dirs_ok {
            continue;
        }
        if folder.is_some() {
            // A folder marker: its directory, marked.
            let meta = crate::meta::Meta::default();
            crate::meta::mark_folder(&fs::File::open(&dir).unwrap(), &meta).unwrap();
            made.push(key.clone());
            continue;
        }
        let file = dir.join(&*names.disk_name(leaf));
        if !file.exists() && fs::write(&file, b"").is_ok() {
            if names.derives(leaf) {
                crate::store::names::label(fs::File::open(&file).unwrap(), leaf).unwrap();
            }
            made.push(key.clone());
        }
    }
    made.sort();
    made.dedup();
    made
}

/// [`make_named`] with the names of most file systems.
fn make(root: &Path, keys: &[String]) -> Vec<String> {
    make_named(root, Names::default(), keys)
}

/// What S3 lists, computed directly: keys with the prefix, grouped by the delimiter, after the
/// marker, in byte order.
fn model(
    keys: &[String],
    prefix: &str,
    delimiter: Option<&str>,
    after: Option<&str>,
) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for key in keys.iter().filter(|k| k.starts_with(prefix)) {
        let found = match delimiter.filter(|d| !d.is_empty()).and_then(|d| {
            key[prefix.len()..]
                .find(d)
                .map(|i| key[..prefix.len() + i + d.len()].to_string())
        }) {
            Some(common) => Found::Prefix(common),
            None => Found::Object(key.clone()),
        };
        let text = match &found {
            Found::Prefix(p) | Found::Object(p) => p.clone(),
        };
        if after.is_some_and(|a| text.as_str() <= a) || out.last() == Some(&found) {
            continue;
        }
        out.push(found);
    }
    out
}

/// Pages of `size` through the walk, each resumed after the last item of the one before, as a
/// client does with markers.
fn paged_named(
    dir: &Path,
    cache: &DirCache,
    names: Names,
    prefix: &str,
    delimiter: Option<&str>,
    size: usize,
) -> Vec<Found> {
    let fd = rustix::fs::open(dir, DIR_FLAGS, Mode::empty()).unwrap();
    let mut out = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut walk = Walk::new(
            fd.as_fd(),
            cache,
            names,
            prefix,
            delimiter,
            after.as_deref(),
        )
        .unwrap();
        let mut page = Vec::new();
        while page.len() < size {
            match walk.next_found().unwrap() {
                Some(f) => page.push(f),
                None => break,
            }
        }
        let Some(Found::Prefix(last) | Found::Object(last)) = page.last().cloned() else {
            return out;
        };
        let full = page.len() == size;
        out.extend(page);
        if !full {
            return out;
        }
        after = Some(last);
    }
}

/// [`paged_named`] with the names of most file systems.
fn paged(
    dir: &Path,
    cache: &DirCache,
    prefix: &str,
    delimiter: Option<&str>,
    size: usize,
) -> Vec<Found> {
    paged_named(dir, cache, Names::default(), prefix, delimiter, size)
}

/// A cache that keeps directories however recently they changed.
fn caching_at_once(capacity: usize, window: usize) -> DirCache {
    DirCache {
        settled: Duration::ZERO,
        ..DirCache::new(capacity, window)
    }
}

#[test]
fn a_directory_sorts_as_its_name_and_a_slash() {
    let root = tempfile::tempdir().unwrap();
    let keys: Vec<String> = ["a/b", "a-c", "a.txt", "a0", "a/c/d", "b", "a/c!"]
        .iter()
        .map(|k| k.to_string())
        .collect();
    let made = make(root.path(), &keys);
    let cache = DirCache::default();
    assert_eq!(
        paged(root.path(), &cache, "", None, 1000),
        made.iter().cloned().map(Found::Object).collect::<Vec<_>>()
    );
    assert_eq!(
        made,
        vec!["a-c", "a.txt", "a/b", "a/c!", "a/c/d", "a0", "b"]
    );
}

#[test]
fn folder_markers_list_as_keys_before_what_is_in_them() {
    let root = tempfile::tempdir().unwrap();
    let keys: Vec<String> = ["f/", "f/x", "f/g/", "e", "f-", "h/"]
        .iter()
        .map(|k| k.to_string())
        .collect();
    let made = make(root.path(), &keys);
    let cache = DirCache::default();
    for (prefix, delimiter) in [
        ("", None),
        ("", Some("/")),
        ("f/", Some("/")),
        ("f/g/", None),
    ] {
        assert_eq!(
            paged(root.path(), &cache, prefix, delimiter, 2),
            model(&made, prefix, delimiter, None),
            "{prefix} {delimiter:?}"
        );
    }
    assert_eq!(
        paged(root.path(), &cache, "", None, 10),
        ["e", "f-", "f/", "f/g/", "f/x", "h/"]
            .map(|k| Found::Object(k.into()))
            .to_vec()
    );
}

#[test]
fn a_directory_without_objects_is_no_common_prefix() {
    let root = tempfile::tempdir().unwrap();
    fs::create_dir_all(root.path().join("empty/deeper")).unwrap();
    make(root.path(), &["full/x".to_string()]);
    let cache = DirCache::default();
    assert_eq!(
        paged(root.path(), &cache, "", Some("/"), 10),
        vec![Found::Prefix("full/".into())]
    );
}

#[test]
fn a_large_directory_is_read_in_windows() {
    let root = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..200)
        .map(|i| format!("k{:03}", (i * 37) % 200))
        .collect();
    let mut keys = make(root.path(), &keys);
    keys.extend(make(root.path(), &["k050/x".to_string()]));
    keys.sort();
    // Capacity 50: the 201 entries are read 16 at a time.
    let cache = caching_at_once(50, 16);
    let want = model(&keys, "", None, None);
    assert_eq!(paged(root.path(), &cache, "", None, 7), want);
    // The large directory was never kept.
    let inner = cache.inner.lock().unwrap();
    assert!(inner.dirs.values().all(|c| c.entries.len() == 1));
}

#[test]
fn a_cached_directory_is_read_again_once_it_changes() {
    let root = tempfile::tempdir().unwrap();
    let mut keys = make(root.path(), &["x".to_string(), "y".to_string()]);
    let cache = caching_at_once(CACHE_ENTRIES, WINDOW);
    assert_eq!(
        paged(root.path(), &cache, "", None, 10),
        model(&keys, "", None, None)
    );
    assert_eq!(cache.inner.lock().unwrap().entries, 2);
    // Past the file system's clock tick, so that the directory's times move.
    std::thread::sleep(Duration::from_millis(50));
    keys.extend(make(root.path(), &["w".to_string()]));
    keys.sort();
    assert_eq!(
        paged(root.path(), &cache, "", None, 10),
        model(&keys, "", None, None)
    );
    assert_eq!(cache.inner.lock().unwrap().entries, 3);
}

#[test]
fn the_cache_keeps_at_most_its_capacity() {
    let root = tempfile::tempdir().unwrap();
    let keys: Vec<String> = (0..10).map(|i| format!("d{i}/a")).collect();
    let keys = make(root.path(), &keys);
    let cache = caching_at_once(4, 2);
    assert_eq!(
        paged(root.path(), &cache, "", None, 3),
        model(&keys, "", None, None)
    );
    assert!(cache.inner.lock().unwrap().entries <= 4);
}

#[test]
fn components_too_long_for_a_name_list_as_themselves_in_key_order() {
    let root = tempfile::tempdir().unwrap();
    let long = |c: char| c.to_string().repeat(300);
    let keys: Vec<String> = [
        format!("{}/x", long('a')),
        format!("{}b", long('a')),
        long('a'),
        format!("{}/", long('c')),
        format!("{}/{}", long('c'), long('d')),
        "b".to_string(),
        format!("d/{}", long('e')),
    ]
    .to_vec();
    let made = make(root.path(), &keys);
    assert_eq!(made.len(), keys.len() - 1, "{made:?}"); // aaa… is a directory first
                                                        // What is on disk is short; what is listed is the keys.
    for entry in fs::read_dir(root.path()).unwrap() {
        assert!(entry.unwrap().file_name().len() <= 255);
    }
    let cache = caching_at_once(CACHE_ENTRIES, WINDOW);
    for (prefix, delimiter, size) in [
        ("", None, 1),
        ("", Some("/"), 2),
        ("a", None, 2),
        (&*format!("{}/", long('c')), Some("/"), 1),
        (&*long('a'), Some("/"), 1),
    ] {
        assert_eq!(
            paged(root.path(), &cache, prefix, delimiter, size),
            model(&made, prefix, delimiter, None),
            "{prefix} {delimiter:?}"
        );
    }
    // A derived name with no label (a file planted, or one being made) is left out.
    fs::write(
        root.path()
            .join(Names::default().disk_name(&long('z')).as_ref()),
        b"",
    )
    .unwrap();
    assert_eq!(
        paged(root.path(), &DirCache::default(), "", None, 100),
        model(&made, "", None, None)
    );
}

fn key() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("b"),
            Just("-"),
            Just("."),
            Just("0"),
            Just("/")
        ],
        1..8,
    )
    .prop_map(|parts| parts.concat())
    .prop_filter("a key is a path of plain names", |k| check_key(k).is_ok())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pages_list_what_s3_lists(
        keys in proptest::collection::vec(key(), 1..40),
        prefix in prop_oneof![Just(""), Just("a"), Just("a/"), Just("a-"), Just("b/a")],
        delimiter in prop_oneof![Just(None), Just(Some("/")), Just(Some("-")), Just(Some("a/"))],
        size in 1usize..6,
        small in any::<bool>(),
    ) {
        let root = tempfile::tempdir().unwrap();
        let made = make(root.path(), &keys);
        let cache = if small { DirCache::new(3, 2) } else { DirCache::default() };
        prop_assert_eq!(
            paged(root.path(), &cache, prefix, delimiter, size),
            model(&made, prefix, delimiter, None)
        );
    }

    /// With names of at most 2 bytes, most components are stored under derived names, which
    /// sort nothing like the keys: the pages are still S3's.
    #[test]
    fn pages_of_derived_names_list_what_s3_lists(
        keys in proptest::collection::vec(key(), 1..40),
        prefix in prop_oneof![Just(""), Just("a"), Just("a/"), Just("ab"), Just("b/a")],
        delimiter in prop_oneof![Just(None), Just(Some("/")), Just(Some("-")), Just(Some("a/"))],
        size in 1usize..6,
        small in any::<bool>(),
    ) {
        let root = tempfile::tempdir().unwrap();
        let names = Names::with_name_max(2);
        let made = make_named(root.path(), names, &keys);
        let cache = if small { DirCache::new(3, 2) } else { DirCache::default() };
        prop_assert_eq!(
            paged_named(root.path(), &cache, names, prefix, delimiter, size),
            model(&made, prefix, delimiter, None)
        );
    }
}
