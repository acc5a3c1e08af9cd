//! iobm-target: the one seam every backend implements. A target performs operations on named
//! objects; it never reads the clock and never keeps statistics, so the engine measures every
//! target the same way.

use std::io;

pub mod capabilities;
#[cfg(any(test, feature = "conformance"))]
pub mod conformance;
#[cfg(test)]
mod conformance_tests;
pub mod device;
pub mod errors;
pub mod fault;
pub mod layers;
pub mod mem;
pub mod memory;
#[cfg(test)]
mod meta_tests;
pub mod null;
pub mod objects;
pub mod posix;

pub use capabilities::{Capabilities, Capability, Unsupported};
pub use errors::{error_kind, HttpError, TlsError, BAD_DATA};
pub use objects::{Body, ListPage, Objects};

/// How an object is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Create a new object; fails if it exists (iobm never overwrites what it did not create).
    Create,
    /// Read an existing object.
    Read,
    /// Write (and read) an existing object, keeping its contents.
    Write,
    /// Create an object anew, removing the one this run made before (bonnie++'s write tests
    /// each start from a new file).
    Replace,
}

/// Options for [`Target::open`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenOptions {
    pub access: Access,
    /// Bypass the page cache (`O_DIRECT`).
    pub direct: bool,
}

/// What [`Target::stat`] says of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    /// Bytes of a file (a directory's own size where the target has one, else 0).
    pub len: u64,
    /// The name is a directory.
    pub dir: bool,
}

/// One entry of a directory, as [`Target::list_dir`] gives it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DirEntry {
    /// The entry's own name (one component, never `.` or `..`).
    pub name: String,
    /// The entry is a directory (else a file or anything else).
    pub dir: bool,
}

/// Kernel block-device counters for the device behind a target, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceCounters {
    /// The device, as `major:minor`.
    pub device: String,
    pub read_bytes: u64,
    pub written_bytes: u64,
}

/// Where a target keeps its data, as the probes around a phase look at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place<'a> {
    /// Nowhere outside the process's own memory, or nowhere a probe can look (memory, null).
    Elsewhere,
    /// Files beneath this directory of this machine (its page cache, its block devices).
    Dir(&'a std::path::Path),
    /// A raw block device, the whole of it the target's (its counters, its page cache).
    Device(&'a std::path::Path),
}

/// Where the data lives. Objects are named by relative paths of plain components (`data.0`,
/// `d03/0000042`), always inside the target. Implementations: [`posix::PosixTarget`], [`mem::MemTarget`],
/// [`null::NullTarget`]; [`fault::FaultTarget`] wraps any of them.
pub trait Target: Send + Sync {
    /// What it can do: a run is checked against it before anything is created, and each
    /// method below that needs a flag it lacks fails with [`Unsupported`] naming the flag.
    fn capabilities(&self) -> Capabilities;
    /// Whether the storage accepts `O_DIRECT`, tried by creating and removing the object
    /// `probe`; an error says why not. Needs [`Capability::DirectIo`].
    fn probe_direct(&self, _probe: &str) -> io::Result<()> {
        Err(Unsupported(Capability::DirectIo).into())
    }
    /// Opens (or creates) an object. Called once per worker and phase, never per operation.
    /// Needs [`Capability::Files`].
    fn open(&self, name: &str, options: OpenOptions) -> io::Result<Box<dyn Handle>>;
    /// The object's length in bytes.
    fn len(&self, name: &str) -> io::Result<u64>;
    /// Worker `worker`'s session for whole-object operations (put, get, ...), made once per
    /// worker and phase: it holds the worker's connections.
    fn objects(&self, worker: usize) -> io::Result<Box<dyn Objects + '_>>;
    /// Removes an object this run created.
    fn remove(&self, name: &str) -> io::Result<()>;
    /// Creates a directory for objects named `dir/...` (metadata tests spread files over
    /// directories); targets without directories accept and ignore it.
    fn create_dir(&self, _name: &str) -> io::Result<()> {
        Ok(())
    }
    /// Removes a directory made by [`Target::create_dir`], which must be empty.
    fn remove_dir(&self, _name: &str) -> io::Result<()> {
        Ok(())
    }
    /// What a file or directory is (`stat(2)`); an error of kind `NotFound` when nothing has
    /// the name. Targets without directories know only objects, by their length.
    fn stat(&self, name: &str) -> io::Result<Stat> {
        self.len(name).map(|len| Stat { len, dir: false })
    }
    /// The entries of directory `name` (`""`: the target's root), in no particular order,
    /// without `.` and `..` (`readdir(3)`); an error of kind `NotFound` when there is none.
    /// Needs [`Capability::Directories`].
    fn list_dir(&self, _name: &str) -> io::Result<Vec<DirEntry>> {
        Err(Unsupported(Capability::Directories).into())
    }
    /// Renames a file or directory this run created (`rename(2)`: one that has the new name
    /// is replaced). Needs [`Capability::Rename`].
    fn rename(&self, _from: &str, _to: &str) -> io::Result<()> {
        Err(Unsupported(Capability::Rename).into())
    }
    /// Writes everything the target holds back to its storage, as `sync(1)` does for the
    /// file system it lives on (mdtest's `-Y` after a phase); targets with nothing held back
    /// have nothing to do.
    fn sync_all(&self) -> io::Result<()> {
        Ok(())
    }
    /// Where the target keeps its data, for the probes that gather evidence around a phase
    /// (page cache, block devices).
    fn place(&self) -> Place<'_> {
        Place::Elsewhere
    }
    /// Makes the place the run's objects go (an S3 bucket) unless it exists; true when this
    /// call made it. Targets in a directory the command created have nothing to make.
    fn prepare(&self) -> io::Result<bool> {
        Ok(false)
    }
    /// Removes every object the run stored under its own name prefix, and aborts the
    /// multipart uploads it left unfinished there, with up to `threads` connections, trying
    /// again a few times on fresh connections; returns how many objects it removed, or what
    /// remains. Targets whose objects the command removes by name return 0.
    fn remove_run_objects(&self, _threads: usize) -> Result<u64, Leftover> {
        Ok(0)
    }
    /// Removes the place [`Target::prepare`] made, which must be empty.
    fn remove_place(&self) -> io::Result<()> {
        Ok(())
    }
    /// Where worker `worker`'s requests go (an S3 endpoint), for per-endpoint reports.
    fn endpoint_of(&self, _worker: usize) -> Option<&str> {
        None
    }
    /// What the servers behind the target say they did so far, one entry per endpoint in
    /// `endpoint_of` order: their counters in the Prometheus text format, None where a server
    /// does not tell (anything but an iobm gateway). Read outside every phase's timing.
    fn server_counters(&self) -> Vec<Option<String>> {
        Vec::new()
    }
}

