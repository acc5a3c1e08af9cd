//! Unit tests of the gate: what each operation needs, the grants, and Policy::authorize over a store on disk.

use super::*;
use crate::grants::Who;
use crate::meta::grants::{XATTR_ACL, XATTR_OWNER};
use rustix::fs::{fsetxattr, XattrFlags};

fn account(name: &str) -> Caller {
    Caller::Account(name.into())
}

pub(super) fn owned(owner: &str, acl: Option<&str>) -> Grants {
    Grants {
        owner: Some(owner.into()),
        acl: acl.map(str::to_string),
    }
}

fn allowed(caller: &Caller, need: Need, bucket: &Grants, object: Option<&Grants>) -> bool {
    decide(caller, need, &Facts { bucket, object }) == Decision::Allow
}

#[test]
fn each_operation_needs_what_s3_says() {
    let bucket = S3Path::bucket("b");
    let object = S3Path::object("b", "k");
    assert_eq!(need("ListBuckets", &S3Path::Root), Need::Account);
    assert_eq!(need("CreateBucket", &bucket), Need::Account);
    for op in ["ListObjectsV2", "HeadBucket", "ListMultipartUploads"] {
        assert_eq!(need(op, &bucket), Need::ListBucket, "{op}");
    }
    for op in ["PutObject", "DeleteObjects", "UploadPart", "CopyObject"] {
        assert_eq!(need(op, &object), Need::WriteObjects, "{op}");
    }
    for op in ["GetObject", "HeadObject", "GetObjectTagging"] {
        assert_eq!(need(op, &object), Need::ReadObject, "{op}");
    }
    assert_eq!(need("GetBucketAcl", &bucket), Need::ReadBucketAcl);
    assert_eq!(need("PutBucketAcl", &bucket), Need::WriteBucketAcl);
    assert_eq!(need("GetObjectAcl", &object), Need::ReadObjectAcl);
    assert_eq!(need("PutObjectAcl", &object), Need::WriteObjectAcl);
    assert_eq!(need("PutObjectTagging", &object), Need::BucketOrObjectOwner);
    for op in ["DeleteBucket", "PutBucketVersioning", "GetBucketPolicy"] {
        assert_eq!(need(op, &bucket), Need::BucketOwner, "{op}");
    }
}

#[test]
fn canned_acls_reach_exactly_their_callers() {
    let (alice, bob, anon) = (account("alice"), account("bob"), Caller::Anonymous);
    let private = owned("alice", None);
    let public_read = owned("alice", Some("public-read"));
    let public_rw = owned("alice", Some("public-read-write"));
    let authenticated = owned("alice", Some("authenticated-read"));
    // The owner may do anything, even what no ACL grants.
    for need in [Need::BucketOwner, Need::WriteBucketAcl, Need::ListBucket] {
        assert!(allowed(&alice, need, &private, None), "{need:?}");
    }
    // Others: only what the ACL grants.
    assert!(!allowed(&bob, Need::ListBucket, &private, None));
    assert!(!allowed(&bob, Need::BucketOwner, &public_rw, None));
    assert!(allowed(&anon, Need::ListBucket, &public_read, None));
    assert!(!allowed(&anon, Need::WriteObjects, &public_read, None));
    assert!(allowed(&anon, Need::WriteObjects, &public_rw, None));
    assert!(allowed(&bob, Need::ListBucket, &authenticated, None));
    assert!(!allowed(&anon, Need::ListBucket, &authenticated, None));
    assert!(!allowed(&bob, Need::WriteObjects, &authenticated, None));
    // No canned ACL grants its ACL's reading or setting.
    assert!(!allowed(&bob, Need::ReadBucketAcl, &public_rw, None));
    assert!(!allowed(&bob, Need::WriteBucketAcl, &public_rw, None));
    // Creating a bucket or listing them: any account, never the anonymous.
    assert!(allowed(&bob, Need::Account, &private, None));
    assert!(!allowed(&anon, Need::Account, &public_rw, None));
    // A bucket with no recorded owner is every account's, no anonymous caller's.
    let shared = Grants::default();
    assert!(allowed(&bob, Need::BucketOwner, &shared, None));
    assert!(!allowed(&anon, Need::ListBucket, &shared, None));
}

