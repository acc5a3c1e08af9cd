//! Every target iobm opens passes the one conformance suite of `iobm_target::conformance`:
//! a directory as `targets::open` opens it, and S3 against the built-in gateway, started
//! in-process on loopback, with its bucket made and removed by the target's life-cycle, and
//! a raw block device (a loop device made for the test, root only).

mod common;

use iobm::gateway::BuiltinGateway;
use iobm::targets::{self, Storage};
use iobm_run::session::RunId;
use iobm_s3::{PayloadSigning, S3Config};
use iobm_target::conformance::{run, Keeps};
use iobm_target::Capability;

#[test]
fn a_directory_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let target = targets::open(Storage::Directory(dir.path()));
    run(target.as_ref(), Keeps::Data);
    assert!(target.capabilities().has(Capability::RawFd));
}

fn s3_config(gateway: &BuiltinGateway, bucket: &str, run_id: &RunId) -> S3Config {
    S3Config {
        endpoints: vec![gateway.endpoint.clone()],
        bucket: bucket.to_string(),
        prefix: format!("iobm-{}/", run_id.text),
        credentials: Some(gateway.credentials.clone()),
        region: "us-east-1".to_string(),
        payload: PayloadSigning::Unsigned,
        checksum: None,
        timeout: std::time::Duration::from_secs(30),
        new_connection_per_request: false,
        versions: false,
        first_worker: 0,
        tls: None,
    }
}

#[test]
fn s3_against_the_gateway_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let run_id = RunId::generate();
    let gateway = BuiltinGateway::start(Some(dir.path()), &run_id, "us-east-1").unwrap();
    let target = targets::open(Storage::S3(s3_config(&gateway, "conformance", &run_id)));
    assert!(target.prepare().unwrap(), "the bucket is made for the run");
    run(target.as_ref(), Keeps::Data);
    assert_eq!(
        target.remove_run_objects(2).unwrap(),
        0,
        "the suite left nothing"
    );
    target.remove_place().unwrap();
    assert!(
        !dir.path().join("conformance").exists(),
        "the bucket is gone"
    );
    gateway.stop(false);
}

/// In a bucket that keeps versions, the suite's plain PUTs and DELETEs leave old versions and
/// delete markers: the clean-up removes them all, so the bucket can be deleted.
#[test]
fn s3_in_a_versioned_bucket_conforms_and_its_clean_up_removes_every_version() {
    let dir = tempfile::tempdir().unwrap();
    let run_id = RunId::generate();
    let gateway = BuiltinGateway::start(Some(dir.path()), &run_id, "us-east-1").unwrap();
    let config = S3Config {
        versions: true,
        ..s3_config(&gateway, "versions", &run_id)
    };
    let target = targets::open(Storage::S3(config.clone()));
    assert!(target.prepare().unwrap(), "the bucket is made for the run");
    let s3 = iobm_s3::S3Target::new(config);
    assert_eq!(s3.versioning().unwrap(), iobm_s3::Versioning::Off);
    s3.enable_versioning().unwrap();
    assert_eq!(s3.versioning().unwrap(), iobm_s3::Versioning::Enabled);
    assert!(target.capabilities().has(Capability::Versions));
    run(target.as_ref(), Keeps::Data);
    let removed = target.remove_run_objects(2).unwrap();
    assert!(
        removed >= 2,
        "old versions and delete markers removed: {removed}"
    );
    assert_eq!(target.remove_run_objects(2).unwrap(), 0, "nothing left");
    target.remove_place().unwrap();
    assert!(!dir.path().join("versions").exists(), "the bucket is gone");
    gateway.stop(false);
}

#[test]
#[ignore = "needs root: makes a loop device (scripts/test runs it as root)"]
fn a_raw_device_conforms() {
    let dev = common::loopdev::LoopDevice::new(64 << 20, 0);
    let claim = iobm_target::device::claim(dev.path(), dev.path()).unwrap();
    let target = targets::open(Storage::Device {
        claim,
        slot: 8 << 20,
    });
    run(target.as_ref(), Keeps::Data);
    assert!(!target.capabilities().has(Capability::RawFd));
    // While the target lives, the device is held: a second claim is refused.
    let again = iobm_target::device::claim(dev.path(), dev.path()).unwrap_err();
    assert!(again.0.contains("is in use"), "{again}");
}

/// The device is the one the claim opened: a symlink swapped to another device after the
/// claim cannot send the run's writes there.
#[test]
#[ignore = "needs root: makes loop devices (scripts/test runs it as root)"]
fn a_symlink_swapped_after_the_claim_cannot_send_writes_to_another_device() {
    use iobm_target::{Access, OpenOptions};
    let (dev, other) = (
        common::loopdev::LoopDevice::new(8 << 20, 0),
        common::loopdev::LoopDevice::new(8 << 20, 0),
    );
    let before = other.checksum();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("disk");
    std::os::unix::fs::symlink(dev.path(), &link).unwrap();
    let claim = iobm_target::device::claim(&link, &link).unwrap();
    let target = targets::open(Storage::Device {
        claim,
        slot: 1 << 20,
    });
    std::fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink(other.path(), &link).unwrap();
    let create = OpenOptions {
        access: Access::Create,
        direct: false,
    };
    let mut region = target.open("obj", create).unwrap();
    region.write_at(&[0x77; 4096], 0).unwrap();
    region.close().unwrap();
    drop(target);
    assert_eq!(other.checksum(), before, "the other device is untouched");
    assert!(
        dev.bytes()[..4096].iter().all(|&b| b == 0x77),
        "written to the claimed one"
    );
}
