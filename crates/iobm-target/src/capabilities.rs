//! What a target can do, as flags (fio's `FIO_RAWIO`, `FIO_NODISKUTIL`): each target declares
//! its set once, and a run is checked against it before anything is created, so a target never
//! answers `Unsupported` in the middle of a run.

use std::fmt;

/// One thing a target can do beyond whole-object puts, gets, heads and deletes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Capability {
    /// Objects opened as files: reads and writes at offsets through a handle
    /// ([`crate::Target::open`]).
    Files,
    /// Bypasses the page cache (`O_DIRECT`); buffers and offsets must then be aligned. Whether
    /// the storage behind it accepts that is asked with [`crate::Target::probe_direct`].
    DirectIo,
    /// Its handles give their descriptor ([`crate::Handle::raw_fd`]) to engines that submit
    /// their own requests (io_uring).
    RawFd,
    /// Directories that can be listed ([`crate::Target::list_dir`]); targets without them accept
    /// and ignore `create_dir` and `remove_dir`.
    Directories,
    /// Renames a file or directory ([`crate::Target::rename`]).
    Rename,
    /// Reads a byte range of an object ([`crate::Objects::get`] with a range).
    RangedReads,
    /// Lists the run's objects page by page ([`crate::Objects::list`]).
    Listing,
    /// Stores an object in parts ([`crate::Objects::multipart`], S3 multipart upload).
    Multipart,
    /// Moves data to and from buffers in device memory; without it, buffers are host memory
    /// ([`crate::memory`]).
    DeviceBuffers,
    /// Keeps every version of an object and reads, deletes and lists them by version
    /// ([`crate::Objects::get_version`], S3 versioning).
    Versions,
}

impl Capability {
    /// Every capability, in the order they are named.
    pub const ALL: [Capability; 10] = [
        Capability::Files,
        Capability::DirectIo,
        Capability::RawFd,
        Capability::Directories,
        Capability::Rename,
        Capability::RangedReads,
        Capability::Listing,
        Capability::Multipart,
        Capability::DeviceBuffers,
        Capability::Versions,
    ];

    /// The flag's name, as a refusal names it.
    pub const fn name(self) -> &'static str {
        match self {
            Capability::Files => "FILES",
            Capability::DirectIo => "DIRECT_IO",
            Capability::RawFd => "RAW_FD",
            Capability::Directories => "DIRECTORIES",
            Capability::Rename => "RENAME",
            Capability::RangedReads => "RANGED_READS",
            Capability::Listing => "LISTING",
            Capability::Multipart => "MULTIPART",
            Capability::DeviceBuffers => "DEVICE_BUFFERS",
            Capability::Versions => "VERSIONS",
        }
    }

    /// What a run needs it for, in a refusal's words.
    pub const fn use_of(self) -> &'static str {
        match self {
            Capability::Files => "reading and writing files at offsets",
            Capability::DirectIo => "bypassing the page cache (O_DIRECT)",
            Capability::RawFd => "submitting requests on descriptors (io_uring, cuFile)",
            Capability::Directories => "listing directories",
            Capability::Rename => "renaming files",
            Capability::RangedReads => "reading ranges of objects",
            Capability::Listing => "listing objects",
            Capability::Multipart => "storing objects in parts (multipart upload)",
            Capability::DeviceBuffers => "buffers in device memory",
            Capability::Versions => "keeping and reading versions of objects",
        }
    }

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Capability`] flags: what a target can do, or what a run needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Capabilities(u32);

impl Capabilities {
    /// The empty set.
    pub const NONE: Capabilities = Capabilities(0);

    /// The set of these flags.
    pub const fn of(flags: &[Capability]) -> Capabilities {
        let mut bits = 0;
        let mut i = 0;
        while i < flags.len() {
            bits |= flags[i].bit();
            i += 1;
        }
        Capabilities(bits)
    }

    /// This set with `flag` added.
    pub const fn with(self, flag: Capability) -> Capabilities {
        Capabilities(self.0 | flag.bit())
    }

    /// This set with `flag` taken out.
    pub const fn without(self, flag: Capability) -> Capabilities {
        Capabilities(self.0 & !flag.bit())
    }

    pub const fn has(self, flag: Capability) -> bool {
        self.0 & flag.bit() != 0
    }

    /// The flags of the set, in [`Capability::ALL`]'s order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |&c| self.has(c))
    }

    /// The flags of `needed` this set lacks.
    pub fn missing(self, needed: Capabilities) -> Capabilities {
        Capabilities(needed.0 & !self.0)
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The first flag of `needed` this set lacks, as an error naming it; Ok when none.
    pub fn check(self, needed: Capabilities) -> Result<(), Unsupported> {
        match self.missing(needed).iter().next() {
            Some(flag) => Err(Unsupported(flag)),
            None => Ok(()),
        }
    }
}

/// What a target refused before a run: a run that needs `0`, which the target lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported(pub Capability);

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs {}, which this target lacks",
            self.0.use_of(),
            self.0.name()
        )
    }
}

impl std::error::Error for Unsupported {}

impl From<Unsupported> for std::io::Error {
    fn from(e: Unsupported) -> Self {
        std::io::Error::new(std::io::ErrorKind::Unsupported, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_holds_its_flags_and_names_the_first_missing() {
        let set = Capabilities::of(&[Capability::Files, Capability::Rename]);
        assert!(set.has(Capability::Files) && set.has(Capability::Rename));
        assert!(!set.has(Capability::DirectIo));
        assert_eq!(
            set.without(Capability::Files).iter().collect::<Vec<_>>(),
            [Capability::Rename]
        );
        let needed =
            Capabilities::of(&[Capability::Rename, Capability::RawFd, Capability::DirectIo]);
        assert_eq!(
            set.missing(needed).iter().collect::<Vec<_>>(),
            [Capability::DirectIo, Capability::RawFd]
        );
        let refused = set.check(needed).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "bypassing the page cache (O_DIRECT) needs DIRECT_IO, which this target lacks"
        );
        assert!(set.check(set).is_ok());
    }

    #[test]
    fn every_flag_has_its_own_bit_and_name() {
        let all = Capabilities::of(&Capability::ALL);
        assert_eq!(all.iter().count(), Capability::ALL.len());
        let names: std::collections::BTreeSet<_> =
            Capability::ALL.iter().map(|c| c.name()).collect();
        assert_eq!(names.len(), Capability::ALL.len());
    }
}
