//! Unit tests of multipart uploads on disk: claims, listings, sweeps, recovery and remembered
//! completions.

use super::*;
use crate::store::Store;

fn info(key: &str, initiated_unix: u64) -> UploadInfo {
    UploadInfo {
        bucket: "b".into(),
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
    let up = store.uploads_dir();
    let id = create(up, &info("k", now_unix())).unwrap();
    let claimed = claim(up, &id).unwrap();
    assert!(matches!(claim(up, &id), Err(StoreError::NoSuchUpload)));
    assert!(matches!(open(up, &id), Err(StoreError::NoSuchUpload)));
    unclaim(up, &claimed, &id);
    let (_, got) = open(up, &id).unwrap();
    assert_eq!(got.key, "k");
    let claimed = claim(up, &id).unwrap();
    remove(up, &claimed).unwrap();
    assert_eq!(entries(up).unwrap().len(), 0);
}

#[test]
fn listings_page_by_key_then_id_and_old_uploads_are_swept() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let up = store.uploads_dir();
    let mut ids: Vec<(String, String)> = ["a", "b", "b", "c", "d"]
        .iter()
        .map(|k| (k.to_string(), create(up, &info(k, 1000)).unwrap()))
        .collect();
    ids.sort();
    let mut seen = Vec::new();
    let mut after = (String::new(), String::new());
    loop {
        let (page, more) = list(up, "b", "", (&after.0, &after.1), 2).unwrap();
        assert!(page.is_empty() || !more || page.len() == 2);
        seen.extend(page.iter().map(|(id, i)| (i.key.clone(), id.clone())));
        if !more {
            break;
        }
        let (id, i) = page.last().unwrap();
        after = (i.key.clone(), id.clone());
    }
    assert_eq!(seen, ids);
    let (page, _) = list(up, "b", "b", ("", ""), 10).unwrap();
    assert_eq!(page.len(), 2);
    let fresh = create(up, &info("new", now_unix())).unwrap();
    assert_eq!(sweep(up, Duration::from_secs(3600)), 5);
    assert!(open(up, &fresh).is_ok());
}

#[test]
fn completions_left_claimed_by_a_dead_gateway_are_finished_or_rolled_back() {
    let root = tempfile::tempdir().unwrap();
    let store = Store::open(root.path(), false).unwrap();
    let up = store.uploads_dir();
    let completed = Completed::open(up, false).unwrap();
    let [bare, published, unpublished, elsewhere, running] =
        ["bare", "published", "unpublished", "elsewhere", "running"]
            .map(|k| create(up, &info(k, now_unix())).unwrap());
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

    let recovered = recover(up, &completed, |info, plan| {
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
    let mut want = vec![bare, unpublished, other, live, Completed::DIR.to_string()];
    want.sort();
    assert_eq!(left, want);
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
