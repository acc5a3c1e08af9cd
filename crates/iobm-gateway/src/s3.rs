//! The S3 operations over the [`Store`]: buckets, objects (streamed both ways, ranged GETs,
//! Content-MD5 checked), listings (V1, V2, versions), copies, multipart uploads, and the
//! bucket calls that common clients make first (location, versioning). Every object is served
//! from one open descriptor: its bytes, size, ETag and metadata all come from the same file.

use crate::accounts::Caller;
use crate::acl::{Grants, Policy};
use crate::conditions::{ReadConditions, WriteCondition};
use crate::errors::{body_error, body_timeout, io_error, store_error};
use crate::hashing::Hashers;
use crate::listing::{owner, Query};
use crate::meta::{check_metadata_size, meta_error, stored_headers};
use crate::metrics::{BucketCounters, Metrics};
use crate::store::{
    hex, is_folder_key, load_meta, store_meta, Meta, Object, Store, StoreError, Temp,
};
use bytes::Bytes;
use futures::StreamExt;
use s3s::auth::Credentials;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result, S3};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Bytes per chunk of a GET body.
const CHUNK: usize = 1 << 20;
/// Most keys one DeleteObjects request may name (as S3).
pub const MAX_DELETE_KEYS: usize = 1000;

/// The gateway's S3 implementation.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub store: Store,
    /// How long a request body may stop arriving before the request fails.
    pub body_timeout: Duration,
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

    /// A copy's source object (its bucket, key and bytes), if the caller may read it.
    pub(crate) fn open_source(
        &self,
        credentials: &Option<Credentials>,
        source: &CopySource,
    ) -> S3Result<(String, String, Object)> {
        let (bucket, key) = match source {
            CopySource::Bucket { bucket, key, .. } => (bucket.to_string(), key.to_string()),
            _ => return Err(s3_error!(NotImplemented, "copies from access points")),
        };
        if let (Some(policy), Some(caller)) = (&self.policy, self.caller_of(credentials)) {
            policy.may_read_object(&caller, &bucket, &key)?;
        }
        let dir = self.bucket(&bucket)?;
        let object = self
            .store
            .open_object(dir.as_fd(), &bucket, &key)
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

    /// An object and its metadata, both from one descriptor: the bytes, size, ETag and
    /// metadata served are this file's, even if a PUT replaces the key meanwhile.
    pub(crate) fn object(&self, bucket: &str, key: &str) -> S3Result<(Object, Meta)> {
        let dir = self.bucket(bucket)?;
        let object = self
            .store
            .open_object(dir.as_fd(), bucket, key)
            .map_err(store_error)?;
        let meta = load_meta(&object.file).map_err(io_error)?;
        Ok((object, meta))
    }

    /// Streams a body for `bucket` to a new temporary file, returning it with its MD5 and
    /// size. A body that stops arriving for the body timeout fails the request.
    pub(crate) async fn receive(
        &self,
        bucket: &str,
        body: Option<StreamingBlob>,
    ) -> S3Result<(Temp, [u8; 16], u64)> {
        let mut temp = self.store.create_temp().map_err(io_error)?;
        let mut md5 = self.hashers.stream();
        let mut size = 0u64;
        // The body timeout runs from the last time PROGRESS more bytes had arrived: a body
        // that trickles in a byte at a time cannot hold its connection for ever.
        let mut deadline = tokio::time::Instant::now() + self.body_timeout;
        let mut at_deadline = 0u64;
        if let Some(mut body) = body {
            loop {
                let chunk = match tokio::time::timeout_at(deadline, body.next()).await {
                    Err(_) => return Err(body_timeout()),
                    Ok(None) => break,
                    Ok(Some(Err(e))) => return Err(body_error(e.as_ref())),
                    Ok(Some(Ok(chunk))) => chunk,
                };
                size += chunk.len() as u64;
                if size - at_deadline >= crate::spool::PROGRESS {
                    at_deadline = size;
                    deadline = tokio::time::Instant::now() + self.body_timeout;
                }
                // Hashed on a hashing thread while it is written here: plain file writes on
                // this worker thread (block_in_place), with no copy into tokio's file buffer
                // and no hand-off to its blocking pool per chunk.
                md5.update(chunk.clone()).await;
                tokio::task::block_in_place(|| io::Write::write_all(&mut temp.file, &chunk))
                    .map_err(io_error)?;
            }
        }
        self.metrics.bucket(bucket).received(size);
        Ok((temp, md5.finish().await, size))
    }
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

/// A GET body: `len` bytes of `file` from its current position `offset`, in chunks read on the
/// worker thread into fresh, unzeroed capacity (one copy, from the file into the chunk hyper
/// sends); counted in `counters`, with the bytes resident before the first read.
pub(crate) fn file_body(
    file: std::fs::File,
    (offset, len): (u64, u64),
    counters: Arc<BucketCounters>,
) -> StreamingBlob {
    counters.get_started(&file, offset, len);
    // The counters travel in the stream's state: no reference count touched per chunk.
    let body = futures::stream::unfold(
        (file, len, counters),
        |(mut file, left, counters)| async move {
            if left == 0 {
                return None;
            }
            let want = (left as usize).min(CHUNK);
            let read = tokio::task::block_in_place(|| {
                let mut buf = Vec::with_capacity(want);
                io::Read::read_to_end(&mut io::Read::take(&mut file, want as u64), &mut buf)
                    .map(|_| buf)
            });
            match read {
                Ok(buf) if buf.is_empty() => Some((
                    Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                    (file, 0, counters),
                )),
                Ok(buf) => {
                    let n = buf.len() as u64;
                    counters.served(n);
                    Some((Ok(Bytes::from(buf)), (file, left - n, counters)))
                }
                Err(e) => Some((Err(e), (file, 0, counters))),
            }
        },
    );
    StreamingBlob::wrap(body)
}

#[async_trait::async_trait]
impl S3 for Gateway {
    async fn list_buckets(
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

    async fn create_bucket(
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
            Ok(()) => Ok(S3Response::new(CreateBucketOutput::default())),
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

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        match self.store.delete_bucket(&req.input.bucket) {
            Ok(()) => {
                // Its unfinished multipart uploads go with it: a bucket made later under the
                // name, by anyone, does not inherit them.
                let uploads = self.store.uploads_dir();
                while let Ok((open, more)) =
                    crate::multipart::list(uploads, &req.input.bucket, "", ("", ""), 1000)
                {
                    for (id, _) in &open {
                        let _ = crate::multipart::remove(uploads, id);
                    }
                    if !more || open.is_empty() {
                        break;
                    }
                }
                Ok(S3Response::new(DeleteBucketOutput::default()))
            }
            Err(StoreError::Io(e)) if e.raw_os_error() == Some(libc::ENOTEMPTY) => {
                Err(s3_error!(BucketNotEmpty))
            }
            Err(e) => Err(store_error(e)),
        }
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
        self.bucket(&req.input.bucket)?;
        Ok(S3Response::new(GetBucketVersioningOutput::default()))
    }

    async fn put_object(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        crate::store::check_key(&input.key).map_err(store_error)?;
        if req.extensions.get::<crate::spool::Probe>().is_some() {
            // Admitted: the body may now be kept ([`crate::spool`]).
            let mut admitted = S3Response::new(PutObjectOutput::default());
            admitted.extensions.insert(crate::spool::Admitted);
            return Ok(admitted);
        }
        check_metadata_size(input.metadata.as_ref())?;
        let tags = crate::tagging::from_header(input.tagging.as_deref())?;
        let condition = WriteCondition::new(input.if_match.as_ref(), input.if_none_match.as_ref());
        let (temp, md5, size) = self.receive(&input.bucket, input.body).await?;
        check_content_md5(input.content_md5.as_deref(), &md5)?;
        let etag = hex(&md5);
        let meta = Meta {
            etag: etag.clone(),
            content_type: input.content_type,
            metadata: input.metadata.unwrap_or_default(),
            parts: Vec::new(),
            headers: stored_headers!(input).with_tags(tags),
            grants: Grants {
                owner: self.owner_of(&req.credentials),
                acl: self.requested_acl(
                    input.acl.as_ref().map(|a| a.as_str()),
                    crate::grant_headers!(input),
                )?,
            },
        };
        if is_folder_key(&input.key) {
            if size > 0 {
                return Err(store_error(StoreError::FolderHasBytes));
            }
            self.store
                .allows(bucket.as_fd(), &input.bucket, &input.key, &condition)
                .map_err(store_error)?;
            self.store
                .put_folder(bucket.as_fd(), &input.bucket, &input.key, &meta)
                .map_err(store_error)?;
        } else {
            store_meta(&temp.file, &meta).map_err(meta_error)?;
            self.store
                .publish_if(temp, bucket.as_fd(), &input.bucket, &input.key, &condition)
                .map_err(store_error)?;
        }
        Ok(S3Response::new(PutObjectOutput {
            e_tag: Some(quoted(&etag)),
            size: Some(size as i64),
            ..Default::default()
        }))
    }

    async fn get_object(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let input = req.input;
        let (object, meta) = self.object(&input.bucket, &input.key)?;
        ReadConditions::new(
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        )
        .check_read(&meta.etag, object.modified)?;
        let len = object.len;
        let mut parts_count = None;
        let (start, end, content_range) = match (&input.range, input.part_number) {
            (Some(_), Some(_)) => {
                return Err(s3_error!(
                    InvalidRequest,
                    "Cannot specify both Range header and partNumber query parameter"
                ))
            }
            (None, Some(n)) => {
                let (start, size, count) = part_of(&meta, n, len)?;
                parts_count = count;
                let end = start + size;
                let cr = format!("bytes {start}-{}/{len}", end.saturating_sub(1));
                (start, end, count.map(|_| cr))
            }
            (None, None) => (0, len, None),
            (Some(range), None) => {
                let r = range.check(len).map_err(|_| s3_error!(InvalidRange))?;
                let cr = format!("bytes {}-{}/{len}", r.start, r.end.saturating_sub(1));
                (r.start, r.end, Some(cr))
            }
        };
        let mut file = object.file;
        io::Seek::seek(&mut file, io::SeekFrom::Start(start)).map_err(io_error)?;
        let tag_count = crate::tagging::count(&meta.headers.tags);
        Ok(S3Response::new(GetObjectOutput {
            tag_count,
            body: Some(file_body(
                file,
                (start, end - start),
                self.metrics.bucket(&input.bucket),
            )),
            content_length: Some((end - start) as i64),
            content_range,
            parts_count,
            accept_ranges: Some("bytes".into()),
            content_type: meta.content_type,
            e_tag: Some(quoted(&meta.etag)),
            last_modified: Some(Timestamp::from(object.modified)),
            expires: meta.headers.expires(),
            cache_control: meta.headers.cache_control,
            content_disposition: meta.headers.content_disposition,
            content_encoding: meta.headers.content_encoding,
            content_language: meta.headers.content_language,
            metadata: (!meta.metadata.is_empty()).then_some(meta.metadata),
            ..Default::default()
        }))
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let input = req.input;
        let (object, meta) = self.object(&input.bucket, &input.key)?;
        ReadConditions::new(
            input.if_match.as_ref(),
            input.if_none_match.as_ref(),
            input.if_modified_since.as_ref(),
            input.if_unmodified_since.as_ref(),
        )
        .check_read(&meta.etag, object.modified)?;
        let (length, parts_count) = match input.part_number {
            Some(n) => {
                let (_, size, count) = part_of(&meta, n, object.len)?;
                (size, count)
            }
            None => (object.len, None),
        };
        let tag_count = crate::tagging::count(&meta.headers.tags);
        let mut head = S3Response::new(HeadObjectOutput {
            content_length: Some(length as i64),
            parts_count,
            accept_ranges: Some("bytes".into()),
            content_type: meta.content_type,
            e_tag: Some(quoted(&meta.etag)),
            last_modified: Some(Timestamp::from(object.modified)),
            expires: meta.headers.expires(),
            cache_control: meta.headers.cache_control,
            content_disposition: meta.headers.content_disposition,
            content_encoding: meta.headers.content_encoding,
            content_language: meta.headers.content_language,
            metadata: (!meta.metadata.is_empty()).then_some(meta.metadata),
            ..Default::default()
        });
        // S3 counts the tags on HEAD too, which s3s's HeadObject output has no field for.
        if let Some(n) = tag_count {
            head.headers
                .insert("x-amz-tagging-count", hyper::header::HeaderValue::from(n));
        }
        Ok(head)
    }

    async fn get_object_attributes(
        &self,
        req: S3Request<GetObjectAttributesInput>,
    ) -> S3Result<S3Response<GetObjectAttributesOutput>> {
        let input = req.input;
        let (object, meta) = self.object(&input.bucket, &input.key)?;
        // The header is a comma-separated list, which may arrive as one element.
        let wants = |a: &str| {
            (input.object_attributes.iter())
                .flat_map(|x| x.as_str().split(','))
                .any(|x| x.trim() == a)
        };
        // A multipart object's parts, a page at a time after the marker.
        let parts = (wants(ObjectAttributes::OBJECT_PARTS) && !meta.parts.is_empty()).then(|| {
            let after = input.part_number_marker.unwrap_or(0).max(0) as usize;
            let max = input.max_parts.unwrap_or(1000).clamp(0, 1000) as usize;
            let listed: Vec<ObjectPart> = (meta.parts.iter().enumerate().skip(after).take(max))
                .map(|(i, &size)| ObjectPart {
                    part_number: Some(i as i32 + 1),
                    size: Some(size as i64),
                    ..Default::default()
                })
                .collect();
            let last = after + listed.len();
            let truncated = last < meta.parts.len();
            GetObjectAttributesParts {
                is_truncated: Some(truncated),
                max_parts: Some(max as i32),
                next_part_number_marker: truncated.then_some(last as i32),
                part_number_marker: input.part_number_marker,
                parts: Some(listed),
                total_parts_count: Some(meta.parts.len() as i32),
            }
        });
        Ok(S3Response::new(GetObjectAttributesOutput {
            e_tag: wants(ObjectAttributes::ETAG).then(|| quoted(&meta.etag)),
            object_size: wants(ObjectAttributes::OBJECT_SIZE).then_some(object.len as i64),
            storage_class: wants(ObjectAttributes::STORAGE_CLASS)
                .then(|| StorageClass::from_static(StorageClass::STANDARD)),
            object_parts: parts,
            last_modified: Some(Timestamp::from(object.modified)),
            ..Default::default()
        }))
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        self.store
            .delete_object(bucket.as_fd(), &input.bucket, &input.key)
            .map_err(store_error)?;
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let input = req.input;
        if input.delete.objects.len() > MAX_DELETE_KEYS {
            return Err(s3_error!(
                MalformedXML,
                "a DeleteObjects request names at most {MAX_DELETE_KEYS} keys"
            ));
        }
        let bucket = self.bucket(&input.bucket)?;
        let quiet = input.delete.quiet.unwrap_or(false);
        let mut deleted = Vec::new();
        let mut errors = Vec::new();
        for object in input.delete.objects {
            match self
                .store
                .delete_object(bucket.as_fd(), &input.bucket, &object.key)
            {
                Ok(()) if quiet => {}
                Ok(()) => deleted.push(DeletedObject {
                    key: Some(object.key),
                    ..Default::default()
                }),
                Err(e) => {
                    let e = store_error(e);
                    errors.push(Error {
                        code: Some(e.code().as_str().to_string()),
                        key: Some(object.key),
                        message: e.message().map(str::to_string),
                        ..Default::default()
                    });
                }
            }
        }
        Ok(S3Response::new(DeleteObjectsOutput {
            deleted: Some(deleted),
            errors: (!errors.is_empty()).then_some(errors),
            ..Default::default()
        }))
    }

    async fn copy_object(
        &self,
        req: S3Request<CopyObjectInput>,
    ) -> S3Result<S3Response<CopyObjectOutput>> {
        let input = req.input;
        let (src_bucket, src_key, src) = self.open_source(&req.credentials, &input.copy_source)?;
        let dest = self.bucket(&input.bucket)?;
        crate::store::check_key(&input.key).map_err(store_error)?;
        let mut meta = load_meta(&src.file).map_err(io_error)?;
        ReadConditions::new(
            input.copy_source_if_match.as_ref(),
            input.copy_source_if_none_match.as_ref(),
            input.copy_source_if_modified_since.as_ref(),
            input.copy_source_if_unmodified_since.as_ref(),
        )
        .check_copy_source(&meta.etag, src.modified)?;
        let tags = crate::tagging::for_copy(
            std::mem::take(&mut meta.headers.tags),
            input.tagging_directive.as_ref(),
            input.tagging.as_deref(),
        )?;
        let replace = input
            .metadata_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE);
        if !replace && src_bucket == input.bucket && src_key == input.key {
            return Err(s3_error!(
                InvalidRequest,
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata"
            ));
        }
        // The copy is the caller's, with the ACL asked for (private by default).
        meta.grants = Grants {
            owner: self.owner_of(&req.credentials),
            acl: self.requested_acl(
                input.acl.as_ref().map(|a| a.as_str()),
                crate::grant_headers!(input),
            )?,
        };
        if replace {
            check_metadata_size(input.metadata.as_ref())?;
            meta.content_type = input.content_type;
            meta.metadata = input.metadata.unwrap_or_default();
            meta.headers = stored_headers!(input);
        }
        meta.headers.tags = tags;
        if is_folder_key(&input.key) {
            if src.len > 0 {
                return Err(store_error(StoreError::FolderHasBytes));
            }
            self.store
                .put_folder(dest.as_fd(), &input.bucket, &input.key, &meta)
                .map_err(store_error)?;
        } else {
            let mut temp = self.store.create_temp().map_err(io_error)?;
            if src.len > 0 {
                // Copying gigabytes is blocking work: done on this worker thread, kernel to
                // kernel.
                tokio::task::block_in_place(|| io::copy(&mut &src.file, &mut temp.file))
                    .map_err(io_error)?;
            }
            store_meta(&temp.file, &meta).map_err(meta_error)?;
            self.store
                .publish(temp, dest.as_fd(), &input.bucket, &input.key)
                .map_err(store_error)?;
        }
        Ok(S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(quoted(&meta.etag)),
                last_modified: Some(Timestamp::from(SystemTime::now())),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    async fn list_objects_v2(
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

    async fn list_objects(
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

    async fn list_object_versions(
        &self,
        req: S3Request<ListObjectVersionsInput>,
    ) -> S3Result<S3Response<ListObjectVersionsOutput>> {
        let input = req.input;
        let page = self
            .list(Query {
                bucket: input.bucket.clone(),
                prefix: input.prefix.clone(),
                delimiter: input.delimiter.clone(),
                after: input.key_marker.clone(),
                max_keys: input.max_keys,
                encoding: input.encoding_type.clone(),
            })
            .await?;
        let (delimiter, key_marker) = (page.echo(input.delimiter), page.echo(input.key_marker));
        let next_key_marker = page.echo(page.next.clone());
        let versions = page
            .objects
            .into_iter()
            .map(|o| ObjectVersion {
                key: o.key,
                size: o.size,
                e_tag: o.e_tag,
                last_modified: o.last_modified,
                is_latest: Some(true),
                version_id: Some("null".into()),
                ..Default::default()
            })
            .collect();
        Ok(S3Response::new(ListObjectVersionsOutput {
            name: Some(input.bucket),
            prefix: Some(page.prefix),
            delimiter,
            key_marker,
            max_keys: Some(page.max_keys),
            is_truncated: Some(page.truncated),
            next_key_marker,
            versions: Some(versions),
            common_prefixes: Some(page.prefixes),
            encoding_type: input.encoding_type,
            ..Default::default()
        }))
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

/// Where part `n` of an object lies ([`Meta::part`]): S3's 400 InvalidArgument for a number
/// no part can have, 416 InvalidPartNumber for one beyond the object's parts.
fn part_of(meta: &Meta, n: i32, len: u64) -> S3Result<(u64, u64, Option<i32>)> {
    if !(1..=10000).contains(&n) {
        return Err(s3_error!(
            InvalidArgument,
            "Part number must be an integer between 1 and 10000, inclusive"
        ));
    }
    meta.part(n, len).ok_or_else(|| {
        crate::errors::custom(
            "InvalidPartNumber",
            hyper::StatusCode::RANGE_NOT_SATISFIABLE,
            "The requested partnumber is not satisfiable".into(),
        )
    })
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
