//! How failures are answered: each store or I/O condition a client can act on gets S3's code
//! and status (a full disk is `XMinioStorageFull` 507, as MinIO answers; no descriptors left is
//! `SlowDown` 503), never a bare `InternalError`; a refused symbolic link is logged once.

use crate::store::StoreError;
use hyper::StatusCode;
use s3s::{s3_error, S3Error, S3ErrorCode};
use std::collections::HashSet;
use std::io;
use std::sync::Mutex;

/// How many distinct refused paths are logged (each once); later ones are counted only.
const LOGGED_PATHS: usize = 1024;

static REFUSED: Mutex<Option<HashSet<String>>> = Mutex::new(None);

/// Logs a path that crosses a symbolic link, the first time it is refused.
fn log_refusal(path: &str) {
    let mut seen = REFUSED.lock().unwrap_or_else(|p| p.into_inner());
    let seen = seen.get_or_insert_with(HashSet::new);
    if seen.len() < LOGGED_PATHS && seen.insert(path.to_string()) {
        eprintln!("iobm serve: refused {path}: it crosses a symbolic link");
    }
}

/// An error with a code s3s does not know, and its status.
pub fn custom(code: &'static str, status: StatusCode, message: String) -> S3Error {
    let mut e = S3Error::with_message(S3ErrorCode::Custom(code.into()), message);
    e.set_status_code(status);
    e
}

pub fn store_error(e: StoreError) -> S3Error {
    match e {
        StoreError::InvalidBucket => s3_error!(InvalidBucketName),
        StoreError::InvalidKey => s3_error!(
            InvalidArgument,
            "object key is not a relative path of plain names"
        ),
        StoreError::KeyTooLong => s3_error!(KeyTooLongError),
        StoreError::NoSuchBucket => s3_error!(NoSuchBucket),
        StoreError::NoSuchKey => s3_error!(NoSuchKey),
        StoreError::NoSuchUpload => s3_error!(NoSuchUpload),
        StoreError::SymlinkCrossed(path) => {
            log_refusal(&path);
            s3_error!(AccessDenied, "the path crosses a symbolic link")
        }
        StoreError::KeyIsPrefix(key) => s3_error!(
            InvalidArgument,
            "keys below {key}/ exist, so {key} cannot be an object here (it is a directory)"
        ),
        StoreError::PrefixIsObject(object) => s3_error!(
            InvalidArgument,
            "{object} is an object, so no key can go below {object}/ here (it would need a directory)"
        ),
        StoreError::FolderHasBytes => s3_error!(
            InvalidArgument,
            "a key ending in / is a folder marker, which holds no bytes here"
        ),
        StoreError::PreconditionFailed => crate::conditions::precondition_failed(),
        StoreError::InvalidVersion => s3_error!(InvalidArgument, "Invalid version id specified"),
        StoreError::NoSuchVersion => s3_error!(NoSuchVersion),
        StoreError::DeleteMarker(marker) => delete_marker(s3_error!(MethodNotAllowed), marker),
        StoreError::Io(e) => io_error(e),
    }
}

/// An answer about a delete marker (the version asked for, or the key's latest), with the
/// headers S3 sends with it: `x-amz-delete-marker`, its version id and when it was made.
pub fn delete_marker(mut e: S3Error, marker: crate::versions::Name) -> S3Error {
    use hyper::header::{HeaderMap, HeaderValue, CONTENT_TYPE, LAST_MODIFIED};
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/xml"));
    headers.insert("x-amz-delete-marker", HeaderValue::from_static("true"));
    if let Ok(id) = HeaderValue::from_str(&marker.version_id()) {
        headers.insert("x-amz-version-id", id);
    }
    let date = httpdate::fmt_http_date(marker.made());
    if let Ok(date) = HeaderValue::from_str(&date) {
        headers.insert(LAST_MODIFIED, date);
    }
    e.set_headers(headers);
    e
}

