//! The multipart-upload operations of the S3 API over [`crate::multipart`]'s directories:
//! create, upload part, list parts and uploads (paged), abort, and complete (one winner among
//! concurrent completes; a failed completion can be tried again, and one that succeeded gets
//! the same answer, also after a restart).
//!
//! An upload id is bound to its bucket, key and initiator: every call naming it is checked
//! against the three, and a mismatch is NoSuchUpload, as S3 answers, so an id learnt from a
//! listing reaches nothing elsewhere. Only the initiator sends parts and completes; the
//! initiator and the bucket's owner list parts and abort.

use crate::accounts::Caller;
use crate::errors::{io_error, store_error};
use crate::gateway::{check_content_md5, quoted, Declared, Gateway};
pub use crate::multipart::Completed;
use crate::multipart::{self, Initiator, UploadInfo};
use crate::store::{hex, Store};
use crate::tagging::stored_headers;
use md5_many::Md5State;
use s3s::auth::Credentials;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::time::{Duration, SystemTime};

impl Gateway {
    pub(crate) async fn create_multipart_upload_at(
        &self,
        req: S3Request<CreateMultipartUploadInput>,
    ) -> S3Result<S3Response<CreateMultipartUploadOutput>> {
        let input = req.input;
        self.bucket(&input.bucket)?;
        crate::store::check_key(&input.key).map_err(store_error)?;
        let info = UploadInfo {
            bucket: input.bucket.clone(),
            key: input.key.clone(),
            content_type: input.content_type,
            metadata: input.metadata.unwrap_or_default(),
            initiated_unix: multipart::now_unix(),
            headers: stored_headers!(input),
            owner: self.owner_of(&req.credentials),
            acl: self.requested_acl(
                input.acl.as_ref().map(|a| a.as_str()),
                crate::grant_headers!(input),
            )?,
            initiator: self.initiator_of(&req.credentials),
        };
        let id = multipart::create(self.store.uploads_dir(), &info).map_err(io_error)?;
        Ok(S3Response::new(CreateMultipartUploadOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(id),
            ..Default::default()
        }))
    }

    /// Who is starting an upload.
    fn initiator_of(&self, credentials: &Option<Credentials>) -> Initiator {
        match self.caller_of(credentials) {
            None => Initiator::Unknown,
            Some(Caller::Anonymous) => Initiator::Anonymous,
            Some(Caller::Account(name)) => Initiator::Account(name),
        }
    }

    /// Whether the caller owns `bucket` (on a gateway of one account, every signed caller).
    fn owns_bucket(&self, caller: &Caller, bucket: &str) -> bool {
        let Some(policy) = &self.policy else {
            return true;
        };
        policy.owns_bucket(caller, bucket)
    }

    /// Whether the caller may act on an upload of `bucket` started by `initiator`: the
    /// initiator may, and with `bucket_owner_too` the bucket's owner (who alone may act on an
    /// upload whose initiator is not known).
    fn may_act(
        &self,
        credentials: &Option<Credentials>,
        initiator: &Initiator,
        bucket: &str,
        bucket_owner_too: bool,
    ) -> bool {
        let Some(caller) = self.caller_of(credentials) else {
            return true; // a gateway without accounts
        };
        let initiated = match (initiator, &caller) {
            (Initiator::Account(a), Caller::Account(c)) => a == c,
            (Initiator::Anonymous, Caller::Anonymous) => true,
            _ => false,
        };
        initiated
            || ((bucket_owner_too || *initiator == Initiator::Unknown)
                && self.owns_bucket(&caller, bucket))
    }

    /// The upload a request names by id, bucket and key, if the caller may act on it
    /// ([`Self::may_act`]): the directory of its bucket's uploads, its own and its info;
    /// NoSuchUpload otherwise, whichever of the three differs.
    fn upload(
        &self,
        credentials: &Option<Credentials>,
        (id, bucket, key): (&str, &str, &str),
        bucket_owner_too: bool,
    ) -> S3Result<(OwnedFd, OwnedFd, UploadInfo)> {
        let uploads = multipart::of_bucket(self.store.uploads_dir(), bucket)
            .map_err(io_error)?
            .ok_or_else(|| s3_error!(NoSuchUpload))?;
        let (dir, info) = multipart::open(uploads.as_fd(), id).map_err(store_error)?;
        if info.bucket != bucket
            || info.key != key
            || !self.may_act(credentials, &info.initiator, bucket, bucket_owner_too)
        {
            return Err(s3_error!(NoSuchUpload));
        }
        Ok((uploads, dir, info))
    }

    /// The directory of an upload a part is sent to, once the part's number is checked.
    fn upload_for_part(
        &self,
        credentials: &Option<Credentials>,
        named: (&str, &str, &str),
        part_number: i32,
    ) -> S3Result<OwnedFd> {
        let (_, dir, _) = self.upload(credentials, named, false)?;
        if !(1..=10000).contains(&part_number) {
            return Err(s3_error!(InvalidArgument, "part number must be 1 to 10000"));
        }
        Ok(dir)
    }

    pub(crate) async fn upload_part_at(
        &self,
        req: S3Request<UploadPartInput>,
    ) -> S3Result<S3Response<UploadPartOutput>> {
        let input = req.input;
        let named = (&*input.upload_id, &*input.bucket, &*input.key);
        let dir = self.upload_for_part(&req.credentials, named, input.part_number)?;
        let declared = Declared::of(&req.headers, &req.trailing_headers, input.content_length)?;
        let got = self.receive(&input.bucket, input.body, declared).await?;
        check_content_md5(input.content_md5.as_deref(), &got.md5)?;
        let etag = hex(&got.md5);
        multipart::store_part(dir.as_fd(), got.temp, input.part_number, &etag)
            .map_err(store_error)?;
        let checksum = got.checksum.map(|c| c.fields()).unwrap_or_default();
        Ok(S3Response::new(UploadPartOutput {
            e_tag: Some(quoted(&etag)),
            checksum_crc32: checksum.checksum_crc32,
            checksum_crc32c: checksum.checksum_crc32c,
            checksum_crc64nvme: checksum.checksum_crc64nvme,
            checksum_sha1: checksum.checksum_sha1,
            checksum_sha256: checksum.checksum_sha256,
            ..Default::default()
        }))
    }

    /// UploadPartCopy: a part made of an object, whole or the `bytes=first-last` of
    /// `x-amz-copy-source-range`.
    pub(crate) async fn upload_part_copy_at(
        &self,
        req: S3Request<UploadPartCopyInput>,
    ) -> S3Result<S3Response<UploadPartCopyOutput>> {
        let input = req.input;
        let named = (&*input.upload_id, &*input.bucket, &*input.key);
        let dir = self.upload_for_part(&req.credentials, named, input.part_number)?;
        let (_, _, src) = self.open_source(&req.credentials, &input.copy_source)?;
        let (first, len) = match input.copy_source_range.as_deref() {
            None => (0, src.len),
            Some(range) => copy_source_range(range, src.len)?,
        };
        let temp = self.store.create_temp().map_err(io_error)?;
        // Blocking work: done on this worker thread.
        let md5 = tokio::task::block_in_place(|| copy_hashed(&src.file, first, len, &temp.file))
            .map_err(io_error)?;
        let etag = hex(&md5);
        multipart::store_part(dir.as_fd(), temp, input.part_number, &etag).map_err(store_error)?;
        self.metrics.bucket(&input.bucket).received(len);
        Ok(S3Response::new(UploadPartCopyOutput {
            copy_part_result: Some(CopyPartResult {
                e_tag: Some(quoted(&etag)),
                last_modified: Some(Timestamp::from(SystemTime::now())),
                ..Default::default()
            }),
            ..Default::default()
        }))
    }

    /// ListParts: a page of at most `max-parts` (1000 at most) parts after
    /// `part-number-marker`, with the marker of the next page when more follow.
    pub(crate) async fn list_parts_at(
        &self,
        req: S3Request<ListPartsInput>,
    ) -> S3Result<S3Response<ListPartsOutput>> {
        let input = req.input;
        let named = (&*input.upload_id, &*input.bucket, &*input.key);
        let (_, dir, info) = self.upload(&req.credentials, named, true)?;
        let max = match input.max_parts {
            None => MAX_PARTS_LISTED,
            Some(n) if n < 0 => {
                return Err(s3_error!(
                    InvalidArgument,
                    "Argument max-parts must be an integer between 0 and 2147483647"
                ))
            }
            Some(n) => n.min(MAX_PARTS_LISTED),
        };
        let after = match input.part_number_marker {
            None => 0,
            Some(n) if n < 0 => {
                return Err(s3_error!(
                    InvalidArgument,
                    "Argument part-number-marker must be an integer between 0 and 2147483647"
                ))
            }
            Some(n) => n,
        };
        let stored = multipart::parts(dir.as_fd()).map_err(io_error)?;
        let mut later = stored.into_iter().filter(|p| p.number > after).peekable();
        let page: Vec<_> = later.by_ref().take(max as usize).collect();
        let truncated = later.peek().is_some();
        let next = page.last().map(|p| p.number);
        let parts = page
            .into_iter()
            .map(|p| {
                let st = multipart::open_part(dir.as_fd(), &p).and_then(|f| f.metadata());
                Part {
                    part_number: Some(p.number),
                    e_tag: Some(quoted(&p.etag)),
                    size: st.as_ref().ok().map(|m| m.len() as i64),
                    last_modified: st.ok().and_then(|m| m.modified().ok()).map(Timestamp::from),
                    ..Default::default()
                }
            })
            .collect();
        let (initiator, owner) = shown_initiator(&info);
        Ok(S3Response::new(ListPartsOutput {
            bucket: Some(input.bucket),
            key: Some(input.key),
            upload_id: Some(input.upload_id),
            initiator: Some(initiator),
            owner: Some(owner),
            storage_class: Some(StorageClass::from_static(StorageClass::STANDARD)),
            max_parts: Some(max),
            part_number_marker: input.part_number_marker,
            next_part_number_marker: next.or(input.part_number_marker),
            parts: Some(parts),
            is_truncated: Some(truncated),
            ..Default::default()
        }))
    }

    pub(crate) async fn list_multipart_uploads_at(
        &self,
        req: S3Request<ListMultipartUploadsInput>,
    ) -> S3Result<S3Response<ListMultipartUploadsOutput>> {
        let input = req.input;
        self.bucket(&input.bucket)?;
        let prefix = input.prefix.clone().unwrap_or_default();
        let max = input.max_uploads.unwrap_or(1000).clamp(1, 1000) as usize;
        let after = (
            input.key_marker.as_deref().unwrap_or_default(),
            input.upload_id_marker.as_deref().unwrap_or_default(),
        );
        // Only this bucket's uploads are read.
        let uploads = multipart::of_bucket(self.store.uploads_dir(), &input.bucket);
        let (page, truncated) = match uploads.map_err(io_error)? {
            Some(dir) => multipart::list(dir.as_fd(), &input.bucket, &prefix, after, max)
                .map_err(io_error)?,
            None => (Vec::new(), false),
        };
        let next = page.last().filter(|_| truncated).cloned();
        let uploads = page
            .into_iter()
            .map(|(id, info)| {
                let (initiator, owner) = shown_initiator(&info);
                MultipartUpload {
                    initiator: Some(initiator),
                    owner: Some(owner),
                    storage_class: Some(StorageClass::from_static(StorageClass::STANDARD)),
                    initiated: Some(Timestamp::from(
                        SystemTime::UNIX_EPOCH + Duration::from_secs(info.initiated_unix),
                    )),
                    key: Some(info.key),
                    upload_id: Some(id),
                    ..Default::default()
                }
            })
            .collect();
        Ok(S3Response::new(ListMultipartUploadsOutput {
            bucket: Some(input.bucket),
            prefix: Some(prefix),
            key_marker: input.key_marker,
            upload_id_marker: input.upload_id_marker,
            max_uploads: Some(max as i32),
            next_key_marker: next.as_ref().map(|(_, info)| info.key.clone()),
            next_upload_id_marker: next.map(|(id, _)| id),
            uploads: Some(uploads),
            is_truncated: Some(truncated),
            ..Default::default()
        }))
    }

    pub(crate) async fn abort_multipart_upload_at(
        &self,
        req: S3Request<AbortMultipartUploadInput>,
    ) -> S3Result<S3Response<AbortMultipartUploadOutput>> {
        let input = &req.input;
        let named = (&*input.upload_id, &*input.bucket, &*input.key);
        let (uploads, _, _) = self.upload(&req.credentials, named, true)?;
        match multipart::remove(uploads.as_fd(), &input.upload_id) {
            Ok(()) => {
                multipart::forget_if_empty(self.store.uploads_dir(), &input.bucket);
                Ok(S3Response::new(AbortMultipartUploadOutput::default()))
            }
            // Completed or aborted by another request meanwhile.
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(s3_error!(NoSuchUpload)),
            Err(e) => Err(io_error(e)),
        }
    }
}