#[test]
fn objects_are_read_by_their_uploader_and_their_acl() {
    let (bob, carol, anon) = (account("bob"), account("carol"), Caller::Anonymous);
    let bucket = owned("alice", Some("public-read-write"));
    let by_bob = owned("bob", None);
    let public = owned("bob", Some("public-read"));
    assert!(allowed(&bob, Need::ReadObject, &bucket, Some(&by_bob)));
    assert!(!allowed(&carol, Need::ReadObject, &bucket, Some(&by_bob)));
    assert!(allowed(&anon, Need::ReadObject, &bucket, Some(&public)));
    // A missing key: told to those who may list the bucket.
    assert!(allowed(&carol, Need::ReadObject, &bucket, None));
    let private_bucket = owned("alice", None);
    assert!(!allowed(&carol, Need::ReadObject, &private_bucket, None));
    // The uploader tags its object and reads and sets its ACL; others do not.
    for need in [
        Need::BucketOrObjectOwner,
        Need::ReadObjectAcl,
        Need::WriteObjectAcl,
    ] {
        assert!(allowed(&bob, need, &bucket, Some(&by_bob)), "{need:?}");
        assert!(!allowed(&carol, need, &bucket, Some(&public)), "{need:?}");
        assert!(!allowed(&bob, need, &bucket, None), "{need:?}");
    }
    // An object with no recorded uploader is no account's.
    let unknown = Grants::default();
    assert!(!allowed(
        &bob,
        Need::BucketOrObjectOwner,
        &bucket,
        Some(&unknown)
    ));
    assert!(!allowed(
        &bob,
        Need::ReadObject,
        &private_bucket,
        Some(&unknown)
    ));
}

#[test]
fn explicit_grants_give_each_permission_alone() {
    let carol = account("carol");
    let grant = |perm| {
        owned(
            "alice",
            Some(&Explicit(vec![(perm, Who::Account("carol".into()))]).encode()),
        )
    };
    let cases = [
        (Perm::Read, Need::ListBucket),
        (Perm::Write, Need::WriteObjects),
        (Perm::ReadAcp, Need::ReadBucketAcl),
        (Perm::WriteAcp, Need::WriteBucketAcl),
    ];
    for (perm, need) in cases {
        let bucket = grant(perm);
        for (_, other) in cases {
            let expected = other == need;
            assert_eq!(
                allowed(&carol, other, &bucket, None),
                expected,
                "{perm:?} and {other:?}"
            );
        }
        assert!(!allowed(&account("bob"), need, &bucket, None), "{perm:?}");
    }
    let bucket = owned("alice", None);
    let object = |perm| grant(perm);
    assert!(allowed(
        &carol,
        Need::ReadObject,
        &bucket,
        Some(&object(Perm::Read))
    ));
    assert!(!allowed(
        &carol,
        Need::ReadObject,
        &bucket,
        Some(&object(Perm::ReadAcp))
    ));
    assert!(allowed(
        &carol,
        Need::ReadObjectAcl,
        &bucket,
        Some(&object(Perm::ReadAcp))
    ));
    assert!(!allowed(
        &carol,
        Need::ReadObjectAcl,
        &bucket,
        Some(&object(Perm::WriteAcp))
    ));
    assert!(allowed(
        &carol,
        Need::WriteObjectAcl,
        &bucket,
        Some(&object(Perm::WriteAcp))
    ));
    assert!(!allowed(
        &carol,
        Need::WriteObjectAcl,
        &bucket,
        Some(&object(Perm::ReadAcp))
    ));
}

fn shown(grants: &[Grant]) -> Vec<(String, String)> {
    grants
        .iter()
        .map(|g| {
            let who = g.grantee.as_ref().unwrap();
            let who = who.id.clone().or(who.uri.clone()).unwrap();
            (who, g.permission.as_ref().unwrap().as_str().to_string())
        })
        .collect()
}

