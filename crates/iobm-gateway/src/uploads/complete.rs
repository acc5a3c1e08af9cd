//! CompleteMultipartUpload: the parts listed checked against those stored, joined into one
//! object with the upload's metadata and published as a new version, the completion recorded
//! so that a retry (of the same caller, bucket and key) gets the same answer.

use crate::errors::{io_error, meta_error, store_error};
use crate::gateway::{quoted, Gateway};
use crate::meta::Grants;
use crate::multipart::{self, Done, Plan, StoredPart, UploadInfo};
use crate::store::{hex, store_meta, Meta, WriteCondition};
use md5_many::Md5State;
use s3s::dto::*;
use s3s::{s3_error, S3Request, S3Response, S3Result};
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::time::Duration;

impl Gateway {
    pub(crate) async fn complete_multipart_upload_at(
        &self,
        req: S3Request<CompleteMultipartUploadInput>,
    ) -> S3Result<S3Response<CompleteMultipartUploadOutput>> {
        let input = req.input;
        let named = (&*input.upload_id, &*input.bucket, &*input.key);
        let (uploads, dir, info) = match self.upload(&req.credentials, named, false) {
            Ok(found) => found,
            Err(e) => {
                // A completion tried again after it succeeded: the same answer, to the same
                // caller for the same bucket and key.
                let done = self.completed.find(&input.upload_id).filter(|d| {
                    d.bucket == input.bucket
                        && d.key == input.key
                        && self.may_act(&req.credentials, &d.initiator, &d.bucket, false)
                });
                return match done {
                    Some(done) => Ok(completed_output(input.bucket, input.key, &done.etag, None)),
                    None => Err(e),
                };
            }
        };
        let bucket = self.bucket(&input.bucket)?;
        // If-Match and If-None-Match: checked before any part is copied, and again as the
        // object is moved into place.
        let condition = WriteCondition::new(input.if_match.as_ref(), input.if_none_match.as_ref());
        (self.store)
            .allows(bucket.as_fd(), &input.bucket, &input.key, &condition)
            .map_err(store_error)?;
        let stored = multipart::parts(dir.as_fd()).map_err(io_error)?;
        let wanted = input
            .multipart_upload
            .and_then(|m| m.parts)
            .unwrap_or_default();
        if wanted.is_empty() {
            return Err(s3_error!(MalformedXML, "no parts listed"));
        }
        let chosen = choose_parts(dir.as_fd(), &stored, &wanted)?;
        // From here on this request owns the upload: concurrent completes find none.
        let claimed = multipart::claim(uploads.as_fd(), &input.upload_id).map_err(store_error)?;
        test_pause("claimed").await;
        let etag = chosen.etag.clone();
        let target = (bucket.as_fd(), &*input.bucket, &*input.key);
        let joined = self.join_parts(dir.as_fd(), &chosen, &info, target, &condition);
        let version_id = match joined {
            Ok(version_id) => {
                test_pause("published").await;
                let done = Done {
                    bucket: input.bucket.clone(),
                    key: input.key.clone(),
                    initiator: info.initiator.clone(),
                    etag: etag.clone(),
                };
                // Without the record (a full disk), a retry is told NoSuchUpload.
                let _ = self.completed.add(&input.upload_id, &done);
                let _ = multipart::remove(uploads.as_fd(), &claimed);
                multipart::forget_if_empty(self.store.uploads_dir(), &input.bucket);
                version_id
            }
            Err(e) => {
                multipart::unclaim(uploads.as_fd(), &claimed, &input.upload_id);
                return Err(e);
            }
        };
        Ok(completed_output(input.bucket, input.key, &etag, version_id))
    }
}

/// The parts a completion lists, found among those stored, with their sizes and the upload's
/// ETag (the MD5 of the parts' MD5s, and their count).
struct Chosen<'a> {
    parts: Vec<&'a StoredPart>,
    sizes: Vec<u64>,
    etag: String,
}

