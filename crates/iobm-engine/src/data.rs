//! Data to write, and to check what is read back against. File data is a pure function of (run,
//! file, offset) ([`Generator`]): every 512-byte unit is one of the 32 pieces of a 16 KiB random
//! base (in turn, by the unit's number) XORed with a 64-bit key hashed from run, file and unit,
//! so no two units of a data set are equal and no compressor finds a match, while the base stays
//! in the core's L1 cache (a load, an XOR and a store per 32 bytes with AVX2, per 16 without);
//! every 4 KiB at an absolute 4 KiB boundary starts with a stamp (run id, file, offset) that
//! names where a misplaced or stale block came from. Object bodies are the same function of
//! (run, object, offset).

use crate::permute::mix;
use crate::workload::DataKind;
use iobm_target::memory::{AlignedHostMemory, HostBuf};

pub use iobm_target::objects::{stamp, CHUNK, STAMP_LEN};

/// Fills `buf` with pseudo-random bytes from `seed` (splitmix64 stream, ~GB/s per core).
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut state = seed;
    let mut words = buf.chunks_exact_mut(8);
    for word in &mut words {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        word.copy_from_slice(&mix(state).to_le_bytes());
    }
    let rest = words.into_remainder();
    let last = mix(state ^ 1).to_le_bytes();
    rest.copy_from_slice(&last[..rest.len()]);
}

/// Bytes per unit of the generator: the smallest piece that is unique across a data set.
pub const UNIT: usize = 512;
/// Bytes of the random base the units are drawn from: small enough to stay in L1 beside the
/// output's lines, so making a unit costs one pass of loads, XORs and stores.
const BASE: usize = 16 << 10;
/// Pieces of the base; unit `u` uses piece `u % PIECES`.
const PIECES: u64 = (BASE / UNIT) as u64;
/// `dedupe:PCT`: duplicate blocks repeat one of the first this many 4 KiB blocks.
const DEDUPE_SOURCES: u64 = 16;

/// The bytes of a data set: a pure function of (run, file, offset) for a data kind, so writers
/// on any rank and a later reader produce the same bytes without sharing anything but the run
/// id.
pub struct Generator {
    kind: DataKind,
    run_id: u64,
    base: Vec<u64>,
}

impl Generator {
    pub fn new(kind: DataKind, run_id: u64) -> Generator {
        let mut bytes = vec![0u8; BASE];
        // The same base for every run: runs differ by their keys, so a reader can regenerate
        // another run's bytes and recognise them.
        fill_random(&mut bytes, 0x0ba5_e000);
        let base = bytes
            .chunks_exact(8)
            .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
            .collect();
        Generator { kind, run_id, base }
    }

    pub fn kind(&self) -> DataKind {
        self.kind
    }

    pub fn run_id(&self) -> u64 {
        self.run_id
    }

    /// Writes the bytes of `file` at `offset .. offset + out.len()` into `out`.
    pub fn fill(&self, out: &mut [u8], file: u64, offset: u64) {
        self.fill_run(out, self.run_id, file, offset);
    }

    /// As [`Generator::fill`], for the data of another run (to recognise stale blocks).
    pub fn fill_run(&self, out: &mut [u8], run_id: u64, file: u64, offset: u64) {
        if self.kind == DataKind::Zero {
            out.fill(0);
            return;
        }
        let DataKind::Dedupe(pct) = self.kind else {
            return self.fill_place(out, run_id, file, offset);
        };
        // 4 KiB at a time: a duplicate block is the bytes (and stamp) of its source.
        let mut pos = 0;
        while pos < out.len() {
            let at = offset + pos as u64;
            let block = at / CHUNK as u64;
            let within = at % CHUNK as u64;
            let take = (CHUNK - within as usize).min(out.len() - pos);
            let draw = mix(run_id ^ mix(file ^ mix(block ^ 0xdeda)));
            let source = if block >= DEDUPE_SOURCES && draw % 100 < u64::from(pct) {
                (draw >> 32) % DEDUPE_SOURCES
            } else {
                block
            };
            let from = source * CHUNK as u64 + within;
            self.fill_place(&mut out[pos..pos + take], run_id, file, from);
            pos += take;
        }
    }

