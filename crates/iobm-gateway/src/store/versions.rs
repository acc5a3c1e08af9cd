//! Versions on disk. A key's current version is its file in the bucket's tree, as in an
//! unversioned bucket; the versions it replaced and its delete markers are files named by
//! [`Name`] in the key's directory of `.iobm-gateway/versions/<bucket>/` ([`key_path`]). The
//! versioned writes and deletes of one key hold an exclusive lock on that directory, and each
//! changes what a reader sees in one rename or unlink: a version about to be replaced is first
//! linked into the key's directory, then the new file renamed over it; a delete marker is made
//! there, then the current file unlinked. What a kill leaves half done (a second link of the
//! current version, a marker or `null` version that lost) is left out by [`order`], and
//! removed by the next write or delete of the key, which finds the key marked under way
//! ([`UNDER_WAY`]).

use super::{check_key, is_folder_key, modified, split_key, Object, Store, StoreError, Temp};
use super::{DIR_FLAGS, RACE_RETRIES};
use crate::confine::open_beneath;
use crate::meta::{load_etag, load_version, save_version};
use crate::store::WriteCondition;
use crate::versions::{key_path, order, Kind, Name, VersionId, Versioning, UNDER_WAY};
use rustix::fs::{
    flock, fstat, linkat, mkdirat, openat, unlinkat, AtFlags, FlockOperation, Mode, OFlags,
};
use rustix::io::Errno;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;
use walk::{open_dir, versions_in, KeptWalk};

/// What a DeleteObject did: the version it removed or the delete marker it made.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Deleted {
    pub version_id: Option<String>,
    pub delete_marker: bool,
}

/// A key's directory in the versions tree, locked: the versioned writes and deletes of one key
/// take turns (the lock goes with the descriptor).
struct KeyDir {
    fd: OwnedFd,
}

/// A key's current version: its file and the version it is.
type Current = Option<(Object, Name)>;

impl Store {
    /// The versioning state of `bucket` (its directory `dir`), as this gateway last read it.
    pub fn versioning(&self, bucket: &str, dir: BorrowedFd<'_>) -> io::Result<Versioning> {
        self.states.get(bucket, dir)
    }

    /// Records a bucket's versioning state.
    pub fn set_versioning(
        &self,
        bucket: &str,
        dir: BorrowedFd<'_>,
        state: Versioning,
    ) -> io::Result<()> {
        state.save(dir)?;
        self.states.set(bucket, state);
        Ok(())
    }

    /// Forgets what this gateway read of a bucket's state (the bucket was made or deleted).
    pub fn forget_versioning(&self, bucket: &str) {
        self.states.forget(bucket);
    }

    /// The bucket's directory in the versions tree, if it keeps any.
    pub fn kept_root(&self, bucket: &str) -> io::Result<Option<OwnedFd>> {
        open_dir(self.versions_fd.as_fd(), bucket)
    }

    /// Removes the bucket's directory of kept versions: `ENOTEMPTY` while it keeps any (what
    /// a kill left of a write, no version, goes).
    pub(super) fn remove_kept_root(&self, bucket: &str) -> io::Result<()> {
        let versions = self.versions_fd.as_fd();
        match unlinkat(versions, bucket, AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => return Ok(()),
            Err(Errno::NOTEMPTY) => {}
            Err(e) => return Err(e.into()),
        }
        let mut walk = KeptWalk::new(self.kept_root(bucket)?, "", None, None)?;
        if walk.next_kept()?.is_some() {
            return Err(Errno::NOTEMPTY.into());
        }
        remove_leftovers(versions, bucket)?;
        Ok(unlinkat(versions, bucket, AtFlags::REMOVEDIR)?)
    }

