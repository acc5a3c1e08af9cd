//! The operations as results name them (`phases[].op`, `phases[].operations[].op`): one enum
//! whose serde form is the word documents hold, and what a reader asks of an operation.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An operation, as results name it. Its serde form is the word ([`OpName::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OpName {
    /// Blocks written.
    Write,
    /// Blocks read.
    Read,
    /// Blocks read, changed and written back in place.
    Rewrite,
    /// Reads and writes of blocks together (`--rwmix`), each kind with its own books.
    Readwrite,
    /// Blocks written one byte at a time.
    Putc,
    /// Blocks read one byte at a time.
    Getc,
    /// Random blocks read, some written back (bonnie++'s seeks).
    Seek,
    /// Small files created with their contents.
    Create,
    /// Small files stat'ed (and read when they hold anything).
    Stat,
    /// Small files, or objects, deleted.
    Delete,
    /// Objects stored.
    Put,
    /// Objects read.
    Get,
    /// Objects' sizes asked.
    Head,
    /// Pages of a listing.
    List,
    /// Objects stored by multipart upload.
    Multipart,
    /// Gets, heads, puts and deletes drawn by weight.
    Mixed,
    /// Gets, heads, puts, deletes and lists drawn by weight, each on one version of an object
    /// in a bucket that keeps versions.
    Versioned,
    // mdtest's operations on the items and the tree (`MetaOp`).
    DirCreate,
    DirStat,
    DirRemove,
    FileCreate,
    FileStat,
    FileRead,
    FileRename,
    FileRemove,
    TreeCreate,
    TreeRemove,
    /// Directory entries examined by a walk (IO500's find).
    Find,
}

impl OpName {
    /// Every operation.
    pub const ALL: [OpName; 28] = [
        OpName::Write,
        OpName::Read,
        OpName::Rewrite,
        OpName::Readwrite,
        OpName::Putc,
        OpName::Getc,
        OpName::Seek,
        OpName::Create,
        OpName::Stat,
        OpName::Delete,
        OpName::Put,
        OpName::Get,
        OpName::Head,
        OpName::List,
        OpName::Multipart,
        OpName::Mixed,
        OpName::Versioned,
        OpName::DirCreate,
        OpName::DirStat,
        OpName::DirRemove,
        OpName::FileCreate,
        OpName::FileStat,
        OpName::FileRead,
        OpName::FileRename,
        OpName::FileRemove,
        OpName::TreeCreate,
        OpName::TreeRemove,
        OpName::Find,
    ];

    /// The word, as results spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpName::Write => "write",
            OpName::Read => "read",
            OpName::Rewrite => "rewrite",
            OpName::Readwrite => "readwrite",
            OpName::Putc => "putc",
            OpName::Getc => "getc",
            OpName::Seek => "seek",
            OpName::Create => "create",
            OpName::Stat => "stat",
            OpName::Delete => "delete",
            OpName::Put => "put",
            OpName::Get => "get",
            OpName::Head => "head",
            OpName::List => "list",
            OpName::Multipart => "multipart",
            OpName::Mixed => "mixed",
            OpName::Versioned => "versioned",
            OpName::DirCreate => "dir-create",
            OpName::DirStat => "dir-stat",
            OpName::DirRemove => "dir-remove",
            OpName::FileCreate => "file-create",
            OpName::FileStat => "file-stat",
            OpName::FileRead => "file-read",
            OpName::FileRename => "file-rename",
            OpName::FileRemove => "file-remove",
            OpName::TreeCreate => "tree-create",
            OpName::TreeRemove => "tree-remove",
            OpName::Find => "find",
        }
    }

    /// Whether it moves data bytes, rated in bytes per second; the others (seeks, creates,
    /// stats, deletes, heads, lists, mdtest's operations, find) are counted in operations per
    /// second.
    pub const fn moves_data(self) -> bool {
        matches!(
            self,
            OpName::Write
                | OpName::Read
                | OpName::Rewrite
                | OpName::Readwrite
                | OpName::Putc
                | OpName::Getc
                | OpName::Put
                | OpName::Get
                | OpName::Multipart
                | OpName::Mixed
                | OpName::Versioned
        )
    }

    /// Whether it is one of S3's whole-object operations (or their mix). A delete is one only
    /// in an object phase, which the operation alone cannot tell.
    pub const fn on_objects(self) -> bool {
        matches!(
            self,
            OpName::Put
                | OpName::Get
                | OpName::Head
                | OpName::List
                | OpName::Multipart
                | OpName::Mixed
                | OpName::Versioned
        )
    }

    /// Whether it reads blocks of a file: reads, per-char reads, seeks.
    pub const fn reads_blocks(self) -> bool {
        matches!(self, OpName::Read | OpName::Getc | OpName::Seek)
    }

    /// Whether it only writes blocks of a file: writes, per-char writes.
    pub const fn writes_blocks(self) -> bool {
        matches!(self, OpName::Write | OpName::Putc)
    }
}

impl fmt::Display for OpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<OpName> for String {
    fn from(op: OpName) -> String {
        op.as_str().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::OpName;

    #[test]
    fn the_serde_form_is_the_word() {
        for op in OpName::ALL {
            let json = serde_json::to_string(&op).unwrap();
            assert_eq!(json, format!("\"{}\"", op.as_str()));
            assert_eq!(serde_json::from_str::<OpName>(&json).unwrap(), op);
        }
    }

    #[test]
    fn every_word_is_one_operation_and_a_strange_one_is_refused() {
        let mut words: Vec<_> = OpName::ALL.iter().map(|op| op.as_str()).collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), OpName::ALL.len());
        assert!(serde_json::from_str::<OpName>("\"randread\"").is_err());
    }

    #[test]
    fn data_moving_operations_are_the_byte_rated_ones() {
        let moving: Vec<_> = OpName::ALL
            .into_iter()
            .filter(|op| op.moves_data())
            .collect();
        assert_eq!(
            moving.iter().map(|op| op.as_str()).collect::<Vec<_>>(),
            [
                "write",
                "read",
                "rewrite",
                "readwrite",
                "putc",
                "getc",
                "put",
                "get",
                "multipart",
                "mixed",
                "versioned"
            ]
        );
    }
}
