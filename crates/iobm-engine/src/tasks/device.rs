//! A block task's buffer in a device's memory (`--mem gpu`): what is written is made on the
//! device before the operation (untimed), and each operation moves it through a host bounce
//! buffer, the copy timed inside the operation and counted apart (gdsio's `-x 2`); `--verify`
//! reads the device's bytes back, outside the timing.

use crate::workload::{Op, Phase};
use iobm_target::memory::{AlignedHostMemory, Buffer, DeviceBuf, HostBuf};
use std::io;
use std::time::Instant;

/// A worker's device buffer and the time its timed copies took.
pub(crate) struct OnDevice {
    buf: Box<dyn DeviceBuf>,
    copy_ns: u64,
    /// What the device holds, copied back for `--verify`.
    seen: Option<HostBuf>,
}

/// Worker `index`'s buffer of `len` bytes where the phase places it: host memory alone, or a
/// host bounce buffer and the device buffer behind it. Device buffers move one operation at a
/// time, for reads and writes only.
pub(crate) fn place(
    phase: &Phase,
    index: usize,
    len: usize,
    queued: bool,
) -> io::Result<(HostBuf, Option<OnDevice>)> {
    let memory = phase.memory.memory(index)?;
    let Some(_) = phase.memory.devices() else {
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
    let device = OnDevice {
        buf,
        copy_ns: 0,
        seen: phase.verify.is_some().then(|| AlignedHostMemory.host(len)),
    };
    Ok((memory.bounce(len)?, Some(device)))
}

impl OnDevice {
    /// Puts what an operation will write on the device (untimed: the data an application has
    /// there).
    pub(crate) fn stage(&mut self, data: &[u8]) -> io::Result<()> {
        self.buf.copy_in(0, data)
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
