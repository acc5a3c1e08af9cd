//! How a file phase does its I/O, as the engine follows it and results record it: the engine
//! ([`Engine`]: sync, io_uring, mmap) and the kernel's hints on each file (`--fadvise`,
//! [`Fadvise`]) and on each mapping (`--madvise`, [`Madvise`]).

use serde::{Deserialize, Serialize};

/// How a worker submits block reads and writes (results' `engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Engine {
    /// One `pread`/`pwrite` at a time.
    #[serde(rename = "sync")]
    Sync,
    /// io_uring with `--iodepth` requests in flight (reads and writes of file phases).
    #[serde(rename = "io_uring")]
    IoUring,
    /// The file mapped (`mmap`, `MAP_SHARED`): each operation copies to or from the mapping,
    /// its page faults inside the operation's time; `msync` is the fsync policy's flush.
    #[serde(rename = "mmap")]
    Mmap,
}

impl Engine {
    pub const ALL: [Engine; 3] = [Engine::Sync, Engine::IoUring, Engine::Mmap];

    /// The word, as flags and results spell it.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::IoUring => "io_uring",
            Engine::Mmap => "mmap",
        }
    }
}

/// `--fadvise`: the `posix_fadvise` advice given on each file of a phase right after it is
/// opened (fio's `fadvise_hint`, elbencho's `--fadv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    Sequential,
    Random,
    Willneed,
    Dontneed,
    Noreuse,
}

impl Fadvise {
    pub const ALL: [Fadvise; 5] = [
        Fadvise::Sequential,
        Fadvise::Random,
        Fadvise::Willneed,
        Fadvise::Dontneed,
        Fadvise::Noreuse,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Fadvise::Sequential => "sequential",
            Fadvise::Random => "random",
            Fadvise::Willneed => "willneed",
            Fadvise::Dontneed => "dontneed",
            Fadvise::Noreuse => "noreuse",
        }
    }
}

/// `--madvise`: the `madvise` advice given on each mapping of `--engine mmap` right after it is
/// made (elbencho's `--madv`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Madvise {
    Sequential,
    Random,
    Willneed,
    Dontneed,
    /// Transparent huge pages for the mapping, where the file system gives them.
    Hugepage,
}

impl Madvise {
    pub const ALL: [Madvise; 5] = [
        Madvise::Sequential,
        Madvise::Random,
        Madvise::Willneed,
        Madvise::Dontneed,
        Madvise::Hugepage,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Madvise::Sequential => "sequential",
            Madvise::Random => "random",
            Madvise::Willneed => "willneed",
            Madvise::Dontneed => "dontneed",
            Madvise::Hugepage => "hugepage",
        }
    }
}

/// A recorded engine as results write it: its word, or "" in documents from before engines
/// were recorded (`#[serde(with = "engine_word")]` on an `Option<Engine>`).
pub mod engine_word {
    use super::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(engine: &Option<Engine>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(engine.map_or("", Engine::name))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Engine>, D::Error> {
        let word = String::deserialize(d)?;
        if word.is_empty() {
            return Ok(None);
        }
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == word)
            .map(Some)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown engine {word:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Doc {
        #[serde(default, with = "engine_word")]
        engine: Option<Engine>,
    }

    #[test]
    fn engines_are_written_as_the_words_documents_hold() {
        for engine in Engine::ALL {
            let json = serde_json::to_string(&engine).unwrap();
            assert_eq!(json, format!("\"{}\"", engine.name()));
            let doc = Doc {
                engine: Some(engine),
            };
            let text = serde_json::to_string(&doc).unwrap();
            assert_eq!(serde_json::from_str::<Doc>(&text).unwrap(), doc);
        }
        let before: Doc = serde_json::from_str(r#"{"engine":""}"#).unwrap();
        assert_eq!(before.engine, None);
        assert_eq!(serde_json::to_string(&before).unwrap(), r#"{"engine":""}"#);
        assert_eq!(serde_json::from_str::<Doc>("{}").unwrap().engine, None);
        assert!(serde_json::from_str::<Doc>(r#"{"engine":"aio"}"#).is_err());
    }

    #[test]
    fn hints_are_written_as_their_names() {
        for hint in Fadvise::ALL {
            assert_eq!(
                serde_json::to_string(&hint).unwrap(),
                format!("\"{}\"", hint.name())
            );
        }
        for hint in Madvise::ALL {
            assert_eq!(
                serde_json::to_string(&hint).unwrap(),
                format!("\"{}\"", hint.name())
            );
        }
    }
}