#[test]
fn listed_grants_show_the_owner_and_what_the_acl_adds() {
    let all = "http://acs.amazonaws.com/groups/global/AllUsers";
    let authenticated = "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
    let pair = |who: &str, perm: &str| (who.to_string(), perm.to_string());
    let list = |owner: Option<&str>, acl: Option<&str>, bucket_owner: &str| {
        let g = Grants {
            owner: owner.map(str::to_string),
            acl: acl.map(str::to_string),
        };
        let (o, grants) = g.listed(bucket_owner);
        (o.id.unwrap(), shown(&grants))
    };
    assert_eq!(
        list(Some("bob"), None, "alice"),
        ("bob".into(), vec![pair("bob", "FULL_CONTROL")])
    );
    // No recorded owner: the bucket's.
    assert_eq!(
        list(None, None, "alice"),
        ("alice".into(), vec![pair("alice", "FULL_CONTROL")])
    );
    assert_eq!(
        list(Some("bob"), Some("public-read"), "alice").1,
        [pair("bob", "FULL_CONTROL"), pair(all, "READ")]
    );
    assert_eq!(
        list(Some("bob"), Some("public-read-write"), "alice").1,
        [
            pair("bob", "FULL_CONTROL"),
            pair(all, "READ"),
            pair(all, "WRITE")
        ]
    );
    assert_eq!(
        list(Some("bob"), Some("authenticated-read"), "alice").1,
        [pair("bob", "FULL_CONTROL"), pair(authenticated, "READ")]
    );
    assert_eq!(
        list(Some("bob"), Some("bucket-owner-read"), "alice").1,
        [pair("bob", "FULL_CONTROL"), pair("alice", "READ")]
    );
    assert_eq!(
        list(Some("bob"), Some("bucket-owner-full-control"), "alice").1,
        [pair("bob", "FULL_CONTROL"), pair("alice", "FULL_CONTROL")]
    );
    // The bucket's owner uploaded it: no second grant to the same account.
    for acl in ["bucket-owner-read", "bucket-owner-full-control"] {
        assert_eq!(
            list(Some("alice"), Some(acl), "alice").1,
            [pair("alice", "FULL_CONTROL")],
            "{acl}"
        );
    }
    let explicit = Explicit(vec![(Perm::WriteAcp, Who::Account("carol".into()))]).encode();
    assert_eq!(
        list(Some("bob"), Some(&explicit), "alice").1,
        [pair("bob", "FULL_CONTROL"), pair("carol", "WRITE_ACP")]
    );
}

#[test]
fn a_request_asks_for_one_canned_acl_or_grants() {
    assert_eq!(canned(None).unwrap(), None);
    for acl in CANNED {
        assert_eq!(canned(Some(acl)).unwrap().as_deref(), Some(acl));
    }
    let err = canned(Some("public")).unwrap_err();
    assert_eq!(err.code().as_str(), "InvalidArgument");
    assert!(err.message().unwrap().contains("public-read-write"));
    let grants = Explicit(vec![(Perm::Read, Who::AllUsers)]);
    assert_eq!(requested(None, None).unwrap(), None);
    assert_eq!(
        requested(Some("public-read"), None).unwrap().as_deref(),
        Some("public-read")
    );
    assert_eq!(
        requested(None, Some(grants.clone())).unwrap(),
        Some(grants.encode())
    );
    assert_eq!(
        requested(Some("private"), Some(grants))
            .unwrap_err()
            .code()
            .as_str(),
        "InvalidRequest"
    );
    assert!(requested(Some("nope"), None).is_err());
}

/// A gateway's root with accounts alice, bob and carol, and a policy over it.
pub(super) fn gateway(dir: &std::path::Path) -> Policy {
    let users = dir.join("users");
    std::fs::write(&users, "AKA sa alice\nAKB sb bob\nAKC sc carol\n").unwrap();
    let root = dir.join("root");
    std::fs::create_dir(&root).unwrap();
    Policy {
        accounts: Arc::new(Accounts::from_file(&users).unwrap()),
        store: Store::open(&root, false).unwrap(),
    }
}

pub(super) fn bucket(policy: &Policy, name: &str, grants: &Grants) {
    let path = policy.store.root().join(name);
    std::fs::create_dir(&path).unwrap();
    grants.save(std::fs::File::open(&path).unwrap()).unwrap();
}

pub(super) fn object(policy: &Policy, bucket: &str, key: &str, grants: &Grants) {
    let path = policy.store.root().join(bucket).join(key);
    std::fs::write(&path, b"data").unwrap();
    grants.save(std::fs::File::open(&path).unwrap()).unwrap();
}

pub(super) fn code(r: S3Result<Option<Admission>>) -> String {
    match r {
        Ok(_) => "allowed".into(),
        Err(e) => e.code().as_str().to_string(),
    }
}

