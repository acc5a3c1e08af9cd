//! The keys of a bucket in S3's order (bytewise), read lazily from its directory tree and
//! resumed after a marker, so that page N of a listing costs what page 1 costs. A directory
//! sorts as its name followed by `/`, which makes a depth-first walk of sorted directories
//! yield keys in bytewise order. Sorted directories are cached by [`DirCache`] (bounded, and
//! checked against the directory's times on every use); a directory too large for the cache
//! is read in windows of its next [`WINDOW`] entries, so memory stays bounded whatever the
//! bucket holds. An entry under a derived name ([`crate::store::names`]) is taken as the key
//! component it stands for, and sorts as that.

use crate::confine::open_beneath;
use crate::meta::is_folder;
use crate::store::names::is_derived;
use crate::store::{check_key, each_entry, Names};
use rustix::fs::{fstat, FileType, Mode, OFlags};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// Entries kept by the cache in all (about 80 bytes each with their names).
pub const CACHE_ENTRIES: usize = 1 << 21;
/// Entries read at a time from a directory too large to cache.
pub const WINDOW: usize = 4096;
/// A directory changed more recently than this is not cached: its times may not yet show a
/// change made within the same clock tick.
const SETTLED: Duration = Duration::from_secs(2);

/// A name in a directory: a regular file (an object) or a directory (a prefix). Links and
/// other kinds are left out when read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    name: Box<str>,
    dir: bool,
}

impl Entry {
    /// The bytes this entry sorts by: its name, and `/` after a directory's.
    fn sort_key(&self) -> impl Iterator<Item = u8> + '_ {
        self.name.bytes().chain(self.dir.then_some(b'/'))
    }

    fn cmp_key(&self, other: &Entry) -> Ordering {
        self.sort_key().cmp(other.sort_key())
    }

    /// The sort key against a marker or prefix, without building it.
    fn cmp_text(&self, text: &str) -> Ordering {
        self.sort_key().cmp(text.bytes())
    }

    /// Whether `text` starts with the sort key (a directory's: the key leads into it).
    fn leads_to(&self, text: &str) -> bool {
        text.len() >= self.name.len() + usize::from(self.dir)
            && self.sort_key().zip(text.bytes()).all(|(a, b)| a == b)
    }

    /// The sort key as a string (for the keys a walk returns).
    fn key_text(&self) -> String {
        let mut s = String::with_capacity(self.name.len() + 1);
        s.push_str(&self.name);
        if self.dir {
            s.push('/');
        }
        s
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.cmp_key(other)
    }
}

/// What identifies one state of a directory: a change to its entries moves its times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime: (i64, i64),
    ctime: (i64, i64),
    size: i64,
}

#[derive(Debug)]
struct Cached {
    stamp: Stamp,
    entries: Arc<[Entry]>,
    used: u64,
}

/// Sorted directories by device and inode, at most [`CACHE_ENTRIES`] entries in all; the least
/// recently used go first.
#[derive(Debug)]
pub struct DirCache {
    inner: Mutex<CacheInner>,
    /// Entries kept in all; a directory with more is read in windows.
    capacity: usize,
    /// Entries read at a time from a directory too large to cache.
    window: usize,
    /// How long ago a directory must have last changed to be cached.
    settled: Duration,
}

impl Default for DirCache {
    fn default() -> Self {
        DirCache::new(CACHE_ENTRIES, WINDOW)
    }
}

#[derive(Default, Debug)]
struct CacheInner {
    dirs: HashMap<(u64, u64), Cached>,
    entries: usize,
    clock: u64,
}

impl DirCache {
    pub fn new(capacity: usize, window: usize) -> DirCache {
        DirCache {
            inner: Mutex::default(),
            capacity,
            window: window.max(1),
            settled: SETTLED,
        }
    }

    /// The sorted entries of `dir` if it fits the cache (read now or cached); `None` when it
    /// has more than the cache holds.
    fn sorted(&self, dir: BorrowedFd<'_>, names: Names) -> io::Result<Option<Arc<[Entry]>>> {
        let st = fstat(dir)?;
        let id = (st.st_dev, st.st_ino);
        let stamp = Stamp {
            mtime: (st.st_mtime, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime, st.st_ctime_nsec as i64),
            size: st.st_size,
        };
        {
            let mut inner = self.inner.lock().unwrap();
            inner.clock += 1;
            let now = inner.clock;
            if let Some(c) = inner.dirs.get_mut(&id).filter(|c| c.stamp == stamp) {
                c.used = now;
                return Ok(Some(c.entries.clone()));
            }
        }
        let mut entries = Vec::new();
        if !read_entries(dir, names, |e| {
            entries.push(e);
            entries.len() <= self.capacity
        })? {
            return Ok(None);
        }
        entries.sort_unstable();
        let entries: Arc<[Entry]> = entries.into();
        let changed = SystemTime::UNIX_EPOCH
            + Duration::new(stamp.ctime.0.max(0) as u64, stamp.ctime.1 as u32);
        let settled = SystemTime::now()
            .duration_since(changed)
            .is_ok_and(|age| age >= self.settled);
        if settled {
            self.insert(id, stamp, entries.clone());
        }
        Ok(Some(entries))
    }

