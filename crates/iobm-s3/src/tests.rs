//! Unit tests of the S3 client against local servers answering in turn.

use super::*;
use std::io::{Read, Write};

/// A server answering each request, on whatever connection, with the next of `answers`
/// (one request at a time).
fn answering(answers: Vec<String>) -> S3Config {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let answers = Arc::new(Mutex::new(std::collections::VecDeque::from(answers)));
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let (mut s, answers) = (s.unwrap(), answers.clone());
            std::thread::spawn(move || loop {
                let mut got = Vec::new();
                let mut b = [0u8; 4096];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&b[..n]),
                    }
                }
                let Some(answer) = answers.lock().unwrap().pop_front() else {
                    return;
                };
                s.write_all(answer.as_bytes()).unwrap();
            });
        }
    });
    S3Config {
        endpoints: vec![Endpoint::parse(&format!("http://{addr}")).unwrap()],
        bucket: "b".into(),
        prefix: "p/".into(),
        credentials: None,
        region: "us-east-1".into(),
        payload: PayloadSigning::Unsigned,
        checksum: None,
        timeout: Duration::from_secs(5),
        new_connection_per_request: false,
        versions: false,
        first_worker: 0,
        tls: None,
    }
}

fn error_answer(status: &str, code: &str) -> String {
    let body = format!("<Error><Code>{code}</Code><Message>m</Message></Error>");
    format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn a_bucket_made_meanwhile_by_the_same_account_is_used_and_not_ours() {
    // Another client created it between this one's HEAD and PUT.
    let missing = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string();
    let config = answering(vec![
        missing.clone(),
        error_answer("409 Conflict", "BucketAlreadyOwnedByYou"),
    ]);
    assert!(
        !S3Target::new(config).prepare().unwrap(),
        "not created here"
    );
    // Someone else's is not to be used.
    let config = answering(vec![
        missing,
        error_answer("409 Conflict", "BucketAlreadyExists"),
    ]);
    let err = S3Target::new(config).prepare().unwrap_err();
    assert_eq!(
        iobm_target::error_kind(&err),
        "HTTP 409 BucketAlreadyExists"
    );
}

/// GetBucketVersioning's answer for a bucket whose versioning was never turned on.
const UNVERSIONED: &str = "<VersioningConfiguration/>";

fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[test]
fn the_clean_up_lists_again_and_a_bucket_gone_meanwhile_leaves_nothing() {
    let listing = "<ListBucketResult><Contents><Key>p/a</Key></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
    let config = answering(vec![
        ok(UNVERSIONED),
        ok(listing),
        error_answer("501 Not Implemented", "NotImplemented"),
        "HTTP/1.1 204 No Content\r\n\r\n".into(),
        // The run that made the bucket removed it once this run's objects were gone.
        error_answer("404 Not Found", "NoSuchBucket"),
    ]);
    assert_eq!(S3Target::new(config).remove_run_objects(1).unwrap(), 1);
}

#[test]
fn a_clean_up_that_keeps_failing_says_what_is_left() {
    let listing = "<ListBucketResult><Contents><Key>p/a</Key></Contents><Contents><Key>p/b</Key></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
    let uploads = "<ListMultipartUploadsResult><Upload><Key>p/c</Key><UploadId>u1</UploadId></Upload><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>";
    let denied = error_answer("403 Forbidden", "AccessDenied");
    let mut answers = Vec::new();
    for _ in 0..CLEANUP_TRIES {
        // Listed, the first DELETE refused, listed again to count what is left.
        answers.extend([ok(UNVERSIONED), ok(listing), ok(uploads), denied.clone()]);
        answers.extend([ok(UNVERSIONED), ok(listing), ok(uploads)]);
    }
    let left = S3Target::new(answering(answers))
        .remove_run_objects(1)
        .unwrap_err();
    assert_eq!((left.objects, left.uploads), (Some(2), Some(1)));
    assert_eq!(
        iobm_target::error_kind(&left.error),
        "HTTP 403 AccessDenied"
    );
}

#[test]
fn endpoints_parse_or_say_why_not() {
    let e = Endpoint::parse("http://127.0.0.1:9000/").unwrap();
    assert_eq!(
        (e.url.as_str(), e.host.as_str()),
        ("http://127.0.0.1:9000", "127.0.0.1:9000")
    );
    assert_eq!(e.addr.port(), 9000);
    assert_eq!(Endpoint::parse("http://localhost").unwrap().addr.port(), 80);
    assert!(Endpoint::parse("https://x:1")
        .unwrap_err()
        .contains("https"));
    assert!(Endpoint::parse("ftp://x")
        .unwrap_err()
        .contains("not an http"));
    assert!(Endpoint::parse("http://x:1/bucket")
        .unwrap_err()
        .contains("path-style"));
}
