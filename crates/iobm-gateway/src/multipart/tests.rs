//! Unit tests of multipart uploads on disk: claims, listings, sweeps, recovery, deleted
//! buckets' uploads, uploads of earlier gateways, special files, and remembered completions.

use super::*;
use crate::store::Store;

fn info(key: &str, initiated_unix: u64) -> UploadInfo {
    UploadInfo {
        bucket: "bkt".into(),
        key: key.into(),
        content_type: None,
        metadata: HashMap::new(),
        initiated_unix,
        headers: Default::default(),
        owner: None,
        acl: None,
        initiator: Initiator::Account("a".into()),
    }
}

#[test]
fn one_claim_wins_and_a_failed_completion_can_be_retried() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let root_up = store.uploads_dir();
    let id = create(root_up, &info("k", now_unix())).unwrap();
    let bucket = of_bucket(root_up, "bkt")
        .unwrap()
        .expect("the bucket's uploads");
    let up = bucket.as_fd();
    let claimed = claim(up, &id).unwrap();
    assert!(matches!(claim(up, &id), Err(StoreError::NoSuchUpload)));
    assert!(matches!(open(up, &id), Err(StoreError::NoSuchUpload)));
    unclaim(up, &claimed, &id);
    let (_, got) = open(up, &id).unwrap();
    assert_eq!(got.key, "k");
    let claimed = claim(up, &id).unwrap();
    remove(up, &claimed).unwrap();
    forget_if_empty(root_up, "bkt");
    assert_eq!(entries(root_up).unwrap().len(), 0);
    assert!(of_bucket(root_up, "bkt").unwrap().is_none());
    assert!(
        of_bucket(root_up, "../tmp").unwrap().is_none(),
        "not a bucket's name"
    );
}

#[test]
fn listings_page_by_key_then_id_and_old_uploads_are_swept() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let root_up = store.uploads_dir();
    let mut ids: Vec<(String, String)> = ["a", "b", "b", "c", "d"]
        .iter()
        .map(|k| (k.to_string(), create(root_up, &info(k, 1000)).unwrap()))
        .collect();
    let bucket = of_bucket(root_up, "bkt").unwrap().unwrap();
    let up = bucket.as_fd();
    ids.sort();
    let mut seen = Vec::new();
    let mut after = (String::new(), String::new());
    loop {
        let (page, more) = list(up, "bkt", "", (&after.0, &after.1), 2).unwrap();
        assert!(page.is_empty() || !more || page.len() == 2);
        seen.extend(page.iter().map(|(id, i)| (i.key.clone(), id.clone())));
        if !more {
            break;
        }
        let (id, i) = page.last().unwrap();
        after = (i.key.clone(), id.clone());
    }
    assert_eq!(seen, ids);
    let (page, _) = list(up, "bkt", "b", ("", ""), 10).unwrap();
    assert_eq!(page.len(), 2);
    let fresh = create(root_up, &info("new", now_unix())).unwrap();
    assert_eq!(sweep(root_up, Duration::from_secs(3600)), 5);
    assert!(open(up, &fresh).is_ok());
}

#[test]
fn completions_left_claimed_by_a_dead_gateway_are_finished_or_rolled_back() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let root_up = store.uploads_dir();
    let completed = Completed::open(File::open(root.path()).unwrap().as_fd(), false).unwrap();
    let [bare, published, unpublished, elsewhere, running] =
        ["bare", "published", "unpublished", "elsewhere", "running"]
            .map(|k| create(root_up, &info(k, now_unix())).unwrap());
    let bucket = of_bucket(root_up, "bkt").unwrap().unwrap();
    let up = bucket.as_fd();
    // Claims bearing this process's pid: at a start, those are a dead gateway's.
    let _ = claim(up, &bare).unwrap();
    let file = File::open(root.path()).unwrap();
    for id in [&published, &unpublished] {
        let claimed = claim(up, id).unwrap();
        let dir = open_dir(up, &claimed).unwrap();
        save_plan(
            dir.as_fd(),
            &Plan::of(&file, &format!("etag-{id}")).unwrap(),
            false,
        )
        .unwrap();
    }
    // Claims of another host, and of a gateway of this host still running (pid 1).
    let other = format!("{elsewhere}{CLAIMED}elsewhere.example-4242-0");
    renameat(up, elsewhere.as_str(), up, other.as_str()).unwrap();
    let live = format!("{running}{CLAIMED}{}-1-0", my_host());
    renameat(up, running.as_str(), up, live.as_str()).unwrap();

    let recovered = recover(root_up, &completed, |info, plan| {
        assert!(plan.is(&file));
        info.key == "published"
    });
    assert_eq!(
        recovered,
        Recovered {
            finished: 1,
            rolled_back: 2
        }
    );
    let done = completed.find(&published).unwrap();
    assert_eq!(
        (done.key.as_str(), done.etag),
        ("published", format!("etag-{published}"))
    );
    assert_eq!(done.initiator, Initiator::Account("a".into()));
    assert!(matches!(
        open(up, &published),
        Err(StoreError::NoSuchUpload)
    ));
    for id in [&bare, &unpublished] {
        let (dir, _) = open(up, id).unwrap();
        assert!(
            read_json::<Plan>(dir.as_fd(), PLAN).is_err(),
            "the plan is gone"
        );
        assert!(completed.find(id).is_none());
    }
    let mut left: Vec<String> = entries(up).unwrap().into_iter().map(|(n, _)| n).collect();
    left.sort();
    let mut want = vec![bare, unpublished, other, live];
    want.sort();
    assert_eq!(left, want);
}

