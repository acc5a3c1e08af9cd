//! Names that parts which do not depend on each other must agree on, kept in one place: the
//! bonnie tests, which the engine's suite builds as phases and the results and reports find
//! again by name in a saved run.

/// The bonnie-style tests, in bonnie++'s order.
pub mod bonnie {
    pub const PER_CHAR_WRITE: &str = "per-char write";
    pub const BLOCK_WRITE: &str = "block write";
    pub const REWRITE: &str = "rewrite";
    pub const PER_CHAR_READ: &str = "per-char read";
    pub const BLOCK_READ: &str = "block read";
    /// Reported in seeks per second.
    pub const SEEKS: &str = "random seeks";
    pub const SEQUENTIAL_CREATE: &str = "sequential create";
    pub const SEQUENTIAL_STAT: &str = "sequential stat";
    pub const SEQUENTIAL_DELETE: &str = "sequential delete";
    pub const RANDOM_CREATE: &str = "random create";
    pub const RANDOM_STAT: &str = "random stat";
    pub const RANDOM_DELETE: &str = "random delete";

    /// Tests that move data, reported in K/sec.
    pub const BYTE_TESTS: [&str; 5] = [
        PER_CHAR_WRITE,
        BLOCK_WRITE,
        REWRITE,
        PER_CHAR_READ,
        BLOCK_READ,
    ];
    /// The metadata tests, reported in files per second.
    pub const META_TESTS: [&str; 6] = [
        SEQUENTIAL_CREATE,
        SEQUENTIAL_STAT,
        SEQUENTIAL_DELETE,
        RANDOM_CREATE,
        RANDOM_STAT,
        RANDOM_DELETE,
    ];

    /// Whether a phase of this name is one of the bonnie tests.
    pub fn is_test(name: &str) -> bool {
        BYTE_TESTS.contains(&name) || name == SEEKS || META_TESTS.contains(&name)
    }
}
