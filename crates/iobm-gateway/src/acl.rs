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
use crate::store::{Store, StoreError};
use rustix::fs::{fgetxattr, fsetxattr, XattrFlags};
use rustix::io::Errno;
use s3s::access::{S3Access, S3AccessContext};
use s3s::dto::{Grant, Grantee, Owner, Permission, Type};
use s3s::path::S3Path;
use s3s::{s3_error, S3Result};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

pub const XATTR_OWNER: &str = "user.iobm.owner";
pub const XATTR_ACL: &str = "user.iobm.acl";

/// The canned ACLs kept; anything else is refused when set.
pub const CANNED: [&str; 6] = [
    "private",
    "public-read",
    "public-read-write",
    "authenticated-read",
    "bucket-owner-read",
    "bucket-owner-full-control",
];

/// The owner and canned ACL of a bucket or object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// `None`: made by other means than this gateway (a shared bucket, or an object whose
    /// uploader is unknown).
    pub owner: Option<String>,
    /// `None` is `private`.
    pub acl: Option<String>,
}

/// An owner or ACL attribute that is there but cannot be read (an I/O error, not UTF-8): what
/// it belongs to is refused to everyone but a gateway's single account, never taken as shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unreadable;

/// Largest value an extended attribute can have on Linux (`XATTR_SIZE_MAX`).
const XATTR_MAX: usize = 64 << 10;

/// An attribute's whole value: `None` when it is not set (or the file system keeps none).
fn text(fd: BorrowedFd<'_>, name: &str) -> Result<Option<String>, Unreadable> {
    let mut small = [0u8; 256];
    let value = match fgetxattr(fd, name, &mut small[..]) {
        Ok(n) => small[..n].to_vec(),
        Err(Errno::NODATA) | Err(Errno::NOTSUP) => return Ok(None),
        Err(Errno::RANGE) => {
            // Longer than the first guess: ask its size, then read it whole.
            let mut value = vec![0u8; XATTR_MAX];
            let n = fgetxattr(fd, name, &mut value[..]).map_err(|_| Unreadable)?;
            value.truncate(n);
            value
        }
        Err(_) => return Err(Unreadable),
    };
    String::from_utf8(value).map(Some).map_err(|_| Unreadable)
}

impl Grants {
    pub fn read(fd: impl AsFd) -> Result<Grants, Unreadable> {
        Ok(Grants {
            owner: text(fd.as_fd(), XATTR_OWNER)?,
            acl: text(fd.as_fd(), XATTR_ACL)?,
        })
    }

    /// The recorded owner alone (what a listing shows of each object; one that cannot be read
    /// shows as none).
    pub fn owner_of(fd: impl AsFd) -> Option<String> {
        text(fd.as_fd(), XATTR_OWNER).ok().flatten()
    }

    /// Saves the grants on a bucket's directory or an object's file.
    pub fn save(&self, fd: impl AsFd) -> std::io::Result<()> {
        if let Some(owner) = &self.owner {
            fsetxattr(&fd, XATTR_OWNER, owner.as_bytes(), XattrFlags::empty())?;
        }
        let acl = self.acl.as_deref().unwrap_or("private");
        fsetxattr(&fd, XATTR_ACL, acl.as_bytes(), XattrFlags::empty())?;
        Ok(())
    }

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

tokio::task_local! {
    /// The bucket directory the gate checked for the request this task serves: the operation
    /// works in that very directory ([`checked_bucket`]), so a bucket deleted and made again
    /// by another account between the check and the operation is not written into.
    static CHECKED: std::cell::RefCell<Option<(Box<str>, Arc<OwnedFd>)>>;
}

/// Runs a request's future with room for the gate to leave the bucket it checked.
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
                .filter(|(name, _)| &**name == bucket)
                .and_then(|(_, fd)| fd.try_clone().ok())
        })
        .ok()
        .flatten()
}