    /// The bytes at `offset` of `file`, each a function of its own place.
    fn fill_place(&self, out: &mut [u8], run_id: u64, file: u64, offset: u64) {
        // Hashed once per call; each unit's key is then one more mix of its own hash, so keys
        // of different files never line up as a shifted run.
        let seed = mix(run_id ^ mix(file));
        // A unit cut by the start or the end of `out`, byte by byte.
        let partial = |out: &mut [u8], at: u64| {
            if out.is_empty() {
                return;
            }
            let (unit, within) = (at / UNIT as u64, (at % UNIT as u64) as usize);
            let (k, words) = (unit_key(seed, unit), piece(&self.base, unit));
            for (i, o) in out.iter_mut().enumerate() {
                let j = within + i;
                *o = ((words[j / 8] ^ k) >> (8 * (j % 8))) as u8;
            }
        };
        let head = ((UNIT as u64 - offset % UNIT as u64) % UNIT as u64).min(out.len() as u64);
        let len = out.len();
        let (first, rest) = out.split_at_mut(head as usize);
        partial(first, offset);
        let whole = rest.len() / UNIT * UNIT;
        let (units, tail) = rest.split_at_mut(whole);
        whole_units(units, &self.base, seed, (offset + head) / UNIT as u64);
        partial(tail, offset + (len - tail.len()) as u64);
        self.stamp_chunks(out, run_id, file, offset);
    }

    /// A stamp at every absolute 4 KiB boundary in `out`; compressible data zeroes each 4 KiB's
    /// tail.
    fn stamp_chunks(&self, out: &mut [u8], run_id: u64, file: u64, offset: u64) {
        let end = offset + out.len() as u64;
        let zeros = match self.kind {
            DataKind::Compressible(pct) => CHUNK * pct.min(100) as usize / 100,
            _ => 0,
        };
        for c in offset / CHUNK as u64..end.div_ceil(CHUNK as u64) {
            let chunk_at = c * CHUNK as u64;
            let s = stamp(run_id, file, chunk_at);
            if chunk_at >= offset && chunk_at + STAMP_LEN as u64 <= end {
                let at = (chunk_at - offset) as usize;
                out[at..at + STAMP_LEN].copy_from_slice(&s);
            } else {
                for (i, &b) in s.iter().enumerate() {
                    let abs = chunk_at + i as u64;
                    if abs >= offset && abs < end {
                        out[(abs - offset) as usize] = b;
                    }
                }
            }
            if zeros > 0 {
                let keep = (CHUNK - zeros).max(STAMP_LEN);
                let lo = (chunk_at + keep as u64).max(offset);
                let hi = (chunk_at + CHUNK as u64).min(end);
                if lo < hi {
                    out[(lo - offset) as usize..(hi - offset) as usize].fill(0);
                }
            }
        }
    }
}

/// The key unit `unit` of a file is XORed with, from the file's `seed`.
fn unit_key(seed: u64, unit: u64) -> u64 {
    mix(seed ^ mix(unit))
}

/// The piece of the base that unit `unit` is made from.
fn piece(base: &[u64], unit: u64) -> &[u64; UNIT / 8] {
    let first = (unit % PIECES) as usize * (UNIT / 8);
    <&[u64; UNIT / 8]>::try_from(&base[first..first + UNIT / 8]).expect("a piece")
}

/// Makes `out` (whole units, the first of them `first_unit`) with the widest vectors this CPU
/// has: AVX2 halves the instructions of SSE2's 16-byte XORs, the x86-64 baseline.
fn whole_units(out: &mut [u8], base: &[u64], seed: u64, first_unit: u64) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        return unsafe { whole_units_avx2(out, base, seed, first_unit) };
    }
    whole_units_in(out, base, seed, first_unit)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn whole_units_avx2(out: &mut [u8], base: &[u64], seed: u64, first_unit: u64) {
    whole_units_in(out, base, seed, first_unit)
}