    fn insert(&self, id: (u64, u64), stamp: Stamp, entries: Arc<[Entry]>) {
        let mut inner = self.inner.lock().unwrap();
        let used = inner.clock;
        inner.entries += entries.len();
        if let Some(old) = inner.dirs.insert(
            id,
            Cached {
                stamp,
                entries,
                used,
            },
        ) {
            inner.entries -= old.entries.len();
        }
        if inner.entries > self.capacity {
            // Down to three quarters at once, so that evicting stays rare.
            let mut by_use: Vec<_> = inner.dirs.iter().map(|(k, c)| (c.used, *k)).collect();
            by_use.sort_unstable();
            for (_, id) in by_use {
                if inner.entries <= self.capacity / 4 * 3 {
                    break;
                }
                let gone = inner.dirs.remove(&id).unwrap();
                inner.entries -= gone.entries.len();
            }
        }
    }
}

/// Reads the objects and directories of `dir`, handing each to `take` until it returns false;
/// true when every entry was taken. A derived name is read as its component (and left out
/// when it has none).
fn read_entries(
    dir: BorrowedFd<'_>,
    names: Names,
    mut take: impl FnMut(Entry) -> bool,
) -> io::Result<bool> {
    let mut read = 0;
    let all = each_entry(dir, |name, ty| {
        read += 1;
        let is_dir = match ty {
            FileType::RegularFile => false,
            FileType::Directory => true,
            _ => return true,
        };
        let name = if is_derived(name) {
            match names.real_name(dir, name) {
                Some(real) => real.into(),
                None => return true,
            }
        } else {
            name.into()
        };
        take(Entry { name, dir: is_dir })
    });
    crate::metrics::directory_entries_read(read);
    all
}

/// The smallest `size` entries of `dir` that `keep` accepts, sorted (for a directory too
/// large to cache; each window reads the whole directory).
fn window(
    dir: BorrowedFd<'_>,
    names: Names,
    size: usize,
    keep: impl Fn(&Entry) -> bool,
) -> io::Result<Vec<Entry>> {
    let mut heap = BinaryHeap::with_capacity(size + 1);
    read_entries(dir, names, |e| {
        if keep(&e) && (heap.len() < size || heap.peek().is_some_and(|top| e < *top)) {
            heap.push(e);
            if heap.len() > size {
                heap.pop();
            }
        }
        true
    })?;
    Ok(heap.into_sorted_vec())
}

/// What a listing finds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Object(String),
    /// A common prefix: the keys up to and including the delimiter's first match after the
    /// listing's prefix, found once per prefix.
    Prefix(String),
}

/// One directory of the walk: where it is, its entries from where the walk is, and whether
/// they are all of them (or a window of a large directory).
struct Level {
    fd: Option<OwnedFd>,
    /// The key of the directory with its `/` ("" for the bucket).
    base: String,
    entries: Arc<[Entry]>,
    next: usize,
    complete: bool,
}

/// Objects and common prefixes of a bucket below `prefix` and after `after`, in key order.
pub struct Walk<'a> {
    bucket: BorrowedFd<'a>,
    cache: &'a DirCache,
    names: Names,
    prefix: String,
    delimiter: Option<String>,
    after: Option<String>,
    stack: Vec<Level>,
    last_prefix: Option<String>,
    /// A folder marker found on entering its directory, not yet returned.
    folder: Option<String>,
}

