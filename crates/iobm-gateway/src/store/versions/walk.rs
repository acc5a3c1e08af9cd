//! The keys of a bucket that have versions kept aside, in S3's order (bytewise), below a
//! prefix and after a marker, with common prefixes as a listing groups them: a depth-first
//! walk of one bucket's versions tree, where a key's directory holds its versions (files)
//! beside the directories of the keys below it. Each directory is read whole when entered.

use crate::store::each_entry;
use crate::versions::{decode_component, Name, UNDER_WAY};
use rustix::fs::{openat, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// What the walk finds, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kept {
    /// A key and the versions kept of it (unordered).
    Key(String, Vec<Name>),
    /// A common prefix, once.
    Prefix(String),
}

/// A directory entry of the walk: the key it names (`sub` false: the key of the directory,
/// whose versions are its files) or the keys below it (`sub`: they sort after `name/`).
#[derive(Debug, Clone)]
struct Item {
    name: String,
    file: String,
    sub: bool,
}

impl Item {
    fn sort_key(&self) -> impl Iterator<Item = u8> + '_ {
        self.name.bytes().chain(self.sub.then_some(b'/'))
    }
}

struct Level {
    fd: OwnedFd,
    /// The keys' common start at this directory (its key and `/`; "" at the bucket).
    base: String,
    items: Vec<Item>,
    next: usize,
}

/// The versions kept in a key's directory (its files named as versions).
pub fn versions_in(dir: BorrowedFd<'_>) -> io::Result<Vec<Name>> {
    let mut out = Vec::new();
    each_entry(dir, |name, ty| {
        if ty == FileType::RegularFile && name != UNDER_WAY {
            out.extend(Name::parse(name));
        }
        true
    })?;
    Ok(out)
}

