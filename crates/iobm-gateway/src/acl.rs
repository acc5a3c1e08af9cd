//! Who may do what: bucket ownership (recorded when a bucket is created) and canned ACLs on
//! buckets and objects (`private`, `public-read`, `public-read-write`, `authenticated-read`,
//! and for objects `bucket-owner-read` and `bucket-owner-full-control`), kept in extended
//! attributes of the bucket's directory and the object's file, and [`Policy`], the check s3s
//! runs before each request of a gateway with keys.
//!
//! The rules, S3's for canned ACLs: a bucket's owner may do anything in it. A bucket's ACL
//! grants listing it (READ) and writing and deleting objects in it (WRITE); an object's ACL
//! grants reading it. `public-*` grants reach anonymous callers, `authenticated-read` any
//! account. A directory made under the root by other means than CreateBucket has no owner: it
//! is shared by every account. A gateway of one key pair has one account, which owns all.

use crate::accounts::{Accounts, Caller};
use crate::errors::store_error;
use crate::grants::{Explicit, Perm};
use crate::meta::Grants;
use crate::store::Store;
pub(crate) use checked::checked_object;
pub use checked::{checked_bucket, with_checked_bucket};
use checked::{remember_checked, Admission, Seen};
use s3s::access::{S3Access, S3AccessContext};
use s3s::dto::{Grant, Grantee, Owner, Permission, Type};
use s3s::path::S3Path;
use s3s::{s3_error, S3Result};
use std::os::fd::AsFd;
use std::sync::Arc;

/// The canned ACLs kept; anything else is refused when set.
pub const CANNED: [&str; 6] = [
    "private",
    "public-read",
    "public-read-write",
    "authenticated-read",
    "bucket-owner-read",
    "bucket-owner-full-control",
];

impl Grants {
    fn acl(&self) -> &str {
        self.acl.as_deref().unwrap_or("private")
    }

    /// Whether `caller` owns this (a bucket with no recorded owner is every account's).
    pub fn owned_by(&self, caller: &Caller) -> bool {
        match caller {
            Caller::Anonymous => false,
            Caller::Account(name) => self.owner.as_ref().is_none_or(|o| o == name),
        }
    }

    /// Whether `caller` is the account recorded as this object's uploader.
    fn uploaded_by(&self, caller: &Caller) -> bool {
        matches!(caller, Caller::Account(name) if self.owner.as_ref() == Some(name))
    }

    /// Whether the ACL (canned, or explicit grants) gives `caller` `perm`: on a bucket READ
    /// lists it, WRITE writes and deletes in it, READ_ACP and WRITE_ACP read and set its ACL; on
    /// an object READ gets it, READ_ACP and WRITE_ACP read and set its ACL.
    fn grants(&self, caller: &Caller, perm: Perm) -> bool {
        let canned = match (self.acl(), perm) {
            ("public-read" | "public-read-write", Perm::Read) => true,
            ("public-read-write", Perm::Write) => true,
            ("authenticated-read", Perm::Read) => matches!(caller, Caller::Account(_)),
            _ => false,
        };
        canned || Explicit::decode(self.acl()).is_some_and(|g| g.allows(caller, perm))
    }

    /// The grants as S3 lists them: full control to the owner, and what the canned ACL adds.
    pub fn listed(&self, bucket_owner: &str) -> (Owner, Vec<Grant>) {
        let owner_name = self
            .owner
            .clone()
            .unwrap_or_else(|| bucket_owner.to_string());
        let owner = Owner {
            display_name: Some(owner_name.clone()),
            id: Some(owner_name.clone()),
        };
        let user = |name: &str, permission: &'static str| Grant {
            grantee: Some(Grantee {
                display_name: Some(name.to_string()),
                id: Some(name.to_string()),
                type_: Type::from_static(Type::CANONICAL_USER),
                email_address: None,
                uri: None,
            }),
            permission: Some(Permission::from_static(permission)),
        };
        let group = |uri: &str, permission: &'static str| Grant {
            grantee: Some(Grantee {
                type_: Type::from_static(Type::GROUP),
                uri: Some(format!("http://acs.amazonaws.com/groups/global/{uri}")),
                display_name: None,
                email_address: None,
                id: None,
            }),
            permission: Some(Permission::from_static(permission)),
        };
        let mut grants = vec![user(&owner_name, Permission::FULL_CONTROL)];
        match self.acl() {
            "public-read" => grants.push(group("AllUsers", Permission::READ)),
            "public-read-write" => {
                grants.push(group("AllUsers", Permission::READ));
                grants.push(group("AllUsers", Permission::WRITE));
            }
            "authenticated-read" => grants.push(group("AuthenticatedUsers", Permission::READ)),
            "bucket-owner-read" if bucket_owner != owner_name => {
                grants.push(user(bucket_owner, Permission::READ))
            }
            "bucket-owner-full-control" if bucket_owner != owner_name => {
                grants.push(user(bucket_owner, Permission::FULL_CONTROL))
            }
            explicit => grants.extend(Explicit::decode(explicit).unwrap_or_default().listed()),
        }
        (owner, grants)
    }
}

