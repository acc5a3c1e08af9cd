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

/// This gateway's mark in the names of the uploads it claims: `<host>-<pid>`.
fn claimer() -> &'static str {
    static ME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ME.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most buf.len() bytes into buf.
        unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        format!(
            "{}-{}",
            String::from_utf8_lossy(&buf[..end]),
            std::process::id()
        )
    })
}

/// Takes an upload of the bucket whose uploads are in `uploads` for completion: only one caller
/// gets it; the others, and any later call for this id, find no upload. Returns the claimed
/// directory's name.
pub fn claim(uploads: BorrowedFd<'_>, id: &str) -> Result<String, StoreError> {
    let claimed = format!(
        "{id}{CLAIMED}{}-{}",
        claimer(),
        CLAIMS.fetch_add(1, Ordering::Relaxed)
    );
    match renameat(uploads, id, uploads, claimed.as_str()) {
        Ok(()) => Ok(claimed),
        Err(Errno::NOENT) => Err(StoreError::NoSuchUpload),
        Err(e) => Err(e.into()),
    }
}

/// Gives a claimed upload back (its completion failed and may be tried again).
pub fn unclaim(uploads: BorrowedFd<'_>, claimed: &str, id: &str) {
    if let Ok(dir) = open_dir(uploads, claimed) {
        let _ = unlinkat(dir.as_fd(), PLAN, AtFlags::empty());
    }
    let _ = renameat(uploads, claimed, uploads, id);
}

/// The id, host and pid in claim `name` (`<id>.completing-<host>-<pid>-<n>`).
fn claim_parts(name: &str) -> Option<(&str, &str, i32)> {
    let (id, mark) = name.split_once(CLAIMED)?;
    let mut fields = mark.rsplitn(3, '-');
    let (_, pid, host) = (fields.next()?, fields.next()?, fields.next()?);
    Some((id, host, pid.parse().ok()?))
}

fn is_running(pid: i32) -> bool {
    // SAFETY: kill with signal 0 only checks whether the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

fn my_host() -> &'static str {
    claimer().rsplit_once('-').map_or("", |(host, _)| host)
}

/// Whether claim `name` was made by a gateway of this host that is no longer running (its
/// upload's id, if so). This process has only just started when it asks, so a claim bearing
/// its own pid is a dead one's too.
fn dead_claim(name: &str) -> Option<&str> {
    let (id, host, pid) = claim_parts(name)?;
    let alive = pid as u32 != std::process::id() && is_running(pid);
    (valid_id(id) && host == my_host() && !alive).then_some(id)
}

/// What a completion is about to publish: written to the claimed directory before the object
/// is made visible, so that a gateway starting after a kill can tell whether it was.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub etag: String,
    /// The file published: its device and inode.
    pub dev: u64,
    pub ino: u64,
}

impl Plan {
    /// The plan of publishing `file` with `etag`.
    pub fn of(file: &File, etag: &str) -> io::Result<Plan> {
        let st = rustix::fs::fstat(file)?;
        Ok(Plan {
            etag: etag.to_string(),
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        })
    }

    /// Whether `file` is the one this plan published.
    pub fn is(&self, file: &File) -> bool {
        Plan::of(file, &self.etag).is_ok_and(|plan| plan == *self)
    }
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

/// Records in claimed upload `dir` what its completion is about to publish.
pub fn save_plan(dir: BorrowedFd<'_>, plan: &Plan, fsync: bool) -> io::Result<()> {
    let json = serde_json::to_vec(plan).expect("serialisable");
    write_file(dir, PLAN, &json, fsync)
}

/// A completed upload, as its completion answered: kept for [`Completed::KEPT_FOR`] so that a
/// completion tried again, also after a restart, gets the same answer.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub bucket: String,
    pub key: String,
    pub initiator: Initiator,
    pub etag: String,
}

/// The records of completed uploads: `.iobm-gateway/completed/<id>`, one small file each.
#[derive(Debug)]
pub struct Completed {
    dir: OwnedFd,
    fsync: bool,
}

impl Completed {
    /// How long a completed upload is remembered.
    pub const KEPT_FOR: Duration = Duration::from_secs(15 * 60);
    const DIR: &'static str = "completed";

    /// The records kept beneath the gateway's own directory `internal`.
    pub fn open(internal: BorrowedFd<'_>, fsync: bool) -> io::Result<Completed> {
        match rustix::fs::mkdirat(internal, Self::DIR, Mode::from_bits_truncate(0o777)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Completed {
            dir: open_dir(internal, Self::DIR)?,
            fsync,
        })
    }