/// Alice's public-read-write bucket `shared`, holding bob's private `bobs` and his public-read
/// `open`, and her private bucket `mine`.
fn shared_and_mine(dir: &std::path::Path) -> Policy {
    let policy = gateway(dir);
    bucket(
        &policy,
        "shared",
        &owned("alice", Some("public-read-write")),
    );
    object(&policy, "shared", "bobs", &owned("bob", None));
    object(
        &policy,
        "shared",
        "open",
        &owned("bob", Some("public-read")),
    );
    bucket(&policy, "mine", &owned("alice", None));
    policy
}

/// The gate's answer to `caller` for `op` on `key` of bucket `b` (the bucket itself: `None`).
fn decision(policy: &Policy, caller: &Caller, op: &str, key: Option<&str>, b: &str) -> String {
    let path = match key {
        Some(k) => S3Path::object(b, k),
        None => S3Path::bucket(b),
    };
    code(policy.authorize(caller, op, &path))
}

#[test]
fn the_gate_decides_from_the_bucket_and_object_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let policy = shared_and_mine(dir.path());
    let (alice, bob, carol) = (account("alice"), account("bob"), account("carol"));
    let anon = Caller::Anonymous;
    let at = |c: &Caller, op: &str, key: Option<&str>, b: &str| decision(&policy, c, op, key, b);
    assert_eq!(at(&bob, "GetObject", Some("bobs"), "shared"), "allowed");
    assert_eq!(
        at(&carol, "GetObject", Some("bobs"), "shared"),
        "AccessDenied"
    );
    assert_eq!(at(&anon, "GetObject", Some("open"), "shared"), "allowed");
    assert_eq!(at(&alice, "GetObject", Some("bobs"), "shared"), "allowed");
    assert_eq!(at(&bob, "PutObjectAcl", Some("bobs"), "shared"), "allowed");
    assert_eq!(
        at(&carol, "PutObjectAcl", Some("open"), "shared"),
        "AccessDenied"
    );
    assert_eq!(
        at(&carol, "PutObjectAcl", Some("gone"), "shared"),
        "AccessDenied"
    );
    assert_eq!(at(&carol, "GetObject", Some("gone"), "shared"), "allowed");
    assert_eq!(at(&carol, "PutObject", Some("new"), "shared"), "allowed");
    assert_eq!(at(&bob, "ListObjectsV2", None, "mine"), "AccessDenied");
    assert_eq!(at(&bob, "GetObject", Some("x"), "mine"), "AccessDenied");
    assert_eq!(at(&alice, "DeleteBucket", None, "mine"), "allowed");
    assert_eq!(at(&bob, "DeleteBucket", None, "shared"), "AccessDenied");
    // A bucket that does not exist is that to everyone.
    assert_eq!(at(&anon, "GetObject", Some("k"), "none"), "NoSuchBucket");
    assert_eq!(at(&bob, "ListObjectsV2", None, "none"), "NoSuchBucket");
    // Accounts alone: listing the buckets and making one.
    assert_eq!(
        code(policy.authorize(&bob, "ListBuckets", &S3Path::Root)),
        "allowed"
    );
    assert_eq!(
        code(policy.authorize(&anon, "ListBuckets", &S3Path::Root)),
        "AccessDenied"
    );
    assert_eq!(at(&anon, "CreateBucket", None, "new"), "AccessDenied");
    assert_eq!(at(&bob, "CreateBucket", None, "new"), "allowed");
    // The anonymous are told a signature is what they lack.
    let err = policy
        .authorize(&anon, "ListObjectsV2", &S3Path::bucket("mine"))
        .unwrap_err();
    assert!(err.message().unwrap().contains("Signature is required"));
    let err = policy
        .authorize(&bob, "ListObjectsV2", &S3Path::bucket("mine"))
        .unwrap_err();
    assert!(!err.message().unwrap().contains("Signature"));
}

