//! The MD5 of concurrent uploads (an object's ETag), computed together: the chunks that PUTs
//! and parts have in flight go to a hashing thread that hashes several uploads at once in the
//! lanes of one SIMD register (`md5-many`: 8 lanes with AVX2, 16 with AVX-512), as MinIO's
//! `md5-simd` does. An upload hands its chunks over [`HAND_OVER`] bytes at a time (so that the
//! thread finds several uploads waiting together), writes them to its file meanwhile, and waits
//! for them to be hashed before handing over more: the hashing overlaps the writing.
//!
//! The lanes go in lockstep, [`STEP`] bytes each per call, the one shape the multi-buffer
//! kernels are fast for: each upload's MD5 state is kept at a 64-byte block boundary, the bytes
//! short of a block wait for the next hand-over, and only a step that straddles two chunks is
//! copied. Lanes with no upload repeat another lane's bytes into a state thrown away; an upload
//! alone is hashed by the scalar code.

use bytes::Bytes;
use md5_many::{Md5Many, Md5State};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Bytes an upload gathers before handing them to its hashing thread.
pub const HAND_OVER: usize = 256 << 10;
/// Bytes each lane hashes per multi-buffer call (a multiple of the 64-byte block).
pub const STEP: usize = 4096;
/// The most lanes an engine has (AVX-512: 16).
const MAX_LANES: usize = 16;
/// Uploads one hashing thread serves before another is worth having.
const CORES_PER_THREAD: usize = 8;

/// One upload's MD5 as the hashing thread leaves it (at a block boundary), the bytes short of
/// a block that follow, and the signal that it is done; the list the chunks came in goes back
/// for the next hand-over.
#[derive(Debug)]
struct Slot {
    hashed: Mutex<Hashed>,
    spare: Mutex<Vec<Bytes>>,
    done: Notify,
}

#[derive(Debug, Clone, Copy)]
struct Hashed {
    state: Md5State,
    tail: [u8; 64],
    tail_len: usize,
}

impl Default for Hashed {
    fn default() -> Self {
        Hashed {
            state: Md5State::new(),
            tail: [0; 64],
            tail_len: 0,
        }
    }
}

#[derive(Debug)]
struct Job {
    slot: Arc<Slot>,
    chunks: Vec<Bytes>,
}

/// The hashing threads (one per 8 cores), each taking the chunks of the uploads given to it.
#[derive(Debug)]
pub struct Hashers {
    threads: Vec<Sender<Job>>,
    next: AtomicUsize,
}

impl Hashers {
    /// Starts the hashing threads; they end when the last [`Hashers`] handle and upload go.
    pub fn start() -> Hashers {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let engine = Md5Many::new();
        let threads = (0..cores.div_ceil(CORES_PER_THREAD))
            .map(|i| {
                let (tx, rx) = channel();
                std::thread::Builder::new()
                    .name(crate::metrics::helper_thread(&format!("md5-{i}")))
                    .spawn(move || serve(engine, rx))
                    .expect("a hashing thread starts");
                tx
            })
            .collect();
        Hashers {
            threads,
            next: AtomicUsize::new(0),
        }
    }

    /// A new MD5 stream on the next hashing thread.
    pub fn stream(&self) -> Md5Stream {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len();
        Md5Stream {
            slot: Arc::new(Slot {
                hashed: Mutex::default(),
                spare: Mutex::default(),
                done: Notify::new(),
            }),
            to: self.threads[i].clone(),
            gathered: Vec::new(),
            gathered_bytes: 0,
            pending: false,
        }
    }
}

/// One upload's MD5: chunks in order, then the digest.
#[derive(Debug)]
pub struct Md5Stream {
    slot: Arc<Slot>,
    to: Sender<Job>,
    /// Chunks not yet handed over, and their bytes.
    gathered: Vec<Bytes>,
    gathered_bytes: usize,
    /// Chunks were handed over and their hashing not yet waited for.
    pending: bool,
}

impl Md5Stream {
    /// Adds `chunk`; every [`HAND_OVER`] bytes, hands what was gathered to the hashing thread
    /// (once the previous hand-over is hashed), to be hashed while the caller goes on.
    pub async fn update(&mut self, chunk: Bytes) {
        self.gathered_bytes += chunk.len();
        self.gathered.push(chunk);
        if self.gathered_bytes >= HAND_OVER {
            self.hand_over().await;
        }
    }

