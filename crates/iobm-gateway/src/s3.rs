//! The S3 operations over the [`Store`]: buckets, objects (streamed both ways, ranged GETs,
//! Content-MD5 checked), listings (V1, V2, versions), copies, multipart uploads, and the
//! bucket calls that common clients make first (location, versioning).

use crate::store::{hex, load_meta, save_meta, Meta, NameError, Store};
use bytes::Bytes;
use futures::StreamExt;
use md5::{Digest, Md5};
use s3s::dto::*;
use s3s::{s3_error, S3Error, S3Request, S3Response, S3Result, S3};
use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Bytes per chunk of a GET body.
const CHUNK: usize = 1 << 20;

/// The gateway's S3 implementation.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub store: Store,
}

fn name_error(e: NameError) -> S3Error {
    match e {
        NameError::InvalidBucket => s3_error!(InvalidBucketName),
        NameError::KeyTooLong => s3_error!(KeyTooLongError),
        NameError::InvalidKey => s3_error!(
            InvalidArgument,
            "object key is not a relative path of plain names"
        ),
    }
}

fn internal(e: io::Error) -> S3Error {
    s3_error!(e, InternalError)
}

fn last_modified(path: &Path) -> Option<Timestamp> {
    fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(Timestamp::from)
}

fn quoted(etag: &str) -> ETag {
    ETag::Strong(etag.to_string())
}

impl Gateway {
    fn bucket(&self, bucket: &str) -> S3Result<PathBuf> {
        let path = self.store.bucket_path(bucket).map_err(name_error)?;
        if !path.is_dir() {
            return Err(s3_error!(NoSuchBucket));
        }
        Ok(path)
    }

    /// The file of an existing object (a directory is not an object).
    fn object(&self, bucket: &str, key: &str) -> S3Result<PathBuf> {
        self.bucket(bucket)?;
        let path = self.store.object_path(bucket, key).map_err(name_error)?;
        if !path.is_file() {
            return Err(s3_error!(NoSuchKey));
        }
        Ok(path)
    }