#[test]
fn unreadable_grants_refuse_all_but_the_owner_of_a_readable_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let policy = shared_and_mine(dir.path());
    let (alice, bob, carol) = (account("alice"), account("bob"), account("carol"));
    let anon = Caller::Anonymous;
    let at = |c: &Caller, op: &str, key: Option<&str>, b: &str| decision(&policy, c, op, key, b);
    // Grants that cannot be read refuse everyone but the owner of a readable bucket.
    let path = policy.store.root().join("shared").join("bobs");
    let file = std::fs::File::open(&path).unwrap();
    fsetxattr(&file, XATTR_ACL, b"\xff", XattrFlags::empty()).unwrap();
    assert_eq!(
        at(&bob, "GetObject", Some("bobs"), "shared"),
        "AccessDenied"
    );
    assert_eq!(at(&alice, "GetObject", Some("bobs"), "shared"), "allowed");
    let dir_file = std::fs::File::open(policy.store.root().join("mine")).unwrap();
    fsetxattr(&dir_file, XATTR_OWNER, b"\xff", XattrFlags::empty()).unwrap();
    assert_eq!(at(&alice, "ListObjectsV2", None, "mine"), "AccessDenied");
    // Ownership as ListBuckets shows it.
    assert!(policy.owns_bucket(&alice, "shared"));
    assert!(!policy.owns_bucket(&bob, "shared"));
    assert!(!policy.owns_bucket(&alice, "mine"), "unreadable: not owned");
    assert!(!policy.owns_bucket(&alice, "none"));
    assert!(policy
        .readable_object(&anon, "shared", "open", None)
        .is_ok());
    assert!(policy
        .readable_object(&carol, "shared", "bobs", None)
        .is_err());
}

#[test]
fn one_key_pair_owns_everything() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let policy = Policy {
        accounts: Arc::new(Accounts::single("AK", "SK")),
        store: Store::open(&root, false).unwrap(),
    };
    bucket(&policy, "bkt", &owned("someone", None));
    let me = policy.caller(None);
    assert_eq!(me, Caller::Anonymous);
    let me = account(crate::accounts::SINGLE);
    assert_eq!(
        code(policy.authorize(&me, "DeleteBucket", &S3Path::bucket("bkt"))),
        "allowed"
    );
    assert_eq!(
        code(policy.authorize(&Caller::Anonymous, "ListObjectsV2", &S3Path::bucket("bkt"))),
        "AccessDenied"
    );
    assert!(policy.owns_bucket(&me, "bkt"));
    assert!(policy.owns_bucket(&me, "none"));
    assert!(!policy.owns_bucket(&Caller::Anonymous, "bkt"));
}

#[test]
fn the_gate_leaves_the_bucket_it_checked_for_the_operation() {
    let dir = tempfile::tempdir().unwrap();
    let policy = gateway(dir.path());
    bucket(&policy, "open", &owned("alice", Some("public-read")));
    bucket(&policy, "other", &owned("alice", None));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (checked, other, denied) = rt.block_on(with_checked_bucket(async {
        policy
            .admit(None, "ListObjectsV2", &S3Path::bucket("open"))
            .unwrap();
        let denied = policy.admit(None, "ListObjectsV2", &S3Path::bucket("other"));
        (
            checked_bucket("open"),
            checked_bucket("other"),
            denied.is_err(),
        )
    }));
    assert!(denied);
    assert!(other.is_none());
    // The very directory: the same inode as the bucket's.
    let fd = checked.expect("the checked bucket");
    let st = rustix::fs::fstat(&fd).unwrap();
    let on_disk = std::fs::metadata(policy.store.root().join("open")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(st.st_ino, on_disk.ino());
    // Outside a request's scope nothing is kept.
    assert!(checked_bucket("open").is_none());
}

#[test]
fn an_unsigned_write_may_not_take_the_disk_an_account_may() {
    let dir = tempfile::tempdir().unwrap();
    let policy = gateway(dir.path());
    bucket(&policy, "open", &owned("alice", Some("public-read-write")));
    let put = S3Path::object("open", "k");
    // A body no disk has room for (1 EiB): refused to the anonymous, before it is read.
    let huge = 1 << 60;
    let err = policy
        .authorize_with_body(&Caller::Anonymous, "PutObject", &put, huge, None)
        .unwrap_err();
    assert_eq!(err.code().as_str(), "XMinioStorageFull");
    assert_eq!(
        err.status_code(),
        Some(hyper::StatusCode::INSUFFICIENT_STORAGE)
    );
    // An account's writes may fill the disk.
    assert_eq!(
        code(policy.authorize_with_body(&account("bob"), "PutObject", &put, huge, None)),
        "allowed"
    );
    // Reads bring no body to keep.
    assert_eq!(
        code(policy.authorize_with_body(&Caller::Anonymous, "GetObject", &put, huge, None)),
        "allowed"
    );
}
