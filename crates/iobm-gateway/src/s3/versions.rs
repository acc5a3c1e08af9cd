//! Versioning's operations of [`Gateway`]: Put/GetBucketVersioning and ListObjectVersions, a
//! page of the bucket's keys in S3's order (the current versions' walk of [`crate::store::walk`]
//! merged with the kept versions' walk of [`crate::store::versions::walk`]), each key's versions
//! newest first, delete markers as `DeleteMarker` entries.

use crate::errors::{io_error, store_error};
use crate::gateway::{quoted, Gateway};
use crate::listing::{owner, url_encoded};
use crate::meta::load_etag;
use crate::meta::Grants;
use crate::store::versions::walk::{Kept, KeptWalk};
use crate::store::walk::Found;
use crate::store::Object;
use crate::versions::{Name, VersionId, Versioning};
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

impl Gateway {
    /// GetBucketVersioning: the state, absent when never set.
    pub(super) async fn get_bucket_versioning_at(
        &self,
        req: S3Request<GetBucketVersioningInput>,
    ) -> S3Result<S3Response<GetBucketVersioningOutput>> {
        let dir = self.bucket(&req.input.bucket)?;
        let state = Versioning::read(dir.as_fd()).map_err(io_error)?;
        Ok(S3Response::new(GetBucketVersioningOutput {
            status: state.as_str().map(BucketVersioningStatus::from_static),
            mfa_delete: None,
        }))
    }

    /// PutBucketVersioning: `Enabled` or `Suspended` (MFA delete is not kept).
    pub(super) async fn put_bucket_versioning_at(
        &self,
        req: S3Request<PutBucketVersioningInput>,
    ) -> S3Result<S3Response<PutBucketVersioningOutput>> {
        let input = req.input;
        let dir = self.bucket(&input.bucket)?;
        let config = input.versioning_configuration;
        if config
            .mfa_delete
            .is_some_and(|m| m.as_str() == MFADelete::ENABLED)
        {
            return Err(s3_error!(NotImplemented, "MFA delete is not kept here"));
        }
        let state = (config.status.as_ref())
            .and_then(|s| Versioning::parse(s.as_str()))
            .ok_or_else(|| {
                s3_error!(
                    IllegalVersioningConfigurationException,
                    "The versioning status must be Enabled or Suspended"
                )
            })?;
        match self.store.set_versioning(&input.bucket, dir.as_fd(), state) {
            Ok(()) => Ok(S3Response::new(PutBucketVersioningOutput::default())),
            Err(e) if e.kind() == io::ErrorKind::Unsupported => Err(s3_error!(
                NotImplemented,
                "the gateway's file system keeps no extended attributes: versioning cannot be recorded"
            )),
            Err(e) => Err(io_error(e)),
        }
    }

    /// ListObjectVersions, on a blocking thread: a directory read may take a while.
    pub(super) async fn list_object_versions_at(
        &self,
        req: S3Request<ListObjectVersionsInput>,
    ) -> S3Result<S3Response<ListObjectVersionsOutput>> {
        let input = req.input;
        if input.version_id_marker.is_some() && input.key_marker.is_none() {
            return Err(s3_error!(
                InvalidArgument,
                "A version-id marker cannot be specified without a key marker."
            ));
        }
        let dir = self.bucket(&input.bucket)?;
        let gateway = self.clone();
        tokio::task::spawn_blocking(move || gateway.versions_page(dir, input))
            .await
            .map_err(|e| s3_error!(InternalError, "listing failed: {e}"))?
            .map(S3Response::new)
    }