    async fn hand_over(&mut self) {
        self.wait().await;
        let spare = std::mem::take(&mut *self.slot.spare.lock().unwrap());
        let job = Job {
            slot: self.slot.clone(),
            chunks: std::mem::replace(&mut self.gathered, spare),
        };
        self.gathered_bytes = 0;
        match self.to.send(job) {
            Ok(()) => self.pending = true,
            // The thread is gone (it panicked): hash here rather than lose the chunks.
            Err(back) => hash_alone(&back.0),
        }
    }

    async fn wait(&mut self) {
        if self.pending {
            self.slot.done.notified().await;
            self.pending = false;
        }
    }

    /// The MD5 of every chunk added.
    pub async fn finish(mut self) -> [u8; 16] {
        if !self.gathered.is_empty() {
            self.hand_over().await;
        }
        self.wait().await;
        let hashed = self.slot.hashed.lock().unwrap();
        let mut state = hashed.state;
        state.update(&hashed.tail[..hashed.tail_len]);
        state.finalize()
    }
}

/// The bytes of one hand-over, read in whole blocks: the tail the previous one left, then its
/// chunks.
struct Reader<'a> {
    tail: &'a [u8],
    chunks: &'a [Bytes],
    /// Which part is being read (0: the tail, then the chunks) and where in it.
    part: usize,
    offset: usize,
    left: usize,
}

impl<'a> Reader<'a> {
    fn new(tail: &'a [u8], chunks: &'a [Bytes]) -> Reader<'a> {
        let left = tail.len() + chunks.iter().map(|c| c.len()).sum::<usize>();
        Reader {
            tail,
            chunks,
            part: 0,
            offset: 0,
            left,
        }
    }

    fn current(&self) -> &'a [u8] {
        match self.part {
            0 => self.tail,
            n => self.chunks.get(n - 1).map_or(&[], |c| &c[..]),
        }
    }

    /// The bytes of the current part not yet read.
    fn contiguous(&self) -> &'a [u8] {
        &self.current()[self.offset..]
    }

    /// The next `len` bytes: borrowed when they lie in one part, else copied into `stage`.
    fn take<'s>(&mut self, len: usize, stage: &'s mut Vec<u8>) -> &'s [u8]
    where
        'a: 's,
    {
        debug_assert!(len <= self.left);
        self.left -= len;
        let here = self.contiguous();
        if here.len() >= len {
            self.offset += len;
            return &here[..len];
        }
        stage.clear();
        while stage.len() < len {
            let here = self.contiguous();
            let n = here.len().min(len - stage.len());
            stage.extend_from_slice(&here[..n]);
            self.offset += n;
            if self.offset == self.current().len() {
                self.part += 1;
                self.offset = 0;
            }
        }
        stage
    }

    /// Hashes what is left in whole blocks into `state` and keeps the rest (under a block)
    /// as the tail.
    fn finish(&mut self, hashed: &mut Hashed, stage: &mut Vec<u8>) {
        while self.left >= 64 {
            let here = self.contiguous().len();
            let len = if here >= 64 { here & !63 } else { 64 }.min(self.left & !63);
            let bytes = self.take(len, stage);
            hashed.state.update(bytes);
        }
        let mut tail = [0u8; 64];
        let len = self.left;
        tail[..len].copy_from_slice(self.take(len, stage));
        hashed.tail = tail;
        hashed.tail_len = len;
    }
}

/// Hashes one hand-over with the scalar code.
fn hash_alone(job: &Job) {
    let mut hashed = job.slot.hashed.lock().unwrap();
    let tail = hashed.tail;
    let mut stage = Vec::new();
    Reader::new(&tail[..hashed.tail_len], &job.chunks).finish(&mut hashed, &mut stage);
}

