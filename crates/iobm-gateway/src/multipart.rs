//! Multipart uploads on disk: one directory per upload under its bucket's,
//! `.iobm-gateway/uploads/<bucket>/<id>`, with its `upload.json` and one file per part
//! (`part.NNNNN.<etag>`), so that nothing done for one bucket reads another's uploads. A
//! bucket's directory goes when its last upload does, and all at once when the bucket is
//! deleted ([`discard`]: renamed aside, then removed). Completion claims the upload by renaming
//! its directory, so of concurrent completes one wins and the others find no upload; listings
//! are paged; uploads older than a limit can be swept away. The files kept here are opened
//! without following a link or waiting on a FIFO, and must be regular files ([`open_file`]).
//!
//! A completion survives a kill: before its object is published the claimed directory gets a
//! `plan.json` naming the file about to be published, and once it is published a record of it
//! goes to `.iobm-gateway/completed/<id>` ([`Completed`]) before the directory is removed. A
//! gateway starting over the directory ([`recover`]) finishes the claims of dead gateways
//! whose object was published and gives the others back as uploads, so a retried completion
//! answers as the first would have; it also removes what a stop left of deleted buckets'
//! uploads, and moves uploads that earlier gateways kept in `.iobm-gateway/uploads/<id>` into
//! their bucket's directory.

use crate::store::{check_bucket_name, entries, remove_flat_dir, StoreError, Temp};
pub use completion::{claim, recover, save_plan, unclaim, Completed, Done, Plan, Recovered};
use completion::{claim_parts, claimer, is_running, my_host};
use rustix::fs::{fstat, mkdirat, openat, renameat, unlinkat, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

const INFO: &str = "upload.json";
/// In a claimed upload: the file its completion publishes ([`Plan`]).
const PLAN: &str = "plan.json";
/// Marks a claimed upload's directory name: `<id>.completing-<host>-<pid>-<n>`.
const CLAIMED: &str = ".completing-";
/// Begins the name a deleted bucket's uploads are renamed to before they are removed
/// (`.discarded-<host>-<pid>-<n>`: no bucket's name begins with a dot).
const DISCARDED: &str = ".discarded-";
/// How often making an upload's directory is tried again when its bucket's directory, empty,
/// was removed meanwhile.
const RACE_RETRIES: usize = 16;

/// Who started an upload: only they may send its parts and complete it; they and the
/// bucket's owner may list its parts and abort it.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq)]
pub enum Initiator {
    /// Not known: started on a gateway without accounts (or recorded before initiators
    /// were). On a gateway with accounts only the bucket's owner may act on it.
    #[default]
    Unknown,
    /// An unsigned request (through a bucket whose ACL lets anyone write).
    Anonymous,
    /// A signed request of this account.
    Account(String),
}

/// The bucket, key and metadata of a multipart upload, kept in its directory.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct UploadInfo {
    pub bucket: String,
    pub key: String,
    pub content_type: Option<String>,
    pub metadata: HashMap<String, String>,
    pub initiated_unix: u64,
    /// The standard headers the object will keep.
    #[serde(default)]
    pub headers: crate::meta::StoredHeaders,
    /// The completed object's owner (with `--users`) and canned ACL.
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub acl: Option<String>,
    #[serde(default)]
    pub initiator: Initiator,
}

/// One stored part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPart {
    pub number: i32,
    pub etag: String,
    pub file_name: String,
}

