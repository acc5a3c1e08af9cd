//! Multipart uploads on disk: one directory per upload under `.iobm-gateway/uploads/<id>` with
//! its `upload.json` and one file per part (`part.NNNNN.<etag>`). Completion claims the upload
//! by renaming its directory, so of concurrent completes one wins and the others find no
//! upload; listings are paged; uploads older than a limit can be swept away.

use crate::store::{entries, remove_flat_dir, StoreError, Temp};
use rustix::fs::{openat, renameat, FileType, Mode, OFlags};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

const INFO: &str = "upload.json";
/// Marks a claimed upload's directory name: `<id>.completing-<pid>-<n>`.
const CLAIMED: &str = ".completing-";

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
    /// Who started the upload (with `--users`) and the object's canned ACL.
    #[serde(default)]
    pub owner: Option<String>,
    #[serde(default)]
    pub acl: Option<String>,
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

fn read_info(dir: BorrowedFd<'_>) -> io::Result<UploadInfo> {
    let fd = openat(
        dir,
        INFO,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut text = Vec::new();
    io::Read::read_to_end(&mut File::from(fd), &mut text)?;
    serde_json::from_slice(&text).map_err(io::Error::other)
}

/// Starts an upload: a new directory with its info. Returns the id.
pub fn create(uploads: BorrowedFd<'_>, info: &UploadInfo) -> io::Result<String> {
    let mut bytes = [0u8; 8];
    File::open("/dev/urandom").and_then(|mut f| io::Read::read_exact(&mut f, &mut bytes))?;
    let id = format!("{:016x}", u64::from_le_bytes(bytes));
    rustix::fs::mkdirat(uploads, id.as_str(), Mode::from_bits_truncate(0o777))?;
    let dir = open_dir(uploads, &id)?;
    let fd = openat(
        dir.as_fd(),
        INFO,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o666),
    )?;
    let json = serde_json::to_vec(info).expect("serialisable");
    io::Write::write_all(&mut File::from(fd), &json)?;
    Ok(id)
}

/// An upload's directory and info, if it exists (and is not being completed).
pub fn open(uploads: BorrowedFd<'_>, id: &str) -> Result<(OwnedFd, UploadInfo), StoreError> {
    if !valid_id(id) {
        return Err(StoreError::NoSuchUpload);
    }
    let dir = open_dir(uploads, id).map_err(|e| match e {
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
    let fd = openat(
        dir,
        part.file_name.as_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(File::from(fd))
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

/// Takes an upload for completion: only one caller gets it; the others, and any later call for
/// this id, find no upload. Returns the claimed directory's name.
pub fn claim(uploads: BorrowedFd<'_>, id: &str) -> Result<String, StoreError> {
    let claimed = format!(
        "{id}{CLAIMED}{}-{}",
        std::process::id(),
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
    let _ = renameat(uploads, claimed, uploads, id);
}

/// Removes an upload's directory (by id or claimed name) and its parts.
pub fn remove(uploads: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    remove_flat_dir(uploads, name)
}

/// One page of the uploads of `bucket` whose keys start with `prefix`, in (key, id) order,
/// after the markers; the flag says whether more follow.
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
    let Ok(list) = entries(uploads) else {
        return 0;
    };
    let cutoff = now_unix().saturating_sub(age.as_secs());
    let mut removed = 0;
    for (name, ty) in list {
        let id = name.split(CLAIMED).next().unwrap_or_default();
        if ty != FileType::Directory || !valid_id(id) {
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
mod tests {
    use super::*;
    use crate::store::Store;

    fn info(key: &str, initiated_unix: u64) -> UploadInfo {
        UploadInfo {
            bucket: "b".into(),
            key: key.into(),
            content_type: None,
            metadata: HashMap::new(),
            initiated_unix,
            headers: Default::default(),
            owner: None,
            acl: None,
        }
    }

    #[test]
    fn one_claim_wins_and_a_failed_completion_can_be_retried() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path(), false).unwrap();
        let up = store.uploads_dir();
        let id = create(up, &info("k", now_unix())).unwrap();
        let claimed = claim(up, &id).unwrap();
        assert!(matches!(claim(up, &id), Err(StoreError::NoSuchUpload)));
        assert!(matches!(open(up, &id), Err(StoreError::NoSuchUpload)));
        unclaim(up, &claimed, &id);
        let (_, got) = open(up, &id).unwrap();
        assert_eq!(got.key, "k");
        let claimed = claim(up, &id).unwrap();
        remove(up, &claimed).unwrap();
        assert_eq!(entries(up).unwrap().len(), 0);
    }

    #[test]
    fn listings_page_by_key_then_id_and_old_uploads_are_swept() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path(), false).unwrap();
        let up = store.uploads_dir();
        let mut ids: Vec<(String, String)> = ["a", "b", "b", "c", "d"]
            .iter()
            .map(|k| (k.to_string(), create(up, &info(k, 1000)).unwrap()))
            .collect();
        ids.sort();
        let mut seen = Vec::new();
        let mut after = (String::new(), String::new());
        loop {
            let (page, more) = list(up, "b", "", (&after.0, &after.1), 2).unwrap();
            assert!(page.is_empty() || !more || page.len() == 2);
            seen.extend(page.iter().map(|(id, i)| (i.key.clone(), id.clone())));
            if !more {
                break;
            }
            let (id, i) = page.last().unwrap();
            after = (i.key.clone(), id.clone());
        }
        assert_eq!(seen, ids);
        let (page, _) = list(up, "b", "b", ("", ""), 10).unwrap();
        assert_eq!(page.len(), 2);
        let fresh = create(up, &info("new", now_unix())).unwrap();
        assert_eq!(sweep(up, Duration::from_secs(3600)), 5);
        assert!(open(up, &fresh).is_ok());
    }
}
