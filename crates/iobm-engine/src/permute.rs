//! A random permutation of `0..n` computed on the fly (a Feistel network with cycle walking), so
//! `--random` visits every block exactly once without storing a list of offsets.

pub use iobm_stats::sizes::mix;

#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut keys = [0; 4];
        for (i, key) in keys.iter_mut().enumerate() {
            *key = mix(seed ^ (i as u64).wrapping_mul(0x5851_f42d_4c95_7f2d));
        }
        Permutation { n, half_bits, keys }
    }

    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut left, mut right) = (x >> self.half_bits, x & mask);
        for key in self.keys {
            let next = left ^ (mix(right ^ key) & mask);
            left = right;
            right = next;
        }
        (left << self.half_bits) | right
    }

    /// The image of `i` (which must be below n).
    pub fn get(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        let mut x = self.encrypt(i);
        // The domain is at most 4n, so this loop ends after a few rounds on average.
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_every_index_once() {
        for n in [1u64, 2, 3, 7, 64, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let j = p.get(i) as usize;
                assert!(!seen[j], "n={n}: {j} twice");
                seen[j] = true;
            }
        }
    }

    #[test]
    fn is_not_the_identity_and_depends_on_seed() {
        let a: Vec<u64> = (0..100).map(|i| Permutation::new(100, 1).get(i)).collect();
        let b: Vec<u64> = (0..100).map(|i| Permutation::new(100, 2).get(i)).collect();
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        assert_ne!(a, b);
    }
}
