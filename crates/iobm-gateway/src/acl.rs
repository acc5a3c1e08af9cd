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
use crate::store::{Store, StoreError};
use rustix::fs::{fgetxattr, fsetxattr, XattrFlags};
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

fn text(fd: BorrowedFd<'_>, name: &str) -> Option<String> {
    let mut buf = [0u8; 256];
    let n = fgetxattr(fd, name, &mut buf[..]).ok()?;
    String::from_utf8(buf[..n].to_vec()).ok()
}

impl Grants {
    pub fn read(fd: impl AsFd) -> Grants {
        Grants {
            owner: Grants::owner_of(&fd),
            acl: text(fd.as_fd(), XATTR_ACL),
        }
    }

    /// The recorded owner alone (what a listing shows of each object).
    pub fn owner_of(fd: impl AsFd) -> Option<String> {
        text(fd.as_fd(), XATTR_OWNER)
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

    /// Whether the ACL lets `caller` read (list a bucket, get an object).
    fn grants_read(&self, caller: &Caller) -> bool {
        match self.acl() {
            "public-read" | "public-read-write" => true,
            "authenticated-read" => matches!(caller, Caller::Account(_)),
            _ => false,
        }
    }

    /// Whether the ACL lets `caller` write objects (a bucket's).
    fn grants_write(&self) -> bool {
        self.acl() == "public-read-write"
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
            _ => {}
        }
        (owner, grants)
    }
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
enum Need {
    Account,
    ListBucket,
    WriteObjects,
    ReadObject,
    BucketOwner,
    BucketOrObjectOwner,
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
        ("GetObject" | "HeadObject" | "GetObjectAttributes", _) => Need::ReadObject,
        ("GetObjectAcl" | "PutObjectAcl", _) => Need::BucketOrObjectOwner,
        _ => Need::BucketOwner,
    }
}

/// The check s3s runs before every request of a gateway with keys.
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
    /// A bucket's directory with its owner and ACL; `None` when it does not exist (the
    /// request then gets NoSuchBucket from the operation itself).
    fn bucket(&self, bucket: &str) -> Option<(OwnedFd, Grants)> {
        let dir = self.store.open_bucket(bucket).ok()?;
        let grants = Grants::read(&dir);
        Some((dir, grants))
    }

    /// The owner and ACL of object `key` in the bucket's directory `dir`.
    fn object(&self, dir: &OwnedFd, bucket: &str, key: &str) -> Result<Grants, StoreError> {
        let object = self.store.open_object(dir.as_fd(), bucket, key)?;
        Ok(Grants::read(&object.file))
    }

    /// Whether `caller` may read object `key` of `bucket` (also asked of copy sources).
    pub fn may_read_object(&self, caller: &Caller, bucket: &str, key: &str) -> S3Result<()> {
        if self.accounts.is_single() && caller != &Caller::Anonymous {
            return Ok(());
        }
        let Some((dir, bucket_grants)) = self.bucket(bucket) else {
            return Ok(());
        };
        if bucket_grants.owned_by(caller) {
            return Ok(());
        }
        match self.object(&dir, bucket, key) {
            Ok(grants) if grants.uploaded_by(caller) || grants.grants_read(caller) => Ok(()),
            Ok(_) => Err(denied(caller)),
            // A missing key is told only to those who may list the bucket.
            Err(StoreError::NoSuchKey) if bucket_grants.grants_read(caller) => Ok(()),
            Err(_) => Err(denied(caller)),
        }
    }

    fn check_path(&self, caller: &Caller, op: &str, path: &S3Path) -> S3Result<()> {
        let (bucket, key) = match path {
            S3Path::Root => (None, None),
            S3Path::Bucket { bucket } => (Some(&**bucket), None),
            S3Path::Object { bucket, key } => (Some(&**bucket), Some(&**key)),
        };
        let need = need(op, path);
        if matches!(need, Need::Account) {
            return match caller {
                Caller::Account(_) => Ok(()),
                Caller::Anonymous => Err(denied(caller)),
            };
        }
        let bucket = bucket.unwrap_or_default();
        if let (Need::ReadObject, Some(key)) = (&need, key) {
            return self.may_read_object(caller, bucket, key);
        }
        let Some((dir, grants)) = self.bucket(bucket) else {
            return Ok(());
        };
        let allowed = grants.owned_by(caller)
            || match need {
                Need::ListBucket => grants.grants_read(caller),
                Need::WriteObjects => grants.grants_write(),
                Need::BucketOrObjectOwner => key.is_some_and(|key| {
                    self.object(&dir, bucket, key)
                        .is_ok_and(|o| o.uploaded_by(caller))
                }),
                _ => false,
            };
        if allowed {
            Ok(())
        } else {
            Err(denied(caller))
        }
    }
}

#[async_trait::async_trait]
impl S3Access for Policy {
    async fn check(&self, cx: &mut S3AccessContext<'_>) -> S3Result<()> {
        let caller = self
            .accounts
            .caller(cx.credentials().map(|c| c.access_key.as_str()));
        if self.accounts.is_single() && caller != Caller::Anonymous {
            return Ok(()); // the one account owns everything
        }
        self.check_path(&caller, cx.s3_op().name(), cx.s3_path())
    }
}

/// The ACL operations of the S3 API: canned ACLs only (an access control policy in the body or
/// `x-amz-grant-*` headers are refused as not implemented).
impl crate::s3::Gateway {
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
        let grants = Grants::read(&dir);
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
        let acl = canned_only(
            input.acl.as_ref().map(|a| a.as_str()),
            input.access_control_policy.is_some(),
        )?;
        let dir = self.bucket(&input.bucket)?;
        let mut grants = Grants::read(&dir);
        grants.acl = Some(acl);
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
            .owner
            .unwrap_or_else(|| self.shown_owner(&req.credentials));
        let (owner, grants) = Grants::read(&object.file).listed(&bucket_owner);
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
        let acl = canned_only(
            input.acl.as_ref().map(|a| a.as_str()),
            input.access_control_policy.is_some(),
        )?;
        let (object, _) = self.object(&input.bucket, &input.key)?;
        let mut grants = Grants::read(&object.file);
        grants.acl = Some(acl);
        grants.save(&object.file).map_err(crate::errors::io_error)?;
        Ok(s3s::S3Response::new(s3s::dto::PutObjectAclOutput::default()))
    }
}

/// The canned ACL of a PutBucketAcl or PutObjectAcl, which must have one.
fn canned_only(acl: Option<&str>, has_policy: bool) -> S3Result<String> {
    match canned(acl)? {
        Some(acl) => Ok(acl),
        None if has_policy => Err(s3_error!(
            NotImplemented,
            "only canned ACLs (x-amz-acl) are kept, not access control policies"
        )),
        None => Err(s3_error!(
            MissingSecurityHeader,
            "x-amz-acl names the canned ACL to set"
        )),
    }
}
