//! Raw block devices under MPI (root only): each rank writes and reads back, verified, the
//! device its entry names (a comma list in DIR, a `{rank}` pattern in `--destroy-data-on`,
//! each rank's two the same device), and nothing else.

use super::common::load;
use super::common::loopdev::LoopDevice;
use super::mpirun_ok;
use std::path::Path;

const MIB: u64 = 1 << 20;

#[test]
#[ignore = "needs root: makes loop devices (scripts/test runs it as root)"]
fn each_rank_writes_and_verifies_its_own_device() {
    let devices = [
        LoopDevice::new(16 * MIB, 0xA5),
        LoopDevice::new(16 * MIB, 0xA5),
    ];
    let work = tempfile::tempdir().unwrap();
    for (rank, dev) in devices.iter().enumerate() {
        let link = work.path().join(format!("dev{rank}"));
        std::os::unix::fs::symlink(dev.path(), link).unwrap();
    }
    let pattern = work.path().join("dev{rank}");
    let list = format!(
        "{},{}",
        devices[0].path().display(),
        devices[1].path().display()
    );
    let json = work.path().join("r.json");
    let args = [
        "stream",
        "-j",
        "2",
        "--size",
        "24MiB",
        "--block",
        "64KiB",
        "--verify",
        "--json",
        json.to_str().unwrap(),
        "--destroy-data-on",
        pattern.to_str().unwrap(),
    ];
    mpirun_ok(2, &args, Path::new(&list));
    let run = load(&json);
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete", "{}", phase["name"]);
        assert_eq!(phase["workers"].as_array().unwrap().len(), 4);
        assert!(phase["errors"].as_array().unwrap().is_empty());
    }
    assert_eq!(run["phases"][1]["settings"]["verify"], true);
    // 24 MiB over 4 jobs: each rank's two jobs wrote 6 MiB regions on its own device.
    for dev in &devices {
        let bytes = dev.bytes();
        for (i, chunk) in bytes[..(12 * MIB) as usize].chunks(4096).enumerate() {
            let offset = u64::from_le_bytes(chunk[16..24].try_into().unwrap());
            assert_eq!(
                offset % (6 * MIB),
                (i as u64 * 4096) % (6 * MIB),
                "chunk {i}"
            );
        }
        assert!(
            bytes[(12 * MIB) as usize..].iter().all(|&b| b == 0xA5),
            "nothing past the regions was written"
        );
    }
}
