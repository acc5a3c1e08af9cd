//! The object operations of [`Gateway`]: PUT (streamed to a temporary file, Content-MD5
//! checked), GET (whole, ranged or one part, streamed in chunks), HEAD, GetObjectAttributes,
//! deletes and copies. Every object is served from one open descriptor: its bytes, size, ETag
//! and metadata all come from the same file.

use crate::conditions::ReadConditions;
use crate::errors::meta_error;
use crate::errors::{io_error, store_error};
use crate::gateway::check_metadata_size;
use crate::gateway::{check_content_md5, quoted, Declared, Gateway};
use crate::meta::Grants;
use crate::meta::StoredHeaders;
use crate::metrics::BucketCounters;
use crate::store::WriteCondition;
use crate::store::{hex, is_folder_key, load_meta, store_meta, Meta, Object, StoreError};
use crate::tagging::stored_headers;
use bytes::Bytes;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::SystemTime;

/// Bytes per chunk of a GET body.
const CHUNK: usize = 1 << 20;
/// Most keys one DeleteObjects request may name (as S3).
pub const MAX_DELETE_KEYS: usize = 1000;

impl Gateway {
    /// PutObject: the body streamed to a temporary file, checked, then moved into place.
    pub(super) async fn put_object_at(
        &self,
        req: S3Request<PutObjectInput>,
    ) -> S3Result<S3Response<PutObjectOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        crate::store::check_key(&input.key).map_err(store_error)?;
        check_metadata_size(input.metadata.as_ref())?;
        let tags = crate::tagging::from_header(input.tagging.as_deref())?;
        let condition = WriteCondition::new(input.if_match.as_ref(), input.if_none_match.as_ref());
        let declared = Declared::of(&req.headers, &req.trailing_headers, input.content_length)?;
        let got = self.receive(&input.bucket, input.body, declared).await?;
        check_content_md5(input.content_md5.as_deref(), &got.md5)?;
        let (temp, size) = (got.temp, got.size);
        let etag = hex(&got.md5);
        let checksum = got
            .checksum
            .as_ref()
            .map(|c| c.fields())
            .unwrap_or_default();
        let meta = Meta {
            etag: etag.clone(),
            content_type: input.content_type,
            metadata: input.metadata.unwrap_or_default(),
            parts: Vec::new(),
            headers: StoredHeaders {
                checksum: got.checksum,
                ..stored_headers!(input).with_tags(tags)
            },
            grants: Grants {
                owner: self.owner_of(&req.credentials),
                acl: self.requested_acl(
                    input.acl.as_ref().map(|a| a.as_str()),
                    crate::grant_headers!(input),
                )?,
            },
            version: None,
        };
        let version_id = if is_folder_key(&input.key) {
            if size > 0 {
                return Err(store_error(StoreError::FolderHasBytes));
            }
            self.store
                .allows(bucket.as_fd(), &input.bucket, &input.key, &condition)
                .map_err(store_error)?;
            self.store
                .put_folder(bucket.as_fd(), &input.bucket, &input.key, &meta)
                .map_err(store_error)?;
            None
        } else {
            store_meta(&temp.file, &meta).map_err(meta_error)?;
            self.store
                .publish_version(temp, bucket.as_fd(), &input.bucket, &input.key, &condition)
                .map_err(store_error)?
        };
        Ok(S3Response::new(PutObjectOutput {
            version_id,
            e_tag: Some(quoted(&etag)),
            size: Some(size as i64),
            checksum_crc32: checksum.checksum_crc32,
            checksum_crc32c: checksum.checksum_crc32c,
            checksum_crc64nvme: checksum.checksum_crc64nvme,
            checksum_sha1: checksum.checksum_sha1,
            checksum_sha256: checksum.checksum_sha256,
            ..Default::default()
        }))
    }

    /// GetObject, whole, ranged or one part, streamed from one descriptor.
    pub(super) async fn get_object_at(
        &self,
        req: S3Request<GetObjectInput>,
    ) -> S3Result<S3Response<GetObjectOutput>> {
        let input = req.input;
        let version = input.version_id.as_deref();
        let (object, meta) = self.object(&input.bucket, &input.key, version)?;
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
        let whole = start == 0 && end == len;
        let checksum = asked_checksum(input.checksum_mode.as_ref(), whole, &meta);
        Ok(S3Response::new(GetObjectOutput {
            checksum_crc32: checksum.checksum_crc32,
            checksum_crc32c: checksum.checksum_crc32c,
            checksum_crc64nvme: checksum.checksum_crc64nvme,
            checksum_sha1: checksum.checksum_sha1,
            checksum_sha256: checksum.checksum_sha256,
            tag_count,
            version_id: meta.version.map(|v| v.version_id()),
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

    /// HeadObject.
    pub(super) async fn head_object_at(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let input = req.input;
        let version = input.version_id.as_deref();
        let (object, meta) = self.object(&input.bucket, &input.key, version)?;
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
        let whole = input.part_number.is_none() || parts_count.is_none();
        let checksum = asked_checksum(input.checksum_mode.as_ref(), whole, &meta);
        let mut head = S3Response::new(HeadObjectOutput {
            checksum_crc32: checksum.checksum_crc32,
            checksum_crc32c: checksum.checksum_crc32c,
            checksum_crc64nvme: checksum.checksum_crc64nvme,
            checksum_sha1: checksum.checksum_sha1,
            checksum_sha256: checksum.checksum_sha256,
            content_length: Some(length as i64),
            version_id: meta.version.map(|v| v.version_id()),
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

    /// GetObjectAttributes (answered through [`crate::attributes`]).
    pub(super) async fn get_object_attributes_at(
        &self,
        req: S3Request<GetObjectAttributesInput>,
    ) -> S3Result<S3Response<GetObjectAttributesOutput>> {
        let input = req.input;
        let version = input.version_id.as_deref();
        let (object, meta) = self.object(&input.bucket, &input.key, version)?;
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
        let checksum = (meta.headers.checksum.as_ref())
            .filter(|_| wants(ObjectAttributes::CHECKSUM))
            .map(|c| c.fields());
        Ok(S3Response::new(GetObjectAttributesOutput {
            checksum,
            e_tag: wants(ObjectAttributes::ETAG).then(|| quoted(&meta.etag)),
            object_size: wants(ObjectAttributes::OBJECT_SIZE).then_some(object.len as i64),
            storage_class: wants(ObjectAttributes::STORAGE_CLASS)
                .then(|| StorageClass::from_static(StorageClass::STANDARD)),
            object_parts: parts,
            last_modified: Some(Timestamp::from(object.modified)),
            ..Default::default()
        }))
    }

    /// DeleteObject: of the current version (a delete marker is made where versions are
    /// kept) or of the version named.
    pub(super) async fn delete_object_at(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        let version = input.version_id.as_deref();
        let deleted = (self.store)
            .delete_versioned(bucket.as_fd(), &input.bucket, &input.key, version)
            .map_err(store_error)?;
        Ok(S3Response::new(DeleteObjectOutput {
            delete_marker: deleted.delete_marker.then_some(true),
            version_id: deleted.version_id,
            ..Default::default()
        }))
    }

    /// DeleteObjects: at most [`MAX_DELETE_KEYS`] keys, each answered.
    pub(super) async fn delete_objects_at(
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
            let version = object.version_id.as_deref();
            match (self.store).delete_versioned(bucket.as_fd(), &input.bucket, &object.key, version)
            {
                Ok(_) if quiet => {}
                Ok(done) => deleted.push(DeletedObject {
                    delete_marker: done.delete_marker.then_some(true),
                    // Of a marker made: its id; of a version named: that one.
                    delete_marker_version_id: done
                        .version_id
                        .clone()
                        .filter(|_| done.delete_marker),
                    version_id: object.version_id,
                    key: Some(object.key),
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

    /// CopyObject, kernel to kernel, with the caller as the copy's owner.
    pub(super) async fn copy_object_at(
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
        // A copy of a named version onto its key makes it current again, as S3 allows.
        let src_version = meta.version.map(|v| v.version_id());
        let named = matches!(
            &input.copy_source,
            CopySource::Bucket {
                version_id: Some(_),
                ..
            }
        );
        if !replace && !named && src_bucket == input.bucket && src_key == input.key {
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
            // The checksum is of the bytes, which the copy keeps.
            meta.headers = StoredHeaders {
                checksum: meta.headers.checksum.take(),
                ..stored_headers!(input)
            };
        }
        meta.headers.tags = tags;
        let version_id = self.put_copy(&src, &dest, (&input.bucket, &input.key), &meta)?;
        Ok(S3Response::new(CopyObjectOutput {
            version_id,
            copy_source_version_id: src_version,
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(quoted(&meta.etag)),
                last_modified: Some(Timestamp::from(SystemTime::now())),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }
}

impl Gateway {
    /// Writes a copy of `src` with `meta` at `key` of `bucket` (`dest` its directory): a new
    /// version where the bucket keeps versions (its id returned).
    fn put_copy(
        &self,
        src: &Object,
        dest: &OwnedFd,
        (bucket, key): (&str, &str),
        meta: &Meta,
    ) -> S3Result<Option<String>> {
        if is_folder_key(key) {
            if src.len > 0 {
                return Err(store_error(StoreError::FolderHasBytes));
            }
            (self.store)
                .put_folder(dest.as_fd(), bucket, key, meta)
                .map_err(store_error)?;
            return Ok(None);
        }
        let mut temp = self.store.create_temp().map_err(io_error)?;
        if src.len > 0 {
            // Copying gigabytes is blocking work: done on this worker thread, kernel to kernel.
            tokio::task::block_in_place(|| io::copy(&mut &src.file, &mut temp.file))
                .map_err(io_error)?;
        }
        store_meta(&temp.file, meta).map_err(meta_error)?;
        let always = WriteCondition::default();
        (self.store)
            .publish_version(temp, dest.as_fd(), bucket, key, &always)
            .map_err(store_error)
    }
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

/// The checksum a GET or HEAD returns: the one the object was sent with, when the request
/// asks for it (`x-amz-checksum-mode: ENABLED`) and reads the object whole.
fn asked_checksum(mode: Option<&ChecksumMode>, whole: bool, meta: &Meta) -> Checksum {
    let enabled = mode.is_some_and(|m| m.as_str() == ChecksumMode::ENABLED);
    match &meta.headers.checksum {
        Some(stored) if enabled && whole => stored.fields(),
        _ => Checksum::default(),
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
