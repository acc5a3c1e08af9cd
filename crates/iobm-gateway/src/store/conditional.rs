//! Conditional writes: a new object moved into place only if what its key holds allows it
//! ([`WriteCondition`]). `If-None-Match: *` is one rename that replaces nothing (a link where
//! the file system cannot rename so), so of racing writers exactly one wins. A condition on the
//! ETag of the object there is checked holding an exclusive `flock` on that object, which is
//! then replaced: conditional writers of one key, in this gateway or another over the same
//! directory, take turns, and each sees what the one before it left.

use super::{is_folder_key, split_key, Store, StoreError, Temp, RACE_RETRIES};
use crate::confine::crossed_link;
use crate::meta::load_etag;
use rustix::fs::{
    flock, fstat, linkat, openat, renameat_with, statat, unlinkat, AtFlags, FileType,
    FlockOperation, Mode, OFlags, RenameFlags,
};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd};

/// An `If-Match` or `If-None-Match` value: any object (`*`) or one ETag (without quotes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Etag {
    Any,
    Value(String),
}

impl Etag {
    /// Whether the object of ETag `etag` (without quotes) matches.
    pub fn matches(&self, etag: &str) -> bool {
        match self {
            Etag::Any => true,
            Etag::Value(v) => v == etag,
        }
    }
}

/// What a write requires of the object it replaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteCondition {
    /// `If-Match`: an object must be there (404 NoSuchKey otherwise, as S3), with this ETag
    /// unless `*` (412 otherwise).
    pub if_match: Option<Etag>,
    /// `If-None-Match`: `*`, no object may be there; an ETag, the object there (if any) must
    /// not have it (412 otherwise).
    pub if_none_match: Option<Etag>,
}

/// Why a conditional write was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteRefused {
    NoSuchKey,
    PreconditionFailed,
}

impl WriteCondition {
    pub fn is_none(&self) -> bool {
        self.if_match.is_none() && self.if_none_match.is_none()
    }

    /// Only the absence of an object is asked for (`If-None-Match: *`): a rename that replaces
    /// nothing settles it.
    pub fn needs_absence(&self) -> bool {
        self.if_match.is_none() && self.if_none_match == Some(Etag::Any)
    }

    /// Whether the write may replace `current` (the ETag of the object there, if any).
    pub fn allows(&self, current: Option<&str>) -> Result<(), WriteRefused> {
        if let Some(want) = &self.if_match {
            match current {
                None => return Err(WriteRefused::NoSuchKey),
                Some(etag) if !want.matches(etag) => return Err(WriteRefused::PreconditionFailed),
                Some(_) => {}
            }
        }
        match (&self.if_none_match, current) {
            (Some(unwanted), Some(etag)) if unwanted.matches(etag) => {
                Err(WriteRefused::PreconditionFailed)
            }
            _ => Ok(()),
        }
    }
}

impl From<WriteRefused> for StoreError {
    fn from(r: WriteRefused) -> Self {
        match r {
            WriteRefused::NoSuchKey => StoreError::NoSuchKey,
            WriteRefused::PreconditionFailed => StoreError::PreconditionFailed,
        }
    }
}

impl Temp {
    /// Moves the file to `name` in `dir` only if nothing is there (`EXIST` otherwise).
    fn place_new_in(&mut self, dir: BorrowedFd<'_>, name: &str) -> Result<(), Errno> {
        let from = (self.dir.as_fd(), self.name.as_str());
        match renameat_with(from.0, from.1, dir, name, RenameFlags::NOREPLACE) {
            // No rename without replacing here: a hard link, which never replaces, then the
            // temporary name goes.
            Err(Errno::INVAL | Errno::NOSYS) => {
                linkat(from.0, from.1, dir, name, AtFlags::empty())?;
                let _ = unlinkat(from.0, from.1, AtFlags::empty());
            }
            other => other?,
        }
        self.placed = true;
        Ok(())
    }
}

/// What a refused no-replace move found at the key: an object (the condition fails) or a
/// directory (the key is a prefix of others).
fn occupied(at: BorrowedFd<'_>, leaf: &str, key: &str) -> Result<(), StoreError> {
    match statat(at, leaf, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Directory => {
            Err(StoreError::KeyIsPrefix(key.to_string()))
        }
        _ => Err(StoreError::PreconditionFailed),
    }
}

