//! The one place that maps what the user named to a target: a directory (POSIX files) or S3
//! endpoints (the built-in gateway is S3 endpoints too). Commands get a `dyn Target` and ask it
//! what it can do; an io_uring or GPU-memory target goes here.

use iobm_s3::{S3Config, S3Target};
use iobm_target::fault::FaultTarget;
use iobm_target::posix::PosixTarget;
use iobm_target::Target;
use std::path::Path;
use std::time::Duration;

/// What the user named for a run's data.
pub enum Storage<'a> {
    /// Files in this directory (the run's own, inside what was named).
    Directory(&'a Path),
    /// Objects in a bucket at S3 endpoints, under the run's key prefix.
    S3(S3Config),
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
    }
}

/// For tests only: with `IOBM_TEST_STALL_WRITE` set to `BYTES:MS`, the first file write past
/// BYTES written in all takes MS milliseconds more, a storage stall planted for
/// `tests/rate.rs`. Unset (or malformed), the files are the directory's, undecorated.
fn planted_stall() -> Option<(u64, Duration)> {
    let value = std::env::var("IOBM_TEST_STALL_WRITE").ok()?;
    let (bytes, ms) = value.split_once(':')?;
    Some((bytes.parse().ok()?, Duration::from_millis(ms.parse().ok()?)))
}