/// Finishes or rolls back the completions that gateways killed on this host left claimed
/// ([`multipart::recover`]): one whose planned file is the object now at its key is recorded
/// as completed, the others are uploads again.
/// What a stop left of deleted buckets' uploads is removed meanwhile ([`discarded`]).
pub(crate) fn recover(store: &Store, completed: &Completed) -> multipart::Recovered {
    discarded(store, None);
    multipart::recover(store.uploads_dir(), completed, |info, plan| {
        let Ok(dir) = store.open_bucket(&info.bucket) else {
            return false;
        };
        store
            .open_object(dir.as_fd(), &info.bucket, &info.key)
            .is_ok_and(|object| plan.is(&object.file))
    })
}

/// Removes the uploads that DeleteBucket renamed aside to `name` ([`multipart::discard`]), or
/// with `None` all that a stop left, on a thread of their own: a deleted bucket's answer does
/// not wait for them, nor does a stop (the next start finishes).
pub(crate) fn discarded(store: &Store, name: Option<String>) {
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        let uploads = store.uploads_dir();
        match name {
            Some(name) => drop(multipart::remove_discarded(uploads, &name)),
            None => drop(multipart::remove_all_discarded(uploads)),
        }
    });
}

/// Most parts one ListParts answer lists (as S3).
const MAX_PARTS_LISTED: i32 = 1000;