impl<'a> Walk<'a> {
    pub fn new(
        bucket: BorrowedFd<'a>,
        cache: &'a DirCache,
        names: Names,
        prefix: &str,
        delimiter: Option<&str>,
        after: Option<&str>,
    ) -> io::Result<Walk<'a>> {
        let mut walk = Walk {
            bucket,
            cache,
            names,
            prefix: prefix.to_string(),
            delimiter: delimiter.filter(|d| !d.is_empty()).map(str::to_string),
            after: after.map(str::to_string),
            stack: Vec::new(),
            last_prefix: None,
            folder: None,
        };
        // Start at the deepest directory the prefix names.
        let start = prefix.rfind('/').map_or("", |i| &prefix[..i]);
        if (start.is_empty() || check_key(start).is_ok()) && walk.enter(start)? {
            // The prefix names a folder marker's directory: the marker itself comes first.
            let key = format!("{start}/");
            if walk.wanted_folder(&key) {
                walk.folder = Some(key);
            }
        }
        Ok(walk)
    }

    /// Pushes directory `rel` of the bucket, positioned at its first entry the walk wants;
    /// true if the directory is also a folder marker (the object `rel/`).
    fn enter(&mut self, rel: &str) -> io::Result<bool> {
        let fd = if rel.is_empty() {
            None
        } else {
            let path = self.names.disk_path(rel);
            match open_beneath(self.bucket, &path, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => Some(fd),
                Err(_) => return Ok(false), // gone meanwhile, or a link
            }
        };
        let folder = fd.as_ref().is_some_and(is_folder);
        let base = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let dir = fd.as_ref().map_or(self.bucket, |fd| fd.as_fd());
        let before = self.bounds(&base);
        let (entries, complete) = match self.cache.sorted(dir, self.names)? {
            Some(all) => (all, true),
            None => (
                window(dir, self.names, self.cache.window, |e| !before.before(e))?.into(),
                false,
            ),
        };
        let next = entries.partition_point(|e| before.before(e));
        self.stack.push(Level {
            fd,
            base,
            entries,
            next,
            complete,
        });
        Ok(folder)
    }

    /// Where a level's entries start, from the marker and the prefix seen from `base`.
    fn bounds(&self, base: &str) -> Bounds {
        let local = |s: Option<&str>| s.and_then(|s| s.strip_prefix(base)).map(str::to_string);
        Bounds {
            after: local(self.after.as_deref()),
            prefix: local(Some(&self.prefix)).unwrap_or_default(),
        }
    }

    /// The next object or common prefix, or `None` at the end.
    pub fn next_found(&mut self) -> io::Result<Option<Found>> {
        if let Some(key) = self.folder.take() {
            return Ok(Some(Found::Object(key)));
        }
        loop {
            let Some(level) = self.stack.last_mut() else {
                return Ok(None);
            };
            if level.next == level.entries.len() {
                if level.complete || level.entries.is_empty() {
                    self.stack.pop();
                    continue;
                }
                // The next window of a large directory, after the last entry read.
                let last = level.entries[level.entries.len() - 1].clone();
                let dir = level.fd.as_ref().map_or(self.bucket, |fd| fd.as_fd());
                level.entries = window(dir, self.names, self.cache.window, |e| *e > last)?.into();
                level.next = 0;
                continue;
            }
            let (key, dir) = {
                let entry = &level.entries[level.next];
                (format!("{}{}", level.base, entry.key_text()), entry.dir)
            };
            level.next += 1;
            if key > self.prefix && !key.starts_with(&self.prefix) {
                // Past the prefix's keys: nothing further in this directory matches.
                self.stack.pop();
                continue;
            }
            if !key.starts_with(&self.prefix) {
                continue; // before the prefix (the walk starts in the directory the prefix names)
            }
            if let Some(common) = self.common_prefix(&key) {
                if self.last_prefix.as_ref() == Some(&common)
                    || self.after.as_ref().is_some_and(|a| common <= *a)
                {
                    continue;
                }
                if dir && !self.has_object(&key)? {
                    continue;
                }
                self.last_prefix = Some(common.clone());
                return Ok(Some(Found::Prefix(common)));
            }
            if dir {
                if self.enter(&key[..key.len() - 1])? && self.wanted_folder(&key) {
                    return Ok(Some(Found::Object(key)));
                }
                continue;
            }
            return Ok(Some(Found::Object(key)));
        }
    }

    /// The common prefix `key` falls in, when a delimiter follows the listing's prefix within
    /// it (for a directory, within its name and `/`: then its whole subtree falls in it).
    fn common_prefix(&self, key: &str) -> Option<String> {
        let d = self.delimiter.as_deref()?;
        let rest = key.get(self.prefix.len()..)?;
        let i = rest.find(d)?;
        Some(key[..self.prefix.len() + i + d.len()].to_string())
    }

    /// Whether a folder marker's key is listed: it has the prefix, comes after the marker,
    /// and falls in no common prefix.
    fn wanted_folder(&self, key: &str) -> bool {
        key.starts_with(&self.prefix)
            && self.after.as_deref().is_none_or(|a| key > a)
            && self.common_prefix(key).is_none()
    }

    /// Whether directory `key` (with its `/`) is a folder marker or holds an object anywhere
    /// below it.
    fn has_object(&self, key: &str) -> io::Result<bool> {
        let mut inner = Walk::new(self.bucket, self.cache, self.names, key, None, None)?;
        Ok(inner.next_found()?.is_some())
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY);

/// The marker and prefix as seen from one directory: the entries before both are skipped.
struct Bounds {
    after: Option<String>,
    prefix: String,
}

impl Bounds {
    /// Whether every key at or below `e` sorts at or before the marker, or before the prefix.
    /// True for a leading run of sorted entries (a directory whose key leads to the marker or
    /// prefix is the last of its run and is not before).
    fn before(&self, e: &Entry) -> bool {
        let at_or_before_marker = self
            .after
            .as_deref()
            .is_some_and(|a| e.cmp_text(a).is_le() && !(e.dir && e.leads_to(a)));
        let before_prefix =
            e.cmp_text(&self.prefix).is_lt() && !(e.dir && e.leads_to(&self.prefix));
        at_or_before_marker || before_prefix
    }
}

#[cfg(test)]
mod tests;
