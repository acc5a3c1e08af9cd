//! The gateway's S3 implementation over the [`Store`]: the [`Gateway`] with what every
//! operation shares (the caller, a bucket's directory, an object with its metadata from one
//! descriptor, a body received and hashed, Content-MD5 checked) and the `S3` trait, whose
//! operations live beside it: bucket calls and listings in `buckets`, objects (streamed both
//! ways, ranged GETs, copies) in `objects`, versioning and ListObjectVersions in `versions`,
//! multipart uploads in [`crate::uploads`], ACLs in [`crate::acl`], tags in
//! [`crate::tagging`].

use crate::accounts::Caller;
use crate::acl::Policy;
use crate::errors::{body_error, io_error, store_error};
use crate::hashing::Hashers;
use crate::meta::check_metadata_size;
use crate::metrics::Metrics;
use crate::store::{load_meta, Meta, Object, Store, StoreError, Temp};
use futures::StreamExt;
use s3s::auth::Credentials;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

mod buckets;
mod objects;
mod versions;

pub(crate) use objects::file_body;
pub use objects::MAX_DELETE_KEYS;

/// The gateway's S3 implementation.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub store: Store,
    /// What it served and received, per bucket.
    pub metrics: Arc<Metrics>,
    /// The latest completed multipart uploads, so that a client retrying a completion that
    /// succeeded gets the same answer rather than NoSuchUpload.
    pub completed: Arc<crate::uploads::Completed>,
    /// The hashing threads that compute uploads' MD5s together.
    pub hashers: Arc<Hashers>,
    /// Accounts, ownership and ACLs; `None` for an anonymous gateway (no checks).
    pub policy: Option<Policy>,
}

impl Gateway {
    /// Who sent a request (an anonymous gateway knows no one: `None`).
    pub(crate) fn caller_of(&self, credentials: &Option<Credentials>) -> Option<Caller> {
        let policy = self.policy.as_ref()?;
        Some(
            policy
                .accounts
                .caller(credentials.as_ref().map(|c| c.access_key.as_str())),
        )
    }

    /// The account to record as the owner of what a request makes: only on a gateway of
    /// several accounts (with one, everything is that one's).
    pub(crate) fn owner_of(&self, credentials: &Option<Credentials>) -> Option<String> {
        match self.caller_of(credentials)? {
            Caller::Account(name) if !self.policy.as_ref()?.accounts.is_single() => Some(name),
            _ => None,
        }
    }

    /// A copy's source object (its bucket, key and bytes), if the caller may read it: the
    /// very file the decision was made from.
    pub(crate) fn open_source(
        &self,
        credentials: &Option<Credentials>,
        source: &CopySource,
    ) -> S3Result<(String, String, Object)> {
        let (bucket, key, version) = match source {
            CopySource::Bucket {
                bucket,
                key,
                version_id,
            } => (bucket.to_string(), key.to_string(), version_id.as_deref()),
            _ => return Err(s3_error!(NotImplemented, "copies from access points")),
        };
        let (dir, seen) = match (&self.policy, self.caller_of(credentials)) {
            (Some(policy), Some(caller)) => {
                let admission = policy.readable_object(&caller, &bucket, &key, version)?;
                (admission.dir, admission.object)
            }
            _ => (self.store.open_bucket(&bucket).map_err(store_error)?, None),
        };
        let object = match seen {
            Some(seen) => seen.into_object(),
            None => (self.store).open_version(dir.as_fd(), &bucket, &key, version),
        }
        .map_err(store_error)?;
        Ok((bucket, key, object))
    }
}

pub(crate) fn quoted(etag: &str) -> ETag {
    ETag::Strong(etag.to_string())
}

impl Gateway {
    /// A bucket's directory: the one the gate checked for this request, if it checked it.
    pub(crate) fn bucket(&self, bucket: &str) -> S3Result<OwnedFd> {
        match crate::acl::checked_bucket(bucket) {
            Some(dir) => Ok(dir),
            None => self.store.open_bucket(bucket).map_err(store_error),
        }
    }

