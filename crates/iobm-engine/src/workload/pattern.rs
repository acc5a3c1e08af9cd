//! The order a worker visits the blocks of its region in: sequential, shuffled, or drawn
//! from a skewed distribution (`--access`).

use iobm_stats::names::PatternName;

/// The order in which a worker visits the blocks of its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Sequential,
    /// Every block once per pass, in a random order drawn from this seed.
    Random {
        seed: u64,
    },
    /// Blocks drawn with replacement from `access` (`--access`), the hottest spread over the
    /// region by the order of this seed.
    Skewed {
        seed: u64,
        access: iobm_stats::access::AccessDist,
    },
}

impl Pattern {
    /// The seed of a random order (a skewed one spreads its hottest blocks by that order).
    pub fn seed(self) -> Option<u64> {
        match self {
            Pattern::Sequential => None,
            Pattern::Random { seed } | Pattern::Skewed { seed, .. } => Some(seed),
        }
    }

    /// How its blocks are picked: uniform unless skewed.
    pub fn access(self) -> iobm_stats::access::AccessDist {
        match self {
            Pattern::Skewed { access, .. } => access,
            _ => iobm_stats::access::AccessDist::Uniform,
        }
    }

    pub fn name(self) -> PatternName {
        match self {
            Pattern::Sequential => PatternName::Sequential,
            Pattern::Random { .. } | Pattern::Skewed { .. } => PatternName::Random,
        }
    }
}