    /// Records upload `id` as completed.
    pub fn add(&self, id: &str, done: &Done) -> io::Result<()> {
        let json = serde_json::to_vec(done).expect("serialisable");
        // Whole or not at all: written aside, then renamed.
        let aside = format!("{id}.new");
        write_file(self.dir.as_fd(), &aside, &json, self.fsync)?;
        Ok(renameat(
            self.dir.as_fd(),
            aside.as_str(),
            self.dir.as_fd(),
            id,
        )?)
    }

    /// The record of upload `id`, if it was completed lately.
    pub fn find(&self, id: &str) -> Option<Done> {
        if !valid_id(id) {
            return None;
        }
        read_json(self.dir.as_fd(), id).ok()
    }

    /// Forgets completions older than `age`. Returns how many.
    pub fn sweep(&self, age: Duration) -> usize {
        let Ok(list) = entries(self.dir.as_fd()) else {
            return 0;
        };
        let cutoff = SystemTime::now() - age;
        let mut removed = 0;
        for (name, _) in list {
            let old =
                rustix::fs::statat(self.dir.as_fd(), name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| {
                        SystemTime::UNIX_EPOCH + Duration::from_secs(st.st_mtime.max(0) as u64)
                            < cutoff
                    });
            if old && unlinkat(self.dir.as_fd(), name.as_str(), AtFlags::empty()).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    /// Removes the records' directory if none is left (when the gateway stops).
    pub fn remove_if_empty(&self, internal: BorrowedFd<'_>) {
        let _ = unlinkat(internal, Self::DIR, AtFlags::REMOVEDIR);
    }
}

/// What [`recover`] did with the completions that dead gateways left claimed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Their object was published: recorded as completed, their parts removed.
    pub finished: usize,
    /// Not published: given back as uploads, to be completed again (or aborted).
    pub rolled_back: usize,
}

/// The directories of the buckets' uploads, by bucket.
fn bucket_dirs(uploads: BorrowedFd<'_>) -> Vec<(String, OwnedFd)> {
    let list = entries(uploads).unwrap_or_default();
    list.into_iter()
        .filter(|(name, ty)| *ty == FileType::Directory && check_bucket_name(name).is_ok())
        .filter_map(|(name, _)| Some((name.clone(), open_dir(uploads, &name).ok()?)))
        .collect()
}

/// Finishes or rolls back the completions that gateways of this host, now dead, left claimed
/// ([`tidy`] first). `published` says whether a plan's file is the object now at its upload's
/// bucket and key.
pub fn recover(
    uploads: BorrowedFd<'_>,
    completed: &Completed,
    published: impl Fn(&UploadInfo, &Plan) -> bool,
) -> Recovered {
    tidy(uploads);
    let mut recovered = Recovered::default();
    for (bucket, dir) in bucket_dirs(uploads) {
        recover_in(dir.as_fd(), completed, &published, &mut recovered);
        forget_if_empty(uploads, &bucket);
    }
    recovered
}

/// [`recover`] in the directory of one bucket's uploads.
fn recover_in(
    uploads: BorrowedFd<'_>,
    completed: &Completed,
    published: &impl Fn(&UploadInfo, &Plan) -> bool,
    recovered: &mut Recovered,
) {
    for (name, ty) in entries(uploads).unwrap_or_default() {
        let Some(id) = dead_claim(&name).filter(|_| ty == FileType::Directory) else {
            continue;
        };
        let Ok(dir) = open_dir(uploads, &name) else {
            continue;
        };
        let info = read_info(dir.as_fd());
        let plan: Option<Plan> = read_json(dir.as_fd(), PLAN).ok();
        match (info, plan) {
            (Ok(info), Some(plan)) if published(&info, &plan) => {
                let done = Done {
                    bucket: info.bucket,
                    key: info.key,
                    initiator: info.initiator,
                    etag: plan.etag,
                };
                if completed.add(id, &done).is_ok() && remove(uploads, &name).is_ok() {
                    recovered.finished += 1;
                }
            }
            _ => {
                unclaim(uploads, &name, id);
                if open_dir(uploads, id).is_ok() {
                    recovered.rolled_back += 1;
                }
            }
        }
    }
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

#[cfg(test)]
mod tests;
