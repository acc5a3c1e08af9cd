//! What one worker of a file phase does per operation ([`crate::task::Task`]): block tasks work
//! on a region of one file; metadata tasks (`tasks/meta.rs`) on many files and directories.

use crate::data::{file_key, DataSource, Generator, CHUNK, STAMP_LEN};
use crate::permute::{mix, Permutation};
use crate::task::Task;
use crate::workload::{
    FsyncPolicy, Layout, Op, Opening, Pattern, PerChar, Phase, Region, StopRule,
};
use iobm_stats::access::Picker;
use iobm_target::memory::{AlignedHostMemory, HostBuf};
use iobm_target::{Access, Handle, OpenOptions, Target};
use std::io;
use std::time::Instant;

/// A worker's seed of its random choices.
pub(crate) fn seed(run_id: u64, index: usize) -> u64 {
    run_id ^ (index as u64).wrapping_mul(0x9e37_79b9)
}

/// What a writing phase's operations write (None for reads).
pub(crate) fn data_source(phase: &Phase, run_id: u64) -> Option<DataSource> {
    phase
        .op
        .writes()
        .then(|| DataSource::new(phase.data, phase.block as usize, run_id))
}

/// Builds worker `index`'s block task over its region of one file (opening the file and
/// filling buffers: untimed); `queued` when io_uring fills its own buffers (then the task
/// makes no data). An error comes with what was being done.
pub(crate) fn block_task<'a>(
    target: &'a dyn Target,
    phase: &'a Phase,
    run_id: u64,
    index: usize,
    queued: bool,
) -> Result<BlockTask<'a>, (io::Error, String)> {
    let region = phase.layout.regions[index];
    let file_name = phase.layout.files[region.file].name.as_str();
    // A timed open waits for the worker's start (io_uring's queue and mmap's mapping need
    // the file at once).
    let at_once = queued || crate::needs::mapped(phase);
    let handle = match (phase.opening, at_once) {
        (Opening::Before, _) | (_, true) => Some(open_block_file(target, phase, file_name)?),
        _ => None,
    };
    if phase.interleave.is_some_and(|il| {
        il.transfer == 0 || il.transfer != phase.block || !region.len.is_multiple_of(il.transfer)
    }) {
        let e = io::Error::new(io::ErrorKind::InvalidInput, "one transfer per operation");
        return Err((e, format!("interleave {file_name}")));
    }
    let blocks = region.len.div_ceil(phase.block);
    let order_seed = run_id ^ ((index as u64) << 32);
    let data = if queued {
        None
    } else {
        data_source(phase, run_id)
    };
    let (buf, mut device) = device::place(phase, index, phase.block as usize, queued)
        .map_err(|e| (e, "place buffers".to_string()))?;
    if let (Some(device), Some(handle)) = (&mut device, &handle) {
        device
            .attach(handle.raw_fd())
            .map_err(|e| (e, format!("register {file_name} with cuFile")))?;
    }
    Ok(BlockTask {
        phase,
        target,
        handle,
        region,
        file_name,
        blocks,
        visit: region.visit.unwrap_or(blocks).min(blocks),
        order: match phase.pattern {
            Pattern::Random { seed: s } => {
                Order::Shuffled(Permutation::new(blocks, s ^ order_seed))
            }
            // Drawn among the blocks visited, spread by the order of a shuffled pass.
            Pattern::Skewed { seed: s, access } => Order::Skewed {
                spread: Permutation::new(blocks, s ^ order_seed),
                picker: access.picker(region.visit.unwrap_or(blocks).min(blocks)),
            },
            Pattern::Sequential => Order::Sequential,
        },
        wrap: matches!(phase.stop, StopRule::Duration(_) | StopRule::Ops(_)),
        order_seed,
        rng: mix(seed(run_id, index) ^ 0x5eed),
        data,
        buf,
        device,
        staged: Ok(()),
        file: file_key(file_name),
        verify: verifier(phase),
        offset: 0,
        len: 0,
        rewrite: false,
        checksum: 0,
    })
}