    /// Streams a body to a new temporary file, returning it with its MD5 (hex) and size.
    async fn receive(&self, body: Option<StreamingBlob>) -> S3Result<(PathBuf, [u8; 16], u64)> {
        let temp = self.store.temp_path();
        // Plain file writes on this worker thread (block_in_place): no copy into tokio's file
        // buffer and no hand-off to its blocking pool per chunk.
        let mut file = fs::File::create(&temp).map_err(internal)?;
        let mut hasher = Md5::new();
        let mut size = 0u64;
        if let Some(mut body) = body {
            while let Some(chunk) = body.next().await {
                let chunk = match chunk {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = tokio::fs::remove_file(&temp).await;
                        return Err(s3_error!(IncompleteBody, "the body ended early: {e}"));
                    }
                };
                let written = tokio::task::block_in_place(|| {
                    hasher.update(&chunk);
                    io::Write::write_all(&mut file, &chunk)
                });
                size += chunk.len() as u64;
                if let Err(e) = written {
                    let _ = fs::remove_file(&temp);
                    return Err(internal(e));
                }
            }
        }
        Ok((temp, hasher.finalize().into(), size))
    }

    /// Every object of a bucket below `prefix`'s directory, in key order: (key, file).
    fn walk(&self, bucket_dir: &Path, prefix: &str) -> S3Result<Vec<(String, PathBuf)>> {
        // Start at the deepest directory the prefix names, to avoid walking the whole bucket.
        let start_rel = prefix.rfind('/').map_or("", |i| &prefix[..i]);
        let start = if start_rel.is_empty() {
            bucket_dir.to_path_buf()
        } else {
            bucket_dir.join(start_rel)
        };
        let mut out = Vec::new();
        let mut stack = vec![start];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(rel) = path.strip_prefix(bucket_dir) else {
                    continue;
                };
                let key = rel.to_string_lossy().into_owned();
                let ty = entry.file_type().map_err(internal)?;
                if ty.is_dir() {
                    // Below the prefix, or on the way to it.
                    if key.starts_with(prefix) || prefix.starts_with(&key) {
                        stack.push(path);
                    }
                } else if ty.is_file() && key.starts_with(prefix) {
                    out.push((key, path));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// One page of keys and common prefixes below `prefix` and after `after`, at most
    /// `max_keys` (default and limit 1000).
    fn list(
        &self,
        bucket: &str,
        prefix: Option<&str>,
        delimiter: Option<&str>,
        after: Option<&str>,
        max_keys: Option<i32>,
    ) -> S3Result<Page> {
        let prefix = prefix.unwrap_or_default();
        let max = max_keys.unwrap_or(1000).clamp(0, 1000) as usize;
        let dir = self.bucket(bucket)?;
        let mut objects = Vec::new();
        let mut prefixes: BTreeSet<String> = BTreeSet::new();
        let mut last = None;
        let mut truncated = false;
        for (key, path) in self.walk(&dir, prefix)? {
            if after.is_some_and(|a| key.as_str() <= a) {
                continue;
            }
            let common = delimiter.filter(|d| !d.is_empty()).and_then(|d| {
                key[prefix.len()..]
                    .find(d)
                    .map(|i| key[..prefix.len() + i + d.len()].to_string())
            });
            if objects.len() + prefixes.len() >= max
                && common.as_ref().is_none_or(|c| !prefixes.contains(c))
            {
                truncated = true;
                break;
            }
            match common {
                Some(c) => {
                    if after.is_some_and(|a| c.as_str() <= a) {
                        continue;
                    }
                    prefixes.insert(c.clone());
                    last = Some(c);
                }
                None => {
                    let meta = fs::metadata(&path).map_err(internal)?;
                    let etag = load_meta(&path).map_err(internal)?.etag;
                    objects.push(Object {
                        key: Some(key.clone()),
                        size: Some(meta.len() as i64),
                        e_tag: Some(quoted(&etag)),
                        last_modified: meta.modified().ok().map(Timestamp::from),
                        storage_class: Some(ObjectStorageClass::from_static(
                            ObjectStorageClass::STANDARD,
                        )),
                        ..Default::default()
                    });
                    last = Some(key);
                }
            }
        }
        let prefixes = prefixes
            .into_iter()
            .map(|p| CommonPrefix { prefix: Some(p) })
            .collect();
        Ok(Page {
            prefix: prefix.to_string(),
            max_keys: max as i32,
            objects,
            prefixes,
            truncated,
            next: last.filter(|_| truncated),
        })
    }

    fn upload_dir(&self, upload_id: &str) -> S3Result<PathBuf> {
        if upload_id.is_empty() || !upload_id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(s3_error!(NoSuchUpload));
        }
        let dir = self.store.uploads().join(upload_id);
        if !dir.is_dir() {
            return Err(s3_error!(NoSuchUpload));
        }
        Ok(dir)
    }
}

/// One page of a listing.
struct Page {
    prefix: String,
    max_keys: i32,
    objects: Vec<Object>,
    prefixes: Vec<CommonPrefix>,
    /// More keys follow; `next` is where the next page starts after.
    truncated: bool,
    next: Option<String>,
}

/// The bucket, key and metadata of a multipart upload, kept in its directory.
#[derive(serde::Serialize, serde::Deserialize)]
struct UploadInfo {
    bucket: String,
    key: String,
    content_type: Option<String>,
    metadata: std::collections::HashMap<String, String>,
    initiated_unix: u64,
}