/// The ACL a request asks for: a canned one (`x-amz-acl`) or explicit grants
/// (`x-amz-grant-*`), never both (S3's rule); `None`: private.
pub fn requested(canned_acl: Option<&str>, explicit: Option<Explicit>) -> S3Result<Option<String>> {
    match (canned(canned_acl)?, explicit) {
        (Some(_), Some(_)) => Err(s3_error!(
            InvalidRequest,
            "Specifying both Canned ACLs and Header Grants is not allowed"
        )),
        (Some(acl), None) => Ok(Some(acl)),
        (None, Some(grants)) => Ok(Some(grants.encode())),
        (None, None) => Ok(None),
    }
}

/// The `x-amz-grant-*` headers of an S3 input, by permission (`grant_write` only where the
/// input has one).
#[macro_export]
macro_rules! grant_headers {
    ($input:expr) => {
        $crate::grant_headers!(@ $input, None)
    };
    ($input:expr, write) => {
        $crate::grant_headers!(@ $input, $input.grant_write.as_deref())
    };
    (@ $input:expr, $write:expr) => {
        [
            ($crate::grants::Perm::Read, $input.grant_read.as_deref()),
            ($crate::grants::Perm::Write, $write),
            ($crate::grants::Perm::ReadAcp, $input.grant_read_acp.as_deref()),
            ($crate::grants::Perm::WriteAcp, $input.grant_write_acp.as_deref()),
            ($crate::grants::Perm::FullControl, $input.grant_full_control.as_deref()),
        ]
    };
}

/// A canned ACL as given, checked.
pub fn canned(acl: Option<&str>) -> S3Result<Option<String>> {
    match acl {
        None => Ok(None),
        Some(a) if CANNED.contains(&a) => Ok(Some(a.to_string())),
        Some(a) => Err(s3_error!(
            InvalidArgument,
            "the canned ACL {a} is not one of {}",
            CANNED.join(", ")
        )),
    }
}

/// The object operations that act on the version a request's `versionId` names (each asks
/// [`checked_object`] for that version).
const BY_VERSION: [&str; 7] = [
    "GetObject",
    "HeadObject",
    "GetObjectTagging",
    "PutObjectTagging",
    "DeleteObjectTagging",
    "GetObjectAcl",
    "PutObjectAcl",
];

/// What a request needs of the bucket (or object) it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Need {
    Account,
    ListBucket,
    WriteObjects,
    ReadObject,
    BucketOwner,
    BucketOrObjectOwner,
    ReadBucketAcl,
    WriteBucketAcl,
    ReadObjectAcl,
    WriteObjectAcl,
}

fn need(op: &str, path: &S3Path) -> Need {
    match (op, path) {
        (_, S3Path::Root) | ("CreateBucket", _) => Need::Account,
        (
            "ListObjects"
            | "ListObjectsV2"
            | "ListObjectVersions"
            | "HeadBucket"
            | "GetBucketLocation"
            | "GetBucketVersioning"
            | "ListMultipartUploads",
            _,
        ) => Need::ListBucket,
        (
            "PutObject"
            | "DeleteObject"
            | "DeleteObjects"
            | "CreateMultipartUpload"
            | "UploadPart"
            | "UploadPartCopy"
            | "CompleteMultipartUpload"
            | "AbortMultipartUpload"
            | "ListParts"
            | "CopyObject",
            _,
        ) => Need::WriteObjects,
        ("GetObject" | "HeadObject" | "GetObjectAttributes" | "GetObjectTagging", _) => {
            Need::ReadObject
        }
        ("GetBucketAcl", _) => Need::ReadBucketAcl,
        ("PutBucketAcl", _) => Need::WriteBucketAcl,
        ("GetObjectAcl", _) => Need::ReadObjectAcl,
        ("PutObjectAcl", _) => Need::WriteObjectAcl,
        ("PutObjectTagging" | "DeleteObjectTagging", _) => Need::BucketOrObjectOwner,
        _ => Need::BucketOwner,
    }
}