    /// Moves a complete temporary file into place as `key` as its bucket's state says: in place
    /// (a bucket that never kept versions, and folder markers), or as a new version, the one it
    /// replaces kept (`Enabled`) or the `null` version replaced (`Suspended`). Returns the new
    /// version's id in a bucket that keeps versions.
    pub fn publish_version(
        &self,
        temp: Temp,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        condition: &WriteCondition,
    ) -> Result<Option<String>, StoreError> {
        let state = self.versioning(bucket, dir)?;
        if state == Versioning::Unversioned || is_folder_key(key) {
            return self
                .publish_if(temp, dir, bucket, key, condition)
                .map(|()| None);
        }
        check_key(key)?;
        let (key_dir, current, _) = self.begin(dir, bucket, key, false)?;
        if !condition.is_none() {
            let etag = match &current {
                Some((object, _)) => Some(load_etag(&object.file)?),
                None => None,
            };
            condition.allows(etag.as_deref())?;
        }
        let suspended = state == Versioning::Suspended;
        let name = Name::new(suspended, Kind::Data);
        save_version(&temp.file, name)?;
        if let Some((_, was)) = current.filter(|(_, was)| !(suspended && was.null)) {
            self.keep(&key_dir, dir, key, was)?;
        }
        self.publish(temp, dir, bucket, key)?;
        if suspended {
            drop_nulls(&key_dir, None)?;
        }
        self.end(bucket, key, key_dir);
        Ok(Some(name.version_id()))
    }

    /// DeleteObject as its bucket's state says, of the current version or of `version`.
    pub fn delete_versioned(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        version: Option<&str>,
    ) -> Result<Deleted, StoreError> {
        check_key(key)?;
        let id = match version {
            Some(v) => Some(VersionId::parse(v).ok_or(StoreError::InvalidVersion)?),
            None => None,
        };
        let state = self.versioning(bucket, dir)?;
        let unversioned = state == Versioning::Unversioned || is_folder_key(key);
        match id {
            None | Some(VersionId::Null) if unversioned => {
                self.delete_object(dir, bucket, key)?;
                Ok(Deleted::default())
            }
            Some(_) if unversioned => Ok(Deleted::default()),
            Some(id) => self.delete_one(dir, bucket, key, id),
            None => self.delete_current(dir, bucket, key, state),
        }
    }

    /// A delete of the current version: a delete marker becomes current, the version it
    /// replaces kept (`Enabled`) or, the `null` version, removed (`Suspended`).
    fn delete_current(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        state: Versioning,
    ) -> Result<Deleted, StoreError> {
        let (key_dir, current, _) = self.begin(dir, bucket, key, false)?;
        let suspended = state == Versioning::Suspended;
        if let Some((_, was)) = current.as_ref().filter(|(_, was)| !(suspended && was.null)) {
            self.keep(&key_dir, dir, key, *was)?;
        }
        let marker = Name::new(suspended, Kind::DeleteMarker);
        let mut made = self.create_temp()?;
        made.place_in(key_dir.fd.as_fd(), &marker.file_name())?;
        if current.is_some() {
            self.delete_object(dir, bucket, key)?;
        }
        if suspended {
            drop_nulls(&key_dir, Some(marker))?;
        }
        self.end(bucket, key, key_dir);
        Ok(Deleted {
            version_id: Some(marker.version_id()),
            delete_marker: true,
        })
    }

    /// A delete of one version for good; when it is the latest, the one before it becomes
    /// current (moved back into the bucket's tree if it holds bytes).
    fn delete_one(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        id: VersionId,
    ) -> Result<Deleted, StoreError> {
        let (key_dir, current, listed) = self.begin(dir, bucket, key, true)?;
        let Some(at) = listed.iter().position(|n| n.is(&id)) else {
            self.end(bucket, key, key_dir);
            return Ok(Deleted::default());
        };
        let gone = listed[at];
        let is_current = current.is_some_and(|(_, name)| name == gone);
        if at == 0 {
            match listed.get(1).filter(|n| n.kind == Kind::Data) {
                Some(&next) => self.restore(&key_dir, dir, bucket, key, next)?,
                None if is_current => self.delete_object(dir, bucket, key)?,
                None => {}
            }
        }
        if !is_current {
            remove(&key_dir, gone)?;
        }
        self.end(bucket, key, key_dir);
        Ok(Deleted {
            version_id: Some(gone.version_id()),
            delete_marker: gone.is_marker(),
        })
    }