fn remember_checked(bucket: &str, dir: OwnedFd) {
    let _ = CHECKED.try_with(|c| *c.borrow_mut() = Some((bucket.into(), Arc::new(dir))));
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

    /// Whether `caller` may read object `key` of `bucket` (asked of copy sources).
    pub fn may_read_object(&self, caller: &Caller, bucket: &str, key: &str) -> S3Result<()> {
        self.authorize(caller, "GetObject", &S3Path::object(bucket, key))
            .map(drop)
    }

    /// The gate: whether `caller` may do `op` on `path`, decided from the owners and ACLs of
    /// the bucket and object. A bucket that does not exist is NoSuchBucket to everyone; one
    /// whose grants cannot be read is refused. Returns the bucket's directory as checked.
    fn authorize(&self, caller: &Caller, op: &str, path: &S3Path) -> S3Result<Option<OwnedFd>> {
        self.authorize_with_body(caller, op, path, 0)
    }

    /// [`Policy::authorize`] of a request whose body brings `body` bytes.
    fn authorize_with_body(
        &self,
        caller: &Caller,
        op: &str,
        path: &S3Path,
        body: u64,
    ) -> S3Result<Option<OwnedFd>> {
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
            return Ok(Some(dir)); // the one account owns everything
        }
        let bucket_grants = Grants::read(&dir).map_err(|_| denied(caller))?;
        let object_grants = match (need, key) {
            (
                Need::ReadObject
                | Need::BucketOrObjectOwner
                | Need::ReadObjectAcl
                | Need::WriteObjectAcl,
                Some(key),
            ) if !bucket_grants.owned_by(caller) => {
                match self.store.open_object(dir.as_fd(), bucket, key) {
                    Ok(object) => Some(Grants::read(&object.file).map_err(|_| denied(caller))?),
                    Err(StoreError::NoSuchKey) => None,
                    Err(_) => return Err(denied(caller)),
                }
            }
            _ => None,
        };
        let facts = Facts {
            bucket: &bucket_grants,
            object: object_grants.as_ref(),
        };
        match decide(caller, need, &facts) {
            Decision::Deny => Err(denied(caller)),
            // What an unsigned client writes may not take the disk below a tenth free (an
            // account's own writes may fill it).
            Decision::Allow if need == Need::WriteObjects && caller == &Caller::Anonymous => {
                if crate::spool::room_at(self.store.root(), body) {
                    Ok(Some(dir))
                } else {
                    Err(crate::errors::custom(
                        "XMinioStorageFull",
                        hyper::StatusCode::INSUFFICIENT_STORAGE,
                        "the gateway keeps the rest of its disk for its accounts".into(),
                    ))
                }
            }
            Decision::Allow => Ok(Some(dir)),
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
        self.admit_with_body(credentials, op, path, 0)
    }

    /// [`Policy::admit`] of a request whose body brings `body` bytes (what an unsigned write
    /// may take of the disk).
    pub fn admit_with_body(
        &self,
        credentials: Option<&s3s::auth::Credentials>,
        op: &str,
        path: &S3Path,
        body: u64,
    ) -> S3Result<()> {
        let caller = self.caller(credentials);
        if let (Some(dir), Some(bucket)) = (
            self.authorize_with_body(&caller, op, path, body)?,
            path_bucket(path),
        ) {
            remember_checked(bucket, dir);
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

fn path_bucket(path: &S3Path) -> Option<&str> {
    match path {
        S3Path::Root => None,
        S3Path::Bucket { bucket } | S3Path::Object { bucket, .. } => Some(bucket),
    }
}

#[async_trait::async_trait]
impl S3Access for Policy {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let body = ["x-amz-decoded-content-length", "content-length"]
            .iter()
            .find_map(|h| cx.headers().get(*h)?.to_str().ok()?.parse::<u64>().ok())
            .unwrap_or(0);
        self.admit_with_body(cx.credentials(), cx.s3_op().name(), cx.s3_path(), body)
    }
}

/// The ACL operations of the S3 API: canned ACLs, `x-amz-grant-*` headers and
/// access-control-policy bodies ([`crate::grants`]).
impl crate::s3::Gateway {
    /// Whether `name` is an account of this gateway (what an explicit grant may name).
    fn is_account(&self, name: &str) -> bool {
        self.policy
            .as_ref()
            .is_some_and(|p| p.accounts.has_name(name))
    }

    /// The ACL a request that makes something asks for: canned or explicit grants.
    pub(crate) fn requested_acl(
        &self,
        canned_acl: Option<&str>,
        headers: [(Perm, Option<&str>); 5],
    ) -> S3Result<Option<String>> {
        let explicit = Explicit::from_headers(headers, &|n| self.is_account(n))?;
        requested(canned_acl, explicit)
    }

    /// The ACL a PutBucketAcl or PutObjectAcl sets: exactly one of a canned ACL, grant headers
    /// or an access-control-policy body.
    fn acl_to_set(
        &self,
        canned_acl: Option<&str>,
        headers: [(Perm, Option<&str>); 5],
        policy: Option<&s3s::dto::AccessControlPolicy>,
        owner: Option<&str>,
    ) -> S3Result<String> {
        let from_headers = self.requested_acl(canned_acl, headers)?;
        match (from_headers, policy) {
            (Some(_), Some(_)) => Err(s3_error!(
                UnexpectedContent,
                "This request does not support content: an ACL is set by headers or by a body, not both"
            )),
            (Some(acl), None) => Ok(acl),
            (None, Some(policy)) => {
                Ok(Explicit::from_policy(policy, owner, &|n| self.is_account(n))?.encode())
            }
            (None, None) => Err(s3_error!(
                MissingSecurityHeader,
                "x-amz-acl, x-amz-grant-* or an AccessControlPolicy names the ACL to set"
            )),
        }
    }

    /// The name shown as a bucket's owner when none is recorded.
    fn shown_owner(&self, credentials: &Option<s3s::auth::Credentials>) -> String {
        match self.caller_of(credentials) {
            Some(Caller::Account(name)) => name,
            _ => crate::accounts::SINGLE.to_string(),
        }
    }

    pub(crate) async fn get_bucket_acl_at(
        &self,
        req: s3s::S3Request<s3s::dto::GetBucketAclInput>,
    ) -> S3Result<s3s::S3Response<s3s::dto::GetBucketAclOutput>> {
        let dir = self.bucket(&req.input.bucket)?;
        let grants = Grants::read(&dir).map_err(unreadable)?;
        let (owner, grants) = grants.listed(&self.shown_owner(&req.credentials));
        Ok(s3s::S3Response::new(s3s::dto::GetBucketAclOutput {
            owner: Some(owner),
            grants: Some(grants),
        }))
    }

    pub(crate) async fn put_bucket_acl_at(
        &self,
        req: s3s::S3Request<s3s::dto::PutBucketAclInput>,
    ) -> S3Result<s3s::S3Response<s3s::dto::PutBucketAclOutput>> {
        let input = req.input;
        let dir = self.bucket(&input.bucket)?;
        let mut grants = Grants::read(&dir).map_err(unreadable)?;
        let owner = grants
            .owner
            .clone()
            .or_else(|| Some(self.shown_owner(&req.credentials)));
        grants.acl = Some(self.acl_to_set(
            input.acl.as_ref().map(|a| a.as_str()),
            crate::grant_headers!(input, write),
            input.access_control_policy.as_ref(),
            owner.as_deref(),
        )?);
        grants.save(&dir).map_err(crate::errors::io_error)?;
        Ok(s3s::S3Response::new(s3s::dto::PutBucketAclOutput::default()))
    }

    pub(crate) async fn get_object_acl_at(
        &self,
        req: s3s::S3Request<s3s::dto::GetObjectAclInput>,
    ) -> S3Result<s3s::S3Response<s3s::dto::GetObjectAclOutput>> {
        let (object, _) = self.object(&req.input.bucket, &req.input.key)?;
        let dir = self.bucket(&req.input.bucket)?;
        let bucket_owner = Grants::read(&dir)
            .map_err(unreadable)?
            .owner
            .unwrap_or_else(|| self.shown_owner(&req.credentials));
        let (owner, grants) = Grants::read(&object.file)
            .map_err(unreadable)?
            .listed(&bucket_owner);
        Ok(s3s::S3Response::new(s3s::dto::GetObjectAclOutput {
            owner: Some(owner),
            grants: Some(grants),
            ..Default::default()
        }))
    }

    pub(crate) async fn put_object_acl_at(
        &self,
        req: s3s::S3Request<s3s::dto::PutObjectAclInput>,
    ) -> S3Result<s3s::S3Response<s3s::dto::PutObjectAclOutput>> {
        let input = req.input;
        let (object, _) = self.object(&input.bucket, &input.key)?;
        let mut grants = Grants::read(&object.file).map_err(unreadable)?;
        grants.acl = Some(self.acl_to_set(
            input.acl.as_ref().map(|a| a.as_str()),
            crate::grant_headers!(input, write),
            input.access_control_policy.as_ref(),
            grants.owner.as_deref(),
        )?);
        grants.save(&object.file).map_err(crate::errors::io_error)?;
        Ok(s3s::S3Response::new(s3s::dto::PutObjectAclOutput::default()))
    }
}

/// The answer where grants are recorded but cannot be read.
pub(crate) fn unreadable(_: Unreadable) -> s3s::S3Error {
    s3_error!(
        AccessDenied,
        "the owner or ACL recorded here cannot be read"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::Who;

    fn account(name: &str) -> Caller {
        Caller::Account(name.into())
    }

    fn owned(owner: &str, acl: Option<&str>) -> Grants {
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

    #[test]
    fn grants_are_kept_in_extended_attributes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("object");
        std::fs::write(&path, b"x").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        assert_eq!(Grants::read(&file).unwrap(), Grants::default());
        assert_eq!(Grants::owner_of(&file), None);
        // An owner longer than the first read's buffer is read whole.
        let long = "a".repeat(300);
        let g = owned(&long, Some("public-read"));
        g.save(&file).unwrap();
        assert_eq!(Grants::read(&file).unwrap(), g);
        assert_eq!(Grants::owner_of(&file), Some(long));
        // No ACL saved is private, and says so.
        let other = dir.path().join("other");
        std::fs::write(&other, b"x").unwrap();
        let other = std::fs::File::open(&other).unwrap();
        Grants::default().save(&other).unwrap();
        assert_eq!(
            Grants::read(&other).unwrap(),
            Grants {
                owner: None,
                acl: Some("private".into())
            }
        );
        // An owner that is not UTF-8 cannot be read: never taken as none.
        fsetxattr(&file, XATTR_OWNER, b"\xff\xfe", XattrFlags::empty()).unwrap();
        assert_eq!(Grants::read(&file), Err(Unreadable));
        assert_eq!(Grants::owner_of(&file), None);
    }

    /// A gateway's root with accounts alice, bob and carol, and a policy over it.
    fn gateway(dir: &std::path::Path) -> Policy {
        let users = dir.join("users");
        std::fs::write(&users, "AKA sa alice\nAKB sb bob\nAKC sc carol\n").unwrap();
        let root = dir.join("root");
        std::fs::create_dir(&root).unwrap();
        Policy {
            accounts: Arc::new(Accounts::from_file(&users).unwrap()),
            store: Store::open(&root, false).unwrap(),
        }
    }

    fn bucket(policy: &Policy, name: &str, grants: &Grants) {
        let path = policy.store.root().join(name);
        std::fs::create_dir(&path).unwrap();
        grants.save(std::fs::File::open(&path).unwrap()).unwrap();
    }

    fn object(policy: &Policy, bucket: &str, key: &str, grants: &Grants) {
        let path = policy.store.root().join(bucket).join(key);
        std::fs::write(&path, b"data").unwrap();
        grants.save(std::fs::File::open(&path).unwrap()).unwrap();
    }

    fn code(r: S3Result<Option<OwnedFd>>) -> String {
        match r {
            Ok(_) => "allowed".into(),
            Err(e) => e.code().as_str().to_string(),
        }
    }

    #[test]
    fn the_gate_decides_from_the_bucket_and_object_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let policy = gateway(dir.path());
        let (alice, bob, carol) = (account("alice"), account("bob"), account("carol"));
        let anon = Caller::Anonymous;
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
        let at = |c: &Caller, op: &str, key: Option<&str>, b: &str| {
            let path = match key {
                Some(k) => S3Path::object(b, k),
                None => S3Path::bucket(b),
            };
            code(policy.authorize(c, op, &path))
        };
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
        assert!(policy.may_read_object(&anon, "shared", "open").is_ok());
        assert!(policy.may_read_object(&carol, "shared", "bobs").is_err());
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
}
