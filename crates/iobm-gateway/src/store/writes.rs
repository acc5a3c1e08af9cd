//! Writing and deleting objects: the temporary files new objects are written to, the
//! directories a key needs (made again when a concurrent delete prunes them), publishing into
//! place, and deletion with the pruning of the directories it leaves empty.

use super::{
    check_key, is_folder_key, is_missing, split_key, unlabelled, Object, Store, StoreError, Temp,
    DIR_FLAGS, RACE_RETRIES,
};
use crate::confine::{crossed_link, open_beneath};
use crate::meta::{is_folder, unmark_folder};
use rustix::fs::{mkdirat, openat, statat, unlinkat, AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::Ordering;

impl Store {
    /// A new temporary file of this instance.
    pub fn create_temp(&self) -> io::Result<Temp> {
        let name = format!("{:016x}", self.next_temp.fetch_add(1, Ordering::Relaxed));
        let fd = openat(
            self.tmp_fd.as_fd(),
            name.as_str(),
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o666),
        )?;
        Ok(Temp {
            dir: self.tmp_fd.clone(),
            name,
            file: File::from(fd),
            placed: false,
        })
    }

    /// Opens (making them as needed) the directories `dirs` below the bucket; `None` for the
    /// bucket itself. Retries when a concurrent delete prunes a directory just made.
    pub(super) fn make_dirs(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        dirs: &str,
    ) -> Result<Option<OwnedFd>, StoreError> {
        let mut tries = 0;
        loop {
            match self.make_dirs_once(bucket_fd, bucket, dirs) {
                // A concurrent delete pruned a directory of the path meanwhile (even one
                // already opened, so that nothing can be made in it): walk it again.
                Err(StoreError::Io(e))
                    if e.raw_os_error() == Some(libc::ENOENT) && tries < RACE_RETRIES =>
                {
                    tries += 1
                }
                done => return done,
            }
        }
    }

    fn make_dirs_once(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        dirs: &str,
    ) -> Result<Option<OwnedFd>, StoreError> {
        let mut held: Option<OwnedFd> = None;
        let mut walked = 0;
        for name in dirs.split('/').filter(|n| !n.is_empty()) {
            walked += name.len() + 1;
            let at = held.as_ref().map_or(bucket_fd, |fd| fd.as_fd());
            let disk = self.names.disk_name(name);
            match mkdirat(at, &*disk, Mode::from_bits_truncate(0o777)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            let fd = match open_beneath(at, &disk, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => fd,
                Err(e) if crossed_link(&e) => {
                    return Err(StoreError::SymlinkCrossed(format!(
                        "{bucket}/{}",
                        &dirs[..walked - 1]
                    )))
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                    return Err(StoreError::PrefixIsObject(dirs[..walked - 1].to_string()))
                }
                Err(e) => return Err(e.into()),
            };
            if self.names.derives(name) {
                // Every writer labels it (with the same name): none publishes below it before.
                super::names::label(&fd, name).map_err(unlabelled)?;
            }
            held = Some(fd);
        }
        Ok(held)
    }

    /// Moves a complete temporary file into place as `key`, atomically (readers see the old
    /// object or the new one), making the key's directories.
    pub fn publish(
        &self,
        mut temp: Temp,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<(), StoreError> {
        check_key(key)?;
        if is_folder_key(key) {
            return Err(StoreError::FolderHasBytes);
        }
        if self.fsync {
            temp.file.sync_all()?;
        }
        let (dirs, leaf) = split_key(key);
        let leaf = self.leaf_name(&temp, leaf)?;
        let mut tries = 0;
        loop {
            let parent = self.make_dirs(bucket_fd, bucket, dirs)?;
            let at = parent.as_ref().map_or(bucket_fd, |fd| fd.as_fd());
            match temp.place_in(at, &leaf) {
                Ok(()) => return Ok(()),
                // A delete of the last sibling removed the directory after it was opened.
                Err(Errno::NOENT) if tries < RACE_RETRIES => tries += 1,
                Err(Errno::ISDIR | Errno::NOTEMPTY | Errno::EXIST) => {
                    return Err(StoreError::KeyIsPrefix(key.to_string()))
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Deletes an object if there is one (deleting a missing key succeeds, as in S3), then the
    /// directories its removal left empty.
    pub fn delete_object(
        &self,
        bucket_fd: BorrowedFd<'_>,
        bucket: &str,
        key: &str,
    ) -> Result<(), StoreError> {
        check_key(key)?;
        let path = self.names.disk_path(key.strip_suffix('/').unwrap_or(key));
        if is_folder_key(key) {
            if let Ok(Object { file, .. }) = self.open_folder(bucket_fd, bucket, key) {
                unmark_folder(&file);
                drop(file);
                self.prune(bucket_fd, &path);
            }
            return Ok(());
        }
        let (dirs, leaf) = split_key(&path);
        let parent = if dirs.is_empty() {
            None
        } else {
            match open_beneath(bucket_fd, dirs, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => Some(fd),
                Err(e) if crossed_link(&e) => {
                    return Err(StoreError::SymlinkCrossed(format!("{bucket}/{key}")))
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::ENOTDIR)) => {
                    return Ok(())
                }
                Err(e) => return Err(e.into()),
            }
        };
        let at = parent.as_ref().map_or(bucket_fd, |fd| fd.as_fd());
        let st = match statat(at, leaf, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(e) if is_missing(e) => return Ok(()),
            Err(e) => return Err(e.into()),
        };
        match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => match unlinkat(at, leaf, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            },
            FileType::Symlink => return Err(StoreError::SymlinkCrossed(format!("{bucket}/{key}"))),
            _ => return Ok(()), // a directory (a prefix) or something else: not an object
        }
        drop(parent);
        self.prune(bucket_fd, dirs);
        Ok(())
    }

    /// Removes the empty directories of `dirs` (names on disk), deepest first, stopping at the
    /// first that is not empty.
    fn prune(&self, bucket_fd: BorrowedFd<'_>, dirs: &str) {
        let mut rest = dirs;
        while !rest.is_empty() {
            let (parent, name) = split_key(rest);
            let held = if parent.is_empty() {
                None
            } else {
                match open_beneath(bucket_fd, parent, DIR_FLAGS, Mode::empty()) {
                    Ok(fd) => Some(fd),
                    Err(_) => return,
                }
            };
            let at = held.as_ref().map_or(bucket_fd, |fd| fd.as_fd());
            // A folder marker stays, empty or not.
            let marked = open_beneath(at, name, DIR_FLAGS, Mode::empty()).map_or(true, is_folder);
            if marked || unlinkat(at, name, AtFlags::REMOVEDIR).is_err() {
                return;
            }
            rest = parent;
        }
    }
}