    fn versions_page(
        &self,
        dir: OwnedFd,
        input: ListObjectVersionsInput,
    ) -> S3Result<ListObjectVersionsOutput> {
        let bucket = input.bucket.as_str();
        let prefix = input.prefix.clone().unwrap_or_default();
        let delimiter = input.delimiter.as_deref();
        let max = input.max_keys.unwrap_or(1000).clamp(0, 1000) as usize;
        let mut page = Listing::new(max);
        let after = input.key_marker.as_deref();
        if let (Some(key), Some(marker)) = (after, input.version_id_marker.as_deref()) {
            // The rest of the marker's key: its versions older than the marker.
            let versions = self.key_versions(dir.as_fd(), bucket, key, None)?;
            page.add_key(key, &versions, older_than(&versions, marker)?);
        }
        let store = &self.store;
        let current = store.walk(dir.as_fd(), &prefix, delimiter, after);
        let kept_root = store.kept_root(bucket).map_err(io_error)?;
        let kept = KeptWalk::new(kept_root, &prefix, delimiter, after);
        let mut merged = Merged::new(current.map_err(io_error)?, kept.map_err(io_error)?)?;
        while !page.is_full() {
            match merged.next().map_err(io_error)? {
                None => break,
                Some(Listed::Prefix(p)) => page.add_prefix(p),
                Some(Listed::Key(key, kept)) => {
                    let versions = self.key_versions(dir.as_fd(), bucket, &key, kept)?;
                    page.add_key(&key, &versions, 0);
                }
            }
        }
        // S3 answers max-keys=0 with an empty page that is not truncated.
        let more = page.cut || (page.is_full() && merged.next().map_err(io_error)?.is_some());
        let truncated = max > 0 && more;
        Ok(page.output(input, prefix, truncated))
    }

    /// One key's versions for a listing, as S3 lists them.
    fn key_versions(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        kept: Option<Vec<Name>>,
    ) -> S3Result<Vec<Entry>> {
        let versions = (self.store.key_versions(dir, bucket, key, kept)).map_err(store_error)?;
        let mut out = Vec::with_capacity(versions.len());
        for (name, object) in versions {
            out.push(match object {
                None => Entry::Marker(name),
                Some(object) => {
                    let etag = load_etag(&object.file).map_err(io_error)?;
                    let uploader = Grants::owner_of(&object.file);
                    Entry::Data(name, object, etag, uploader)
                }
            });
        }
        Ok(out)
    }
}

/// Where a listing resumes in the versions of its marker's key (newest first): after the
/// version named, or after those at least as new when it is gone.
fn older_than(versions: &[Entry], marker: &str) -> S3Result<usize> {
    let id = VersionId::parse(marker)
        .ok_or_else(|| s3_error!(InvalidArgument, "Invalid version id specified"))?;
    let names = || versions.iter().map(Entry::name);
    if let Some(at) = names().position(|n| n.is(&id)) {
        return Ok(at + 1);
    }
    Ok(match id {
        VersionId::Stamp(stamp) => names().position(|n| n.stamp < stamp),
        VersionId::Null => None,
    }
    .unwrap_or(versions.len()))
}

/// One version of a listed key: a delete marker, or bytes with their ETag and uploader.
enum Entry {
    Marker(Name),
    Data(Name, Object, String, Option<String>),
}

impl Entry {
    fn name(&self) -> &Name {
        match self {
            Entry::Marker(name) | Entry::Data(name, ..) => name,
        }
    }
}

/// What the merged walks list: a key (with its versions kept aside when they are known) or
/// a common prefix.
enum Listed {
    Key(String, Option<Vec<Name>>),
    Prefix(String),
}

/// The current versions' walk and the kept versions' walk merged in key order.
struct Merged<'a> {
    current: crate::store::walk::Walk<'a>,
    kept: KeptWalk,
    next_current: Option<Found>,
    next_kept: Option<Kept>,
}

impl<'a> Merged<'a> {
    fn new(mut current: crate::store::walk::Walk<'a>, mut kept: KeptWalk) -> S3Result<Merged<'a>> {
        let next_current = current.next_found().map_err(io_error)?;
        let next_kept = kept.next_kept().map_err(io_error)?;
        Ok(Merged {
            current,
            kept,
            next_current,
            next_kept,
        })
    }

    fn next(&mut self) -> io::Result<Option<Listed>> {
        let order = match (&self.next_current, &self.next_kept) {
            (None, None) => return Ok(None),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(c), Some(k)) => found_text(c).cmp(kept_text(k)),
        };
        let current = if order.is_le() {
            std::mem::replace(&mut self.next_current, self.current.next_found()?)
        } else {
            None
        };
        let kept = if order.is_ge() {
            std::mem::replace(&mut self.next_kept, self.kept.next_kept()?)
        } else {
            None
        };
        Ok(Some(match (current, kept) {
            (Some(Found::Prefix(p)), _) | (_, Some(Kept::Prefix(p))) => Listed::Prefix(p),
            (_, Some(Kept::Key(key, names))) => Listed::Key(key, Some(names)),
            (Some(Found::Object(key)), None) => Listed::Key(key, Some(Vec::new())),
            (None, None) => unreachable!("one of the walks had the next entry"),
        }))
    }
}

