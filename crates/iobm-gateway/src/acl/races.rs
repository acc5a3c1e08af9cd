//! Races between the gate and the operations it admits: a reader never gets bytes it may not
//! read while the owner flips an object's ACL, an ACL set through a grant lands only on the
//! object granted, a key absent when checked is not served when it appears.

use super::tests::{bucket, gateway, owned};
use super::*;

/// A gateway over `policy`'s store, for the operations the gate hands what it checked.
fn gateway_over(policy: &Policy, dir: &std::path::Path) -> crate::gateway::Gateway {
    let internal = dir.join("internal");
    std::fs::create_dir_all(&internal).unwrap();
    let internal = std::fs::File::open(&internal).unwrap();
    crate::gateway::Gateway {
        store: policy.store.clone(),
        metrics: Arc::new(crate::metrics::Metrics::new(policy.store.root().into())),
        completed: Arc::new(crate::multipart::Completed::open(internal.as_fd(), false).unwrap()),
        hashers: Arc::new(crate::hashing::Hashers::start()),
        policy: Some(policy.clone()),
    }
}

/// A request of `caller` with `input`.
fn request<T>(input: T, caller: &s3s::auth::Credentials) -> s3s::S3Request<T> {
    s3s::S3Request {
        input,
        method: hyper::Method::PUT,
        uri: hyper::Uri::from_static("/"),
        headers: Default::default(),
        extensions: Default::default(),
        credentials: Some(caller.clone()),
        region: None,
        service: None,
        trailing_headers: None,
    }
}

/// Publishes `bytes` as `key` with `grants`, atomically (as a PUT does).
fn publish(policy: &Policy, bucket: &str, key: &str, bytes: &[u8], grants: &Grants) {
    let mut temp = policy.store.create_temp().unwrap();
    std::io::Write::write_all(&mut temp.file, bytes).unwrap();
    grants.save(&temp.file).unwrap();
    let dir = policy.store.open_bucket(bucket).unwrap();
    policy
        .store
        .publish(temp, dir.as_fd(), bucket, key)
        .unwrap();
}

/// What one request reads of `key` through the gate and the operation: its bytes, or the
/// error's code.
fn read_through_gate(
    policy: &Policy,
    gateway: &crate::gateway::Gateway,
    caller: Option<&s3s::auth::Credentials>,
    op: &str,
    (bucket, key): (&str, &str),
) -> Result<Vec<u8>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(with_checked_bucket(async {
        let code = |e: s3s::S3Error| e.code().as_str().to_string();
        policy
            .admit(caller, op, &S3Path::object(bucket, key))
            .map_err(code)?;
        if op == "CopyObject" {
            let source = s3s::dto::CopySource::Bucket {
                bucket: bucket.into(),
                key: key.into(),
                version_id: None,
            };
            let (_, _, mut object) = gateway
                .open_source(&caller.cloned(), &source)
                .map_err(code)?;
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut object.file, &mut bytes).unwrap();
            return Ok(bytes);
        }
        let (mut object, _) = gateway.object(bucket, key, None).map_err(code)?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut object.file, &mut bytes).unwrap();
        Ok(bytes)
    }))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8))]

    /// Readers never receive bytes they were not allowed to read, while the owner flips the
    /// key between a public-read object and a private one (a random sequence of flips): every
    /// answer is the public bytes, NoSuchKey before the first, or AccessDenied.
    #[test]
    fn no_reader_gets_bytes_it_may_not_read(flips in proptest::collection::vec(proptest::bool::ANY, 50..200)) {
        let dir = tempfile::tempdir().unwrap();
        let policy = gateway(dir.path());
        let gw = gateway_over(&policy, dir.path());
        bucket(&policy, "flip", &owned("alice", Some("public-read")));
        let bob = s3s::auth::Credentials {
            access_key: "AKB".into(),
            secret_key: "sb".to_string().into(),
        };
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for &public in &flips {
                    let (bytes, acl): (&[u8], _) = if public {
                        (b"public bytes", Some("public-read"))
                    } else {
                        (b"PRIVATE BYTES", None)
                    };
                    publish(&policy, "flip", "x", bytes, &owned("alice", acl));
                }
                done.store(true, std::sync::atomic::Ordering::Relaxed);
            });
            let readers: Vec<_> = [(None, "GetObject"), (Some(&bob), "GetObject"), (Some(&bob), "CopyObject"), (None, "HeadObject")]
                .into_iter()
                .map(|(who, op)| {
                    let (policy, gw, done) = (&policy, &gw, &done);
                    s.spawn(move || {
                        let mut answers = 0;
                        while !done.load(std::sync::atomic::Ordering::Relaxed) || answers == 0 {
                            let got = read_through_gate(policy, gw, who, op, ("flip", "x"));
                            match got {
                                Ok(bytes) => assert_eq!(bytes, b"public bytes", "{op} by {who:?}"),
                                Err(code) => assert!(
                                    code == "AccessDenied" || code == "NoSuchKey",
                                    "{op}: {code}"
                                ),
                            }
                            answers += 1;
                        }
                    })
                })
                .collect();
            for r in readers {
                r.join().unwrap();
            }
        });
    }
}

