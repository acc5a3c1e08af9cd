//! ior-hard's segmented shared file across ranks: every rank's jobs' transfers interleaved in
//! one file, read back verified by the next rank (`--reorder`).

use super::common::{entries, load};
use super::mpirun_ok;

#[test]
fn two_ranks_interleave_their_transfers_in_one_file_and_read_each_others() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("s.json");
    let args = [
        "stream",
        "-j",
        "2",
        "--segments",
        "6",
        "--block",
        "47008",
        "--verify",
        "--reorder",
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(2, &args, target.path());
    let run = load(&json);
    assert_eq!(run["config"]["layout"], "strided");
    assert_eq!(
        run["config"]["total_bytes"],
        47008 * 6 * 4,
        "2 ranks x 2 jobs"
    );
    for phase in run["phases"].as_array().unwrap() {
        assert_eq!(phase["status"], "complete", "{}", phase["name"]);
        assert!(
            phase["errors"].as_array().unwrap().is_empty(),
            "{}",
            phase["errors"]
        );
        assert_eq!(phase["workers"].as_array().unwrap().len(), 4);
    }
    assert!(entries(target.path()).is_empty());
}