/// An upload's initiator and the owner of the object it makes, as S3 lists them.
fn shown_initiator(info: &UploadInfo) -> (s3s::dto::Initiator, Owner) {
    let name = match &info.initiator {
        Initiator::Account(name) => name.as_str(),
        Initiator::Anonymous => "anonymous",
        Initiator::Unknown => crate::accounts::SINGLE,
    };
    let owner = info.owner.as_deref().unwrap_or(name);
    (
        s3s::dto::Initiator {
            display_name: Some(name.to_string()),
            id: Some(name.to_string()),
        },
        Owner {
            display_name: Some(owner.to_string()),
            id: Some(owner.to_string()),
        },
    )
}

/// The first byte and length that `x-amz-copy-source-range` (`bytes=first-last`, both
/// inclusive and given) names in an object of `size` bytes; S3's `InvalidArgument` otherwise.
fn copy_source_range(range: &str, size: u64) -> S3Result<(u64, u64)> {
    let parsed = range
        .strip_prefix("bytes=")
        .and_then(|r| r.split_once('-'))
        .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)));
    let Some((first, last)) = parsed else {
        return Err(s3_error!(
            InvalidArgument,
            "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"
        ));
    };
    if first > last || last >= size {
        return Err(s3_error!(
            InvalidArgument,
            "Range specified is not valid for source object of size: {size}"
        ));
    }
    Ok((first, last - first + 1))
}

