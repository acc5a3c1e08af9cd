//! The ACL operations of the S3 API (Get/PutBucketAcl, Get/PutObjectAcl) over the grants the gate decides from.

use crate::accounts::Caller;
use crate::acl::requested;
use crate::gateway::Gateway;
use crate::grants::{Explicit, Perm};
use crate::meta::{Grants, Unreadable};
use s3s::{s3_error, S3Result};

/// The ACL operations of the S3 API: canned ACLs, `x-amz-grant-*` headers and
/// access-control-policy bodies ([`crate::grants`]).
impl Gateway {
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
        let input = &req.input;
        let (object, _) = self.object(&input.bucket, &input.key, input.version_id.as_deref())?;
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
        let version = input.version_id.as_deref();
        let (object, _) = self.object(&input.bucket, &input.key, version)?;
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