/// The grants a decision is made from: the bucket's, and the object's when the request names
/// one (`None`: no such object).
struct Facts<'a> {
    bucket: &'a Grants,
    object: Option<&'a Grants>,
}

/// What is allowed, from the grants alone: S3's rules for canned ACLs.
#[derive(Debug, PartialEq, Eq)]
enum Decision {
    Allow,
    Deny,
}

fn decide(caller: &Caller, need: Need, facts: &Facts<'_>) -> Decision {
    let bucket = facts.bucket;
    let allowed = bucket.owned_by(caller)
        || match need {
            Need::Account => matches!(caller, Caller::Account(_)),
            Need::ListBucket => bucket.grants(caller, Perm::Read),
            Need::WriteObjects => bucket.grants(caller, Perm::Write),
            // A missing key is told only to those who may list the bucket.
            Need::ReadObject => facts.object.map_or_else(
                || bucket.grants(caller, Perm::Read),
                |o| o.uploaded_by(caller) || o.grants(caller, Perm::Read),
            ),
            Need::BucketOrObjectOwner => facts.object.is_some_and(|o| o.uploaded_by(caller)),
            Need::ReadBucketAcl => bucket.grants(caller, Perm::ReadAcp),
            Need::WriteBucketAcl => bucket.grants(caller, Perm::WriteAcp),
            Need::ReadObjectAcl => facts
                .object
                .is_some_and(|o| o.uploaded_by(caller) || o.grants(caller, Perm::ReadAcp)),
            Need::WriteObjectAcl => facts
                .object
                .is_some_and(|o| o.uploaded_by(caller) || o.grants(caller, Perm::WriteAcp)),
            Need::BucketOwner => false,
        };
    if allowed {
        Decision::Allow
    } else {
        Decision::Deny
    }
}

/// The check s3s runs before every request of a gateway with keys, and the gateway's own
/// routes ([`crate::routes`]) before theirs: one gate.
#[derive(Debug, Clone)]
pub struct Policy {
    pub accounts: Arc<Accounts>,
    pub store: Store,
}

/// S3's AccessDenied; an unsigned caller is told that a signature is what it lacks.
fn denied(caller: &Caller) -> s3s::S3Error {
    match caller {
        Caller::Anonymous => s3_error!(
            AccessDenied,
            "Signature is required: no public ACL grants this to unsigned requests"
        ),
        Caller::Account(_) => s3_error!(AccessDenied, "Access Denied"),
    }
}

impl Policy {
    /// Who sent a request: the account of its (already verified) access key.
    pub fn caller(&self, credentials: Option<&s3s::auth::Credentials>) -> Caller {
        self.accounts
            .caller(credentials.map(|c| c.access_key.as_str()))
    }

    /// Whether `caller` owns `bucket` (what ListBuckets and the counters show it).
    pub fn owns_bucket(&self, caller: &Caller, bucket: &str) -> bool {
        if self.accounts.is_single() {
            return caller != &Caller::Anonymous;
        }
        self.store
            .open_bucket(bucket)
            .ok()
            .and_then(|dir| Grants::read(dir).ok())
            .is_some_and(|g| g.owned_by(caller))
    }

    /// Whether `caller` may read object `key` of `bucket`, its current version or `version`
    /// (asked of copy sources): the bucket's directory and what the decision was made from,
    /// which the copy must read.
    pub(crate) fn readable_object(
        &self,
        caller: &Caller,
        bucket: &str,
        key: &str,
        version: Option<&str>,
    ) -> S3Result<Admission> {
        let path = S3Path::object(bucket, key);
        self.authorize_with_body(caller, "GetObject", &path, 0, version)?
            .ok_or_else(|| s3_error!(NoSuchBucket))
    }

    /// [`Policy::authorize_with_body`] of a request without a body or version.
    #[cfg(test)]
    fn authorize(&self, caller: &Caller, op: &str, path: &S3Path) -> S3Result<Option<Admission>> {
        self.authorize_with_body(caller, op, path, 0, None)
    }

