//! ior-hard's access pattern (`--segments`, IOR -s): every job's transfers, of a size that is
//! no power of two, interleaved with the others' in one shared file, written, read back
//! verified (also from a kept data set, which must be read where it was placed), and a
//! workload of its own in the config hash.

mod common;

use common::{entries, iobm, load, phase_ops};
use std::path::Path;

const IOR_HARD: &str = "47008";

#[test]
fn a_segmented_file_is_written_and_read_back_where_each_transfer_was_placed() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("s.json");
    let out = iobm()
        .args([
            "stream",
            "-j",
            "3",
            "--segments",
            "8",
            "--block",
            IOR_HARD,
            "--verify",
        ])
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("strided in 8 segments (IOR -s)"),
        "{stdout}"
    );
    let run = load(&json);
    assert_eq!(run["config"]["layout"], "strided");
    assert_eq!(run["config"]["segments"], 8);
    assert_eq!(run["config"]["total_bytes"], 47008 * 8 * 3);
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete");
        assert!(
            phase["errors"].as_array().unwrap().is_empty(),
            "{}",
            phase["errors"]
        );
        assert_eq!(phase_ops(phase), 8 * 3, "one transfer per segment and job");
    }
    // The same bytes in one shared file without segments are another workload.
    let plain = work.path().join("p.json");
    iobm()
        .args(["stream", "-j", "3", "--shared-file", "--block", IOR_HARD])
        .args(["--size", &(47008 * 8 * 3).to_string(), "--verify", "--json"])
        .arg(&plain)
        .arg(target.path())
        .assert()
        .success();
    assert_ne!(load(&plain)["config_hash"], run["config_hash"]);
    assert!(entries(target.path()).is_empty());
}

#[test]
fn a_kept_segmented_file_is_read_in_its_transfers() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("w.json");
    iobm()
        .args([
            "write",
            "-j",
            "2",
            "--segments",
            "4",
            "--block",
            IOR_HARD,
            "--keep",
        ])
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .assert()
        .success();
    let kept = load(&json)["config"]["run_dir"]
        .as_str()
        .unwrap()
        .to_string();
    let file = Path::new(&kept).join("data.shared");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 47008 * 4 * 2);
    // Read back where each transfer was placed: every byte is what was written there.
    let read = work.path().join("r.json");
    iobm()
        .args(["read", "--verify", "--json"])
        .arg(&read)
        .arg(&kept)
        .assert()
        .success();
    let read = load(&read);
    assert_eq!(read["config"]["layout"], "strided");
    assert!(read["phases"][0]["errors"].as_array().unwrap().is_empty());
    // In transfers of another size the bytes would be read from other places.
    let refused = iobm()
        .args(["read", "--block", "4096", &kept])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).to_string();
    assert!(
        stderr.contains(
            "holds transfers of 47008 bytes in 4 segments (--segments); read it in those"
        ),
        "{stderr}"
    );
    // --segments sets the size: with --size or one file per job it is refused by clap.
    for other in [["--size", "1MiB"], ["--file-per-job", "--jobs"]] {
        let mut cmd = iobm();
        cmd.args(["write", "--segments", "4"]).args(other);
        if other[0] == "--file-per-job" {
            cmd.arg("2");
        }
        cmd.arg(target.path()).assert().code(2);
    }
    std::fs::remove_dir_all(&kept).unwrap();
}
