//! `--rate` across ranks: the rate is of every worker of every rank, each its share, so two
//! ranks together start what one would alone.

use super::common::{entries, load, phase_ops, u};
use super::mpirun_ok;

#[test]
fn two_ranks_share_one_rate() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let args = [
        "write",
        "-j",
        "2",
        "--size",
        "8MiB",
        "--block",
        "4KiB",
        "--fsync",
        "never",
        "--rate",
        "100/s",
        "--duration",
        "2s",
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(2, &args, target.path());
    let run = load(&json);
    let phase = &run["phases"][0];
    let workers = phase["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 4);
    // 100 a second over 2 s for the four workers together: 200 starts, 50 each.
    assert_eq!(phase_ops(phase), 200);
    for w in workers {
        assert_eq!(u(&w["span"]["ops"]), 50, "{w}");
    }
    let pace = &phase["pace"];
    assert_eq!(pace["target_ops_per_s"], 100.0);
    let achieved = pace["achieved_ops_per_s"].as_f64().unwrap();
    assert!((achieved / 100.0 - 1.0).abs() < 0.05, "{achieved}");
    assert_eq!(u(&pace["response"]["histogram"]["count"]), 200);
    // Every rank's lags merged too.
    assert_eq!(u(&pace["lag"]["histogram"]["count"]), 200);
    assert!(entries(target.path()).is_empty());
}
