//! The kind of a run (results' `kind`): the command that made it, which the run layer records
//! and a saved run's readers (reports, comparisons, merges) group and describe by.

use super::OpName;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The command a run came from, written as documents hold it: `write`, `read`, `stream`,
/// `quick`, `bonnie`, `io500`, `meta`, `replay`, and `s3 OP` for the S3 operations.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunKind {
    Write,
    Read,
    Stream,
    Quick,
    Bonnie,
    Io500,
    Meta,
    Replay,
    /// `iobm s3 OP`.
    S3(OpName),
    /// A word this iobm does not write, from another version's document: kept as it was.
    Other(String),
}

/// The kinds with a word of their own (the S3 ones are `s3 ` and the operation's word).
const WORDS: [(RunKind, &str); 8] = [
    (RunKind::Write, "write"),
    (RunKind::Read, "read"),
    (RunKind::Stream, "stream"),
    (RunKind::Quick, "quick"),
    (RunKind::Bonnie, "bonnie"),
    (RunKind::Io500, "io500"),
    (RunKind::Meta, "meta"),
    (RunKind::Replay, "replay"),
];

impl RunKind {
    /// The kind a document's word names (an unknown word kept as [`RunKind::Other`]).
    pub fn parse(word: &str) -> RunKind {
        if let Some((kind, _)) = WORDS.iter().find(|(_, w)| *w == word) {
            return kind.clone();
        }
        let op = (word.strip_prefix("s3 "))
            .and_then(|op| OpName::ALL.into_iter().find(|o| o.as_str() == op));
        match op {
            Some(op) => RunKind::S3(op),
            None => RunKind::Other(word.to_string()),
        }
    }

    /// The S3 operation of an `s3` run.
    pub fn s3_op(&self) -> Option<OpName> {
        match self {
            RunKind::S3(op) => Some(*op),
            _ => None,
        }
    }

    /// Whether the run came from `iobm s3`.
    pub fn is_s3(&self) -> bool {
        self.s3_op().is_some()
    }

    /// Whether its phase draws several operations by weight (`s3 mixed`, `s3 versioned`).
    pub fn draws_operations(&self) -> bool {
        matches!(self.s3_op(), Some(OpName::Mixed | OpName::Versioned))
    }

    /// The group runs are compared within, as comparisons title it: `s3` for every S3
    /// operation together, else the kind's own word.
    pub fn family(&self) -> String {
        match self {
            RunKind::S3(_) => "s3".to_string(),
            other => other.to_string(),
        }
    }
}

impl fmt::Display for RunKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunKind::S3(op) => write!(f, "s3 {op}"),
            RunKind::Other(word) => f.write_str(word),
            kind => {
                let (_, word) = WORDS
                    .iter()
                    .find(|(k, _)| k == kind)
                    .expect("a listed kind");
                f.write_str(word)
            }
        }
    }
}

impl Serialize for RunKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RunKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RunKind, D::Error> {
        Ok(RunKind::parse(&String::deserialize(d)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_reads_back_from_its_word() {
        let mut kinds: Vec<RunKind> = WORDS.iter().map(|(k, _)| k.clone()).collect();
        kinds.extend(OpName::ALL.map(RunKind::S3));
        for kind in kinds {
            let word = serde_json::to_string(&kind).unwrap();
            assert_eq!(
                serde_json::from_str::<RunKind>(&word).unwrap(),
                kind,
                "{word}"
            );
        }
        assert_eq!(RunKind::S3(OpName::Get).to_string(), "s3 get");
        assert_eq!(RunKind::Io500.to_string(), "io500");
    }

    #[test]
    fn an_unknown_word_is_kept_as_it_was() {
        for word in ["replay-old", "s3 teleport", "S3 get", ""] {
            let kind = RunKind::parse(word);
            assert_eq!(kind, RunKind::Other(word.to_string()));
            assert_eq!(kind.to_string(), word);
            assert!(!kind.is_s3());
        }
    }

    #[test]
    fn s3_kinds_compare_together_and_the_weighted_ones_draw() {
        let (get, put) = (RunKind::S3(OpName::Get), RunKind::S3(OpName::Put));
        assert_eq!(get.family(), put.family());
        assert_ne!(get.family(), RunKind::Write.family());
        assert_eq!(get.family(), "s3");
        assert_eq!(RunKind::Read.family(), "read");
        let drawing: Vec<OpName> = (OpName::ALL.into_iter())
            .filter(|op| RunKind::S3(*op).draws_operations())
            .collect();
        assert_eq!(drawing, [OpName::Mixed, OpName::Versioned]);
        assert_eq!(get.s3_op(), Some(OpName::Get));
        assert_eq!(RunKind::Meta.s3_op(), None);
    }
}
