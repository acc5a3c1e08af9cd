//! Names that parts which do not depend on each other must agree on, kept in one place: the
//! operations ([`OpName`]), which the engine names and a saved run's readers rate by name, and
//! the bonnie tests, which the engine's suite builds as phases and the results and reports find
//! again; the fsync policies, which the engine follows and results record (a phase's, a run's);
//! how GETs pick objects; the pattern, layout, cache drops, engine and hints of a run's
//! settings, how a paced phase's starts are spaced, a replayed trace's format and timing, and
//! the kind of run ([`RunKind`]).

mod io;
mod op;
mod replay;
mod run;
mod settings;
pub use io::{engine_word, Engine, Fadvise, Madvise};
pub use op::OpName;
pub use replay::{ReplayTiming, TraceFormat};
pub use run::RunKind;
pub use settings::{Arrivals, CacheDrop, CacheDropped, LayoutName, PatternName};

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
    pub const ALL: [FsyncPolicy; 3] = [FsyncPolicy::Never, FsyncPolicy::End, FsyncPolicy::Each];

    pub fn name(self) -> &'static str {
        match self {
            FsyncPolicy::Never => "never",
            FsyncPolicy::End => "end",
            FsyncPolicy::Each => "each",
        }
    }
}

/// A run's fsync policy (results' `config.fsync`): the one its writing phases share ("never"
/// when none writes), or "per phase" when they differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum RunFsync {
    Policy(FsyncPolicy),
    PerPhase,
}

impl RunFsync {
    /// The word, as results spell it.
    pub fn name(self) -> &'static str {
        match self {
            RunFsync::Policy(policy) => policy.name(),
            RunFsync::PerPhase => "per phase",
        }
    }
}

impl std::fmt::Display for RunFsync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl From<RunFsync> for &'static str {
    fn from(fsync: RunFsync) -> &'static str {
        fsync.name()
    }
}

impl TryFrom<String> for RunFsync {
    type Error = String;

    fn try_from(word: String) -> Result<RunFsync, String> {
        (FsyncPolicy::ALL.into_iter().map(RunFsync::Policy))
            .chain([RunFsync::PerPhase])
            .find(|f| f.name() == word)
            .ok_or_else(|| format!("unknown fsync policy {word:?}"))
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

#[cfg(test)]
mod tests {
    use super::{FsyncPolicy, RunFsync};

    #[test]
    fn a_runs_fsync_is_written_as_its_word_and_read_back() {
        for fsync in FsyncPolicy::ALL
            .map(RunFsync::Policy)
            .into_iter()
            .chain([RunFsync::PerPhase])
        {
            let json = serde_json::to_string(&fsync).unwrap();
            assert_eq!(json, format!("\"{fsync}\""));
            assert_eq!(serde_json::from_str::<RunFsync>(&json).unwrap(), fsync);
        }
        assert_eq!(
            serde_json::to_string(&RunFsync::PerPhase).unwrap(),
            "\"per phase\""
        );
        assert!(serde_json::from_str::<RunFsync>("\"sometimes\"").is_err());
    }
}