/// A hashing thread: waits for a hand-over, takes whatever else is queued (as many as the
/// engine has lanes), hashes them in lockstep, and tells each upload.
fn serve(engine: Md5Many, rx: Receiver<Job>) {
    let lanes = engine.lanes().clamp(1, MAX_LANES);
    let mut jobs: Vec<Job> = Vec::with_capacity(lanes);
    let mut stages: Vec<Vec<u8>> = (0..lanes).map(|_| Vec::with_capacity(STEP)).collect();
    while let Ok(first) = rx.recv() {
        jobs.push(first);
        while jobs.len() < lanes {
            match rx.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
        hash_together(engine, &jobs, &mut stages);
        for job in jobs.drain(..) {
            let mut chunks = job.chunks;
            chunks.clear();
            *job.slot.spare.lock().unwrap() = chunks;
            job.slot.done.notify_one();
        }
    }
}

/// Hashes up to one hand-over per lane: [`STEP`] bytes of every upload that has that many
/// per multi-buffer call while two or more have, the rest with the scalar code.
fn hash_together(engine: Md5Many, jobs: &[Job], stages: &mut [Vec<u8>]) {
    let lanes = stages.len();
    let mut hashed = [Hashed::default(); MAX_LANES];
    for (h, job) in hashed.iter_mut().zip(jobs) {
        *h = *job.slot.hashed.lock().unwrap();
    }
    let tails = hashed;
    let mut readers: [Option<Reader>; MAX_LANES] = Default::default();
    for ((reader, job), tail) in readers.iter_mut().zip(jobs).zip(&tails) {
        *reader = Some(Reader::new(&tail.tail[..tail.tail_len], &job.chunks));
    }
    let readers = &mut readers[..jobs.len()];
    let mut states = [Md5State::new(); MAX_LANES];
    let mut owner = [0usize; MAX_LANES];
    loop {
        let ready = readers.iter().flatten().filter(|r| r.left >= STEP).count();
        if ready < 2 {
            break;
        }
        let mut inputs: [&[u8]; MAX_LANES] = [&[]; MAX_LANES];
        let mut n = 0;
        let mut stage_iter = stages.iter_mut();
        for (i, reader) in readers.iter_mut().flatten().enumerate() {
            if reader.left >= STEP {
                owner[n] = i;
                states[n] = hashed[i].state;
                inputs[n] = reader.take(STEP, stage_iter.next().expect("a stage per lane"));
                n += 1;
            }
        }
        for k in n..lanes {
            states[k] = Md5State::new();
            inputs[k] = inputs[0];
        }
        engine.update_many(&mut states[..lanes], &inputs[..lanes]);
        for k in 0..n {
            hashed[owner[k]].state = states[k];
        }
    }
    for ((reader, h), job) in readers.iter_mut().flatten().zip(&mut hashed).zip(jobs) {
        reader.finish(h, &mut stages[0]);
        *job.slot.hashed.lock().unwrap() = *h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use md5::{Digest, Md5};
    use proptest::prelude::*;

    fn bytes(len: usize, seed: u8) -> Vec<u8> {
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Concurrent streams of chunks of random lengths hash as the reference does.
        #[test]
        fn concurrent_streams_hash_as_the_reference(
            streams in proptest::collection::vec(
                proptest::collection::vec(0usize..70_000, 0..24), 1..24),
        ) {
            let hashers = Arc::new(Hashers::start());
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .build()
                .unwrap();
            let results = rt.block_on(async {
                let tasks: Vec<_> = streams
                    .iter()
                    .enumerate()
                    .map(|(s, lens)| {
                        let hashers = hashers.clone();
                        let chunks: Vec<Bytes> =
                            lens.iter().map(|&n| Bytes::from(bytes(n, s as u8))).collect();
                        tokio::spawn(async move {
                            let mut md5 = hashers.stream();
                            let mut reference = Md5::new();
                            for chunk in chunks {
                                reference.update(&chunk);
                                md5.update(chunk).await;
                            }
                            (md5.finish().await, <[u8; 16]>::from(reference.finalize()))
                        })
                    })
                    .collect();
                let mut out = Vec::new();
                for t in tasks {
                    out.push(t.await.unwrap());
                }
                out
            });
            for (got, want) in results {
                prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn rfc_1321_test_suite() {
        let hashers = Hashers::start();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (text, hex) in [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ] {
            let got = rt.block_on(async {
                let mut md5 = hashers.stream();
                md5.update(Bytes::from_static(text.as_bytes())).await;
                md5.finish().await
            });
            assert_eq!(crate::meta::hex(&got), hex, "{text}");
        }
    }
}
