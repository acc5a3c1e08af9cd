//! An in-memory target: objects are byte vectors, directories a set of names. For engine tests
//! that need to read back what was written, and for measuring the engine's own cost without a
//! file system.

use crate::{Access, Capabilities, Capability, DirEntry, Handle, OpenOptions, Stat, Target};
use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::{Arc, Mutex, RwLock};

type Object = Arc<Mutex<Vec<u8>>>;

#[derive(Debug, Default)]
pub struct MemTarget {
    objects: RwLock<HashMap<String, Object>>,
    /// Directories made by [`Target::create_dir`]: a name in one (`d/f`) needs it made first.
    dirs: RwLock<HashSet<String>>,
}

impl MemTarget {
    pub fn new() -> Self {
        Self::default()
    }

    /// A copy of an object's bytes, for tests.
    pub fn contents(&self, name: &str) -> Option<Vec<u8>> {
        let objects = self.objects.read().unwrap();
        objects.get(name).map(|o| o.lock().unwrap().clone())
    }

    pub fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.objects.read().unwrap().keys().cloned().collect();
        names.sort();
        names
    }

    /// The directories, sorted, for tests.
    pub fn dir_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.dirs.read().unwrap().iter().cloned().collect();
        names.sort();
        names
    }

    /// Fails with `NotFound` when `name` is in a directory that was not made.
    fn check_parent(&self, name: &str) -> io::Result<()> {
        match name.rsplit_once('/') {
            Some((parent, _)) if !self.dirs.read().unwrap().contains(parent) => {
                Err(not_found(parent))
            }
            _ => Ok(()),
        }
    }
}

fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no object '{name}'"))
}

fn exists(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::AlreadyExists, name.to_string())
}

/// Whether `name` is `dir` or inside it.
fn within(name: &str, dir: &str) -> bool {
    name.strip_prefix(dir)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

impl Target for MemTarget {
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[
            Capability::Files,
            Capability::Directories,
            Capability::Rename,
            Capability::RangedReads,
        ])
    }

    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        if matches!(options.access, Access::Create | Access::Replace) {
            self.check_parent(name)?;
            if self.dirs.read().unwrap().contains(name) {
                return Err(exists(name));
            }
        }
        let mut objects = self.objects.write().unwrap();
        let object = match options.access {
            Access::Create => {
                if objects.contains_key(name) {
                    return Err(exists(name));
                }
                objects.entry(name.to_string()).or_default().clone()
            }
            Access::Replace => {
                let object = objects.entry(name.to_string()).or_default().clone();
                object.lock().unwrap().clear();
                object
            }
            Access::Read | Access::Write => {
                objects.get(name).ok_or_else(|| not_found(name))?.clone()
            }
        };
        Ok(Box::new(MemHandle {
            object,
            position: 0,
        }))
    }

    fn len(&self, name: &str) -> io::Result<u64> {
        let objects = self.objects.read().unwrap();
        let object = objects.get(name).ok_or_else(|| not_found(name))?;
        let len = object.lock().unwrap().len() as u64;
        Ok(len)
    }

    fn objects(&self, _worker: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
        Ok(Box::new(crate::objects::ViaHandles::new(self)))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let mut objects = self.objects.write().unwrap();
        objects
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }

    fn create_dir(&self, name: &str) -> io::Result<()> {
        self.check_parent(name)?;
        let objects = self.objects.read().unwrap();
        let mut dirs = self.dirs.write().unwrap();
        if objects.contains_key(name) || !dirs.insert(name.to_string()) {
            return Err(exists(name));
        }
        Ok(())
    }

    /// Removes an empty directory (a scan of every name: for tests, not for millions).
    fn remove_dir(&self, name: &str) -> io::Result<()> {
        let objects = self.objects.read().unwrap();
        let mut dirs = self.dirs.write().unwrap();
        if !dirs.contains(name) {
            return Err(not_found(name));
        }
        let inside = |n: &String| n.len() > name.len() && within(n, name);
        if objects.keys().any(inside) || dirs.iter().any(inside) {
            return Err(io::Error::from_raw_os_error(libc::ENOTEMPTY));
        }
        dirs.remove(name);
        Ok(())
    }

    fn stat(&self, name: &str) -> io::Result<Stat> {
        if self.dirs.read().unwrap().contains(name) {
            return Ok(Stat { len: 0, dir: true });
        }
        self.len(name).map(|len| Stat { len, dir: false })
    }

    /// The names directly inside `name` (a scan of every name: for tests, not for millions).
    fn list_dir(&self, name: &str) -> io::Result<Vec<DirEntry>> {
        let objects = self.objects.read().unwrap();
        let dirs = self.dirs.read().unwrap();
        if !name.is_empty() && !dirs.contains(name) {
            return Err(not_found(name));
        }
        let child = |n: &String| match name {
            "" => (!n.contains('/')).then(|| n.clone()),
            _ => n
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('/'))
                .filter(|rest| !rest.contains('/'))
                .map(str::to_string),
        };
        let files = objects
            .keys()
            .filter_map(child)
            .map(|name| DirEntry { name, dir: false });
        let subdirs = dirs
            .iter()
            .filter_map(child)
            .map(|name| DirEntry { name, dir: true });
        Ok(files.chain(subdirs).collect())
    }

    /// Renames a file, or a directory with everything in it.
    fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        self.check_parent(to)?;
        let mut objects = self.objects.write().unwrap();
        let mut dirs = self.dirs.write().unwrap();
        if let Some(object) = objects.remove(from) {
            if dirs.contains(to) {
                objects.insert(from.to_string(), object);
                return Err(io::Error::from_raw_os_error(libc::EISDIR));
            }
            objects.insert(to.to_string(), object);
            return Ok(());
        }
        if !dirs.contains(from) {
            return Err(not_found(from));
        }
        if within(to, from) {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let moved = |n: &str| format!("{to}{}", &n[from.len()..]);
        let names: Vec<String> = objects
            .keys()
            .filter(|n| within(n, from))
            .cloned()
            .collect();
        for n in names {
            let object = objects.remove(&n).expect("listed");
            objects.insert(moved(&n), object);
        }
        let names: Vec<String> = dirs.iter().filter(|n| within(n, from)).cloned().collect();
        for n in names {
            dirs.remove(&n);
            dirs.insert(moved(&n));
        }
        Ok(())
    }
}

struct MemHandle {
    object: Object,
    position: u64,
}

impl Handle for MemHandle {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()> {
        let mut data = self.object.lock().unwrap();
        let end = offset as usize + buf.len();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[offset as usize..end].copy_from_slice(buf);
        Ok(())
    }

    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let data = self.object.lock().unwrap();
        let end = offset as usize + buf.len();
        if data.len() < end {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.copy_from_slice(&data[offset as usize..end]);
        Ok(())
    }

    fn seek(&mut self, offset: u64) -> io::Result<()> {
        self.position = offset;
        Ok(())
    }

    fn write_next(&mut self, buf: &[u8]) -> io::Result<()> {
        self.write_at(buf, self.position)?;
        self.position += buf.len() as u64;
        Ok(())
    }

    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.read_at(buf, self.position)?;
        self.position += buf.len() as u64;
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn close(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}
