//! The bucket operations of [`Gateway`] (list, create, delete) and the object listings over
//! them (V1, V2), each a page of [`Gateway::list`]'s walk.

use crate::errors::{io_error, store_error};
use crate::gateway::Gateway;
use crate::listing::{owner, Query};
use crate::meta::Grants;
use crate::multipart;
use crate::store::StoreError;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::io;

impl Gateway {
    /// ListBuckets: with several accounts, the buckets the caller owns.
    pub(super) async fn list_buckets_at(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let caller = self.caller_of(&req.credentials);
        // With several accounts, each sees the buckets it owns (and the shared ones).
        let shown = |name: &str| match (&caller, &self.policy) {
            (Some(caller), Some(policy)) if !policy.accounts.is_single() => self
                .store
                .open_bucket(name)
                .is_ok_and(|fd| Grants::read(fd).is_ok_and(|g| g.owned_by(caller))),
            _ => true,
        };
        let buckets = self
            .store
            .buckets()
            .map_err(io_error)?
            .into_iter()
            .filter(|(name, _)| shown(name))
            .map(|(name, made)| Bucket {
                name: Some(name),
                creation_date: Some(Timestamp::from(made)),
                ..Default::default()
            })
            .collect();
        Ok(S3Response::new(ListBucketsOutput {
            buckets: Some(buckets),
            owner: Some(owner()),
            ..Default::default()
        }))
    }

    /// CreateBucket, with its owner and ACL recorded before the bucket appears.
    pub(super) async fn create_bucket_at(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let grants = Grants {
            owner: self.owner_of(&req.credentials),
            acl: self.requested_acl(
                req.input.acl.as_ref().map(|a| a.as_str()),
                crate::grant_headers!(req.input, write),
            )?,
        };
        // Nothing to record (one account, no ACL asked for) needs no extended attributes,
        // which some file systems lack; anything else is on the directory before it appears.
        let made = if grants == Grants::default() {
            self.store.create_bucket(&req.input.bucket)
        } else {
            self.store
                .create_bucket_with(&req.input.bucket, |dir| grants.save(dir))
        };
        match made {
            Ok(()) => {
                self.store.forget_versioning(&req.input.bucket);
                Ok(S3Response::new(CreateBucketOutput::default()))
            }
            Err(StoreError::Io(e)) if e.kind() == io::ErrorKind::AlreadyExists => {
                let caller = self.caller_of(&req.credentials);
                let theirs = self.store.open_bucket(&req.input.bucket).is_ok_and(|fd| {
                    caller.is_none_or(|c| Grants::read(fd).is_ok_and(|g| g.owned_by(&c)))
                });
                if theirs {
                    Err(s3_error!(BucketAlreadyOwnedByYou))
                } else {
                    Err(s3_error!(BucketAlreadyExists))
                }
            }
            Err(e) => Err(store_error(e)),
        }
    }

    /// DeleteBucket, and its unfinished multipart uploads with it.
    pub(super) async fn delete_bucket_at(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        match self.store.delete_bucket(&req.input.bucket) {
            Ok(()) => {
                // Its counters and unfinished multipart uploads go with it, all at once: a
                // bucket made later under the name, by anyone, does not inherit them. The
                // uploads' files are removed after the answer.
                self.metrics.forget(&req.input.bucket);
                let uploads = self.store.uploads_dir();
                if let Ok(Some(aside)) = multipart::discard(uploads, &req.input.bucket) {
                    crate::uploads::discarded(&self.store, Some(aside));
                }
                Ok(S3Response::new(DeleteBucketOutput::default()))
            }
            Err(StoreError::Io(e)) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {
                Err(s3_error!(BucketNotEmpty))
            }
            Err(e) => Err(store_error(e)),
        }
    }

    /// ListObjectsV2.
    pub(super) async fn list_objects_v2_at(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        let input = req.input;
        let after = input
            .continuation_token
            .clone()
            .or(input.start_after.clone());
        let mut page = self
            .list(Query {
                bucket: input.bucket.clone(),
                prefix: input.prefix.clone(),
                delimiter: input.delimiter.clone(),
                after,
                max_keys: input.max_keys,
                encoding: input.encoding_type.clone(),
            })
            .await?;
        let (delimiter, start_after) = (page.echo(input.delimiter), page.echo(input.start_after));
        if !input.fetch_owner.unwrap_or(false) {
            page.objects.iter_mut().for_each(|o| o.owner = None);
        }
        Ok(S3Response::new(ListObjectsV2Output {
            name: Some(input.bucket),
            prefix: Some(page.prefix),
            delimiter,
            start_after,
            max_keys: Some(page.max_keys),
            key_count: Some((page.objects.len() + page.prefixes.len()) as i32),
            is_truncated: Some(page.truncated),
            continuation_token: input.continuation_token,
            next_continuation_token: page.next,
            contents: Some(page.objects),
            common_prefixes: Some(page.prefixes),
            encoding_type: input.encoding_type,
            ..Default::default()
        }))
    }

    /// ListObjects (V1).
    pub(super) async fn list_objects_at(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        let input = req.input;
        let page = self
            .list(Query {
                bucket: input.bucket.clone(),
                prefix: input.prefix.clone(),
                delimiter: input.delimiter.clone(),
                after: input.marker.clone(),
                max_keys: input.max_keys,
                encoding: input.encoding_type.clone(),
            })
            .await?;
        let (delimiter, marker) = (page.echo(input.delimiter), page.echo(input.marker));
        let next_marker = page.echo(page.next.clone());
        Ok(S3Response::new(ListObjectsOutput {
            name: Some(input.bucket),
            prefix: Some(page.prefix),
            delimiter,
            marker: Some(marker.unwrap_or_default()),
            next_marker,
            max_keys: Some(page.max_keys),
            is_truncated: Some(page.truncated),
            contents: Some(page.objects),
            common_prefixes: Some(page.prefixes),
            encoding_type: input.encoding_type,
            ..Default::default()
        }))
    }
}
