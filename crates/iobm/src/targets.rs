//! The one place that maps what the user named to a target: a directory (POSIX files), S3
//! endpoints (the built-in gateway is S3 endpoints too), a raw block device (its regions), and the run's own directory with the
//! target in it. Commands get a `dyn Target` and ask it what it can do (its capabilities,
//! checked against the phases before they run); an io_uring or GPU-memory target goes here.

use crate::rundir::RunDir;
use iobm_run::exit::Failure;
use iobm_run::ranks::Ranks;
use iobm_run::session::RunId;
use iobm_s3::{S3Config, S3Target};
use iobm_target::device::{Claim, DeviceTarget};
use iobm_target::fault::FaultTarget;
use iobm_target::posix::PosixTarget;
use iobm_target::Target;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// What the user named for a run's data.
pub enum Storage<'a> {
    /// Files in this directory (the run's own, inside what was named, or data kept there).
    Directory(&'a Path),
    /// Objects in a bucket at S3 endpoints, under the run's key prefix.
    S3(S3Config),
    /// A raw block device claimed for destruction, cut into regions of `slot` bytes.
    Device { claim: Claim, slot: u64 },
}

pub fn open(storage: Storage<'_>) -> Box<dyn Target> {
    match storage {
        Storage::Directory(dir) => match planted_stall() {
            None => Box::new(PosixTarget::new(dir)),
            Some((bytes, stall)) => Box::new(FaultTarget::stall_write_after(
                PosixTarget::new(dir),
                bytes,
                stall,
            )),
        },
        Storage::S3(config) => Box::new(S3Target::new(config)),
        Storage::Device { claim, slot } => Box::new(DeviceTarget::new(claim, slot)),
    }
}

/// A run's own directory and the target of files in it.
pub struct InRunDir {
    pub dir: RunDir,
    pub target: Arc<dyn Target>,
}

impl InRunDir {
    fn open(dir: RunDir) -> InRunDir {
        let target = Arc::from(open(Storage::Directory(&dir.path)));
        InRunDir { dir, target }
    }
}

/// The run's directory in `parent` and its target: rank 0 creates it; other ranks join it, or
/// create their own where the directory is not shared (node-local file systems).
pub fn run_dir(parent: &Path, run_id: &RunId, ranks: &Ranks) -> Result<InRunDir, Failure> {
    let root_dir = ranks
        .is_root()
        .then(|| RunDir::create(parent, &run_id.text));
    let root_ok = root_dir
        .as_ref()
        .map_or(Ok(()), |r| r.as_ref().map(|_| ()).map_err(Failure::clone));
    ranks.agree(root_ok)?;
    let rundir = root_dir.unwrap_or_else(|| RunDir::join_or_create(parent, &run_id.text));
    ranks.agreed(rundir).map(InRunDir::open)
}

/// The run's directory in `parent`, made by this process alone, and its target.
pub fn own_dir(parent: &Path, run_id: &RunId) -> Result<InRunDir, Failure> {
    RunDir::create(parent, &run_id.text).map(InRunDir::open)
}

/// For tests only: with `IOBM_TEST_STALL_WRITE` set to `BYTES:MS`, the first file write past
/// BYTES written in all takes MS milliseconds more, a storage stall planted for
/// `tests/rate.rs`. Unset (or malformed), the files are the directory's, undecorated.
fn planted_stall() -> Option<(u64, Duration)> {
    let value = std::env::var("IOBM_TEST_STALL_WRITE").ok()?;
    let (bytes, ms) = value.split_once(':')?;
    Some((bytes.parse().ok()?, Duration::from_millis(ms.parse().ok()?)))
}
