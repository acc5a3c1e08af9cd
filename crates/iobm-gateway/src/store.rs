//! The gateway's file system side: buckets are top-level directories of the root, object keys
//! map to files below them (`/` makes directories). Every open, create, rename, unlink and
//! directory walk goes through descriptors resolved beneath the root by [`crate::confine`], so
//! neither a name nor a symbolic link planted in the directory leads outside it. Objects are
//! written to a temporary file and renamed into place only when complete; their ETag, content
//! type and user metadata live in extended attributes of the file ([`crate::meta`]), read
//! through the descriptor that is served, so an object's headers always describe the bytes sent.
//! A key component longer than the file system's names is stored under a derived name
//! ([`names`]).

use crate::confine::{crossed_link, open_beneath};
pub use crate::meta::{hex, load_meta, md5_file, store_meta, Meta};
use crate::meta::{is_folder, mark_folder};
pub use conditional::{Etag, WriteCondition, WriteRefused};
pub use names::Names;
use rustix::fs::{
    fstat, mkdirat, openat, renameat, statat, unlinkat, AtFlags, Dir, FileType, Mode, OFlags,
};
use rustix::io::Errno;
use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use walk::{DirCache, Found, Walk};

/// The gateway's own directory under the root (never a bucket: bucket names cannot start with
/// a dot).
pub const INTERNAL: &str = ".iobm-gateway";
/// The directory of kept versions under [`INTERNAL`].
const VERSIONS: &str = "versions";
/// Longest key S3 accepts, in bytes.
pub const MAX_KEY: usize = 1024;
/// How often a directory creation or rename is tried again when a concurrent delete removed
/// the directory it needs meanwhile.
const RACE_RETRIES: usize = 16;

/// Why a request on the store failed.
#[derive(Debug)]
pub enum StoreError {
    InvalidBucket,
    InvalidKey,
    KeyTooLong,
    NoSuchBucket,
    NoSuchKey,
    NoSuchUpload,
    /// The path (bucket/key) crosses a symbolic link: refused, wherever it points.
    SymlinkCrossed(String),
    /// Objects exist below this key (named): a key cannot also be a prefix.
    KeyIsPrefix(String),
    /// A prefix of this key is an object (named).
    PrefixIsObject(String),
    /// A folder marker (a key ending in `/`) sent with bytes: it can hold none.
    FolderHasBytes,
    /// A conditional write's condition does not hold ([`Store::publish_if`]).
    PreconditionFailed,
    /// A version id this gateway never gives.
    InvalidVersion,
    NoSuchVersion,
    /// The version asked for is this delete marker.
    DeleteMarker(crate::versions::Name),
    Io(io::Error),
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> Self {
        StoreError::Io(e)
    }
}

impl From<Errno> for StoreError {
    fn from(e: Errno) -> Self {
        StoreError::Io(e.into())
    }
}

/// An open object: its bytes and what the descriptor says of them.
#[derive(Debug)]
pub struct Object {
    pub file: File,
    pub len: u64,
    pub modified: SystemTime,
}

/// A file being written in the gateway's temporary directory; removed when dropped unless it
/// was moved into place.
#[derive(Debug)]
pub struct Temp {
    dir: Arc<OwnedFd>,
    name: String,
    pub file: File,
    placed: bool,
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.placed {
            let _ = unlinkat(self.dir.as_fd(), self.name.as_str(), AtFlags::empty());
        }
    }
}