/// The stored parts a completion lists, checked as S3 checks them: in ascending order, each
/// there with the ETag given, every part but the last at least [`MIN_PART`].
fn choose_parts<'a>(
    dir: BorrowedFd<'_>,
    stored: &'a [StoredPart],
    wanted: &[CompletedPart],
) -> S3Result<Chosen<'a>> {
    let mut etags = Md5State::new();
    let mut parts = Vec::with_capacity(wanted.len());
    let mut sizes = Vec::with_capacity(wanted.len());
    let numbers: Vec<i32> = wanted.iter().map(|p| p.part_number.unwrap_or(0)).collect();
    if numbers[0] < 1 || numbers.windows(2).any(|w| w[1] <= w[0]) {
        return Err(s3_error!(InvalidPartOrder));
    }
    for (i, (part, &n)) in wanted.iter().zip(&numbers).enumerate() {
        let want_etag = part
            .e_tag
            .as_ref()
            .map(|e| e.value().trim_matches('"').to_string());
        let Some(found) = stored
            .iter()
            .find(|p| p.number == n && want_etag.as_ref().is_none_or(|w| *w == p.etag))
        else {
            return Err(s3_error!(InvalidPart));
        };
        // Every part but the last holds at least 5 MiB, as S3 requires.
        let size = multipart::part_len(dir, found).map_err(io_error)?;
        sizes.push(size);
        if i + 1 < wanted.len() && size < MIN_PART {
            return Err(s3_error!(
                EntityTooSmall,
                "part {n} holds {size} bytes; every part but the last needs 5 MiB"
            ));
        }
        let raw: Vec<u8> = (0..found.etag.len() / 2)
            .filter_map(|i| u8::from_str_radix(&found.etag[2 * i..2 * i + 2], 16).ok())
            .collect();
        etags.update(&raw);
        parts.push(found);
    }
    let etag = format!("{}-{}", hex(&etags.finalize()), wanted.len());
    Ok(Chosen { parts, sizes, etag })
}

impl Gateway {
    /// The chosen parts joined into one object with the upload's metadata, and published as
    /// `target` (the bucket's directory, the bucket and the key) if `condition` allows:
    /// the version it became, where the bucket keeps versions.
    fn join_parts(
        &self,
        dir: BorrowedFd<'_>,
        chosen: &Chosen<'_>,
        info: &UploadInfo,
        target: (BorrowedFd<'_>, &str, &str),
        condition: &WriteCondition,
    ) -> S3Result<Option<String>> {
        let mut temp = self.store.create_temp().map_err(io_error)?;
        // Concatenating gigabytes is blocking work: done on this worker thread.
        tokio::task::block_in_place(|| -> io::Result<()> {
            for part in &chosen.parts {
                io::copy(&mut multipart::open_part(dir, part)?, &mut temp.file)?;
            }
            Ok(())
        })
        .map_err(io_error)?;
        store_meta(
            &temp.file,
            &Meta {
                etag: chosen.etag.clone(),
                content_type: info.content_type.clone(),
                metadata: info.metadata.clone(),
                headers: info.headers.clone(),
                parts: chosen.sizes.clone(),
                grants: Grants {
                    owner: info.owner.clone(),
                    acl: info.acl.clone(),
                },
                version: None,
            },
        )
        .map_err(meta_error)?;
        // What is published is named first, so that a gateway started after a kill can tell
        // whether it was (`multipart::recover`).
        let plan = Plan::of(&temp.file, &chosen.etag).map_err(io_error)?;
        multipart::save_plan(dir, &plan, self.store.fsync).map_err(io_error)?;
        let (bucket_fd, bucket, key) = target;
        self.store
            .publish_version(temp, bucket_fd, bucket, key, condition)
            .map_err(store_error)
    }
}

/// Smallest part but the last of a multipart upload.
const MIN_PART: u64 = 5 << 20;

fn completed_output(
    bucket: String,
    key: String,
    etag: &str,
    version_id: Option<String>,
) -> S3Response<CompleteMultipartUploadOutput> {
    S3Response::new(CompleteMultipartUploadOutput {
        bucket: Some(bucket),
        key: Some(key),
        e_tag: Some(quoted(etag)),
        version_id,
        ..Default::default()
    })
}

/// For tests only: with `IOBM_TEST_PAUSE_COMPLETION` set to `claimed` (the upload taken,
/// nothing written) or `published` (the object visible, not yet recorded as completed), every
/// CompleteMultipartUpload waits an hour at that step, so that a test can kill the gateway
/// there (`tests/gateway/test_uploads.py`). Unset, it costs one look at a cached value.
async fn test_pause(step: &str) {
    static PAUSE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let pause = PAUSE.get_or_init(|| std::env::var("IOBM_TEST_PAUSE_COMPLETION").ok());
    if pause.as_deref() == Some(step) {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
}
