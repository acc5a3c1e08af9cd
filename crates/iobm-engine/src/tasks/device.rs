//! A block task's buffer in a device's memory (`--mem gpu`): what is written is made on the
//! device before the operation (untimed), and each operation moves it through a host bounce
//! buffer, the copy timed inside the operation and counted apart (gdsio's `-x 2`), or, on the
//! direct path (`--gds`), cuFile reads and writes the device buffer from the file's descriptor
//! itself (gdsio's `-x 0`): the buffer registered when it is placed, the file when it is open,
//! both deregistered before the file closes. `--verify` reads the device's bytes back, outside
//! the timing.

use crate::workload::{Op, Phase};
use iobm_target::memory::{
    AlignedHostMemory, Buffer, CuFile, CuFileFile, DeviceBuf, DevicePath, HostBuf,
};
use std::io;
use std::os::fd::RawFd;
use std::time::Instant;

/// A worker's device buffer and the time its timed copies took.
pub(crate) struct OnDevice {
    buf: Box<dyn DeviceBuf>,
    copy_ns: u64,
    /// What the device holds, copied back for `--verify`.
    seen: Option<HostBuf>,
    /// The direct path's cuFile, with the buffer registered, and the file once registered.
    direct: Option<(CuFile, Option<CuFileFile>)>,
}

/// Worker `index`'s buffer of `len` bytes where the phase places it: host memory alone, or a
/// host bounce buffer and the device buffer behind it (on the direct path, no bounce buffer:
/// an empty one). Device buffers move one operation at a time, for reads and writes only.
pub(crate) fn place(
    phase: &Phase,
    index: usize,
    len: usize,
    queued: bool,
) -> io::Result<(HostBuf, Option<OnDevice>)> {
    let memory = phase.memory.memory(index)?;
    let Some(devices) = phase.memory.devices() else {
        return Ok((memory.alloc(len)?.into_host()?, None));
    };
    let refuse = |what: &str| Err(io::Error::new(io::ErrorKind::Unsupported, what.to_string()));
    if queued {
        return refuse("buffers on a device move one request at a time (--engine sync)");
    }
    if !matches!(phase.op, Op::Read | Op::Write | Op::ReadWrite { .. }) {
        return refuse("buffers on a device serve block reads and writes only");
    }
    let Buffer::Device(buf) = memory.alloc(len)? else {
        return refuse("a device's memory gave host memory");
    };
    let mut device = OnDevice {
        buf,
        copy_ns: 0,
        seen: phase.verify.is_some().then(|| AlignedHostMemory.host(len)),
        direct: None,
    };
    if devices.path == DevicePath::Direct {
        let cufile = devices.cufile().map_err(io::Error::other)?;
        cufile.register_buf(&*device.buf)?;
        device.direct = Some((cufile, None));
        return Ok((AlignedHostMemory.host(0), Some(device)));
    }
    Ok((memory.bounce(len)?, Some(device)))
}

impl OnDevice {
    /// Puts what an operation will write on the device (untimed: the data an application has
    /// there).
    pub(crate) fn stage(&mut self, data: &[u8]) -> io::Result<()> {
        self.buf.copy_in(0, data)
    }

    /// Whether cuFile moves the bytes (no bounce buffer).
    pub(crate) fn is_direct(&self) -> bool {
        self.direct.is_some()
    }

    /// On the direct path, registers the open file's descriptor with cuFile (once).
    pub(crate) fn attach(&mut self, fd: Option<RawFd>) -> io::Result<()> {
        let Some((cufile, file @ None)) = &mut self.direct else {
            return Ok(());
        };
        let fd = fd.ok_or_else(|| {
            io::Error::from(iobm_target::Unsupported(iobm_target::Capability::RawFd))
        })?;
        *file = Some(cufile.register_file(fd)?);
        Ok(())
    }

    /// Deregisters the file from cuFile, before it closes.
    pub(crate) fn detach(&mut self) {
        if let Some((_, file)) = &mut self.direct {
            file.take();
        }
    }

    /// The direct path's read or write of the operation's `len` bytes at `offset` (cuFile's).
    pub(crate) fn transfer(&mut self, writes: bool, len: usize, offset: u64) -> io::Result<()> {
        let Some((_, Some(file))) = &mut self.direct else {
            return Err(io::Error::other("cuFile has no file registered"));
        };
        if writes {
            file.write(&*self.buf, len, offset)
        } else {
            file.read(&mut *self.buf, len, offset)
        }
    }

    /// Copies the device's bytes into the bounce buffer, timed (before a write).
    pub(crate) fn copy_to_host(&mut self, bounce: &mut [u8]) -> io::Result<()> {
        let t0 = Instant::now();
        let copied = self.buf.copy_out(0, bounce);
        self.copy_ns += t0.elapsed().as_nanos() as u64;
        copied
    }

    /// Copies what a read brought into the bounce buffer onto the device, timed.
    pub(crate) fn copy_from_host(&mut self, bounce: &[u8]) -> io::Result<()> {
        let t0 = Instant::now();
        let copied = self.buf.copy_in(0, bounce);
        self.copy_ns += t0.elapsed().as_nanos() as u64;
        copied
    }

    /// The first `len` bytes the device holds, copied back for `--verify` (untimed).
    pub(crate) fn read_back(&mut self, len: usize) -> io::Result<&[u8]> {
        let seen = self.seen.as_mut().expect("kept for --verify");
        self.buf.copy_out(0, &mut seen[..len])?;
        Ok(&seen[..len])
    }

    /// The timed copies' nanoseconds since the last call.
    pub(crate) fn take_copy_ns(&mut self) -> u64 {
        std::mem::take(&mut self.copy_ns)
    }
}

impl Drop for OnDevice {
    /// The file deregistered, then the buffer, before the buffer is freed.
    fn drop(&mut self) {
        self.detach();
        if let Some((cufile, _)) = &self.direct {
            let _ = cufile.deregister_buf(&*self.buf);
        }
    }
}
