//! A key's versions written, deleted and read under its lock, and what a kill leaves half done.

use super::*;
use std::io::{Read, Write};

fn put(store: &Store, key: &str, body: &[u8]) -> String {
    let b = store.open_bucket("bkt").unwrap();
    let mut temp = store.create_temp().unwrap();
    temp.file.write_all(body).unwrap();
    let always = WriteCondition::default();
    let id = store.publish_version(temp, b.as_fd(), "bkt", key, &always);
    id.unwrap().unwrap()
}

fn read(store: &Store, key: &str, version: Option<&str>) -> Result<Vec<u8>, StoreError> {
    let b = store.open_bucket("bkt").unwrap();
    let mut out = Vec::new();
    let object = store.open_version(b.as_fd(), "bkt", key, version)?;
    (&object.file).read_to_end(&mut out).unwrap();
    Ok(out)
}

fn listed(store: &Store, key: &str) -> Vec<String> {
    let b = store.open_bucket("bkt").unwrap();
    let versions = store.key_versions(b.as_fd(), "bkt", key, None).unwrap();
    versions.iter().map(|(n, _)| n.version_id()).collect()
}

#[test]
fn what_a_kill_leaves_half_done_is_left_out_then_settled() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    store.create_bucket("bkt").unwrap();
    let b = store.open_bucket("bkt").unwrap();
    store
        .set_versioning("bkt", b.as_fd(), Versioning::Enabled)
        .unwrap();
    let v1 = put(&store, "d/k", b"one");
    let v2 = put(&store, "d/k", b"two");
    // A delete killed after it made its marker, before it unlinked the current version;
    // it had linked the current version aside too.
    let kept = root.path().join(".iobm-gateway/versions/bkt/d/k");
    let marker = Name::new(false, Kind::DeleteMarker);
    std::fs::write(kept.join(marker.file_name()), b"").unwrap();
    std::fs::write(kept.join(UNDER_WAY), b"").unwrap();
    let current = load_version(&File::open(root.path().join("bkt/d/k")).unwrap()).unwrap();
    std::fs::hard_link(root.path().join("bkt/d/k"), kept.join(current.file_name())).unwrap();
    // Readers see the state before the delete.
    assert_eq!(read(&store, "d/k", None).unwrap(), b"two");
    assert_eq!(listed(&store, "d/k"), [v2.clone(), v1.clone()]);
    assert!(matches!(
        read(&store, "d/k", Some(&marker.version_id())),
        Err(StoreError::NoSuchVersion)
    ));
    // The next write settles it: the marker that lost goes, and nothing is twice.
    let v3 = put(&store, "d/k", b"three");
    assert_eq!(listed(&store, "d/k"), [v3.clone(), v2.clone(), v1.clone()]);
    let mut names: Vec<_> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    // Deleting the current version makes the one before current again.
    let deleted = store.delete_versioned(b.as_fd(), "bkt", "d/k", Some(&v3));
    assert_eq!(deleted.unwrap().version_id, Some(v3));
    assert_eq!(read(&store, "d/k", None).unwrap(), b"two");
    for v in [&v2, &v1] {
        store
            .delete_versioned(b.as_fd(), "bkt", "d/k", Some(v))
            .unwrap();
    }
    // A bucket whose versions are all gone is deleted, whatever a kill left marked.
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join(UNDER_WAY), b"").unwrap();
    drop(b);
    store.delete_bucket("bkt").unwrap();
    assert!(!root.path().join(".iobm-gateway/versions/bkt").exists());
}
