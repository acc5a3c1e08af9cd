//! What the gate checked for a request, left for its operation: the bucket's directory it
//! decided from and the object it opened, so that the operation serves or changes the very
//! file the decision was made from ([`checked_object`]).

use crate::store::{Object, StoreError};
use s3s::path::S3Path;
use std::os::fd::OwnedFd;

/// What the gate opened of the object a request names, when its decision needed the object
/// (a caller who does not own the bucket reading it or its ACL): the operation serves or
/// changes this very file ([`checked_object`]), so a key replaced between the check and the
/// operation is never served or changed on the old decision.
#[derive(Debug)]
pub(crate) enum Seen {
    /// The file the decision was made from.
    Object(Object),
    /// There was no such key when the gate looked: the request is answered as if it came
    /// before any later PUT of the key.
    Absent,
    /// The version asked for did not exist, or was this delete marker.
    NoVersion,
    Marker(crate::versions::Name),
}

impl Seen {
    /// The object seen, as a descriptor of the same open file.
    fn duplicate(&self) -> Result<Object, StoreError> {
        match self {
            Seen::Object(o) => Ok(Object {
                file: o.file.try_clone()?,
                len: o.len,
                modified: o.modified,
            }),
            missing => Err(missing.refusal()),
        }
    }

    pub(crate) fn into_object(self) -> Result<Object, StoreError> {
        match self {
            Seen::Object(o) => Ok(o),
            missing => Err(missing.refusal()),
        }
    }

    /// What a request finding no object is told.
    fn refusal(&self) -> StoreError {
        match self {
            Seen::Object(_) | Seen::Absent => StoreError::NoSuchKey,
            Seen::NoVersion => StoreError::NoSuchVersion,
            Seen::Marker(name) => StoreError::DeleteMarker(*name),
        }
    }

    /// What the gate saw of an object it tried to open; `None` for a failure that refuses.
    pub(super) fn of(opened: Result<Object, StoreError>) -> Option<Seen> {
        match opened {
            Ok(object) => Some(Seen::Object(object)),
            Err(StoreError::NoSuchKey) => Some(Seen::Absent),
            Err(StoreError::NoSuchVersion | StoreError::InvalidVersion) => Some(Seen::NoVersion),
            Err(StoreError::DeleteMarker(name)) => Some(Seen::Marker(name)),
            Err(_) => None,
        }
    }
}

/// What the gate checked for one request: the bucket's directory, and the object the decision
/// was made from when it needed one.
#[derive(Debug)]
pub(crate) struct Admission {
    pub dir: OwnedFd,
    pub object: Option<Seen>,
}

/// What the gate checked for the request a task serves, left for its operation.
struct Checked {
    bucket: Box<str>,
    dir: OwnedFd,
    /// The key (and version) and what the gate saw of it, when its decision needed the object.
    object: Option<(Box<str>, Option<Box<str>>, Seen)>,
}

tokio::task_local! {
    /// The bucket directory (and object) the gate checked for the request this task serves:
    /// the operation works in that very directory ([`checked_bucket`]), so a bucket deleted
    /// and made again by another account between the check and the operation is not written
    /// into, and on that very object ([`checked_object`]).
    static CHECKED: std::cell::RefCell<Option<Checked>>;
}

/// Runs a request's future with room for the gate to leave what it checked.
pub fn with_checked_bucket<F: std::future::Future>(
    request: F,
) -> impl std::future::Future<Output = F::Output> {
    CHECKED.scope(std::cell::RefCell::new(None), request)
}

/// The directory the gate checked for `bucket` in this request, if it checked that one.
pub fn checked_bucket(bucket: &str) -> Option<OwnedFd> {
    CHECKED
        .try_with(|c| {
            c.borrow()
                .as_ref()
                .filter(|c| &*c.bucket == bucket)
                .and_then(|c| c.dir.try_clone().ok())
        })
        .ok()
        .flatten()
}

/// The object the gate decided from for `key` (its current version, or `version`) of `bucket`
/// in this request: the same open file (or the error of there being none; one the gate did
/// not decide from, of a key it looked at, is refused). `None`: the gate did not look at it
/// (the caller owns the bucket, or one account owns everything), and the operation opens the
/// key itself.
pub(crate) fn checked_object(
    bucket: &str,
    key: &str,
    version: Option<&str>,
) -> Option<Result<Object, StoreError>> {
    CHECKED
        .try_with(|c| {
            let c = c.borrow();
            let c = c.as_ref().filter(|c| &*c.bucket == bucket)?;
            let (_, v, seen) = c.object.as_ref().filter(|(k, ..)| **k == *key)?;
            if v.as_deref() == version {
                Some(seen.duplicate())
            } else {
                Some(Err(StoreError::NoSuchVersion))
            }
        })
        .ok()
        .flatten()
}

pub(super) fn remember_checked(path: &S3Path, version: Option<&str>, admission: Admission) {
    let (bucket, key) = match path {
        S3Path::Root => return,
        S3Path::Bucket { bucket } => (bucket, None),
        S3Path::Object { bucket, key } => (bucket, Some(key)),
    };
    let object =
        (key.zip(admission.object)).map(|(k, seen)| (k.clone(), version.map(Into::into), seen));
    let checked = Checked {
        bucket: bucket.clone(),
        dir: admission.dir,
        object,
    };
    let _ = CHECKED.try_with(|c| *c.borrow_mut() = Some(checked));
}