#[test]
fn a_deleted_buckets_uploads_go_at_once_and_what_a_stop_left_goes_at_the_next_start() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let up = store.uploads_dir();
    let completed = Completed::open(File::open(root.path()).unwrap().as_fd(), false).unwrap();
    for k in ["a", "b"] {
        create(up, &info(k, now_unix())).unwrap();
    }
    let mut other = info("k", now_unix());
    other.bucket = "other".into();
    create(up, &other).unwrap();
    let aside = discard(up, "bkt").unwrap().expect("there were uploads");
    assert!(
        of_bucket(up, "bkt").unwrap().is_none(),
        "none left under the name"
    );
    assert_eq!(discard(up, "bkt").unwrap(), None, "nothing more to discard");
    remove_discarded(up, &aside).unwrap();
    // Discarded, then a stop before they were removed: the next start removes them.
    assert!(discard(up, "other").unwrap().is_some());
    assert_eq!(recover(up, &completed, |_, _| false), Recovered::default());
    assert_eq!(remove_all_discarded(up), 1);
    assert_eq!(entries(up).unwrap(), vec![]);
}

#[test]
fn uploads_kept_by_earlier_gateways_are_moved_to_their_buckets() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let up = store.uploads_dir();
    let completed = Completed::open(File::open(root.path()).unwrap().as_fd(), false).unwrap();
    let id = create(up, &info("k", now_unix())).unwrap();
    let bucket = of_bucket(up, "bkt").unwrap().unwrap();
    renameat(&bucket, id.as_str(), up, id.as_str()).unwrap();
    forget_if_empty(up, "bkt");
    // A bucket named like an upload id holds no upload.json: it stays.
    let mut hex_named = info("h", now_unix());
    hex_named.bucket = "0123456789abcdef".into();
    let hex = create(up, &hex_named).unwrap();
    recover(up, &completed, |_, _| false);
    let bucket = of_bucket(up, "bkt").unwrap().expect("moved back");
    assert_eq!(open(bucket.as_fd(), &id).unwrap().1.key, "k");
    let hex_dir = of_bucket(up, "0123456789abcdef").unwrap().unwrap();
    assert!(open(hex_dir.as_fd(), &hex).is_ok());
}

#[test]
fn a_fifo_or_link_where_a_file_is_kept_is_an_error_at_once() {
    let root = tempfile::tempdir().unwrap();
    let dir = File::open(root.path()).unwrap();
    rustix::fs::mknodat(
        &dir,
        "fifo",
        FileType::Fifo,
        Mode::from_bits_truncate(0o666),
        0,
    )
    .unwrap();
    rustix::fs::symlinkat("fifo", &dir, "link").unwrap();
    for name in ["fifo", "link"] {
        assert!(read_json::<Plan>(dir.as_fd(), name).is_err(), "{name}");
        assert!(
            write_file(dir.as_fd(), name, b"{}", false).is_err(),
            "{name}"
        );
    }
    write_file(dir.as_fd(), "plain", b"{}", false).unwrap();
    assert!(open_file(dir.as_fd(), "plain", OFlags::RDONLY, Mode::empty()).is_ok());
}

#[test]
fn completed_uploads_are_remembered_for_a_while() {
    let root = tempfile::tempdir().unwrap();
    let completed = Completed::open(File::open(root.path()).unwrap().as_fd(), false).unwrap();
    let done = Done {
        bucket: "b".into(),
        key: "k".into(),
        initiator: Initiator::Anonymous,
        etag: "e-2".into(),
    };
    let id = "0123456789abcdef";
    completed.add(id, &done).unwrap();
    assert_eq!(completed.find(id), Some(done));
    assert_eq!(completed.find("../../etc/passwd"), None);
    assert_eq!(completed.sweep(Duration::from_secs(3600)), 0);
    let two_hours_ago = rustix::fs::Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: now_unix() as i64 - 7200,
            tv_nsec: 0,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: now_unix() as i64 - 7200,
            tv_nsec: 0,
        },
    };
    rustix::fs::utimensat(completed.dir.as_fd(), id, &two_hours_ago, AtFlags::empty()).unwrap();
    assert_eq!(completed.sweep(Duration::from_secs(3600)), 1);
    assert_eq!(completed.find(id), None);
}