/// Opens a block phase's file as the phase reads or writes it.
fn open_block_file(
    target: &dyn Target,
    phase: &Phase,
    file_name: &str,
) -> Result<Box<dyn Handle>, (io::Error, String)> {
    let access = match (phase.op.writes(), phase.truncate, phase.opening) {
        (false, _, _) => Access::Read,
        (true, _, Opening::TimedCreate) => Access::Create,
        (true, false, _) => Access::Write,
        (true, true, _) => Access::Replace,
    };
    let options = OpenOptions {
        access,
        direct: phase.direct,
    };
    let handle = target
        .open(file_name, options)
        .map_err(|e| (e, format!("open {file_name}")))?;
    if let Some(advice) = phase.fadvise {
        // The target declares RAW_FD (`needs`), so its handles have one.
        let fd = handle.raw_fd().ok_or_else(|| {
            let e = iobm_target::Unsupported(iobm_target::Capability::RawFd);
            (e.into(), format!("fadvise {file_name}"))
        })?;
        fadvise::fadvise(fd, advice)
            .map_err(|e| (e, format!("fadvise {} {file_name}", advice.name())))?;
    }
    Ok(handle)
}

/// A worker's buffer of `len` bytes, where the phase places them ([`Phase::memory`]); host
/// memory only (metadata tasks: device buffers serve block tasks, `tasks/device.rs`).
pub(crate) fn buffer(phase: &Phase, index: usize, len: usize) -> io::Result<HostBuf> {
    let placed = phase.memory.memory(index)?.alloc(len)?;
    placed.into_host().map_err(io::Error::from)
}

/// The phase's verifier where it reads and checks what it reads (`--verify`; IO500's reads).
fn verifier(phase: &Phase) -> Option<Verifier> {
    let reads = matches!(
        phase.op,
        Op::Read | Op::ReadWrite { .. } | Op::Meta(crate::workload::MetaOp::FileRead)
    );
    phase.verify.filter(|_| reads).map(|run_id| Verifier {
        generator: Generator::new(phase.data, run_id),
        expected: AlignedHostMemory.host(phase.block as usize),
    })
}

/// `--verify`: every byte a read returns against what was written there.
struct Verifier {
    generator: Generator,
    /// What was written, made in host memory.
    expected: HostBuf,
}

impl Verifier {
    /// Compares `found`, read at `offset` of `file`, with what the run wrote there; a mismatch
    /// names the 4 KiB that differ and what they hold instead: another run's data (stale), the
    /// data of another place (misplaced), or bytes nobody wrote (corrupt).
    fn check(
        &mut self,
        found: &[u8],
        file: u64,
        offset: u64,
        layout: &Layout,
    ) -> Result<(), String> {
        let expected = &mut self.expected[..found.len()];
        self.generator.fill(expected, file, offset);
        let Some(first) = found.iter().zip(expected.iter()).position(|(a, b)| a != b) else {
            return Ok(());
        };
        let at = offset + first as u64;
        let chunk_at = at / CHUNK as u64 * CHUNK as u64;
        let from = chunk_at.saturating_sub(offset) as usize;
        let chunk = &found[from..found.len().min(from + CHUNK)];
        let differ = chunk
            .iter()
            .zip(&expected[from..from + chunk.len()])
            .filter(|(a, b)| a != b)
            .count();
        let whole_stamp = chunk_at >= offset && chunk.len() >= STAMP_LEN;
        let stamp_of = |c: &[u8]| {
            let word = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().expect("8 bytes"));
            (word(0), word(8), word(16))
        };
        let what = if whole_stamp && chunk[..STAMP_LEN] != expected[from..from + STAMP_LEN] {
            let (run, other, other_at) = stamp_of(chunk);
            let mut theirs = vec![0u8; chunk.len()];
            self.generator.fill_run(&mut theirs, run, other, other_at);
            let name = layout
                .files
                .iter()
                .find(|f| file_key(&f.name) == other)
                .map_or(format!("file id {other:#x}"), |f| f.name.clone());
            if theirs != chunk {
                format!("corrupt: {differ} of their bytes differ from what was written there, the first at offset {at}, its stamp among them")
            } else if run != self.generator.run_id() {
                format!("stale: they hold data another run (id {run:#x}) wrote at {name} offset {other_at}")
            } else {
                format!("misplaced: they hold the data of {name} offset {other_at}")
            }
        } else {
            format!("corrupt: {differ} of their bytes differ from what was written there, the first at offset {at}")
        };
        Err(format!(
            "the 4 KiB at offset {chunk_at} are not what was written there: {what}"
        ))
    }
}

