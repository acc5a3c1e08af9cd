//! `--requests FILE`: every operation of the run, as the engine's [`RequestSink`] hands each
//! worker's chunk over, encoded on the worker's thread and compressed and written by a thread
//! of the file's own, as one zstd frame per chunk (FILE.rankN on rank N), so a killed
//! run's file reads up to its last whole frame. A frame holds a header (rank, worker, host,
//! phase, its kinds and the worker's error kinds) and [`RECORD`] bytes per request,
//! little-endian.

pub mod report;

use crate::exit::Failure;
use crate::live::live_path;
use crate::session::describe_io;
use iobm_engine::{Request, RequestChunk, RequestSink};
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

const MAGIC: &[u8; 8] = b"IOBMRQ2\0";
/// Bytes of one request before compression.
pub const RECORD: usize = 7 * 8 + 2;

/// Encoded chunks waiting for the writer thread: at most this many (a few MiB), so a file that
/// cannot keep up holds the workers back rather than filling memory.
const QUEUED: usize = 16;

/// The open requests file of this rank: the workers encode their chunks, a thread of its own
/// compresses and writes them (off the workers' threads), and dropping it waits for the last.
pub struct RequestsFile {
    rank: u32,
    host: String,
    frames: Option<SyncSender<Vec<u8>>>,
    writer: Option<JoinHandle<()>>,
}

impl RequestsFile {
    /// Creates `--requests FILE` for `rank` on `host` (FILE.rankN on rank N), empty.
    pub fn create(path: &Path, rank: u32, host: &str) -> Result<RequestsFile, Failure> {
        let path = live_path(path, rank);
        let cannot = |e: std::io::Error| {
            let why = describe_io(&e);
            Failure::run(format!(
                "--requests {}: cannot write: {why}",
                path.display()
            ))
        };
        let file = File::create(&path).map_err(cannot)?;
        let (frames, queue) = sync_channel(QUEUED);
        let writer = std::thread::Builder::new()
            .name("iobm-requests".into())
            .spawn(move || write_frames(file, queue))
            .map_err(cannot)?;
        Ok(RequestsFile {
            rank,
            host: host.to_string(),
            frames: Some(frames),
            writer: Some(writer),
        })
    }
}

/// The writer thread: each chunk compressed as one zstd frame and appended; the first failure
/// said once.
fn write_frames(mut file: File, queue: Receiver<Vec<u8>>) {
    let mut warned = false;
    for plain in queue {
        let frame = zstd::bulk::compress(&plain, 1).expect("zstd compresses in memory");
        if let Err(e) = file.write_all(&frame) {
            if !std::mem::replace(&mut warned, true) {
                eprintln!(
                    "iobm: warning: --requests: cannot write: {}",
                    describe_io(&e)
                );
            }
        }
    }
}

impl RequestSink for RequestsFile {
    fn chunk(&self, chunk: &RequestChunk) {
        if chunk.records.is_empty() {
            return;
        }
        if let Some(frames) = &self.frames {
            // The writer is gone only if it panicked: then nothing more is kept.
            let _ = frames.send(encode(self.rank, &self.host, chunk));
        }
    }
}

impl Drop for RequestsFile {
    /// Every chunk handed over is written before the file is closed.
    fn drop(&mut self) {
        drop(self.frames.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

/// One chunk of `rank` on `host` as a frame's content.
pub fn encode(rank: u32, host: &str, chunk: &RequestChunk) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + chunk.records.len() * RECORD);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&rank.to_le_bytes());
    out.extend_from_slice(&(chunk.worker as u32).to_le_bytes());
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as u16).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    text(&mut out, host);
    text(&mut out, chunk.phase);
    let kinds = chunk.op.classes();
    out.push(kinds.len() as u8);
    kinds.iter().for_each(|k| text(&mut out, k.as_str()));
    out.push(chunk.errors.len().min(255) as u8);
    chunk
        .errors
        .iter()
        .take(255)
        .for_each(|e| text(&mut out, e));
    out.extend_from_slice(&(chunk.records.len() as u32).to_le_bytes());
    for r in chunk.records {
        for v in [
            r.start_ns,
            r.intended_ns,
            r.duration_ns,
            r.ttfb_ns,
            r.bytes,
            r.object,
            r.offset,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&[r.class, r.error]);
    }
    out
}

/// A chunk read back.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub rank: u32,
    pub worker: u32,
    pub host: String,
    pub phase: String,
    pub kinds: Vec<String>,
    pub errors: Vec<String>,
    pub records: Vec<Request>,
}

/// Every whole frame of a requests file, and whether bytes after the last were cut off (a
/// killed run's).
pub fn read(bytes: &[u8]) -> Result<(Vec<Chunk>, bool), String> {
    let mut chunks = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let Ok(len) = zstd::zstd_safe::find_frame_compressed_size(&bytes[at..]) else {
            return Ok((chunks, true));
        };
        let Ok(plain) = zstd::bulk::decompress(&bytes[at..at + len], 1 << 30) else {
            return Ok((chunks, true));
        };
        chunks.push(decode(&plain).ok_or_else(|| format!("byte {at}: not a requests frame"))?);
        at += len;
    }
    Ok((chunks, false))
}

/// A frame's content as a chunk; None when it is not one.
fn decode(b: &[u8]) -> Option<Chunk> {
    let mut r = Reader { b, at: 0 };
    (r.bytes(8)? == MAGIC).then_some(())?;
    let (rank, worker, host, phase) = (r.u32()?, r.u32()?, r.text()?, r.text()?);
    let kinds = (0..r.u8()?).map(|_| r.text()).collect::<Option<Vec<_>>>()?;
    let errors = (0..r.u8()?).map(|_| r.text()).collect::<Option<Vec<_>>>()?;
    let count = r.u32()? as usize;
    let records = (0..count).map(|_| r.record()).collect::<Option<Vec<_>>>()?;
    Some(Chunk {
        rank,
        worker,
        host,
        phase,
        kinds,
        errors,
        records,
    })
}

/// A cursor over a frame's content.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
    fn text(&mut self) -> Option<String> {
        let n = u16::from_le_bytes(self.bytes(2)?.try_into().ok()?) as usize;
        Some(String::from_utf8_lossy(self.bytes(n)?).into_owned())
    }
    fn record(&mut self) -> Option<Request> {
        Some(Request {
            start_ns: self.u64()?,
            intended_ns: self.u64()?,
            duration_ns: self.u64()?,
            ttfb_ns: self.u64()?,
            bytes: self.u64()?,
            object: self.u64()?,
            offset: self.u64()?,
            class: self.u8()?,
            error: self.u8()?,
        })
    }
}