#[test]
fn an_acl_set_by_a_grantee_changes_only_the_object_it_was_granted_on() {
    let dir = tempfile::tempdir().unwrap();
    let policy = gateway(dir.path());
    let gw = gateway_over(&policy, dir.path());
    bucket(&policy, "share", &owned("alice", None));
    // Bob may set the ACL of the object alice shared with him...
    let granted = Grants {
        owner: Some("alice".into()),
        acl: Some(
            crate::grants::Explicit::from_headers(
                [
                    (Perm::Read, None),
                    (Perm::Write, None),
                    (Perm::ReadAcp, None),
                    (Perm::WriteAcp, Some("id=\"bob\"")),
                    (Perm::FullControl, None),
                ],
                &|n| n == "bob",
            )
            .unwrap()
            .unwrap()
            .encode(),
        ),
    };
    publish(&policy, "share", "y", b"shared", &granted);
    let bob = s3s::auth::Credentials {
        access_key: "AKB".into(),
        secret_key: "sb".to_string().into(),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(with_checked_bucket(async {
        policy
            .admit(Some(&bob), "PutObjectAcl", &S3Path::object("share", "y"))
            .unwrap();
        // ...but alice replaces it with a private one after the check.
        publish(&policy, "share", "y", b"private", &owned("alice", None));
        let input = s3s::dto::PutObjectAclInput::builder()
            .bucket("share".into())
            .key("y".into())
            .acl(Some(s3s::dto::ObjectCannedACL::from_static("public-read")))
            .build()
            .unwrap();
        gw.put_object_acl_at(request(input, &bob)).await.unwrap();
    }));
    // Her new object stays private: what bob changed was the object he was granted.
    let now = std::fs::File::open(policy.store.root().join("share/y")).unwrap();
    assert_eq!(Grants::read(&now).unwrap().acl.as_deref(), Some("private"));
}

#[test]
fn a_key_absent_when_checked_is_not_served_when_it_appears() {
    let dir = tempfile::tempdir().unwrap();
    let policy = gateway(dir.path());
    let gw = gateway_over(&policy, dir.path());
    bucket(&policy, "open", &owned("alice", Some("public-read")));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let got = rt.block_on(with_checked_bucket(async {
        // Listing is public, so an absent key is told as absent...
        policy
            .admit(None, "GetObject", &S3Path::object("open", "k"))
            .unwrap();
        // ...and a private object put there after the check is not served on that decision.
        publish(&policy, "open", "k", b"PRIVATE", &owned("alice", None));
        gw.object("open", "k", None).map(|_| ())
    }));
    assert_eq!(got.unwrap_err().code().as_str(), "NoSuchKey");
}
