//! An in-memory target: objects are byte vectors. For engine tests that need to read back what
//! was written, and for measuring the engine's own cost without a file system.

use crate::{Access, Capabilities, Handle, OpenOptions, Target};
use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, RwLock};

type Object = Arc<Mutex<Vec<u8>>>;

#[derive(Debug, Default)]
pub struct MemTarget {
    objects: RwLock<HashMap<String, Object>>,
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
}

fn not_found(name: &str) -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, format!("no object '{name}'"))
}

impl Target for MemTarget {
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        let mut objects = self.objects.write().unwrap();
        let object = match options.access {
            Access::Create => {
                if objects.contains_key(name) {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        name.to_string(),
                    ));
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
