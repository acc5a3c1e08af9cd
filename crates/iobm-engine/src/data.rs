//! Data to write: a per-worker pool of random bytes generated once before the phase, from which
//! consecutive blocks are consecutive slices (a ring), each stamped every 4 KiB with (run id,
//! file, offset). No copy and no allocation per block; no two 4 KiB chunks of a run are equal,
//! and content repeats only at the pool's length (block + 256 KiB), beyond the records that
//! storage compresses (128 KiB for ZFS and btrfs by default), while the pool stays small enough
//! to stay in the CPU's caches (a 1 MiB pool cost a tenth of the rate of 8 KiB writes on tmpfs).

use crate::permute::mix;
use crate::workload::DataKind;
use std::alloc::{self, Layout};

pub use iobm_target::objects::{stamp, CHUNK, STAMP_LEN};
/// Pool beyond one block: content repeats no sooner than every block + SLACK bytes.
const SLACK: usize = 256 << 10;

/// A zeroed heap buffer aligned to [`CHUNK`], as `O_DIRECT` requires.
pub struct AlignedBuf {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub fn zeroed(len: usize) -> AlignedBuf {
        let layout = Layout::from_size_align(len.max(1), CHUNK).expect("buffer size");
        // SAFETY: layout has non-zero size.
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        if ptr.is_null() {
            alloc::handle_alloc_error(layout);
        }
        AlignedBuf { ptr, len }
    }
}

impl std::ops::Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes for as long as self lives.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl std::ops::DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        let layout = Layout::from_size_align(self.len.max(1), CHUNK).expect("buffer size");
        // SAFETY: allocated in zeroed() with this same layout.
        unsafe { alloc::dealloc(self.ptr, layout) }
    }
}

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

/// Where a worker's blocks come from.
pub struct DataSource {
    pool: AlignedBuf,
    kind: DataKind,
    block: usize,
    /// Start of the next block's slice.
    next: usize,
    run_id: u64,
}

/// A pool of `len` bytes of `kind` content (unstamped) from `seed`.
fn pool_of(kind: DataKind, len: usize, seed: u64) -> AlignedBuf {
    let mut pool = AlignedBuf::zeroed(len);
    match kind {
        DataKind::Zero => {}
        DataKind::Random => fill_random(&mut pool, mix(seed)),
        DataKind::Compressible(pct) => {
            fill_random(&mut pool, mix(seed));
            let zeros = CHUNK * pct.min(100) as usize / 100;
            for chunk in pool.chunks_mut(CHUNK) {
                let from = (CHUNK - zeros).max(STAMP_LEN).min(chunk.len());
                chunk[from..].fill(0);
            }
        }
    }
    pool
}

/// Bytes of the pool that object bodies are views of (shared by all workers of a phase): 1 MiB
/// plus the slack, so content repeats no sooner than every 1.25 MiB, and every 4 KiB chunk of
/// an object also carries its own stamp.
pub const OBJECT_POOL: usize = (1 << 20) + SLACK;

/// The shared pool of an object phase.
pub fn object_pool(kind: DataKind, run_id: u64) -> AlignedBuf {
    pool_of(kind, OBJECT_POOL, run_id ^ 0x000b_1ec7)
}

impl DataSource {
    pub fn new(kind: DataKind, block: usize, run_id: u64, seed: u64) -> DataSource {
        let block_rounded = block.div_ceil(CHUNK) * CHUNK;
        let slack = if kind == DataKind::Zero { 0 } else { SLACK };
        let pool = pool_of(kind, block_rounded + slack, seed ^ run_id);
        DataSource {
            pool,
            kind,
            block,
            next: 0,
            run_id,
        }
    }

    /// The bytes to write at `offset` of file `file_id`: `block` long, stamped.
    pub fn block(&mut self, file_id: u64, offset: u64) -> &[u8] {
        let start = self.prepare(file_id, offset);
        self.get(start)
    }

    /// The block that [`DataSource::prepare`] stamped at `start`.
    pub fn get(&self, start: usize) -> &[u8] {
        &self.pool[start..start + self.block]
    }

    /// Picks and stamps the next block for `offset` of file `file_id`; returns where it starts.
    /// Done before an operation is timed; [`DataSource::get`] then hands it out.
    pub fn prepare(&mut self, file_id: u64, offset: u64) -> usize {
        if self.kind == DataKind::Zero {
            return 0;
        }
        if self.next + self.block > self.pool.len() {
            self.next = 0;
        }
        let start = self.next;
        self.next += self.block.div_ceil(CHUNK) * CHUNK;
        let block = &mut self.pool[start..start + self.block];
        for (i, chunk) in block.chunks_mut(CHUNK).enumerate() {
            if chunk.len() >= STAMP_LEN {
                let s = stamp(self.run_id, file_id, offset + (i * CHUNK) as u64);
                chunk[..STAMP_LEN].copy_from_slice(&s);
            }
        }
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn blocks_are_aligned_stamped_and_unique() {
        let mut src = DataSource::new(DataKind::Random, 64 * 1024, 7, 1);
        let mut chunks = HashSet::new();
        for offset in (0..64u64).map(|i| i * 64 * 1024) {
            let block = src.block(3, offset).to_vec();
            assert_eq!(src.block(3, offset).as_ptr() as usize % CHUNK, 0);
            for (i, chunk) in block.chunks(CHUNK).enumerate() {
                assert_eq!(
                    &chunk[..STAMP_LEN],
                    &stamp(7, 3, offset + (i * CHUNK) as u64)
                );
                assert!(chunks.insert(chunk.to_vec()), "duplicate chunk");
            }
        }
    }

    #[test]
    fn random_data_does_not_compress_but_zero_and_compressible_do() {
        let distinct = |b: &[u8]| b.iter().collect::<HashSet<_>>().len();
        let mut random = DataSource::new(DataKind::Random, 8192, 1, 1);
        assert_eq!(distinct(random.block(0, 0)), 256);
        let zero_bytes = |b: &[u8]| b.iter().filter(|&&x| x == 0).count();
        assert!(zero_bytes(random.block(0, 0)) < 100);
        let mut zero = DataSource::new(DataKind::Zero, 8192, 1, 1);
        assert_eq!(zero_bytes(zero.block(0, 0)), 8192);
        let mut half = DataSource::new(DataKind::Compressible(50), 8192, 1, 1);
        let z = zero_bytes(half.block(0, 0));
        assert!((4096..=4200).contains(&z), "{z}");
    }

    #[test]
    fn small_blocks_do_not_repeat_within_the_pool() {
        let mut src = DataSource::new(DataKind::Random, 4096, 1, 1);
        let mut bodies = HashSet::new();
        for i in 0..64u64 {
            assert!(
                bodies.insert(src.block(0, i * 4096)[STAMP_LEN..].to_vec()),
                "block {i}"
            );
        }
    }

    #[test]
    fn odd_block_sizes() {
        let mut src = DataSource::new(DataKind::Random, 1000, 1, 1);
        assert_eq!(src.block(0, 5000).len(), 1000);
        let mut tiny = DataSource::new(DataKind::Random, 10, 1, 1);
        assert_eq!(tiny.block(0, 0).len(), 10);
    }
}