impl Temp {
    /// Renames the file to `name` in `dir` (the move that makes it visible).
    pub(crate) fn place_in(&mut self, dir: BorrowedFd<'_>, name: &str) -> Result<(), Errno> {
        renameat(self.dir.as_fd(), self.name.as_str(), dir, name)?;
        self.placed = true;
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct Store {
    root: PathBuf,
    root_fd: Arc<OwnedFd>,
    internal_fd: Arc<OwnedFd>,
    /// `.iobm-gateway/tmp`, and in it this instance's directory `<host>-<pid>`.
    tmp_all_fd: Arc<OwnedFd>,
    tmp_name: String,
    tmp_fd: Arc<OwnedFd>,
    uploads_fd: Arc<OwnedFd>,
    /// `.iobm-gateway/versions`: the versions buckets keep aside ([`crate::versions`]).
    versions_fd: Arc<OwnedFd>,
    /// The buckets' versioning states as last read.
    states: Arc<crate::versions::States>,
    /// Numbers this instance's temporary files, which only need to be unique in its directory.
    next_temp: Arc<AtomicU64>,
    /// Sorted directories, so that listing page N costs what page 1 costs.
    dirs: Arc<DirCache>,
    /// How key components are named on the root's file system.
    names: Names,
    pub fsync: bool,
}

/// `<host>-<pid>`: this gateway's name among others over the same directory.
pub(crate) fn host_pid() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    format!(
        "{}-{}",
        String::from_utf8_lossy(&buf[..end]),
        std::process::id()
    )
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY);

/// Opens directory `name` in `parent`, making it first if needed; never through a link.
fn ensure_dir(parent: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd> {
    match mkdirat(parent, name, Mode::from_bits_truncate(0o777)) {
        Ok(()) | Err(Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    open_beneath(parent, name, DIR_FLAGS, Mode::empty()).map_err(|e| {
        if crossed_link(&e) {
            io::Error::other(format!("{name} is a symbolic link: refusing to use it"))
        } else {
            e
        }
    })
}

/// Hands each entry of a directory (not `.` and `..`, nor names that are not UTF-8, which no
/// key names) with its type, links reported as links, to `take` until it returns false; true
/// when every entry was taken.
pub fn each_entry(
    dir: BorrowedFd<'_>,
    mut take: impl FnMut(&str, FileType) -> bool,
) -> io::Result<bool> {
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let Ok(name) = entry.file_name().to_str() else {
            continue;
        };
        if name == "." || name == ".." {
            continue;
        }
        let mut ty = entry.file_type();
        if ty == FileType::Unknown {
            ty = match statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => FileType::from_raw_mode(st.st_mode),
                Err(_) => continue,
            };
        }
        if !take(name, ty) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The entries of a directory (not `.` and `..`) with their types, links reported as links.
pub fn entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(String, FileType)>> {
    let mut out = Vec::new();
    each_entry(dir, |name, ty| {
        out.push((name.to_string(), ty));
        true
    })?;
    Ok(out)
}

/// Removes directory `name` of `parent` with the files in it (not links' targets).
pub fn remove_flat_dir(parent: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let dir = openat(
        parent,
        name,
        DIR_FLAGS | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    for (entry, ty) in entries(dir.as_fd())? {
        if ty != FileType::Directory {
            let _ = unlinkat(dir.as_fd(), entry.as_str(), AtFlags::empty());
        }
    }
    Ok(unlinkat(parent, name, AtFlags::REMOVEDIR)?)
}

/// What a failure to label a derived name answers: where the file system keeps no extended
/// attributes, a component longer than its names cannot be kept.
fn unlabelled(e: io::Error) -> StoreError {
    if e.kind() == io::ErrorKind::Unsupported {
        StoreError::KeyTooLong
    } else {
        StoreError::Io(e)
    }
}

fn is_missing(e: Errno) -> bool {
    matches!(e, Errno::NOENT | Errno::NOTDIR)
}

fn modified(st: &rustix::fs::Stat) -> SystemTime {
    SystemTime::UNIX_EPOCH
        + Duration::new(
            st.st_mtime.max(0) as u64,
            st.st_mtime_nsec.clamp(0, 999_999_999) as u32,
        )
}

/// The directory part and the last name of a key.
fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}

/// A bucket name S3 accepts: 3 to 63 lowercase letters, digits, `.` and `-`, beginning and
/// ending with a letter or digit, no `..`, `.-` or `-.` (each label a DNS label), not an IPv4
/// address, and none of the prefixes and suffixes S3 keeps for itself. A directory of another
/// name is no bucket.
pub fn check_bucket_name(bucket: &str) -> Result<(), StoreError> {
    const PREFIXES: [&str; 3] = ["xn--", "sthree-", "amzn-s3-demo-"];
    const SUFFIXES: [&str; 5] = ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"];
    let ok = (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !bucket.starts_with(['.', '-'])
        && !bucket.ends_with(['.', '-'])
        && !["..", ".-", "-."].iter().any(|p| bucket.contains(p))
        && bucket.parse::<std::net::Ipv4Addr>().is_err()
        && !PREFIXES.iter().any(|p| bucket.starts_with(p))
        && !SUFFIXES.iter().any(|s| bucket.ends_with(s));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidBucket)
    }
}

/// A key is a relative path of plain names: no `.`, `..`, NUL or empty parts; a `/` at the
/// end makes it a folder marker ([`is_folder_key`]). A part may be as long as the key.
pub fn check_key(key: &str) -> Result<(), StoreError> {
    if key.len() > MAX_KEY {
        return Err(StoreError::KeyTooLong);
    }
    let plain = |c: &str| !c.is_empty() && c != "." && c != ".." && !c.contains('\0');
    let path = key.strip_suffix('/').unwrap_or(key);
    if path.is_empty() || !path.split('/').all(plain) {
        return Err(StoreError::InvalidKey);
    }
    Ok(())
}

/// A key ending in `/`: a folder marker, kept as its directory (consoles make them to show
/// empty folders).
pub fn is_folder_key(key: &str) -> bool {
    key.ends_with('/')
}

impl Store {
    /// Opens the root, cleaning temporary files left by dead gateways of this host (a PUT cut
    /// short by SIGKILL never became an object).
    pub fn open(root: &Path, fsync: bool) -> io::Result<Store> {
        let root = root.canonicalize()?;
        let root_fd: OwnedFd = rustix::fs::open(&root, DIR_FLAGS | OFlags::CLOEXEC, Mode::empty())?;
        let internal_fd = ensure_dir(root_fd.as_fd(), INTERNAL)?;
        let tmp_all_fd = ensure_dir(internal_fd.as_fd(), "tmp")?;
        let uploads_fd = ensure_dir(internal_fd.as_fd(), "uploads")?;
        let versions_fd = ensure_dir(internal_fd.as_fd(), VERSIONS)?;
        let me = host_pid();
        let (host, _) = me.rsplit_once('-').unwrap_or((&me, ""));
        for (name, ty) in entries(tmp_all_fd.as_fd())? {
            let Some((h, pid)) = name.rsplit_once('-') else {
                continue;
            };
            let pid: i32 = pid.parse().unwrap_or(0);
            // SAFETY: kill with signal 0 only checks whether the process exists.
            let alive = pid > 0 && unsafe { libc::kill(pid, 0) } == 0;
            if ty == FileType::Directory && h == host && !alive {
                let _ = remove_flat_dir(tmp_all_fd.as_fd(), &name);
            }
        }
        let tmp_fd = ensure_dir(tmp_all_fd.as_fd(), &me)?;
        let names = Names::of(root_fd.as_fd());
        Ok(Store {
            root,
            root_fd: Arc::new(root_fd),
            internal_fd: Arc::new(internal_fd),
            tmp_all_fd: Arc::new(tmp_all_fd),
            tmp_name: me,
            tmp_fd: Arc::new(tmp_fd),
            uploads_fd: Arc::new(uploads_fd),
            versions_fd: Arc::new(versions_fd),
            states: Arc::default(),
            next_temp: Arc::new(AtomicU64::new(0)),
            dirs: Arc::default(),
            names,
            fsync,
        })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Removes this instance's bookkeeping directories, each only if empty (other gateways may
    /// still use them).
    pub fn remove_bookkeeping(&self) {
        let _ = unlinkat(
            self.tmp_all_fd.as_fd(),
            self.tmp_name.as_str(),
            AtFlags::REMOVEDIR,
        );
        for name in ["tmp", "uploads", VERSIONS] {
            let _ = unlinkat(self.internal_fd.as_fd(), name, AtFlags::REMOVEDIR);
        }
        let _ = unlinkat(self.root_fd.as_fd(), INTERNAL, AtFlags::REMOVEDIR);
    }

    /// The directory of an existing bucket.
    pub fn open_bucket(&self, bucket: &str) -> Result<OwnedFd, StoreError> {
        check_bucket_name(bucket)?;
        open_beneath(self.root_fd.as_fd(), bucket, DIR_FLAGS, Mode::empty()).map_err(|e| {
            if crossed_link(&e) {
                StoreError::SymlinkCrossed(bucket.to_string())
            } else if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) {
                StoreError::NoSuchBucket
            } else {
                StoreError::Io(e)
            }
        })
    }

    /// Makes a bucket; `AlreadyExists` if the name is taken (by anything).
    pub fn create_bucket(&self, bucket: &str) -> Result<(), StoreError> {
        check_bucket_name(bucket)?;
        Ok(mkdirat(
            self.root_fd.as_fd(),
            bucket,
            Mode::from_bits_truncate(0o777),
        )?)
    }

    /// Makes a bucket that appears with what `init` records on its directory (its owner and
    /// ACL) already there: made among the temporary files, set up, then renamed into place
    /// without replacing anything, so no request ever sees it without them. `AlreadyExists`
    /// if the name is taken. Where the file system cannot rename without replacing (NFS),
    /// the directory is made in place and set up at once.
    pub fn create_bucket_with(
        &self,
        bucket: &str,
        init: impl Fn(BorrowedFd<'_>) -> io::Result<()>,
    ) -> Result<(), StoreError> {
        check_bucket_name(bucket)?;
        let name = format!(
            "bucket-{:016x}",
            self.next_temp.fetch_add(1, Ordering::Relaxed)
        );
        let tmp = self.tmp_fd.as_fd();
        mkdirat(tmp, name.as_str(), Mode::from_bits_truncate(0o777))?;
        let made = (|| -> Result<(), StoreError> {
            let dir = openat(
                tmp,
                name.as_str(),
                DIR_FLAGS | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            init(dir.as_fd())?;
            match rustix::fs::renameat_with(
                tmp,
                name.as_str(),
                self.root_fd.as_fd(),
                bucket,
                rustix::fs::RenameFlags::NOREPLACE,
            ) {
                Err(Errno::INVAL) | Err(Errno::NOSYS) => {
                    self.create_bucket(bucket)?;
                    let dir = self.open_bucket(bucket)?;
                    if let Err(e) = init(dir.as_fd()) {
                        let _ = unlinkat(self.root_fd.as_fd(), bucket, AtFlags::REMOVEDIR);
                        return Err(e.into());
                    }
                    Ok(())
                }
                other => Ok(other?),
            }
        })();
        if made.is_err() {
            let _ = unlinkat(tmp, name.as_str(), AtFlags::REMOVEDIR);
        }
        made
    }

    /// Removes an empty bucket that keeps no versions (`ENOTEMPTY` otherwise).
    pub fn delete_bucket(&self, bucket: &str) -> Result<(), StoreError> {
        drop(self.open_bucket(bucket)?);
        self.remove_kept_root(bucket)?;
        unlinkat(self.root_fd.as_fd(), bucket, AtFlags::REMOVEDIR)?;
        self.forget_versioning(bucket);
        Ok(())
    }

    /// The buckets (directories with bucket names, not links) and when each was made.
    pub fn buckets(&self) -> io::Result<Vec<(String, SystemTime)>> {
        let mut out = Vec::new();
        for (name, ty) in entries(self.root_fd.as_fd())? {
            if ty != FileType::Directory || check_bucket_name(&name).is_err() {
                continue;
            }
            if let Ok(st) = statat(
                self.root_fd.as_fd(),
                name.as_str(),
                AtFlags::SYMLINK_NOFOLLOW,
            ) {
                out.push((name, modified(&st)));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Opens an object for reading: a regular file (not a directory, link, FIFO or device).
    pub fn open_object(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<Object, StoreError> {
        check_key(key)?;
        if is_folder_key(key) {
            return self.open_folder(bucket_fd, bucket, key);
        }
        // O_NONBLOCK: opening a FIFO planted in the directory must not wait for a writer.
        let fd = open_beneath(
            bucket_fd,
            &self.names.disk_path(key),
            OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY,
            Mode::empty(),
        )
        .map_err(|e| {
            if crossed_link(&e) {
                StoreError::SymlinkCrossed(format!("{bucket}/{key}"))
            } else if matches!(
                e.raw_os_error(),
                Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ENXIO)
            ) {
                StoreError::NoSuchKey
            } else {
                StoreError::Io(e)
            }
        })?;
        let st = fstat(&fd)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(StoreError::NoSuchKey);
        }
        Ok(Object {
            file: File::from(fd),
            len: st.st_size as u64,
            modified: modified(&st),
        })
    }

    /// Opens a folder marker: its directory, if it is marked as one.
    fn open_folder(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<Object, StoreError> {
        let path = self.names.disk_path(&key[..key.len() - 1]);
        let dir = match open_beneath(bucket_fd, &path, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if crossed_link(&e) => {
                return Err(StoreError::SymlinkCrossed(format!("{bucket}/{key}")))
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                return Err(StoreError::NoSuchKey)
            }
            Err(e) => return Err(e.into()),
        };
        if !is_folder(&dir) {
            return Err(StoreError::NoSuchKey);
        }
        let st = fstat(&dir)?;
        Ok(Object {
            file: File::from(dir),
            len: 0,
            modified: modified(&st),
        })
    }

    /// Stores a folder marker: makes its directory (and those above) and marks it with `meta`.
    pub fn put_folder(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        meta: &Meta,
    ) -> Result<(), StoreError> {
        check_key(key)?;
        let dir = self
            .make_dirs(bucket_fd, bucket, &key[..key.len() - 1])?
            .expect("a folder key names a directory below the bucket");
        mark_folder(&File::from(dir), meta)?;
        Ok(())
    }

    /// The objects and common prefixes of a bucket below `prefix` and after `after`, in key
    /// order, read as they are asked for.
    pub fn walk<'a>(
        &'a self,
        bucket_fd: BorrowedFd<'a>,
        prefix: &str,
        delimiter: Option<&str>,
        after: Option<&str>,
    ) -> io::Result<Walk<'a>> {
        Walk::new(bucket_fd, &self.dirs, self.names, prefix, delimiter, after)
    }

    /// The name on disk of `leaf`, the last component of a key whose object is `temp`: when it
    /// is a derived one, `temp` is labelled with the component first.
    fn leaf_name<'k>(&self, temp: &Temp, leaf: &'k str) -> Result<Cow<'k, str>, StoreError> {
        if self.names.derives(leaf) {
            names::label(&temp.file, leaf).map_err(unlabelled)?;
        }
        Ok(self.names.disk_name(leaf))
    }

    /// Every key of a bucket that starts with `prefix`, in order.
    pub fn keys(&self, bucket_fd: BorrowedFd<'_>, prefix: &str) -> io::Result<Vec<String>> {
        let mut walk = self.walk(bucket_fd, prefix, None, None)?;
        let mut out = Vec::new();
        while let Some(found) = walk.next_found()? {
            if let Found::Object(key) = found {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// The directory of multipart uploads.
    pub fn uploads_dir(&self) -> BorrowedFd<'_> {
        self.uploads_fd.as_fd()
    }
}

mod conditional;
pub mod names;
pub mod room;
#[cfg(test)]
mod tests;
pub(crate) mod versions;
pub mod walk;
mod writes;