/// What [`Target::remove_run_objects`] could not remove.
#[derive(Debug)]
pub struct Leftover {
    /// Objects still under the run's prefix at the last listing; None when it could not list.
    pub objects: Option<u64>,
    /// Unfinished multipart uploads still there at the last listing; None when it could not
    /// list them.
    pub uploads: Option<u64>,
    /// The error of the last try.
    pub error: io::Error,
}

/// An open object. Methods move whole buffers or fail; a short read at the end of the object
/// is an error of kind `UnexpectedEof`.
pub trait Handle: Send {
    fn write_at(&mut self, buf: &[u8], offset: u64) -> io::Result<()>;
    fn read_at(&mut self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Sets the position for [`Handle::write_next`] and [`Handle::read_next`].
    fn seek(&mut self, offset: u64) -> io::Result<()>;
    /// Writes at the position and advances it (`write(2)`, as per-char tests use it).
    fn write_next(&mut self, buf: &[u8]) -> io::Result<()>;
    /// Reads at the position and advances it (`read(2)`); a short read is `UnexpectedEof`.
    fn read_next(&mut self, buf: &mut [u8]) -> io::Result<()>;
    /// Writes `buf` at the position with one call per byte (per-char tests).
    fn write_each_byte(&mut self, buf: &[u8]) -> io::Result<()> {
        buf.chunks(1).try_for_each(|byte| self.write_next(byte))
    }
    /// Reads `buf` at the position with one call per byte (per-char tests).
    fn read_each_byte(&mut self, buf: &mut [u8]) -> io::Result<()> {
        buf.chunks_mut(1).try_for_each(|byte| self.read_next(byte))
    }
    /// Forces written data to stable storage.
    fn sync(&mut self) -> io::Result<()>;
    /// The open file's descriptor, for engines that submit their own requests (io_uring);
    /// Some exactly when the target declares [`Capability::RawFd`].
    fn raw_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    /// Closes the object, reporting errors that a plain drop would hide (NFS flushes on close).
    fn close(self: Box<Self>) -> io::Result<()>;
}