/// Opens directory `name` of `dir`; `None` if it is gone.
pub fn open_dir(dir: BorrowedFd<'_>, name: &str) -> io::Result<Option<OwnedFd>> {
    match openat(dir, name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::NOENT | Errno::NOTDIR) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Keys with kept versions and common prefixes below `prefix`, after `after`.
pub struct KeptWalk {
    prefix: String,
    delimiter: Option<String>,
    after: Option<String>,
    stack: Vec<Level>,
    last_prefix: Option<String>,
}

impl KeptWalk {
    /// A walk of the versions tree of one bucket (`root`: its directory there, if any).
    pub fn new(
        root: Option<OwnedFd>,
        prefix: &str,
        delimiter: Option<&str>,
        after: Option<&str>,
    ) -> io::Result<KeptWalk> {
        let mut walk = KeptWalk {
            prefix: prefix.to_string(),
            delimiter: delimiter.filter(|d| !d.is_empty()).map(str::to_string),
            after: after.map(str::to_string),
            stack: Vec::new(),
            last_prefix: None,
        };
        if let Some(root) = root {
            walk.push(root, String::new())?;
        }
        Ok(walk)
    }

    fn push(&mut self, fd: OwnedFd, base: String) -> io::Result<()> {
        let mut items = Vec::new();
        each_entry(fd.as_fd(), |file, ty| {
            if ty == FileType::Directory && Name::parse(file).is_none() {
                let name = decode_component(file).to_string();
                for sub in [false, true] {
                    let (name, file) = (name.clone(), file.to_string());
                    items.push(Item { name, file, sub });
                }
            }
            true
        })?;
        items.sort_by(|a, b| a.sort_key().cmp(b.sort_key()));
        self.stack.push(Level {
            fd,
            base,
            items,
            next: 0,
        });
        Ok(())
    }

    /// The next key or common prefix, or `None` at the end.
    pub fn next_kept(&mut self) -> io::Result<Option<Kept>> {
        loop {
            let Some(level) = self.stack.last_mut() else {
                return Ok(None);
            };
            let Some(item) = level.items.get(level.next).cloned() else {
                self.stack.pop();
                continue;
            };
            level.next += 1;
            let mut key = format!("{}{}", level.base, item.name);
            if item.sub {
                key.push('/');
            }
            if !key.starts_with(&self.prefix) {
                if key > self.prefix {
                    // Past the prefix's keys: nothing further here matches.
                    self.stack.pop();
                } else if item.sub && self.prefix.starts_with(&key) {
                    if let Some(dir) = self.open_item(&item)? {
                        self.push(dir, key)?;
                    }
                }
                continue;
            }
            if let Some(common) = self.common_prefix(&key) {
                let seen = self.last_prefix.as_ref() == Some(&common)
                    || self.after.as_ref().is_some_and(|a| common <= *a);
                if !seen && self.item_has_key(&item, &key)? {
                    self.last_prefix = Some(common.clone());
                    return Ok(Some(Kept::Prefix(common)));
                }
                continue;
            }
            if item.sub {
                // Every key below sorts at or before the marker: skip them all.
                let passed =
                    (self.after.as_ref()).is_some_and(|a| *a > key && !a.starts_with(&key));
                if !passed {
                    if let Some(dir) = self.open_item(&item)? {
                        self.push(dir, key)?;
                    }
                }
                continue;
            }
            if self.after.as_ref().is_some_and(|a| key <= *a) {
                continue;
            }
            let Some(dir) = self.open_item(&item)? else {
                continue;
            };
            let versions = versions_in(dir.as_fd())?;
            if !versions.is_empty() {
                return Ok(Some(Kept::Key(key, versions)));
            }
        }
    }

    /// The directory of an item of the deepest level (where it was found); `None` if gone.
    fn open_item(&self, item: &Item) -> io::Result<Option<OwnedFd>> {
        let level = self.stack.last().expect("an item comes from a level");
        open_dir(level.fd.as_fd(), &item.file)
    }

    /// Whether an item names a key with versions (the directory's own, or one below it).
    fn item_has_key(&self, item: &Item, key: &str) -> io::Result<bool> {
        let Some(dir) = self.open_item(item)? else {
            return Ok(false);
        };
        if !item.sub {
            return Ok(!versions_in(dir.as_fd())?.is_empty());
        }
        let mut below = KeptWalk::new(None, "", None, None)?;
        below.push(dir, key.to_string())?;
        Ok(below.next_kept()?.is_some())
    }

    /// The common prefix `key` falls in (for keys below a directory, `key` ends in `/`: the
    /// delimiter within it puts all of them there).
    fn common_prefix(&self, key: &str) -> Option<String> {
        let d = self.delimiter.as_deref()?;
        let i = key.get(self.prefix.len()..)?.find(d)?;
        Some(key[..self.prefix.len() + i + d.len()].to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::versions::{encode_component, Kind};

    /// A versions tree with one version of each key.
    fn tree(keys: &[&str]) -> (tempfile::TempDir, Name) {
        let root = tempfile::tempdir().unwrap();
        let v = Name::new(false, Kind::Data);
        for key in keys {
            let mut dir = root.path().to_path_buf();
            for c in key.split('/') {
                dir.push(encode_component(c));
            }
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(v.file_name()), b"").unwrap();
        }
        (root, v)
    }

    fn walk(
        root: &tempfile::TempDir,
        prefix: &str,
        delim: Option<&str>,
        after: Option<&str>,
    ) -> Vec<String> {
        let fd = rustix::fs::open(root.path(), DIR_FLAGS, Mode::empty()).unwrap();
        let mut w = KeptWalk::new(Some(fd), prefix, delim, after).unwrap();
        let mut out = Vec::new();
        while let Some(found) = w.next_kept().unwrap() {
            out.push(match found {
                Kept::Key(k, v) => {
                    assert_eq!(v.len(), 1);
                    k
                }
                Kept::Prefix(p) => format!("P:{p}"),
            });
        }
        out
    }

    #[test]
    fn keys_come_in_s3_order_with_prefixes_and_markers() {
        let v = Name::new(false, Kind::Data).file_name();
        let odd = format!("d/{v}");
        let mut keys = vec!["a", "a-", "a/x", "a/y/z", "a0", "b", "d/e", "d-"];
        keys.push(&odd);
        let (root, _) = tree(&keys);
        let mut sorted: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
        sorted.sort();
        assert_eq!(walk(&root, "", None, None), sorted);
        assert_eq!(walk(&root, "a", Some("/"), None), ["a", "a-", "P:a/", "a0"]);
        assert_eq!(walk(&root, "a/", Some("/"), None), ["a/x", "P:a/y/"]);
        assert_eq!(
            walk(&root, "", Some("/"), Some("a/")),
            ["a0", "b", "d-", "P:d/"]
        );
        assert_eq!(walk(&root, "", None, Some("a/x")), sorted[3..]);
        assert_eq!(walk(&root, "a/y", None, None), ["a/y/z"]);
        assert_eq!(walk(&root, "", Some("-"), None)[..2], ["a", "P:a-"]);
        assert!(walk(&root, "zz", None, None).is_empty());
    }
}