/// An upload id is 16 hex digits; nothing else in the uploads directory is one.
fn valid_id(id: &str) -> bool {
    id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn open_dir(parent: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    openat(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens file `name` of `dir` with `flags`, never through a link and never waiting (a FIFO
/// planted there has no writer to wait for): a regular file, else an error.
pub fn open_file(dir: BorrowedFd<'_>, name: &str, flags: OFlags, mode: Mode) -> io::Result<File> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = openat(dir, name, flags, mode)?;
    if FileType::from_raw_mode(fstat(&fd)?.st_mode) != FileType::RegularFile {
        return Err(io::Error::other(format!("{name} is not a regular file")));
    }
    Ok(File::from(fd))
}

fn read_info(dir: BorrowedFd<'_>) -> io::Result<UploadInfo> {
    read_json(dir, INFO)
}

/// The directory of `bucket`'s uploads, if it has any.
pub fn of_bucket(uploads: BorrowedFd<'_>, bucket: &str) -> io::Result<Option<OwnedFd>> {
    if check_bucket_name(bucket).is_err() {
        return Ok(None);
    }
    match open_dir(uploads, bucket) {
        Ok(dir) => Ok(Some(dir)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The directory of `bucket`'s uploads, made if needed.
fn bucket_dir(uploads: BorrowedFd<'_>, bucket: &str) -> io::Result<OwnedFd> {
    check_bucket_name(bucket).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    match mkdirat(uploads, bucket, Mode::from_bits_truncate(0o777)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(open_dir(uploads, bucket)?)
}

/// Removes the directory of `bucket`'s uploads if it holds none.
pub fn forget_if_empty(uploads: BorrowedFd<'_>, bucket: &str) {
    if check_bucket_name(bucket).is_ok() {
        let _ = unlinkat(uploads, bucket, AtFlags::REMOVEDIR);
    }
}

/// Starts an upload of `info.bucket`: a new directory with its info. Returns the id.
pub fn create(uploads: BorrowedFd<'_>, info: &UploadInfo) -> io::Result<String> {
    let mut bytes = [0u8; 8];
    File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes))?;
    let id = format!("{:016x}", u64::from_le_bytes(bytes));
    let mut tries = 0;
    let bucket = loop {
        let bucket = bucket_dir(uploads, &info.bucket)?;
        match mkdirat(&bucket, id.as_str(), Mode::from_bits_truncate(0o777)) {
            // Its last upload went meanwhile, and the bucket's directory with it.
            Err(Errno::NOENT) if tries < RACE_RETRIES => tries += 1,
            made => break made.map(|()| bucket)?,
        }
    };
    let dir = open_dir(bucket.as_fd(), &id)?;
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
    let mut file = open_file(dir.as_fd(), INFO, flags, Mode::from_bits_truncate(0o666))?;
    let json = serde_json::to_vec(info).expect("serialisable");
    io::Write::write_all(&mut file, &json)?;
    Ok(id)
}

/// An upload's directory and info, if it exists in the directory of its bucket's uploads (and
/// is not being completed).
pub fn open(bucket: BorrowedFd<'_>, id: &str) -> Result<(OwnedFd, UploadInfo), StoreError> {
    if !valid_id(id) {
        return Err(StoreError::NoSuchUpload);
    }
    let dir = open_dir(bucket, id).map_err(|e| match e {
        Errno::NOENT | Errno::NOTDIR | Errno::LOOP => StoreError::NoSuchUpload,
        e => e.into(),
    })?;
    let info = read_info(dir.as_fd()).map_err(|_| StoreError::NoSuchUpload)?;
    Ok((dir, info))
}

fn part_prefix(number: i32) -> String {
    format!("part.{number:05}.")
}

/// Stores a part (replacing one uploaded before with the same number).
pub fn store_part(
    dir: BorrowedFd<'_>,
    mut temp: Temp,
    number: i32,
    etag: &str,
) -> Result<(), StoreError> {
    let prefix = part_prefix(number);
    for (name, _) in entries(dir)? {
        if name.starts_with(&prefix) {
            let _ = rustix::fs::unlinkat(dir, name.as_str(), rustix::fs::AtFlags::empty());
        }
    }
    temp.place_in(dir, &format!("{prefix}{etag}"))?;
    Ok(())
}

/// The parts of an upload, by number.
pub fn parts(dir: BorrowedFd<'_>) -> io::Result<Vec<StoredPart>> {
    let mut parts = Vec::new();
    for (name, ty) in entries(dir)? {
        if ty != FileType::RegularFile {
            continue;
        }
        let mut fields = name.splitn(3, '.');
        if fields.next() != Some("part") {
            continue;
        }
        let (Some(n), Some(etag)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let Ok(number) = n.parse::<i32>() {
            parts.push(StoredPart {
                number,
                etag: etag.to_string(),
                file_name: name.clone(),
            });
        }
    }
    parts.sort_by(|a, b| (a.number, &a.etag).cmp(&(b.number, &b.etag)));
    Ok(parts)
}

pub fn open_part(dir: BorrowedFd<'_>, part: &StoredPart) -> io::Result<File> {
    open_file(dir, &part.file_name, OFlags::RDONLY, Mode::empty())
}

static CLAIMS: AtomicU64 = AtomicU64::new(0);

/// The bytes a stored part holds.
pub fn part_len(dir: BorrowedFd<'_>, part: &StoredPart) -> io::Result<u64> {
    let stat = rustix::fs::statat(
        dir,
        part.file_name.as_str(),
        rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
    )?;
    Ok(stat.st_size as u64)
}

/// Writes `bytes` to a new file `name` of `dir` (replacing one there), synced with `fsync`.
fn write_file(dir: BorrowedFd<'_>, name: &str, bytes: &[u8], fsync: bool) -> io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
    let mut file = open_file(dir, name, flags, Mode::from_bits_truncate(0o666))?;
    io::Write::write_all(&mut file, bytes)?;
    if fsync {
        file.sync_all()?;
    }
    Ok(())
}

fn read_json<T: for<'de> Deserialize<'de>>(dir: BorrowedFd<'_>, name: &str) -> io::Result<T> {
    let mut file = open_file(dir, name, OFlags::RDONLY, Mode::empty())?;
    let mut text = Vec::new();
    io::Read::read_to_end(&mut file, &mut text)?;
    serde_json::from_slice(&text).map_err(io::Error::other)
}

/// The directories of the buckets' uploads, by bucket.
fn bucket_dirs(uploads: BorrowedFd<'_>) -> Vec<(String, OwnedFd)> {
    let list = entries(uploads).unwrap_or_default();
    list.into_iter()
        .filter(|(name, ty)| *ty == FileType::Directory && check_bucket_name(name).is_ok())
        .filter_map(|(name, _)| Some((name.clone(), open_dir(uploads, &name).ok()?)))
        .collect()
}

/// Moves the uploads that earlier gateways kept directly in the uploads directory (`<id>/` or
/// a claim, with its `upload.json`; a bucket's directory has none) into their bucket's
/// directory.
fn tidy(uploads: BorrowedFd<'_>) {
    for (name, ty) in entries(uploads).unwrap_or_default() {
        if ty != FileType::Directory || !valid_id(name.split(CLAIMED).next().unwrap_or_default()) {
            continue;
        }
        let info = open_dir(uploads, &name).map_err(io::Error::from);
        let Ok(info) = info.and_then(|dir| read_info(dir.as_fd())) else {
            continue;
        };
        if let Ok(bucket) = bucket_dir(uploads, &info.bucket) {
            let _ = renameat(uploads, name.as_str(), &bucket, name.as_str());
        }
    }
}

/// Takes every upload of a deleted `bucket` away at once (renamed aside, so that a bucket made
/// again under the name has none); returns the name to give [`remove_discarded`], if there
/// were any.
pub fn discard(uploads: BorrowedFd<'_>, bucket: &str) -> io::Result<Option<String>> {
    if check_bucket_name(bucket).is_err() {
        return Ok(None);
    }
    let aside = format!(
        "{DISCARDED}{}-{}",
        claimer(),
        CLAIMS.fetch_add(1, Ordering::Relaxed)
    );
    match renameat(uploads, bucket, uploads, aside.as_str()) {
        Ok(()) => Ok(Some(aside)),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Removes uploads that [`discard`] renamed aside to `name`.
pub fn remove_discarded(uploads: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let dir = open_dir(uploads, name)?;
    for (upload, _) in entries(dir.as_fd())? {
        let _ = remove(dir.as_fd(), &upload);
    }
    Ok(unlinkat(uploads, name, AtFlags::REMOVEDIR)?)
}

/// Removes every upload that [`discard`] renamed aside (what a stop left of their removal, at a
/// start). Returns how many buckets' uploads.
pub fn remove_all_discarded(uploads: BorrowedFd<'_>) -> usize {
    let list = entries(uploads).unwrap_or_default();
    list.iter()
        .filter(|(name, _)| name.starts_with(DISCARDED))
        .filter(|(name, _)| remove_discarded(uploads, name).is_ok())
        .count()
}

/// Removes an upload's directory (by id or claimed name) and its parts from the directory of
/// its bucket's uploads.
pub fn remove(uploads: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    remove_flat_dir(uploads, name)
}

/// One page of the uploads of `bucket` (in `uploads`, the directory of its uploads) whose keys
/// start with `prefix`, in (key, id) order, after the markers; the flag says whether more
/// follow.
pub fn list(
    uploads: BorrowedFd<'_>,
    bucket: &str,
    prefix: &str,
    after: (&str, &str),
    max: usize,
) -> io::Result<(Vec<(String, UploadInfo)>, bool)> {
    let mut all = Vec::new();
    for (name, ty) in entries(uploads)? {
        if ty != FileType::Directory || !valid_id(&name) {
            continue;
        }
        let Ok(dir) = open_dir(uploads, &name) else {
            continue;
        };
        let Ok(info) = read_info(dir.as_fd()) else {
            continue;
        };
        if info.bucket == bucket && info.key.starts_with(prefix) {
            all.push((name, info));
        }
    }
    all.sort_by(|a, b| (&a.1.key, &a.0).cmp(&(&b.1.key, &b.0)));
    let (key_marker, id_marker) = after;
    let page: Vec<_> = all
        .into_iter()
        .filter(|(id, info)| {
            key_marker.is_empty()
                || info.key.as_str() > key_marker
                || (info.key == key_marker && !id_marker.is_empty() && id.as_str() > id_marker)
        })
        .take(max + 1)
        .collect();
    let truncated = page.len() > max;
    let mut page = page;
    page.truncate(max);
    Ok((page, truncated))
}

/// Removes uploads (and interrupted completions) started more than `age` ago. Returns how many.
pub fn sweep(uploads: BorrowedFd<'_>, age: Duration) -> usize {
    let cutoff = now_unix().saturating_sub(age.as_secs());
    let mut removed = 0;
    for (bucket, dir) in bucket_dirs(uploads) {
        removed += sweep_in(dir.as_fd(), cutoff);
        forget_if_empty(uploads, &bucket);
    }
    removed
}

/// [`sweep`] in the directory of one bucket's uploads, of uploads started before `cutoff`.
fn sweep_in(uploads: BorrowedFd<'_>, cutoff: u64) -> usize {
    let mut removed = 0;
    for (name, ty) in entries(uploads).unwrap_or_default() {
        let id = name.split(CLAIMED).next().unwrap_or_default();
        if ty != FileType::Directory || !valid_id(id) {
            continue;
        }
        // A completion under way on this host is left to finish.
        if claim_parts(&name).is_some_and(|(_, host, pid)| host == my_host() && is_running(pid)) {
            continue;
        }
        let Ok(dir) = open_dir(uploads, &name) else {
            continue;
        };
        let started = read_info(dir.as_fd()).map_or(0, |i| i.initiated_unix);
        if started < cutoff && remove(uploads, &name).is_ok() {
            removed += 1;
        }
    }
    removed
}

mod completion;
#[cfg(test)]
mod tests;