    /// Opens an object's current version (`version` `None`) or the version named; a delete
    /// marker is [`StoreError::DeleteMarker`].
    pub fn open_version(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        version: Option<&str>,
    ) -> Result<Object, StoreError> {
        let Some(version) = version else {
            return self.open_object(dir, bucket, key);
        };
        let id = VersionId::parse(version).ok_or(StoreError::InvalidVersion)?;
        let current = self.current(dir, bucket, key)?;
        let current = match current {
            Some((object, name)) if name.is(&id) => return Ok(object),
            current => current.map(|(_, name)| name),
        };
        let Some(key_dir) = self.key_dir(bucket, key)? else {
            return Err(StoreError::NoSuchVersion);
        };
        let kept = versions_in(key_dir.as_fd())?;
        let (listed, _) = order(current, &kept);
        match listed.into_iter().find(|n| n.is(&id)) {
            None => Err(StoreError::NoSuchVersion),
            Some(marker) if marker.is_marker() => Err(StoreError::DeleteMarker(marker)),
            Some(name) => open_kept(key_dir.as_fd(), name),
        }
    }

    /// The delete marker that is a key's latest version, if one is (asked once the key was
    /// found to have no current version).
    pub fn latest_marker(&self, dir: BorrowedFd<'_>, bucket: &str, key: &str) -> Option<Name> {
        if self.versioning(bucket, dir).ok()? == Versioning::Unversioned {
            return None;
        }
        let kept = versions_in(self.key_dir(bucket, key).ok()??.as_fd()).ok()?;
        let (listed, _) = order(None, &kept);
        listed.first().copied().filter(Name::is_marker)
    }

    /// A key's versions, newest first, each with its file when it holds bytes (one gone
    /// meanwhile is left out): for listings. `kept`: its versions kept aside, if known.
    pub fn key_versions(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        kept: Option<Vec<Name>>,
    ) -> Result<Vec<(Name, Option<Object>)>, StoreError> {
        let mut current = self.current(dir, bucket, key)?;
        // A key known to keep nothing aside costs no look at its directory.
        let key_dir = match &kept {
            Some(kept) if kept.is_empty() => None,
            _ => self.key_dir(bucket, key)?,
        };
        let kept = match (kept, &key_dir) {
            (Some(kept), _) => kept,
            (None, Some(key_dir)) => versions_in(key_dir.as_fd())?,
            (None, None) => Vec::new(),
        };
        let (listed, _) = order(current.as_ref().map(|c| c.1), &kept);
        let mut out = Vec::with_capacity(listed.len());
        for name in listed {
            let object = if name.is_marker() {
                None
            } else if current.as_ref().is_some_and(|c| c.1 == name) {
                current.take().map(|c| c.0)
            } else {
                match key_dir.as_ref().map(|d| open_kept(d.as_fd(), name)) {
                    Some(Ok(object)) => Some(object),
                    _ => continue,
                }
            };
            out.push((name, object));
        }
        Ok(out)
    }