impl Store {
    /// [`Store::publish`] if `condition` allows it: `NoSuchKey` or `PreconditionFailed`
    /// otherwise, and the temporary file is removed.
    pub fn publish_if(
        &self,
        mut temp: Temp,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        condition: &WriteCondition,
    ) -> Result<(), StoreError> {
        if condition.is_none() {
            return self.publish(temp, bucket_fd, bucket, key);
        }
        super::check_key(key)?;
        if is_folder_key(key) {
            return Err(StoreError::FolderHasBytes);
        }
        if self.fsync {
            temp.file.sync_all()?;
        }
        let (dirs, leaf) = split_key(key);
        let disk_leaf = self.leaf_name(&temp, leaf)?;
        let leaf: &str = &disk_leaf;
        let mut tries = 0;
        loop {
            // A missing directory means no object; If-Match then fails before any is made.
            let parent = if condition.if_match.is_some() {
                match self.existing_dirs(bucket_fd, bucket, dirs) {
                    Some(parent) => parent?,
                    None => return Err(condition.allows(None).unwrap_err().into()),
                }
            } else {
                self.make_dirs(bucket_fd, bucket, dirs)?
            };
            let at = parent.as_ref().map_or(bucket_fd, |fd| fd.as_fd());
            let placed = if condition.needs_absence() {
                temp.place_new_in(at, leaf).map_err(|e| (e, None))
            } else {
                self.replace_checked(&mut temp, at, leaf, key, condition)
            };
            match placed {
                Ok(()) => return Ok(()),
                Err((Errno::EXIST, None)) => return occupied(at, leaf, key),
                Err((_, Some(refused))) => return Err(refused),
                // The directory went (a delete of its last object), or the object changed
                // while it was being locked: look again.
                Err((Errno::NOENT | Errno::AGAIN, None)) if tries < RACE_RETRIES => tries += 1,
                Err((Errno::ISDIR | Errno::NOTEMPTY, None)) => {
                    return Err(StoreError::KeyIsPrefix(key.to_string()))
                }
                Err((e, None)) => return Err(e.into()),
            }
        }
    }

    /// Whether `condition` allows a write at `key` now (checked, not held): enough for a folder
    /// marker, which holds no bytes for a racing writer to lose, and a quick refusal before
    /// work that [`Store::publish_if`] would refuse.
    pub fn allows(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
        condition: &WriteCondition,
    ) -> Result<(), StoreError> {
        if condition.is_none() {
            return Ok(());
        }
        let current = match self.open_object(bucket_fd, bucket, key) {
            Ok(object) => Some(load_etag(&object.file)?),
            Err(StoreError::NoSuchKey) => None,
            Err(e) => return Err(e),
        };
        Ok(condition.allows(current.as_deref())?)
    }

    /// The directories `dirs` below the bucket if they all exist (`None` if one does not).
    fn existing_dirs(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        dirs: &str,
    ) -> Option<Result<Option<std::os::fd::OwnedFd>, StoreError>> {
        if dirs.is_empty() {
            return Some(Ok(None));
        }
        let path = self.names.disk_path(dirs);
        match crate::confine::open_beneath(bucket_fd, &path, super::DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Some(Ok(Some(fd))),
            Err(e) if crossed_link(&e) => {
                Some(Err(StoreError::SymlinkCrossed(format!("{bucket}/{dirs}"))))
            }
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => None,
            Err(e) => Some(Err(e.into())),
        }
    }