#[inline(always)]
fn whole_units_in(out: &mut [u8], base: &[u64], seed: u64, first_unit: u64) {
    // A 32-byte store across a cache line costs about two: when `out` starts 8, 16 or 24 bytes
    // past a 32-byte boundary (as a large Vec from malloc does, 16), each unit's first and last
    // words go on their own so that the 480 bytes between are stored aligned.
    const MID: usize = UNIT - 32;
    let lead = match out.as_ptr().align_offset(32) {
        l @ (8 | 16 | 24) => l,
        _ => 0,
    };
    for (unit, bytes) in (first_unit..).zip(out.chunks_exact_mut(UNIT)) {
        let (k, words) = (unit_key(seed, unit), piece(base, unit));
        if lead == 0 {
            xor_words(bytes, words, k);
            continue;
        }
        let (head, rest) = bytes.split_at_mut(lead);
        let (mid, tail) = rest.split_at_mut(MID);
        let mid = <&mut [u8; MID]>::try_from(mid).expect("480 bytes");
        let (w_head, w_rest) = words.split_at(lead / 8);
        let (w_mid, w_tail) = w_rest.split_at(MID / 8);
        xor_words(head, w_head, k);
        xor_words(
            mid,
            <&[u64; MID / 8]>::try_from(w_mid).expect("60 words"),
            k,
        );
        xor_words(tail, w_tail, k);
    }
}

/// `out`'s 8-byte words are `words` XORed with `k`, little-endian.
#[inline(always)]
fn xor_words(out: &mut [u8], words: &[u64], k: u64) {
    for (o, w) in out.chunks_exact_mut(8).zip(words) {
        o.copy_from_slice(&(w ^ k).to_le_bytes());
    }
}

impl iobm_target::objects::Content for Generator {
    fn fill(&self, out: &mut [u8], id: u64, offset: u64) {
        Generator::fill(self, out, id, offset);
    }
}

/// The 64-bit id a file's data and stamps carry: a hash of its name, the same on every rank.
pub fn file_key(name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| mix(h ^ u64::from(b)))
}

/// Where a worker's blocks come from: the generator and one block-sized aligned buffer of host
/// memory, where the bytes are made (copied from there into buffers placed elsewhere).
pub struct DataSource {
    generator: Generator,
    out: HostBuf,
    block: usize,
}

impl DataSource {
    pub fn new(kind: DataKind, block: usize, run_id: u64) -> DataSource {
        DataSource {
            generator: Generator::new(kind, run_id),
            out: AlignedHostMemory.host(block.div_ceil(CHUNK) * CHUNK),
            block,
        }
    }

    /// The bytes to write at `offset` of file `file`: `block` long.
    pub fn block(&mut self, file: u64, offset: u64) -> &[u8] {
        self.prepare(file, offset);
        self.get()
    }

    /// The block that [`DataSource::prepare`] made.
    pub fn get(&self) -> &[u8] {
        &self.out[..self.block]
    }