/// Copies `len` bytes of `from` at `first` to the start of `to`, returning their MD5.
fn copy_hashed(from: &File, first: u64, len: u64, to: &File) -> io::Result<[u8; 16]> {
    let mut md5 = Md5State::new();
    let mut buf = vec![0u8; len.clamp(1, 1 << 20) as usize];
    let mut done = 0;
    while done < len {
        let want = buf.len().min((len - done) as usize);
        let n = from.read_at(&mut buf[..want], first + done)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the source object shrank",
            ));
        }
        md5.update(&buf[..n]);
        to.write_all_at(&buf[..n], done)?;
        done += n as u64;
    }
    Ok(md5.finalize())
}

mod complete;

#[cfg(test)]
mod tests {
    use super::copy_source_range;

    #[test]
    fn copy_source_ranges_are_checked() {
        assert_eq!(copy_source_range("bytes=0-9", 10).unwrap(), (0, 10));
        assert_eq!(copy_source_range("bytes=5-5", 10).unwrap(), (5, 1));
        for bad in [
            "bytes=0-10",
            "bytes=6-5",
            "bytes=-5",
            "bytes=5-",
            "0-5",
            "bytes=a-b",
        ] {
            assert!(copy_source_range(bad, 10).is_err(), "{bad}");
        }
    }
}