    /// An object (its current version, or `version`) and its metadata, both from one
    /// descriptor: the bytes, size, ETag and metadata served are this file's, even if a PUT
    /// replaces the key meanwhile. Where the gate decided from the object, it is the file the
    /// gate opened. A key whose latest version is a delete marker is NoSuchKey with the
    /// marker's headers.
    pub(crate) fn object(
        &self,
        bucket: &str,
        key: &str,
        version: Option<&str>,
    ) -> S3Result<(Object, Meta)> {
        let opened = match crate::acl::checked_object(bucket, key, version) {
            Some(seen) => seen,
            None => {
                let dir = self.bucket(bucket)?;
                self.store.open_version(dir.as_fd(), bucket, key, version)
            }
        };
        let object = match opened {
            Ok(object) => object,
            Err(StoreError::NoSuchKey) if version.is_none() => {
                let dir = self.bucket(bucket)?;
                let e = s3_error!(NoSuchKey);
                return Err(match self.store.latest_marker(dir.as_fd(), bucket, key) {
                    Some(marker) => crate::errors::delete_marker(e, marker),
                    None => e,
                });
            }
            Err(e) => return Err(store_error(e)),
        };
        let meta = load_meta(&object.file).map_err(io_error)?;
        Ok((object, meta))
    }

    /// Streams a body for `bucket` to a new temporary file, returning it with its MD5, size
    /// and checksum. A body too slow fails the request ([`crate::body_rate`]); one shorter or
    /// longer than declared, or whose checksum differs from the one sent, is refused and
    /// nothing of it kept.
    pub(crate) async fn receive(
        &self,
        bucket: &str,
        body: Option<StreamingBlob>,
        declared: Declared,
    ) -> S3Result<Received> {
        let mut temp = self.store.create_temp().map_err(io_error)?;
        let mut md5 = self.hashers.stream();
        let mut checksum = declared.checksum.map(crate::checksums::Running::new);
        let mut size = 0u64;
        if let Some(mut body) = body {
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(|e| body_error(e.as_ref()))?;
                size += chunk.len() as u64;
                if let Some(c) = &mut checksum {
                    c.update(&chunk);
                }
                // Hashed on a hashing thread while it is written here: plain file writes on
                // this worker thread (block_in_place), with no copy into tokio's file buffer
                // and no hand-off to its blocking pool per chunk.
                md5.update(chunk.clone()).await;
                tokio::task::block_in_place(|| io::Write::write_all(&mut temp.file, &chunk))
                    .map_err(io_error)?;
            }
        }
        if let Some(len) = declared.len.filter(|&len| len != size) {
            return Err(s3_error!(
                IncompleteBody,
                "the body brought {size} bytes of the {len} its request declared"
            ));
        }
        let checksum = match checksum {
            Some(c) => Some(c.finish(declared.trailers.as_ref())?),
            None => None,
        };
        self.metrics.bucket(bucket).received(size);
        Ok(Received {
            temp,
            md5: md5.finish().await,
            size,
            checksum,
        })
    }
}

/// What a request declares of its body: its length (Content-Length, which s3s sets from
/// `x-amz-decoded-content-length` for an aws-chunked body) and its checksum, with the trailer
/// that may carry the checksum's value.
pub(crate) struct Declared {
    len: Option<u64>,
    checksum: Option<crate::checksums::Wanted>,
    trailers: Option<s3s::TrailingHeaders>,
}

impl Declared {
    /// What a request's headers, trailers and Content-Length declare; a malformed checksum
    /// request is refused before the body is read.
    pub(crate) fn of(
        headers: &hyper::HeaderMap,
        trailers: &Option<s3s::TrailingHeaders>,
        content_length: Option<i64>,
    ) -> S3Result<Declared> {
        Ok(Declared {
            len: content_length.and_then(|n| u64::try_from(n).ok()),
            checksum: crate::checksums::wanted(headers)?,
            trailers: trailers.clone(),
        })
    }
}

/// A body received whole into a temporary file.
pub(crate) struct Received {
    pub temp: Temp,
    pub md5: [u8; 16],
    pub size: u64,
    pub checksum: Option<crate::checksums::Stored>,
}