    /// The gate: whether `caller` may do `op` on `path`, decided from the owners and ACLs of
    /// the bucket and object (`version` of it, when the request reads that version), for a
    /// request whose body brings `body` bytes. A bucket that does not exist is NoSuchBucket
    /// to everyone; one whose grants cannot be read is refused. Returns the bucket's directory
    /// as checked, with the object the decision was made from (`None` for the root and for
    /// accounts alone).
    fn authorize_with_body(
        &self,
        caller: &Caller,
        op: &str,
        path: &S3Path,
        body: u64,
        version: Option<&str>,
    ) -> S3Result<Option<Admission>> {
        let single = self.accounts.is_single();
        let need = need(op, path);
        let (bucket, key) = match path {
            S3Path::Root => return account_only(caller).map(|()| None),
            S3Path::Bucket { bucket } => (&**bucket, None),
            S3Path::Object { bucket, key } => (&**bucket, Some(&**key)),
        };
        if need == Need::Account {
            return account_only(caller).map(|()| None);
        }
        let dir = self.store.open_bucket(bucket).map_err(store_error)?;
        if single && caller != &Caller::Anonymous {
            // The one account owns everything.
            return Ok(Some(Admission { dir, object: None }));
        }
        let bucket_grants = Grants::read(&dir).map_err(|_| denied(caller))?;
        // The object is looked at only where the decision depends on it; what is seen here is
        // what the operation then serves or changes.
        let seen = match (need, key) {
            (
                Need::ReadObject
                | Need::BucketOrObjectOwner
                | Need::ReadObjectAcl
                | Need::WriteObjectAcl,
                Some(key),
            ) if !bucket_grants.owned_by(caller) => {
                let opened = (self.store).open_version(dir.as_fd(), bucket, key, version);
                Some(Seen::of(opened).ok_or_else(|| denied(caller))?)
            }
            _ => None,
        };
        let object_grants = match &seen {
            Some(Seen::Object(o)) => Some(Grants::read(&o.file).map_err(|_| denied(caller))?),
            _ => None,
        };
        let facts = Facts {
            bucket: &bucket_grants,
            object: object_grants.as_ref(),
        };
        let admission = Admission { dir, object: seen };
        match decide(caller, need, &facts) {
            Decision::Deny => Err(denied(caller)),
            // What an unsigned client writes may not take the disk below a tenth free (an
            // account's own writes may fill it).
            Decision::Allow if need == Need::WriteObjects && caller == &Caller::Anonymous => {
                if crate::store::room::room_at(self.store.root(), body) {
                    Ok(Some(admission))
                } else {
                    Err(crate::errors::custom(
                        "XMinioStorageFull",
                        hyper::StatusCode::INSUFFICIENT_STORAGE,
                        "the gateway keeps the rest of its disk for its accounts".into(),
                    ))
                }
            }
            Decision::Allow => Ok(Some(admission)),
        }
    }

    /// The gate for one request: authorizes it and keeps the bucket it checked for the
    /// operation ([`checked_bucket`]).
    pub fn admit(
        &self,
        credentials: Option<&s3s::auth::Credentials>,
        op: &str,
        path: &S3Path,
    ) -> S3Result<()> {
        self.admit_with_body(credentials, op, path, 0, None)
    }

    /// [`Policy::admit`] of a request whose body brings `body` bytes (what an unsigned write
    /// may take of the disk) and that reads `version` of the object.
    pub fn admit_with_body(
        &self,
        credentials: Option<&s3s::auth::Credentials>,
        op: &str,
        path: &S3Path,
        body: u64,
        version: Option<&str>,
    ) -> S3Result<()> {
        let caller = self.caller(credentials);
        if let Some(admission) = self.authorize_with_body(&caller, op, path, body, version)? {
            remember_checked(path, version, admission);
        }
        Ok(())
    }
}

fn account_only(caller: &Caller) -> S3Result<()> {
    match caller {
        Caller::Account(_) => Ok(()),
        Caller::Anonymous => Err(denied(caller)),
    }
}

#[async_trait::async_trait]
impl S3Access for Policy {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let body = ["x-amz-decoded-content-length", "content-length"]
            .iter()
            .find_map(|h| cx.headers().get(*h)?.to_str().ok()?.parse::<u64>().ok())
            .unwrap_or(0);
        let op = cx.s3_op().name();
        // What reads or changes one version of an object is decided from that version.
        let version = BY_VERSION
            .contains(&op)
            .then(|| crate::query::asked_version(cx.uri()))
            .flatten();
        let version = version.as_deref();
        self.admit_with_body(cx.credentials(), op, cx.s3_path(), body, version)?;
        if cx.extensions_mut().get::<crate::probe::Probe>().is_some() {
            // An admitted probe goes no further: no operation runs with its empty body.
            return Err(crate::probe::stop_admitted(cx.credentials()));
        }
        Ok(())
    }
}

mod checked;
#[cfg(test)]
mod races;
#[cfg(test)]
mod tests;