fn check_content_md5(expected: Option<&str>, got: &[u8; 16]) -> S3Result<()> {
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
        _req: S3Request<ListBucketsInput>,
    ) -> S3Result<S3Response<ListBucketsOutput>> {
        let mut buckets = Vec::new();
        for entry in fs::read_dir(self.store.root()).map_err(internal)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.path().is_dir() && self.store.bucket_path(&name).is_ok() {
                buckets.push(Bucket {
                    name: Some(name),
                    creation_date: last_modified(&entry.path()),
                    ..Default::default()
                });
            }
        }
        buckets.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(S3Response::new(ListBucketsOutput {
            buckets: Some(buckets),
            owner: Some(Owner {
                display_name: Some("iobm".into()),
                id: Some("iobm".into()),
            }),
            ..Default::default()
        }))
    }

    async fn create_bucket(
        &self,
        req: S3Request<CreateBucketInput>,
    ) -> S3Result<S3Response<CreateBucketOutput>> {
        let path = self
            .store
            .bucket_path(&req.input.bucket)
            .map_err(name_error)?;
        match fs::create_dir(&path) {
            Ok(()) => Ok(S3Response::new(CreateBucketOutput::default())),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                Err(s3_error!(BucketAlreadyOwnedByYou))
            }
            Err(e) => Err(internal(e)),
        }
    }

    async fn delete_bucket(
        &self,
        req: S3Request<DeleteBucketInput>,
    ) -> S3Result<S3Response<DeleteBucketOutput>> {
        let path = self.bucket(&req.input.bucket)?;
        match fs::remove_dir(&path) {
            Ok(()) => Ok(S3Response::new(DeleteBucketOutput::default())),
            Err(e) if e.raw_os_error() == Some(libc::ENOTEMPTY) => Err(s3_error!(BucketNotEmpty)),
            Err(e) => Err(internal(e)),
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
        self.bucket(&input.bucket)?;
        let dest = self
            .store
            .object_path(&input.bucket, &input.key)
            .map_err(name_error)?;
        let (temp, md5, size) = self.receive(input.body).await?;
        if let Err(e) = check_content_md5(input.content_md5.as_deref(), &md5) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        let etag = hex(&md5);
        save_meta(
            &temp,
            &Meta {
                etag: etag.clone(),
                content_type: input.content_type,
                metadata: input.metadata.unwrap_or_default(),
            },
        );
        if let Err(e) = self.store.publish(&temp, &dest) {
            let _ = fs::remove_file(&temp);
            return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                s3_error!(
                    InvalidArgument,
                    "a key below this one exists: a key cannot also be a prefix"
                )
            } else {
                internal(e)
            });
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
        let path = self.object(&input.bucket, &input.key)?;
        // Open first: the bytes served are this file's, even if a PUT replaces it meanwhile.
        let mut file = fs::File::open(&path).map_err(internal)?;
        let len = file.metadata().map_err(internal)?.len();
        let meta = load_meta(&path).map_err(internal)?;
        let (start, end, content_range) = match &input.range {
            None => (0, len, None),
            Some(range) => {
                let r = range.check(len).map_err(|_| s3_error!(InvalidRange))?;
                let cr = format!("bytes {}-{}/{len}", r.start, r.end.saturating_sub(1));
                (r.start, r.end, Some(cr))
            }
        };
        io::Seek::seek(&mut file, io::SeekFrom::Start(start)).map_err(internal)?;
        let body = futures::stream::unfold((file, end - start), |(mut file, left)| async move {
            if left == 0 {
                return None;
            }
            // Read on this worker thread into fresh, unzeroed capacity: one copy, from the
            // file into the chunk that hyper sends.
            let want = (left as usize).min(CHUNK);
            let read = tokio::task::block_in_place(|| {
                let mut buf = Vec::with_capacity(want);
                io::Read::read_to_end(&mut io::Read::take(&mut file, want as u64), &mut buf)
                    .map(|_| buf)
            });
            match read {
                Ok(buf) if buf.is_empty() => Some((
                    Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
                    (file, 0),
                )),
                Ok(buf) => {
                    let n = buf.len() as u64;
                    Some((Ok(Bytes::from(buf)), (file, left - n)))
                }
                Err(e) => Some((Err(e), (file, 0))),
            }
        });
        Ok(S3Response::new(GetObjectOutput {
            body: Some(StreamingBlob::wrap(body)),
            content_length: Some((end - start) as i64),
            content_range,
            accept_ranges: Some("bytes".into()),
            content_type: meta.content_type,
            e_tag: Some(quoted(&meta.etag)),
            last_modified: last_modified(&path),
            metadata: (!meta.metadata.is_empty()).then_some(meta.metadata),
            ..Default::default()
        }))
    }

    async fn head_object(
        &self,
        req: S3Request<HeadObjectInput>,
    ) -> S3Result<S3Response<HeadObjectOutput>> {
        let input = req.input;
        let path = self.object(&input.bucket, &input.key)?;
        let len = fs::metadata(&path).map_err(internal)?.len();
        let meta = load_meta(&path).map_err(internal)?;
        Ok(S3Response::new(HeadObjectOutput {
            content_length: Some(len as i64),
            accept_ranges: Some("bytes".into()),
            content_type: meta.content_type,
            e_tag: Some(quoted(&meta.etag)),
            last_modified: last_modified(&path),
            metadata: (!meta.metadata.is_empty()).then_some(meta.metadata),
            ..Default::default()
        }))
    }

    async fn delete_object(
        &self,
        req: S3Request<DeleteObjectInput>,
    ) -> S3Result<S3Response<DeleteObjectOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        let path = self
            .store
            .object_path(&input.bucket, &input.key)
            .map_err(name_error)?;
        if path.is_file() {
            match fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(internal(e)),
                _ => self.store.prune(&bucket, &path),
            }
        }
        Ok(S3Response::new(DeleteObjectOutput::default()))
    }

    async fn delete_objects(
        &self,
        req: S3Request<DeleteObjectsInput>,
    ) -> S3Result<S3Response<DeleteObjectsOutput>> {
        let input = req.input;
        let bucket = self.bucket(&input.bucket)?;
        let quiet = input.delete.quiet.unwrap_or(false);
        let mut deleted = Vec::new();
        let mut errors = Vec::new();
        for object in input.delete.objects {
            match self.store.object_path(&input.bucket, &object.key) {
                Ok(path) => {
                    let removed = if path.is_file() {
                        fs::remove_file(&path)
                    } else {
                        Ok(())
                    };
                    match removed {
                        Ok(()) => {
                            self.store.prune(&bucket, &path);
                            if !quiet {
                                deleted.push(DeletedObject {
                                    key: Some(object.key),
                                    ..Default::default()
                                });
                            }
                        }
                        Err(e) => errors.push(Error {
                            code: Some("InternalError".into()),
                            key: Some(object.key),
                            message: Some(e.to_string()),
                            ..Default::default()
                        }),
                    }
                }
                Err(_) => errors.push(Error {
                    code: Some("InvalidArgument".into()),
                    key: Some(object.key),
                    message: Some("invalid key".into()),
                    ..Default::default()
                }),
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
        let (src_bucket, src_key) = match &input.copy_source {
            CopySource::Bucket { bucket, key, .. } => (bucket.to_string(), key.to_string()),
            _ => return Err(s3_error!(NotImplemented, "copies from access points")),
        };
        let src = self.object(&src_bucket, &src_key)?;
        self.bucket(&input.bucket)?;
        let dest = self
            .store
            .object_path(&input.bucket, &input.key)
            .map_err(name_error)?;
        let mut meta = load_meta(&src).map_err(internal)?;
        if input
            .metadata_directive
            .as_ref()
            .is_some_and(|d| d.as_str() == MetadataDirective::REPLACE)
        {
            meta.content_type = input.content_type;
            meta.metadata = input.metadata.unwrap_or_default();
        }
        let temp = self.store.temp_path();
        let (from, to) = (src.clone(), temp.clone());
        tokio::task::spawn_blocking(move || fs::copy(from, to))
            .await
            .map_err(|e| s3_error!(e, InternalError))?
            .map_err(internal)?;
        save_meta(&temp, &meta);
        self.store.publish(&temp, &dest).map_err(|e| {
            let _ = fs::remove_file(&temp);
            internal(e)
        })?;
        Ok(S3Response::new(CopyObjectOutput {
            copy_object_result: Some(CopyObjectResult {
                e_tag: Some(quoted(&meta.etag)),
                last_modified: last_modified(&dest),
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
            .as_deref()
            .or(input.start_after.as_deref());
        let page = self.list(
            &input.bucket,
            input.prefix.as_deref(),
            input.delimiter.as_deref(),
            after,
            input.max_keys,
        )?;
        Ok(S3Response::new(ListObjectsV2Output {
            name: Some(input.bucket),
            prefix: Some(page.prefix),
            delimiter: input.delimiter,
            max_keys: Some(page.max_keys),
            key_count: Some((page.objects.len() + page.prefixes.len()) as i32),
            is_truncated: Some(page.truncated),
            continuation_token: input.continuation_token,
            next_continuation_token: page.next,
            start_after: input.start_after,
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
        let page = self.list(
            &input.bucket,
            input.prefix.as_deref(),
            input.delimiter.as_deref(),
            input.marker.as_deref(),
            input.max_keys,
        )?;
        Ok(S3Response::new(ListObjectsOutput {
            name: Some(input.bucket),
            prefix: Some(page.prefix),
            delimiter: input.delimiter,
            marker: input.marker,
            max_keys: Some(page.max_keys),
            is_truncated: Some(page.truncated),
            next_marker: page.next,
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
        let page = self.list(
            &input.bucket,
            input.prefix.as_deref(),
            input.delimiter.as_deref(),
            input.key_marker.as_deref(),
            input.max_keys,
        )?;
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
            delimiter: input.delimiter,
            key_marker: input.key_marker,
            max_keys: Some(page.max_keys),
            is_truncated: Some(page.truncated),
            next_key_marker: page.next,
            versions: Some(versions),
            common_prefixes: Some(page.prefixes),
            ..Default::default()
        }))
    }

    async fn create_multipart_upload(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let input = req.input;
        self.bucket(&input.bucket)?;
        self.store
            .object_path(&input.bucket, &input.key)
            .map_err(name_error)?;
        let id = Store::new_upload_id();
        let dir = self.store.uploads().join(&id);
        fs::create_dir(&dir).map_err(internal)?;
        let info = UploadInfo {
            bucket: input.bucket.clone(),
            key: input.key.clone(),
            content_type: input.content_type,
            metadata: input.metadata.unwrap_or_default(),
            initiated_unix: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        fs::write(
            dir.join("upload.json"),
            serde_json::to_vec(&info).expect("serialisable"),
        )
        .map_err(internal)?;
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    async fn upload_part(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let input = req.input;
        let dir = self.upload_dir(&input.upload_id)?;
        if !(1..=10000).contains(&input.part_number) {
            return Err(s3_error!(InvalidArgument, "part number must be 1 to 10000"));
        }
        let (temp, md5, _) = self.receive(input.body).await?;
        if let Err(e) = check_content_md5(input.content_md5.as_deref(), &md5) {
            let _ = fs::remove_file(&temp);
            return Err(e);
        }
        let etag = hex(&md5);
        let part = dir.join(format!("part.{:05}.{etag}", input.part_number));
        // A part uploaded again replaces the earlier one.
        for entry in fs::read_dir(&dir).map_err(internal)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with(&format!("part.{:05}.", input.part_number)) {
                let _ = fs::remove_file(entry.path());
            }
        }
        fs::rename(&temp, &part).map_err(internal)?;
        Ok(S3Response::new(UploadPartOutput {
            e_tag: Some(quoted(&etag)),
            ..Default::default()
        }))
    }

    async fn list_parts(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        let input = req.input;
        let dir = self.upload_dir(&input.upload_id)?;
        let parts = read_parts(&dir)?
            .into_iter()
            .map(|(n, etag, path)| Part {
                part_number: Some(n),
                e_tag: Some(quoted(&etag)),
                size: fs::metadata(&path).ok().map(|m| m.len() as i64),
                last_modified: last_modified(&path),
                ..Default::default()
            })
            .collect();
        Ok(S3Response::new(ListPartsOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(input.upload_id),
            parts: Some(parts),
            is_truncated: Some(false),
            ..Default::default()
        }))
    }

    async fn list_multipart_uploads(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        let input = req.input;
        self.bucket(&input.bucket)?;
        let prefix = input.prefix.clone().unwrap_or_default();
        let mut uploads = Vec::new();
        for entry in fs::read_dir(self.store.uploads())
            .map_err(internal)?
            .flatten()
        {
            let Ok(text) = fs::read(entry.path().join("upload.json")) else {
                continue;
            };
            let Ok(info) = serde_json::from_slice::<UploadInfo>(&text) else {
                continue;
            };
            if info.bucket == input.bucket && info.key.starts_with(&prefix) {
                uploads.push(MultipartUpload {
                    key: Some(info.key),
                    upload_id: Some(entry.file_name().to_string_lossy().into_owned()),
                    initiated: Some(Timestamp::from(
                        SystemTime::UNIX_EPOCH
                            + std::time::Duration::from_secs(info.initiated_unix),
                    )),
                    ..Default::default()
                });
            }
        }
        uploads.sort_by(|a, b| (&a.key, &a.upload_id).cmp(&(&b.key, &b.upload_id)));
        Ok(S3Response::new(ListMultipartUploadsOutput {
            bucket: Some(input.bucket),
            prefix: Some(prefix),
            uploads: Some(uploads),
            is_truncated: Some(false),
            ..Default::default()
        }))
    }

    async fn abort_multipart_upload(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let dir = self.upload_dir(&req.input.upload_id)?;
        fs::remove_dir_all(&dir).map_err(internal)?;
        Ok(S3Response::new(AbortMultipartUploadOutput::default()))
    }

    async fn complete_multipart_upload(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let input = req.input;
        let dir = self.upload_dir(&input.upload_id)?;
        let info: UploadInfo =
            serde_json::from_slice(&fs::read(dir.join("upload.json")).map_err(internal)?)
                .map_err(|e| s3_error!(e, InternalError))?;
        if info.bucket != input.bucket || info.key != input.key {
            return Err(s3_error!(NoSuchUpload));
        }
        let dest = self
            .store
            .object_path(&input.bucket, &input.key)
            .map_err(name_error)?;
        let stored = read_parts(&dir)?;
        let wanted = input
            .multipart_upload
            .and_then(|m| m.parts)
            .unwrap_or_default();
        if wanted.is_empty() {
            return Err(s3_error!(MalformedXML, "no parts listed"));
        }
        let mut etags = Md5::new();
        let mut sources = Vec::with_capacity(wanted.len());
        let mut previous = 0;
        for part in &wanted {
            let n = part.part_number.unwrap_or(0);
            if n <= previous {
                return Err(s3_error!(InvalidPartOrder));
            }
            previous = n;
            let want_etag = part
                .e_tag
                .as_ref()
                .map(|e| e.value().trim_matches('"').to_string());
            let Some((_, etag, path)) = stored
                .iter()
                .find(|(m, etag, _)| *m == n && want_etag.as_ref().is_none_or(|w| w == etag))
            else {
                return Err(s3_error!(InvalidPart));
            };
            let raw: Vec<u8> = (0..etag.len() / 2)
                .filter_map(|i| u8::from_str_radix(&etag[2 * i..2 * i + 2], 16).ok())
                .collect();
            etags.update(&raw);
            sources.push(path.clone());
        }
        // Concatenating gigabytes is blocking work: off the async workers.
        let temp = self.store.temp_path();
        let target = temp.clone();
        let joined = tokio::task::spawn_blocking(move || -> io::Result<()> {
            let mut out = fs::File::create(&target)?;
            for path in &sources {
                io::copy(&mut fs::File::open(path)?, &mut out)?;
            }
            Ok(())
        })
        .await
        .map_err(|e| s3_error!(e, InternalError))?;
        if let Err(e) = joined {
            let _ = fs::remove_file(&temp);
            return Err(internal(e));
        }
        let etag = format!("{}-{}", hex(&etags.finalize()), wanted.len());
        save_meta(
            &temp,
            &Meta {
                etag: etag.clone(),
                content_type: info.content_type,
                metadata: info.metadata,
            },
        );
        self.store.publish(&temp, &dest).map_err(|e| {
            let _ = fs::remove_file(&temp);
            internal(e)
        })?;
        let _ = fs::remove_dir_all(&dir);
        Ok(S3Response::new(CompleteMultipartUploadOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            e_tag: Some(quoted(&etag)),
            ..Default::default()
        }))
    }
}

/// The parts of an upload: (number, etag, file), by number.
fn read_parts(dir: &Path) -> S3Result<Vec<(i32, String, PathBuf)>> {
    let mut parts = Vec::new();
    for entry in fs::read_dir(dir).map_err(internal)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let mut fields = name.splitn(3, '.');
        if fields.next() != Some("part") {
            continue;
        }
        let (Some(n), Some(etag)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let Ok(n) = n.parse::<i32>() {
            parts.push((n, etag.to_string(), entry.path()));
        }
    }
    parts.sort();
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_md5_is_base64() {
        let md5: [u8; 16] = Md5::digest(b"hello").into();
        assert!(check_content_md5(Some("XUFAKrxLKna5cZ2REBfFkg=="), &md5).is_ok());
        assert!(check_content_md5(Some("AAAAAAAAAAAAAAAAAAAAAA=="), &md5).is_err());
        assert!(check_content_md5(None, &md5).is_ok());
    }
}