    /// Moves `temp` to `leaf` of `at` if the object there (or its absence) satisfies
    /// `condition`, holding that object's lock from the check to the rename. An error with a
    /// refusal is final; `AGAIN` and `NOENT` mean what was there changed meanwhile.
    fn replace_checked(
        &self,
        temp: &mut Temp,
        at: BorrowedFd<'_>,
        leaf: &str,
        key: &str,
        condition: &WriteCondition,
    ) -> Result<(), (Errno, Option<StoreError>)> {
        let refuse = |r: WriteRefused| (Errno::PERM, Some(StoreError::from(r)));
        let current = match openat(
            at,
            leaf,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                condition.allows(None).map_err(refuse)?;
                // Nothing there: the move must not replace what a racing writer puts there.
                return match temp.place_new_in(at, leaf) {
                    Err(Errno::EXIST) => Err((Errno::AGAIN, None)),
                    other => other.map_err(|e| (e, None)),
                };
            }
            Err(Errno::LOOP) => {
                return Err((
                    Errno::PERM,
                    Some(StoreError::SymlinkCrossed(key.to_string())),
                ))
            }
            Err(e) => return Err((e, None)),
        };
        let st = fstat(&current).map_err(|e| (e, None))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => {
                return Err((Errno::PERM, Some(StoreError::KeyIsPrefix(key.to_string()))))
            }
            _ => return Err((Errno::PERM, Some(StoreError::NoSuchKey))),
        }
        flock(&current, FlockOperation::LockExclusive).map_err(|e| (e, None))?;
        // Still the object at the key? A writer that held the lock may have replaced it.
        match statat(at, leaf, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(now) if now.st_ino == st.st_ino && now.st_dev == st.st_dev => {}
            Ok(_) | Err(Errno::NOENT) => return Err((Errno::AGAIN, None)),
            Err(e) => return Err((e, None)),
        }
        let file = File::from(current);
        let etag = load_etag(&file).map_err(|e| (Errno::IO, Some(StoreError::Io(e))))?;
        condition.allows(Some(&etag)).map_err(refuse)?;
        temp.place_in(at, leaf).map_err(|e| (e, None))?;
        // The lock goes with the replaced object's descriptor.
        drop(file);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{load_meta, Meta};
    use std::io::Write;
    use std::sync::{Arc, Barrier};

    #[test]
    fn writes_allow_what_s3_allows() {
        use WriteRefused::*;
        let e = "5d41402abc4b2a76b9719d911017c592";
        let w = |m: Option<Etag>, n: Option<Etag>| WriteCondition {
            if_match: m,
            if_none_match: n,
        };
        let absent = w(None, Some(Etag::Any));
        assert!(absent.needs_absence());
        assert_eq!(absent.allows(None), Ok(()));
        assert_eq!(absent.allows(Some(e)), Err(PreconditionFailed));
        let not_e = w(None, Some(Etag::Value(e.into())));
        assert!(!not_e.needs_absence());
        assert_eq!(not_e.allows(None), Ok(()));
        assert_eq!(not_e.allows(Some("other")), Ok(()));
        assert_eq!(not_e.allows(Some(e)), Err(PreconditionFailed));
        let is_e = w(Some(Etag::Value(e.into())), None);
        assert_eq!(is_e.allows(None), Err(NoSuchKey));
        assert_eq!(is_e.allows(Some("other")), Err(PreconditionFailed));
        assert_eq!(is_e.allows(Some(e)), Ok(()));
        let any = w(Some(Etag::Any), None);
        assert_eq!(any.allows(None), Err(NoSuchKey));
        assert_eq!(any.allows(Some("other")), Ok(()));
        assert!(w(None, None).is_none());
    }

    fn temp(store: &Store, body: &[u8]) -> Temp {
        let mut t = store.create_temp().unwrap();
        t.file.write_all(body).unwrap();
        crate::meta::store_meta(
            &t.file,
            &Meta {
                etag: crate::meta::hex(&md5_many::md5(body)),
                ..Meta::default()
            },
        )
        .unwrap();
        t
    }

    fn read(store: &Store, key: &str) -> Option<Vec<u8>> {
        let b = store.open_bucket("bkt").unwrap();
        let o = store.open_object(b.as_fd(), "bkt", key).ok()?;
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut &o.file, &mut out).unwrap();
        Some(out)
    }

    fn cond(m: Option<Etag>, n: Option<Etag>) -> WriteCondition {
        WriteCondition {
            if_match: m,
            if_none_match: n,
        }
    }

    #[test]
    fn conditional_writes_check_what_the_key_holds() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path(), false).unwrap();
        store.create_bucket("bkt").unwrap();
        let b = store.open_bucket("bkt").unwrap();
        let put = |key: &str, body: &[u8], c: WriteCondition| {
            store.publish_if(temp(&store, body), b.as_fd(), "bkt", key, &c)
        };
        let absent = || cond(None, Some(Etag::Any));
        let is = |body: &[u8]| Some(Etag::Value(crate::meta::hex(&md5_many::md5(body))));
        // If-Match needs an object, and makes no directory when there is none.
        assert!(matches!(
            put("d/k", b"x", cond(Some(Etag::Any), None)),
            Err(StoreError::NoSuchKey)
        ));
        assert!(!root.path().join("bkt/d").exists());
        put("d/k", b"one", absent()).unwrap();
        assert!(matches!(
            put("d/k", b"two", absent()),
            Err(StoreError::PreconditionFailed)
        ));
        assert!(matches!(
            put("d/k", b"two", cond(is(b"zzz"), None)),
            Err(StoreError::PreconditionFailed)
        ));
        assert!(matches!(
            put("d/k", b"two", cond(None, is(b"one"))),
            Err(StoreError::PreconditionFailed)
        ));
        assert_eq!(read(&store, "d/k").unwrap(), b"one");
        put("d/k", b"two", cond(is(b"one"), None)).unwrap();
        put("d/k", b"three", cond(None, is(b"one"))).unwrap();
        assert_eq!(read(&store, "d/k").unwrap(), b"three");
        // A directory at the key is a prefix, not an object.
        assert!(matches!(
            put("d", b"x", absent()),
            Err(StoreError::KeyIsPrefix(_))
        ));
        assert!(matches!(
            put("d", b"x", cond(Some(Etag::Any), None)),
            Err(StoreError::KeyIsPrefix(_))
        ));
        // Refused writes leave no temporary file behind.
        let tmp = root.path().join(crate::store::INTERNAL).join("tmp");
        let own = std::fs::read_dir(&tmp)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(std::fs::read_dir(own).unwrap().count(), 0);
        let meta = load_meta(&store.open_object(b.as_fd(), "bkt", "d/k").unwrap().file).unwrap();
        assert_eq!(meta.etag, crate::meta::hex(&md5_many::md5(b"three")));
    }

    #[test]
    fn if_match_writers_waiting_on_one_object_take_turns() {
        // Two writers expecting the object's ETag open it and wait for its lock, which the test
        // holds: the one that gets it second must see the object the first left, not the one
        // it opened.
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path(), false).unwrap();
        store.create_bucket("bkt").unwrap();
        let b = store.open_bucket("bkt").unwrap();
        let first = crate::meta::hex(&md5_many::md5(b"first"));
        store
            .publish_if(
                temp(&store, b"first"),
                b.as_fd(),
                "bkt",
                "k",
                &cond(None, None),
            )
            .unwrap();
        let held = File::open(root.path().join("bkt/k")).unwrap();
        flock(&held, FlockOperation::LockExclusive).unwrap();
        let writers: Vec<_> = (0..2)
            .map(|i| {
                let (store, first) = (store.clone(), first.clone());
                std::thread::spawn(move || {
                    let body = format!("writer {i}").into_bytes();
                    let b = store.open_bucket("bkt").unwrap();
                    let c = cond(Some(Etag::Value(first)), None);
                    let r = store.publish_if(temp(&store, &body), b.as_fd(), "bkt", "k", &c);
                    (body, r)
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(held);
        let results: Vec<_> = writers.into_iter().map(|h| h.join().unwrap()).collect();
        let won: Vec<_> = results.iter().filter(|(_, r)| r.is_ok()).collect();
        assert_eq!(won.len(), 1, "{results:?}");
        assert!(results
            .iter()
            .any(|(_, r)| matches!(r, Err(StoreError::PreconditionFailed))));
        assert_eq!(read(&store, "k").unwrap(), won[0].0);
    }

    #[test]
    fn of_racing_conditional_writers_one_wins() {
        let root = tempfile::tempdir().unwrap();
        let store = Store::open(root.path(), false).unwrap();
        store.create_bucket("bkt").unwrap();
        let first = crate::meta::hex(&md5_many::md5(b"first"));
        {
            let b = store.open_bucket("bkt").unwrap();
            store
                .publish_if(
                    temp(&store, b"first"),
                    b.as_fd(),
                    "bkt",
                    "k",
                    &cond(None, None),
                )
                .unwrap();
        }
        for c in [
            cond(None, Some(Etag::Any)),
            cond(Some(Etag::Value(first.clone())), None),
        ] {
            let key = if c.needs_absence() { "new/k" } else { "k" };
            let n = 16;
            let barrier = Arc::new(Barrier::new(n));
            let writers: Vec<_> = (0..n)
                .map(|i| {
                    let (store, barrier, c) = (store.clone(), barrier.clone(), c.clone());
                    std::thread::spawn(move || {
                        let body = format!("writer {i}").into_bytes();
                        let t = temp(&store, &body);
                        let b = store.open_bucket("bkt").unwrap();
                        barrier.wait();
                        (body, store.publish_if(t, b.as_fd(), "bkt", key, &c))
                    })
                })
                .collect();
            let results: Vec<_> = writers.into_iter().map(|h| h.join().unwrap()).collect();
            let won: Vec<_> = results.iter().filter(|(_, r)| r.is_ok()).collect();
            assert_eq!(won.len(), 1, "{c:?}");
            assert!(results
                .iter()
                .all(|(_, r)| r.is_ok() || matches!(r, Err(StoreError::PreconditionFailed))));
            assert_eq!(read(&store, key).unwrap(), won[0].0);
        }
    }
}
