//! The words of a run's settings that the engine, the run layer and a saved run's readers must
//! spell alike: the access pattern, the data set's layout, and what was dropped from caches
//! before a phase. Each is written as the word documents already hold.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The order blocks are read or written in (results' `config.pattern` and
/// `settings.pattern`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum PatternName {
    #[serde(rename = "sequential")]
    Sequential,
    /// Every block once per pass, in a random order.
    #[serde(rename = "random")]
    Random,
    /// A run's phases differ (`config.pattern` only).
    #[serde(rename = "per phase")]
    PerPhase,
    /// A word this iobm does not write, from an older document ("per test" of early bonnie
    /// runs): kept as it was.
    #[serde(untagged)]
    Other(String),
}

impl PatternName {
    /// The word, as results spell it.
    pub fn as_str(&self) -> &str {
        match self {
            PatternName::Sequential => "sequential",
            PatternName::Random => "random",
            PatternName::PerPhase => "per phase",
            PatternName::Other(word) => word,
        }
    }
}

impl fmt::Display for PatternName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a run's data set lies in files (results' `config.layout`, a kept data set's manifest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LayoutName {
    /// One file per worker.
    #[serde(rename = "file_per_job")]
    FilePerJob,
    /// Disjoint regions of one file.
    #[serde(rename = "shared_file")]
    SharedFile,
    /// IOR's segmented shared file (`--segments`): every worker's transfers interleaved with
    /// the others' in one file.
    #[serde(rename = "strided")]
    Strided,
    /// Objects of an S3 bucket.
    #[serde(rename = "objects")]
    Objects,
    /// A word this iobm does not write: kept as it was.
    #[serde(untagged)]
    Other(String),
}

impl LayoutName {
    /// The layout of workers in their own files, or sharing one.
    pub fn of(shared: bool) -> LayoutName {
        match shared {
            true => LayoutName::SharedFile,
            false => LayoutName::FilePerJob,
        }
    }

    /// Whether the workers share one file.
    pub fn shared(&self) -> bool {
        matches!(self, LayoutName::SharedFile | LayoutName::Strided)
    }

    /// The word, as results spell it.
    pub fn as_str(&self) -> &str {
        match self {
            LayoutName::FilePerJob => "file_per_job",
            LayoutName::SharedFile => "shared_file",
            LayoutName::Strided => "strided",
            LayoutName::Objects => "objects",
            LayoutName::Other(word) => word,
        }
    }
}

impl fmt::Display for LayoutName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was dropped from this machine's page cache before a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheDrop {
    /// Nothing (not asked, or the target has no cache to drop).
    #[default]
    Nothing,
    /// The phase's files' pages (flushed, then `posix_fadvise(DONTNEED)`).
    Files,
    /// The whole system's page cache (root: sync, then `drop_caches`).
    System,
}

impl CacheDrop {
    pub const ALL: [CacheDrop; 3] = [CacheDrop::Nothing, CacheDrop::Files, CacheDrop::System];

    pub fn name(self) -> &'static str {
        match self {
            CacheDrop::Nothing => "nothing",
            CacheDrop::Files => "files",
            CacheDrop::System => "system",
        }
    }
}

/// What was dropped before a phase (results' `settings.cache_dropped`): this machine's page
/// cache, and the servers' caches (`--server-drop-cmd`). Written "nothing", "files", "system",
/// "servers", "files+servers" or "system+servers"; "" in documents from before it was recorded
/// (`client` None), the only words any document held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct CacheDropped {
    /// This machine's page cache; None: not recorded.
    pub client: Option<CacheDrop>,
    /// The servers' caches were dropped too.
    pub servers: bool,
}

impl CacheDropped {
    /// This machine's `drop`, the servers' caches not.
    pub fn client(drop: CacheDrop) -> CacheDropped {
        CacheDropped {
            client: Some(drop),
            servers: false,
        }
    }
}

impl fmt::Display for CacheDropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.client, self.servers) {
            (None, false) => Ok(()),
            (None | Some(CacheDrop::Nothing), true) => f.write_str("servers"),
            (Some(client), false) => f.write_str(client.name()),
            (Some(client), true) => write!(f, "{}+servers", client.name()),
        }
    }
}

impl From<CacheDropped> for String {
    fn from(dropped: CacheDropped) -> String {
        dropped.to_string()
    }
}

impl TryFrom<String> for CacheDropped {
    type Error = String;

    fn try_from(word: String) -> Result<CacheDropped, String> {
        let (client, servers) = match word.strip_suffix("servers") {
            Some(rest) => (rest.strip_suffix('+').unwrap_or(rest), true),
            None => (word.as_str(), false),
        };
        let client = match client {
            "" if servers => Some(CacheDrop::Nothing),
            "" => None,
            word => Some(
                (CacheDrop::ALL.into_iter())
                    .find(|d| d.name() == word)
                    .ok_or_else(|| format!("unknown cache drop {word:?}"))?,
            ),
        };
        Ok(CacheDropped { client, servers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_is_read_back_as_it_was_written() {
        let words = [
            "",
            "nothing",
            "files",
            "system",
            "servers",
            "files+servers",
            "system+servers",
        ];
        for word in words {
            let dropped = CacheDropped::try_from(word.to_string()).unwrap();
            assert_eq!(dropped.to_string(), word);
        }
        let both = CacheDropped::try_from("files+servers".to_string()).unwrap();
        assert_eq!((both.client, both.servers), (Some(CacheDrop::Files), true));
        assert!(CacheDropped::try_from("everything".to_string()).is_err());
        for (pattern, word) in [
            (PatternName::Sequential, "sequential"),
            (PatternName::Random, "random"),
            (PatternName::PerPhase, "per phase"),
            (PatternName::Other("per test".into()), "per test"),
        ] {
            let json = serde_json::to_string(&pattern).unwrap();
            assert_eq!(json, format!("\"{word}\""));
            assert_eq!(serde_json::from_str::<PatternName>(&json).unwrap(), pattern);
        }
        for layout in ["file_per_job", "shared_file", "strided", "objects", "mixed"] {
            let json = format!("\"{layout}\"");
            let read: LayoutName = serde_json::from_str(&json).unwrap();
            assert_eq!(read.as_str(), layout);
            assert_eq!(serde_json::to_string(&read).unwrap(), json);
        }
        assert_eq!(
            serde_json::from_str::<LayoutName>("\"strided\"").unwrap(),
            LayoutName::Strided
        );
    }
}

/// How a paced phase's intended starts are spaced (results' `pace.arrivals` and
/// `config.rate.arrivals`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// Evenly, one every 1/rate (fio's `rate_process=linear`).
    Uniform,
    /// Exponential gaps of mean 1/rate, each worker from its own seeded generator (fio's
    /// `rate_process=poisson`).
    Poisson,
}

impl Arrivals {
    pub const ALL: [Arrivals; 2] = [Arrivals::Uniform, Arrivals::Poisson];

    /// The word, as results spell it.
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        }
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