/// One `putc`: a byte into the user-space buffer. Kept out of line, as a library call is.
#[inline(never)]
fn putc(buf: &mut [u8], pos: usize, byte: u8) {
    buf[pos] = byte;
}

/// One `getc`: a byte from the user-space buffer.
#[inline(never)]
fn getc(buf: &[u8], pos: usize) -> u8 {
    buf[pos]
}

/// The order a block task visits its blocks in; each kind costs what it did before
/// `--access` (no test per operation for skew on the other paths).
enum Order {
    Sequential,
    /// Every block once per pass, a fresh order each pass.
    Shuffled(Permutation),
    /// Drawn with replacement from `--access`'s distribution; the pick k is block
    /// `spread.get(k)`, so the hottest blocks lie anywhere in the region (as fio's).
    Skewed {
        spread: Permutation,
        picker: Picker,
    },
}

pub(crate) struct BlockTask<'a> {
    phase: &'a Phase,
    target: &'a dyn Target,
    /// The open file: from the task's making, or from [`Task::open`] when timed.
    handle: Option<Box<dyn Handle>>,
    region: Region,
    file_name: &'a str,
    blocks: u64,
    visit: u64,
    order: Order,
    wrap: bool,
    order_seed: u64,
    rng: u64,
    data: Option<DataSource>,
    /// Read buffer, stdio-style buffer, or rewrite buffer; the bounce buffer of a device's.
    buf: HostBuf,
    /// The buffer on a device (`--mem gpu`) the operations move data to and from.
    device: Option<device::OnDevice>,
    /// Whether what the prepared operation writes reached the device.
    staged: io::Result<()>,
    /// The id the file's data and stamps carry.
    file: u64,
    verify: Option<Verifier>,
    // The prepared operation.
    offset: u64,
    len: usize,
    rewrite: bool,
    /// Sum of bytes read one at a time, so the per-char reads cannot be optimised away.
    checksum: u64,
}

impl BlockTask<'_> {
    /// The open file's descriptor, where the target has one (for io_uring).
    pub(crate) fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        self.handle.as_ref().and_then(|h| h.raw_fd())
    }

    pub(crate) fn block_len(&self) -> usize {
        self.buf.len()
    }

    pub(crate) fn phase_op(&self) -> Op {
        self.phase.op
    }

    pub(crate) fn phase(&self) -> &Phase {
        self.phase
    }

    /// The prepared operation's offset and length.
    pub(crate) fn prepared(&self) -> (u64, usize) {
        (self.offset, self.len)
    }

    /// Whether the prepared operation writes (a read-write phase draws each one).
    pub(crate) fn prepared_writes(&self) -> bool {
        match self.phase.op {
            Op::ReadWrite { .. } => self.rewrite,
            op => op.writes(),
        }
    }

    /// Names the operation at `offset`, for error messages.
    pub(crate) fn describe_at(&self, offset: u64) -> String {
        format!(
            "{} {} at offset {offset}",
            self.phase.op.name(),
            self.file_name
        )
    }

    /// The id the file's data carries.
    pub(crate) fn file_id(&self) -> u64 {
        self.file
    }

    /// The bytes of the whole file the task's region lies in.
    pub(crate) fn file_len(&self) -> u64 {
        self.phase.layout.files[self.region.file].size
    }

    /// The prepared operation for an engine that moves its bytes itself (mmap): its offset,
    /// what it writes (None: it reads) and the buffer a read fills, both of its length.
    pub(crate) fn transfer(&mut self) -> (u64, Option<&[u8]>, &mut [u8]) {
        let (len, writes) = (self.len, self.prepared_writes());
        let data = self.data.as_ref().filter(|_| writes);
        (
            self.offset,
            data.map(|d| &d.get()[..len]),
            &mut self.buf[..len],
        )
    }

    /// Closes the file without the final fsync (an engine that flushed it its own way).
    pub(crate) fn close(&mut self) -> io::Result<()> {
        if let Some(device) = &mut self.device {
            device.detach();
        }
        self.handle.take().map_or(Ok(()), |h| h.close())
    }

    /// `--verify` of `found`, read at `offset` (nothing without --verify).
    pub(crate) fn verify(&mut self, found: &[u8], offset: u64) -> io::Result<()> {
        verify_block(&mut self.verify, self.phase, self.file, found, offset)
    }
}