pub fn io_error(e: io::Error) -> S3Error {
    match e.raw_os_error() {
        Some(libc::ENOSPC) => custom(
            "XMinioStorageFull",
            StatusCode::INSUFFICIENT_STORAGE,
            "no space left on the gateway's file system".into(),
        ),
        Some(libc::EDQUOT) => custom(
            "XMinioStorageFull",
            StatusCode::INSUFFICIENT_STORAGE,
            "the gateway's disk quota is exceeded".into(),
        ),
        Some(libc::EMFILE) | Some(libc::ENFILE) => s3_error!(
            SlowDown,
            "the gateway is out of file descriptors: reduce the request rate"
        ),
        _ => s3_error!(e, InternalError),
    }
}

/// S3's `MetadataTooLarge`.
pub fn metadata_too_large(message: String) -> S3Error {
    custom("MetadataTooLarge", hyper::StatusCode::BAD_REQUEST, message)
}

/// What a failure to keep an object's metadata ([`crate::meta::store_meta`], [`crate::meta::save_tags`]) answers: the
/// file system's room for extended attributes is spent (ext4 keeps about 4 KiB per file), or it
/// keeps none where user metadata or tags were asked for.
pub fn meta_error(e: io::Error) -> S3Error {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::E2BIG | libc::ERANGE) => metadata_too_large(
            "the object's metadata and tags together exceed what the gateway's file system \
             keeps per file"
                .into(),
        ),
        _ if e.kind() == io::ErrorKind::Unsupported => s3_error!(
            NotImplemented,
            "the gateway's file system keeps no extended attributes: user metadata, tags and \
             owners cannot be stored"
        ),
        _ => io_error(e),
    }
}

/// What a request body's failure means: the checks s3s runs as the body arrives (payload hash,
/// chunk signatures) name themselves in their messages, s3s's types being private.
pub fn body_error(e: &(dyn std::error::Error + 'static)) -> S3Error {
    if let Some(e) = e.downcast_ref::<S3Error>() {
        // The body's own answer (a form's file outside its policy's sizes, say).
        let mut answer = S3Error::with_message(
            e.code().clone(),
            e.message().unwrap_or_default().to_string(),
        );
        if let Some(status) = e.status_code() {
            answer.set_status_code(status);
        }
        return answer;
    }
    let text = e.to_string();
    if text.contains("Sha256Mismatch") {
        custom(
            "XAmzContentSHA256Mismatch",
            StatusCode::BAD_REQUEST,
            "the body's SHA-256 does not match x-amz-content-sha256".into(),
        )
    } else if text.contains("SignatureMismatch") {
        s3_error!(
            SignatureDoesNotMatch,
            "a chunk signature of the body does not match"
        )
    } else {
        s3_error!(IncompleteBody, "the body ended early: {text}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_disks_and_descriptor_exhaustion_have_their_own_answers() {
        let full = io_error(io::Error::from_raw_os_error(libc::ENOSPC));
        assert_eq!(full.code().as_str(), "XMinioStorageFull");
        assert_eq!(full.status_code(), Some(StatusCode::INSUFFICIENT_STORAGE));
        let quota = io_error(io::Error::from_raw_os_error(libc::EDQUOT));
        assert_eq!(quota.code().as_str(), "XMinioStorageFull");
        let fds = io_error(io::Error::from_raw_os_error(libc::EMFILE));
        assert_eq!(fds.code(), &S3ErrorCode::SlowDown);
        let eio = io_error(io::Error::from_raw_os_error(libc::EIO));
        assert_eq!(eio.code(), &S3ErrorCode::InternalError);
    }

    #[test]
    fn symlink_refusals_are_access_denied() {
        let e = store_error(StoreError::SymlinkCrossed("bkt/lnk".into()));
        assert_eq!(e.code(), &S3ErrorCode::AccessDenied);
        assert!(REFUSED
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .contains("bkt/lnk"));
    }
}