pub(crate) fn check_content_md5(expected: Option<&str>, got: &[u8; 16]) -> S3Result<()> {
    let Some(expected) = expected else {
        return Ok(());
    };
    let decoded = base64_decode(expected).ok_or_else(|| s3_error!(InvalidDigest))?;
    if decoded.as_slice() != got {
        return Err(s3_error!(BadDigest));
    }
    Ok(())
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::new();
    let mut acc = 0u32;
    let mut bits = 0;
    for c in text.trim().bytes().filter(|&c| c != b'=') {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[async_trait::async_trait]
impl S3 for Gateway {
    async fn list_buckets(
        &self,
        req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        self.list_buckets_at(req).await
    }

    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        self.create_bucket_at(req).await
    }

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        self.delete_bucket_at(req).await
    }

    async fn head_bucket(
        &self,
        req: S3Request<HeadBucketInput>,
    ) -> S3Result<S3Response<HeadBucketOutput>> {
        self.bucket(&req.input.bucket)?;
        Ok(S3Response::new(HeadBucketOutput::default()))
    }

    async fn get_bucket_location(
        &self,
        req: S3Request<GetBucketLocationInput>,
    ) -> S3Result<S3Response<GetBucketLocationOutput>> {
        self.bucket(&req.input.bucket)?;
        Ok(S3Response::new(GetBucketLocationOutput::default()))
    }

    async fn get_bucket_versioning(
        &self,
        req: S3Request<GetBucketVersioningInput>,
    ) -> S3Result<S3Response<GetBucketVersioningOutput>> {
        self.get_bucket_versioning_at(req).await
    }

    async fn put_bucket_versioning(
        &self,
        req: S3Request<PutBucketVersioningInput>,
    ) -> S3Result<S3Response<PutBucketVersioningOutput>> {
        self.put_bucket_versioning_at(req).await
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        self.put_object_at(req).await
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        self.get_object_at(req).await
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        self.head_object_at(req).await
    }

    async fn get_object_attributes(
        &self,
        req: S3Request<GetObjectAttributesInput>,
    ) -> S3Result<S3Response<GetObjectAttributesOutput>> {
        self.get_object_attributes_at(req).await
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        self.delete_object_at(req).await
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        self.delete_objects_at(req).await
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        self.copy_object_at(req).await
    }

    async fn list_objects_v2(
        &self,
        req: S3Request<ListObjectsV2Input>,
    ) -> S3Result<S3Response<ListObjectsV2Output>> {
        self.list_objects_v2_at(req).await
    }

    async fn list_objects(
        &self,
        req: S3Request<ListObjectsInput>,
    ) -> S3Result<S3Response<ListObjectsOutput>> {
        self.list_objects_at(req).await
    }

    async fn list_object_versions(
        &self,
        req: S3Request<ListObjectVersionsInput>,
    ) -> S3Result<S3Response<ListObjectVersionsOutput>> {
        self.list_object_versions_at(req).await
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        // Checked here; the upload keeps them with its headers and the object gets them at
        // completion.
        check_metadata_size(req.input.metadata.as_ref())?;
        crate::tagging::from_header(req.input.tagging.as_deref())?;
        self.create_multipart_upload_at(req).await
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        self.upload_part_at(req).await
    }

    async fn get_bucket_acl(
        &self,
        req: S3Request<GetBucketAclInput>,
    ) -> S3Result<S3Response<GetBucketAclOutput>> {
        self.get_bucket_acl_at(req).await
    }

    async fn put_bucket_acl(
        &self,
        req: S3Request<PutBucketAclInput>,
    ) -> S3Result<S3Response<PutBucketAclOutput>> {
        self.put_bucket_acl_at(req).await
    }

    async fn get_object_acl(
        &self,
        req: S3Request<GetObjectAclInput>,
    ) -> S3Result<S3Response<GetObjectAclOutput>> {
        self.get_object_acl_at(req).await
    }

    async fn put_object_acl(
        &self,
        req: S3Request<PutObjectAclInput>,
    ) -> S3Result<S3Response<PutObjectAclOutput>> {
        self.put_object_acl_at(req).await
    }

    async fn upload_part_copy(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        self.upload_part_copy_at(req).await
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        self.list_parts_at(req).await
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        self.list_multipart_uploads_at(req).await
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        self.abort_multipart_upload_at(req).await
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        self.complete_multipart_upload_at(req).await
    }

    async fn get_object_tagging(
        &self,
        req: S3Request<GetObjectTaggingInput>,
    ) -> S3Result<S3Response<GetObjectTaggingOutput>> {
        self.get_object_tagging_at(req).await
    }

    async fn put_object_tagging(
        &self,
        req: S3Request<PutObjectTaggingInput>,
    ) -> S3Result<S3Response<PutObjectTaggingOutput>> {
        self.put_object_tagging_at(req).await
    }

    async fn delete_object_tagging(
        &self,
        req: S3Request<DeleteObjectTaggingInput>,
    ) -> S3Result<S3Response<DeleteObjectTaggingOutput>> {
        self.delete_object_tagging_at(req).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_md5_is_base64() {
        let md5 = md5_many::md5(b"hello");
        assert!(check_content_md5(Some("XUFAKrxLKna5cZ2REBfFkg=="), &md5).is_ok());
        assert!(check_content_md5(Some("AAAAAAAAAAAAAAAAAAAAAA=="), &md5).is_err());
        assert!(check_content_md5(None, &md5).is_ok());
    }
}
