//! The null target ("to test iobm itself", like fio's null engine): writes vanish, reads return
//! whatever the buffer held, every object has the length it was last written to.

use crate::{Capabilities, Capability, Handle, OpenOptions, Target};
use std::io;

#[derive(Debug, Default)]
pub struct NullTarget;

impl Target for NullTarget {
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&[
            Capability::Files,
            Capability::DirectIo,
            Capability::Rename,
            Capability::RangedReads,
        ])
    }

    fn probe_direct(&self, _probe: &str) -> io::Result<()> {
        Ok(())
    }

    fn open(&self, _name: &str, _options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        Ok(Box::new(NullHandle))
    }

    fn len(&self, _name: &str) -> io::Result<u64> {
        Ok(u64::MAX)
    }

    fn objects(&self, _worker: usize) -> io::Result<Box<dyn crate::Objects + '_>> {
        Ok(Box::new(crate::objects::ViaHandles::new(self)))
    }

    fn remove(&self, _name: &str) -> io::Result<()> {
        Ok(())
    }

    /// Every name is a file of no bytes.
    fn stat(&self, _name: &str) -> io::Result<crate::Stat> {
        Ok(crate::Stat { len: 0, dir: false })
    }

    fn rename(&self, _from: &str, _to: &str) -> io::Result<()> {
        Ok(())
    }
}

struct NullHandle;

impl Handle for NullHandle {
    fn write_at(&mut self, _buf: &[u8], _offset: u64) -> io::Result<()> {
        Ok(())
    }
    fn read_at(&mut self, _buf: &mut [u8], _offset: u64) -> io::Result<()> {
        Ok(())
    }
    fn seek(&mut self, _offset: u64) -> io::Result<()> {
        Ok(())
    }
    fn write_next(&mut self, _buf: &[u8]) -> io::Result<()> {
        Ok(())
    }
    fn read_next(&mut self, _buf: &mut [u8]) -> io::Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
    fn close(self: Box<Self>) -> io::Result<()> {
        Ok(())
    }
}
