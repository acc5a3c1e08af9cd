//! The conformance suite run on this crate's targets: posix in a temporary directory, mem, null
//! and the fault decorator around posix and mem.

use crate::conformance::{run, Keeps};
use crate::fault::FaultTarget;
use crate::mem::MemTarget;
use crate::null::NullTarget;
use crate::posix::PosixTarget;

#[test]
fn posix_conforms() {
    let dir = tempfile::tempdir().unwrap();
    run(&PosixTarget::new(dir.path()), Keeps::Data);
    let left = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(left, 0, "the suite removes what it made");
}

#[test]
fn mem_conforms() {
    let target = MemTarget::new();
    run(&target, Keeps::Data);
    assert!(target.names().is_empty() && target.dir_names().is_empty());
}

#[test]
fn null_conforms() {
    run(&NullTarget, Keeps::Nothing);
}

#[test]
fn fault_conforms_around_posix_and_mem() {
    let dir = tempfile::tempdir().unwrap();
    let budget = 1 << 30;
    run(
        &FaultTarget::fail_writes_after(PosixTarget::new(dir.path()), budget, libc::EIO),
        Keeps::Data,
    );
    run(
        &FaultTarget::fail_writes_after(MemTarget::new(), budget, libc::EIO),
        Keeps::Data,
    );
}