impl BlockTask<'_> {
    /// The prepared read or write of a buffer on a device: cuFile's on the direct path, else
    /// through the bounce buffer: a write copies the device's bytes out first, a read copies
    /// what it read onto the device; both copies are inside the operation's time.
    fn execute_on_device(&mut self) -> io::Result<u64> {
        std::mem::replace(&mut self.staged, Ok(()))?;
        let (offset, len, writes) = (self.offset, self.len, self.prepared_writes());
        let device = self.device.as_mut().expect("on a device");
        let handle = self.handle.as_deref_mut().expect("open until finish");
        if device.is_direct() {
            device.transfer(writes, len, offset)?;
            if writes && self.phase.fsync == FsyncPolicy::Each {
                handle.sync()?;
            }
            return Ok(len as u64);
        }
        let bounce = &mut self.buf[..len];
        if writes {
            device.copy_to_host(bounce)?;
            handle.write_at(bounce, offset)?;
            if self.phase.fsync == FsyncPolicy::Each {
                handle.sync()?;
            }
        } else {
            handle.read_at(bounce, offset)?;
            device.copy_from_host(bounce)?;
        }
        Ok(len as u64)
    }
}

/// `--verify` of `found`, read at `offset` of `file` (nothing without a verifier).
fn verify_block(
    verifier: &mut Option<Verifier>,
    phase: &Phase,
    file: u64,
    found: &[u8],
    offset: u64,
) -> io::Result<()> {
    let Some(verifier) = verifier else {
        return Ok(());
    };
    verifier
        .check(found, file, offset, &phase.layout)
        .map_err(|what| io::Error::new(io::ErrorKind::InvalidData, what))
}

