//! What every S3 operation of the gateway shares: the [`Gateway`] over the [`Store`] (the
//! caller, a bucket's directory, an object with its metadata from one descriptor, a body
//! received and hashed, Content-MD5 checked, user metadata's size). The operations themselves
//! are [`crate::s3`]'s and the modules it names.

use crate::accounts::Caller;
use crate::acl::Policy;
use crate::errors::{body_error, io_error, store_error};
use crate::hashing::Hashers;
use crate::metrics::Metrics;
use crate::store::{load_meta, Meta, Object, Store, StoreError, Temp};
use futures::StreamExt;
use s3s::auth::Credentials;
use s3s::dto::*;
use s3s::{s3_error, S3Result};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;

/// Most bytes of user metadata S3 accepts: the UTF-8 lengths of each key (without its
/// `x-amz-meta-`) and value, summed.
pub const MAX_METADATA: usize = 2048;

/// S3's `MetadataTooLarge` when user metadata is over [`MAX_METADATA`].
pub fn check_metadata_size(metadata: Option<&HashMap<String, String>>) -> S3Result<()> {
    let size: usize = metadata
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.len())
        .sum();
    if size > MAX_METADATA {
        return Err(crate::errors::metadata_too_large(format!(
            "Your metadata headers exceed the maximum allowed metadata size: {size} bytes of user \
             metadata, at most {MAX_METADATA}"
        )));
    }
    Ok(())
}

/// The gateway's S3 implementation.
#[derive(Debug, Clone)]
pub struct Gateway {
    pub store: Store,
    /// What it served and received, per bucket.
    pub metrics: Arc<Metrics>,
    /// The latest completed multipart uploads, so that a client retrying a completion that
    /// succeeded gets the same answer rather than NoSuchUpload.
    pub completed: Arc<crate::multipart::Completed>,
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