    /// A key's current version, if it has one.
    fn current(&self, dir: BorrowedFd<'_>, bucket: &str, key: &str) -> Result<Current, StoreError> {
        match self.open_object(dir, bucket, key) {
            Ok(object) => {
                let name = load_version(&object.file)
                    .unwrap_or_else(|| Name::unversioned(object.modified));
                Ok(Some((object, name)))
            }
            Err(StoreError::NoSuchKey) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// A key's directory in the versions tree, if it has one (not locked).
    fn key_dir(&self, bucket: &str, key: &str) -> Result<Option<OwnedFd>, StoreError> {
        match open_beneath(
            self.versions_fd.as_fd(),
            &key_path(bucket, key),
            DIR_FLAGS,
            Mode::empty(),
        ) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// A key's directory in the versions tree, made if needed, and locked. One that emptied it
    /// may remove it while this waits for its lock: then it is made again.
    fn lock_key(&self, bucket: &str, key: &str) -> Result<KeyDir, StoreError> {
        let path = key_path(bucket, key);
        for _ in 0..RACE_RETRIES {
            let Some(fd) = self.make_kept_dirs(&path)? else {
                continue;
            };
            flock(&fd, FlockOperation::LockExclusive)?;
            let held = fstat(&fd)?;
            match open_beneath(self.versions_fd.as_fd(), &path, DIR_FLAGS, Mode::empty()) {
                Ok(now) => {
                    let now = fstat(&now)?;
                    if (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino) {
                        return Ok(KeyDir { fd });
                    }
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Io(io::Error::other(
            "the key's versions directory kept being removed",
        )))
    }

    /// Makes (as needed) and opens the directories of `path` in the versions tree; `None` when
    /// one was removed meanwhile (by a delete pruning it).
    fn make_kept_dirs(&self, path: &str) -> Result<Option<OwnedFd>, StoreError> {
        let mut held: Option<OwnedFd> = None;
        for name in path.split('/') {
            let at = held
                .as_ref()
                .map_or(self.versions_fd.as_fd(), |fd| fd.as_fd());
            match mkdirat(at, name, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::NAMETOOLONG) => return Err(StoreError::KeyTooLong),
                Err(e) => return Err(e.into()),
            }
            match open_dir(at, name)? {
                Some(fd) => held = Some(fd),
                None => return Ok(None),
            }
        }
        Ok(held)
    }

    /// Starts a write or delete of a key: its directory of versions, locked and marked under
    /// way, and its current version. What one a kill cut short left half done is settled first
    /// ([`Store::settle`]; always with `settle`, which returns the key's versions).
    fn begin(
        &self,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        settle: bool,
    ) -> Result<(KeyDir, Current, Vec<Name>), StoreError> {
        let key_dir = self.lock_key(bucket, key)?;
        let current = self.current(dir, bucket, key)?;
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let cut_short = match openat(
            &key_dir.fd,
            UNDER_WAY,
            flags,
            Mode::from_bits_truncate(0o666),
        ) {
            Ok(_) => false,
            Err(Errno::EXIST) => true,
            Err(e) => return Err(e.into()),
        };
        let listed = if settle || cut_short {
            self.settle(&key_dir, &current)?
        } else {
            Vec::new()
        };
        Ok((key_dir, current, listed))
    }

    /// Ends a write or delete of a key that went through (one that failed stays marked under
    /// way, to be settled by the next): removes its directory of versions if it keeps none,
    /// and the directories above it that this leaves empty (up to the bucket's).
    fn end(&self, bucket: &str, key: &str, key_dir: KeyDir) {
        let _ = unlinkat(&key_dir.fd, UNDER_WAY, AtFlags::empty());
        let path = key_path(bucket, key);
        let mut rest = path.as_str();
        loop {
            let (parent, name) = split_key(rest);
            let held = if parent.is_empty() {
                None
            } else {
                match open_beneath(self.versions_fd.as_fd(), parent, DIR_FLAGS, Mode::empty()) {
                    Ok(fd) => Some(fd),
                    Err(_) => break,
                }
            };
            let at = held
                .as_ref()
                .map_or(self.versions_fd.as_fd(), |fd| fd.as_fd());
            if unlinkat(at, name, AtFlags::REMOVEDIR).is_err() || parent.is_empty() {
                break;
            }
            rest = parent;
        }
        // The lock goes once the directory is gone, so that a writer waiting for it looks again.
        drop(key_dir);
    }

    /// Settles what a kill left half done in a key's directory ([`order`]); returns the key's
    /// versions newest first.
    fn settle(&self, key_dir: &KeyDir, current: &Current) -> io::Result<Vec<Name>> {
        let kept = versions_in(key_dir.fd.as_fd())?;
        let (listed, stale) = order(current.as_ref().map(|c| c.1), &kept);
        for name in stale {
            remove(key_dir, name)?;
        }
        Ok(listed)
    }

    /// Links the current version of `key` into its directory of versions, as `name`.
    fn keep(
        &self,
        key_dir: &KeyDir,
        dir: BorrowedFd<'_>,
        key: &str,
        name: Name,
    ) -> Result<(), StoreError> {
        let (dirs, leaf) = split_key(key);
        let parent = if dirs.is_empty() {
            None
        } else {
            Some(open_beneath(dir, dirs, DIR_FLAGS, Mode::empty())?)
        };
        let at = parent.as_ref().map_or(dir, |fd| fd.as_fd());
        match linkat(
            at,
            leaf,
            key_dir.fd.as_fd(),
            name.file_name(),
            AtFlags::empty(),
        ) {
            Ok(()) | Err(Errno::EXIST) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Makes kept version `name` the current one again (replacing what is there in one
    /// rename), then unlinks it from the key's directory.
    fn restore(
        &self,
        key_dir: &KeyDir,
        dir: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        name: Name,
    ) -> Result<(), StoreError> {
        let temp_name = format!("{:016x}", self.next_temp.fetch_add(1, Ordering::Relaxed));
        let from = name.file_name();
        linkat(
            key_dir.fd.as_fd(),
            from.as_str(),
            self.tmp_fd.as_fd(),
            temp_name.as_str(),
            AtFlags::empty(),
        )?;
        let file = openat(
            self.tmp_fd.as_fd(),
            temp_name.as_str(),
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        );
        let temp = Temp {
            dir: self.tmp_fd.clone(),
            name: temp_name,
            file: File::from(file?),
            placed: false,
        };
        self.publish(temp, dir, bucket, key)?;
        Ok(remove(key_dir, name)?)
    }
}

/// Removes version `name` from a key's directory (gone already is fine).
fn remove(key_dir: &KeyDir, name: Name) -> io::Result<()> {
    match unlinkat(key_dir.fd.as_fd(), name.file_name(), AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Removes the `null` versions kept aside but `except`: a write or delete in a `Suspended`
/// bucket replaces the `null` version.
fn drop_nulls(key_dir: &KeyDir, except: Option<Name>) -> io::Result<()> {
    for name in versions_in(key_dir.fd.as_fd())? {
        if name.null && Some(name) != except {
            remove(key_dir, name)?;
        }
    }
    Ok(())
}

/// Empties directory `name` of `parent` in a versions tree that keeps no version: the marks
/// of writes a kill cut short and the directories they are in.
fn remove_leftovers(parent: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    let Some(dir) = open_dir(parent, name)? else {
        return Ok(());
    };
    for (entry, ty) in super::entries(dir.as_fd())? {
        if ty == rustix::fs::FileType::Directory {
            remove_leftovers(dir.as_fd(), &entry)?;
            unlinkat(dir.as_fd(), entry.as_str(), AtFlags::REMOVEDIR)?;
        } else if entry == UNDER_WAY {
            unlinkat(dir.as_fd(), entry.as_str(), AtFlags::empty())?;
        }
    }
    Ok(())
}

/// Opens a kept version's file.
fn open_kept(key_dir: BorrowedFd<'_>, name: Name) -> Result<Object, StoreError> {
    let fd = match openat(
        key_dir,
        name.file_name(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Err(StoreError::NoSuchVersion),
        Err(e) => return Err(e.into()),
    };
    let st = fstat(&fd)?;
    Ok(Object {
        file: File::from(fd),
        len: st.st_size as u64,
        modified: modified(&st),
    })
}

pub(crate) mod walk;

#[cfg(test)]
mod tests;
