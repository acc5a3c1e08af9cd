//! The one place that maps what the user named to a target: a directory (POSIX files) or S3
//! endpoints (the built-in gateway is S3 endpoints too). Commands get a `dyn Target` and ask it
//! what it can do; an io_uring or GPU-memory target goes here.

use iobm_s3::{S3Config, S3Target};
use iobm_target::posix::PosixTarget;
use iobm_target::Target;
use std::path::Path;

/// What the user named for a run's data.
pub enum Storage<'a> {
    /// Files in this directory (the run's own, inside what was named).
    Directory(&'a Path),
    /// Objects in a bucket at S3 endpoints, under the run's key prefix.
    S3(S3Config),
}

pub fn open(storage: Storage<'_>) -> Box<dyn Target> {
    match storage {
        Storage::Directory(dir) => Box::new(PosixTarget::new(dir)),
        Storage::S3(config) => Box::new(S3Target::new(config)),
    }
}
