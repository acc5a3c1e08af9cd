//! Names that parts which do not depend on each other must agree on, kept in one place: the
//! operations, which the engine names and a saved run's readers rate by name, and the bonnie
//! tests, which the engine's suite builds as phases and the results and reports find again;
//! the fsync policies, which the engine follows and results record; how GETs pick objects.

/// The operations as results name them (`phases[].op`).
pub mod ops {
    pub const WRITE: &str = "write";
    pub const READ: &str = "read";
    pub const REWRITE: &str = "rewrite";
    /// Reads and writes of blocks together (`--rwmix`), each kind with its own books.
    pub const READWRITE: &str = "readwrite";
    pub const PUTC: &str = "putc";
    pub const GETC: &str = "getc";
    pub const SEEK: &str = "seek";
    pub const CREATE: &str = "create";
    pub const STAT: &str = "stat";
    pub const DELETE: &str = "delete";
    pub const PUT: &str = "put";
    pub const GET: &str = "get";
    pub const HEAD: &str = "head";
    pub const LIST: &str = "list";
    pub const MULTIPART: &str = "multipart";
    pub const MIXED: &str = "mixed";

    /// Operations that move data bytes, rated in bytes per second; the others (seeks,
    /// creates, stats, deletes, heads, lists) are counted in operations per second.
    pub const MOVING_DATA: [&str; 10] = [
        WRITE, READ, REWRITE, READWRITE, PUTC, GETC, PUT, GET, MULTIPART, MIXED,
    ];

    pub fn moves_data(op: &str) -> bool {
        MOVING_DATA.contains(&op)
    }
}

/// When written data is forced to stable storage (results' `settings.fsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsyncPolicy {
    Never,
    /// Once per worker after its last write, inside its timed interval.
    End,
    /// After every write, inside that operation's latency (bonnie++ -b).
    Each,
}

impl FsyncPolicy {
    pub fn name(self) -> &'static str {
        match self {
            FsyncPolicy::Never => "never",
            FsyncPolicy::End => "end",
            FsyncPolicy::Each => "each",
        }
    }
}

/// How the GETs and HEADs of a phase that runs by time or count pick the objects of the data set
/// (results' `config.s3.picks`); a phase that reads the data set once reads each object once.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Picks {
    /// At random with replacement: with as many reads as objects, about 37% (1/e) of the reads
    /// are of an object read before.
    #[default]
    Random,
    /// Each object once per pass over the data set, in an order shuffled anew for each pass.
    Once,
}

impl Picks {
    pub fn name(self) -> &'static str {
        match self {
            Picks::Random => "random",
            Picks::Once => "once",
        }
    }
}

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