fn found_text(f: &Found) -> &str {
    match f {
        Found::Object(k) | Found::Prefix(k) => k,
    }
}

fn kept_text(k: &Kept) -> &str {
    match k {
        Kept::Key(k, _) | Kept::Prefix(k) => k,
    }
}

/// A page of versions being filled: at most `max` versions, delete markers and prefixes.
struct Listing {
    max: usize,
    versions: Vec<ObjectVersion>,
    markers: Vec<DeleteMarkerEntry>,
    prefixes: Vec<CommonPrefix>,
    /// The last key (and version) listed: where the next page starts.
    last: Option<(String, Option<String>)>,
    /// A version was left out for want of room.
    cut: bool,
}

impl Listing {
    fn new(max: usize) -> Listing {
        Listing {
            max,
            versions: Vec::new(),
            markers: Vec::new(),
            prefixes: Vec::new(),
            last: None,
            cut: false,
        }
    }

    fn is_full(&self) -> bool {
        self.cut || self.versions.len() + self.markers.len() + self.prefixes.len() >= self.max
    }

    fn add_prefix(&mut self, prefix: String) {
        self.prefixes.push(CommonPrefix {
            prefix: Some(prefix.clone()),
        });
        self.last = Some((prefix, None));
    }

    /// Lists `key`'s versions from the `skip`th (the first is the latest).
    fn add_key(&mut self, key: &str, versions: &[Entry], skip: usize) {
        for (i, entry) in versions.iter().enumerate().skip(skip) {
            if self.is_full() {
                self.cut = true;
                return;
            }
            let name = entry.name();
            let (version_id, is_latest) = (Some(name.version_id()), Some(i == 0));
            match entry {
                Entry::Marker(_) => self.markers.push(DeleteMarkerEntry {
                    key: Some(key.to_string()),
                    version_id: version_id.clone(),
                    is_latest,
                    last_modified: Some(Timestamp::from(name.made())),
                    owner: Some(owner()),
                }),
                Entry::Data(_, object, etag, uploader) => self.versions.push(ObjectVersion {
                    key: Some(key.to_string()),
                    version_id: version_id.clone(),
                    is_latest,
                    last_modified: Some(Timestamp::from(object.modified)),
                    e_tag: Some(quoted(etag)),
                    size: Some(object.len as i64),
                    storage_class: Some(ObjectVersionStorageClass::from_static(
                        ObjectVersionStorageClass::STANDARD,
                    )),
                    owner: Some(uploader.clone().map_or_else(owner, |name| Owner {
                        display_name: Some(name.clone()),
                        id: Some(name),
                    })),
                    ..Default::default()
                }),
            }
            self.last = Some((key.to_string(), version_id));
        }
    }

    fn output(
        self,
        input: ListObjectVersionsInput,
        prefix: String,
        truncated: bool,
    ) -> ListObjectVersionsOutput {
        let url = (input.encoding_type.as_ref()).is_some_and(|e| e.as_str() == EncodingType::URL);
        let enc = |text: String| if url { url_encoded(&text) } else { text };
        let mut versions = self.versions;
        let mut markers = self.markers;
        let mut prefixes = self.prefixes;
        if url {
            versions
                .iter_mut()
                .for_each(|v| v.key = v.key.take().map(enc));
            markers
                .iter_mut()
                .for_each(|m| m.key = m.key.take().map(enc));
            prefixes
                .iter_mut()
                .for_each(|p| p.prefix = p.prefix.take().map(enc));
        }
        let (next_key, next_version) = match self.last.filter(|_| truncated) {
            Some((key, version)) => (Some(enc(key)), version),
            None => (None, None),
        };
        ListObjectVersionsOutput {
            name: Some(input.bucket),
            prefix: Some(enc(prefix)),
            delimiter: input.delimiter.map(enc),
            key_marker: input.key_marker.map(enc),
            version_id_marker: input.version_id_marker,
            max_keys: Some(self.max as i32),
            is_truncated: Some(truncated),
            next_key_marker: next_key,
            next_version_id_marker: next_version,
            versions: Some(versions),
            delete_markers: Some(markers),
            common_prefixes: Some(prefixes),
            encoding_type: input.encoding_type,
            ..Default::default()
        }
    }
}