impl Task for BlockTask<'_> {
    fn open(&mut self) -> io::Result<()> {
        if self.handle.is_none() {
            let opened = open_block_file(self.target, self.phase, self.file_name);
            self.handle =
                Some(opened.map_err(|(e, what)| io::Error::new(e.kind(), format!("{what}: {e}")))?);
            if let (Some(device), Some(handle)) = (&mut self.device, &self.handle) {
                device.attach(handle.raw_fd()).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("register {} with cuFile: {e}", self.file_name),
                    )
                })?;
            }
        }
        Ok(())
    }

    fn prepare(&mut self, i: u64) -> bool {
        let block_index = if let Op::Seek { rewrite_pct } = self.phase.op {
            if self.blocks == 0 {
                return false;
            }
            self.rng = mix(self.rng);
            self.rewrite = (self.rng >> 32) % 100 < u64::from(rewrite_pct);
            self.rng % self.blocks
        } else {
            if self.visit == 0 {
                return false;
            }
            let index_in_pass = i % self.visit;
            if index_in_pass == 0 && i > 0 {
                if !self.wrap {
                    return false;
                }
                // A fresh order each pass, unless limited to the blocks of the first one.
                if let (Order::Shuffled(order), None) = (&mut self.order, self.region.visit) {
                    *order = Permutation::new(self.blocks, self.order_seed ^ i);
                }
            }
            match &self.order {
                Order::Sequential => index_in_pass,
                Order::Shuffled(p) => p.get(index_in_pass),
                Order::Skewed { spread, picker } => {
                    let rng = &mut self.rng;
                    spread.get(picker.pick(&mut || {
                        *rng = mix(*rng);
                        *rng
                    }))
                }
            }
        };
        let rel = block_index * self.phase.block;
        self.len = self.phase.block.min(self.region.len - rel) as usize;
        self.offset = self.region.offset + rel;
        if let Some(interleave) = self.phase.interleave {
            self.offset = interleave.place(self.offset);
        }
        if let Op::ReadWrite { read_pct } = self.phase.op {
            self.rng = mix(self.rng);
            self.rewrite = self.rng % 100 >= u64::from(read_pct);
        }
        let writes = !matches!(self.phase.op, Op::ReadWrite { .. }) || self.rewrite;
        if let (Some(data), true) = (&mut self.data, writes) {
            data.prepare(self.file, self.offset);
            if let Some(device) = &mut self.device {
                self.staged = device.stage(&data.get()[..self.len]);
            }
        }
        true
    }

    fn execute(&mut self) -> io::Result<u64> {
        if self.device.is_some() {
            return self.execute_on_device();
        }
        let BlockTask {
            phase,
            handle,
            data,
            buf,
            offset,
            len,
            rewrite,
            checksum,
            ..
        } = self;
        let (offset, len) = (*offset, *len);
        let handle = handle.as_deref_mut().expect("open until finish");
        let sync_each = phase.fsync == FsyncPolicy::Each;
        let written = || &data.as_ref().expect("writers have data").get()[..len];
        match phase.op {
            Op::Write => handle.write_at(written(), offset)?,
            Op::Read => handle.read_at(&mut buf[..len], offset)?,
            Op::Rewrite => {
                handle.read_at(&mut buf[..len], offset)?;
                buf[0] ^= 0x5a;
                handle.write_at(&buf[..len], offset)?;
            }
            Op::ReadWrite { .. } if *rewrite => handle.write_at(written(), offset)?,
            Op::ReadWrite { .. } => handle.read_at(&mut buf[..len], offset)?,
            Op::Seek { .. } => {
                handle.read_at(&mut buf[..len], offset)?;
                if *rewrite {
                    buf[0] ^= 0x5a;
                    handle.write_at(&buf[..len], offset)?;
                }
            }
            Op::PutChar(PerChar::Buffered) => {
                for (pos, &byte) in written().iter().enumerate() {
                    putc(buf, pos, byte);
                }
                handle.write_at(&buf[..len], offset)?;
            }
            Op::PutChar(PerChar::Syscall) => {
                handle.seek(offset)?;
                handle.write_each_byte(written())?;
            }
            Op::GetChar(PerChar::Buffered) => {
                handle.read_at(&mut buf[..len], offset)?;
                for pos in 0..len {
                    *checksum += u64::from(getc(buf, pos));
                }
            }
            Op::GetChar(PerChar::Syscall) => {
                handle.seek(offset)?;
                handle.read_each_byte(&mut buf[..len])?;
                *checksum += buf[..len].iter().map(|&b| u64::from(b)).sum::<u64>();
            }
            Op::Create | Op::Stat | Op::Delete | Op::Meta(_) => {
                unreachable!("metadata ops run as MetaTask")
            }
            Op::Object(_) => unreachable!("object ops run as ObjectTask"),
        }
        let wrote = match phase.op {
            Op::Seek { .. } | Op::ReadWrite { .. } => *rewrite,
            op => op.writes(),
        };
        if sync_each && wrote {
            handle.sync()?;
        }
        Ok(len as u64)
    }

    fn check(&mut self) -> io::Result<()> {
        if self.prepared_writes() || self.verify.is_none() {
            return Ok(());
        }
        let found = match &mut self.device {
            // What the device holds, not what passed through the bounce buffer.
            Some(device) => device.read_back(self.len)?,
            None => &self.buf[..self.len],
        };
        verify_block(&mut self.verify, self.phase, self.file, found, self.offset)
    }

    fn take_copy_ns(&mut self) -> u64 {
        self.device
            .as_mut()
            .map_or(0, device::OnDevice::take_copy_ns)
    }

    fn describe(&self) -> String {
        self.describe_at(self.offset)
    }

    fn at(&self) -> (u64, u64) {
        (self.file, self.offset)
    }

    /// Read-write phases: 0 for a read, 1 for a write (their books are apart).
    fn class(&self) -> usize {
        usize::from(matches!(self.phase.op, Op::ReadWrite { .. }) && self.rewrite)
    }

    fn finish(&mut self) -> io::Result<u64> {
        std::hint::black_box(self.checksum);
        let mut sync_ns = 0;
        // No handle: its timed open failed, and the worker ends with nothing to flush.
        let Some(mut handle) = self.handle.take() else {
            return Ok(0);
        };
        // cuFile lets go of the file before it closes.
        if let Some(device) = &mut self.device {
            device.detach();
        }
        if self.phase.op.writes() && self.phase.fsync == FsyncPolicy::End {
            let t0 = Instant::now();
            handle.sync()?;
            sync_ns = t0.elapsed().as_nanos() as u64;
        }
        handle.close()?;
        Ok(sync_ns)
    }
}

pub(crate) mod device;
mod fadvise;
pub(crate) mod find;
pub(crate) mod meta;
pub(crate) mod replay;