    /// Makes the block for `offset` of file `file`, before the operation is timed.
    pub fn prepare(&mut self, file: u64, offset: u64) {
        self.generator
            .fill(&mut self.out[..self.block], file, offset);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_512_bytes_of_a_data_set_are_unique_and_every_4k_is_stamped() {
        let mut units = HashSet::new();
        for file in ["data.0", "data.1"].map(file_key) {
            let mut src = DataSource::new(DataKind::Random, 64 * 1024, 7);
            for offset in (0..64u64).map(|i| i * 64 * 1024) {
                let block = src.block(file, offset).to_vec();
                assert_eq!(src.get().as_ptr() as usize % CHUNK, 0);
                for (i, chunk) in block.chunks(CHUNK).enumerate() {
                    assert_eq!(
                        &chunk[..STAMP_LEN],
                        &stamp(7, file, offset + (i * CHUNK) as u64)
                    );
                }
                for unit in block.chunks(UNIT) {
                    assert!(units.insert(unit.to_vec()), "a duplicate 512-byte unit");
                }
            }
        }
    }

    #[test]
    fn bytes_depend_only_on_run_file_and_offset_whatever_the_block() {
        let g = Generator::new(DataKind::Random, 3);
        let mut whole = vec![0u8; 3 * CHUNK];
        g.fill(&mut whole, 9, 1000);
        for (at, len) in [(1000u64, 7usize), (1003, 600), (4096, 4096), (5000, 2000)] {
            let mut part = vec![0u8; len];
            g.fill(&mut part, 9, at);
            let from = (at - 1000) as usize;
            assert_eq!(part, whole[from..from + len], "{at}+{len}");
        }
        let mut other_run = vec![0u8; 3 * CHUNK];
        g.fill_run(&mut other_run, 4, 9, 1000);
        assert_ne!(other_run, whole);
    }

    #[test]
    fn bytes_do_not_depend_on_where_the_buffer_lies() {
        // Each start 0..40 bytes into a buffer: 32-byte aligned, 8/16/24 past (the split
        // stores) and odd addresses; both the vector and the byte-by-byte paths.
        let g = Generator::new(DataKind::Random, 11);
        let mut expected = vec![0u8; 3 * CHUNK + 100];
        g.fill(&mut expected, 2, 700);
        let mut buf = AlignedHostMemory.host(4 * CHUNK + 64);
        for shift in 0..40 {
            let out = &mut buf[shift..shift + expected.len()];
            out.fill(0);
            g.fill(out, 2, 700);
            assert!(
                out == &expected[..],
                "buffer {shift} bytes past a 4 KiB boundary"
            );
        }
    }

    #[test]
    fn random_data_does_not_compress_but_zero_and_compressible_do() {
        let distinct = |b: &[u8]| b.iter().collect::<HashSet<_>>().len();
        let mut random = DataSource::new(DataKind::Random, 8192, 1);
        assert_eq!(distinct(random.block(0, 0)), 256);
        let zero_bytes = |b: &[u8]| b.iter().filter(|&&x| x == 0).count();
        assert!(zero_bytes(random.block(0, 0)) < 100);
        let mut zero = DataSource::new(DataKind::Zero, 8192, 1);
        assert_eq!(zero_bytes(zero.block(0, 0)), 8192);
        let mut half = DataSource::new(DataKind::Compressible(50), 8192, 1);
        let z = zero_bytes(half.block(0, 0));
        assert!((4096..=4200).contains(&z), "{z}");
    }

    #[test]
    fn dedupe_repeats_the_share_of_4k_blocks_it_is_asked_for() {
        let g = Generator::new(DataKind::Dedupe(50), 5);
        let mut bytes = vec![0u8; 4 << 20];
        g.fill(&mut bytes, 1, 0);
        let mut seen = HashSet::new();
        let dups = bytes.chunks(CHUNK).filter(|c| !seen.insert(*c)).count();
        let share = dups as f64 / (bytes.len() / CHUNK) as f64;
        assert!((0.45..=0.55).contains(&share), "{share}");
        // Still the same bytes whatever the range asked for.
        let mut part = vec![0u8; 10_000];
        g.fill(&mut part, 1, 123_456);
        assert_eq!(part, bytes[123_456..133_456]);
    }

    #[test]
    fn odd_block_sizes() {
        let mut src = DataSource::new(DataKind::Random, 1000, 1);
        assert_eq!(src.block(0, 5000).len(), 1000);
        let mut tiny = DataSource::new(DataKind::Random, 10, 1);
        assert_eq!(tiny.block(0, 0).len(), 10);
    }
}
