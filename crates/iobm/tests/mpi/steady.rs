//! `--until-stable` across ranks: the rate is of every rank's workers, summed at each tick, so
//! every rank ends the phase at the same tick and the one result says where.

use super::common::{entries, floats, load, u};
use super::mpirun_ok;

#[test]
fn two_ranks_end_a_steady_phase_together() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("s.json");
    let args = [
        "write",
        "-j",
        "2",
        "--size",
        "8MiB",
        "--block",
        "64KiB",
        "--duration",
        "120s",
        "--until-stable=50%/1s",
        "--interval",
        "100ms",
        "--fsync",
        "never",
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(2, &args, target.path());
    let run = load(&json);
    let phase = &run["phases"][0];
    let workers = phase["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 4);
    assert!(workers.iter().any(|w| w["rank"] == 1));
    let steady = &phase["until_stable"];
    let at = steady["stable_at_s"].as_f64().expect("steady within 50%");
    assert!(at < 120.0, "{at}");
    // Every worker of both ranks stopped at that tick (a tenth of a second): none ran on.
    let ends: Vec<u64> = workers.iter().map(|w| u(&w["span"]["end_ns"])).collect();
    let spread = (ends.iter().max().unwrap() - ends.iter().min().unwrap()) as f64 / 1e9;
    assert!(spread < 0.5, "the workers ended {spread} s apart: {ends:?}");
    assert!(workers.iter().all(|w| u(&w["span"]["ops"]) > 0));
    // The rates are of both ranks' workers: the window's bytes are what all four workers'
    // summed series moved in the window's ten intervals of 100 ms (about half of it if each
    // rank watched only its own).
    let rates = floats(&steady["rates"]);
    assert_eq!(rates.len(), 10);
    let watched: f64 = rates.iter().map(|r| r * 0.1).sum();
    let last = (at / 0.1).round() as usize;
    let summed: u64 = phase["series"]["bytes"].as_array().unwrap()[last - 10..last]
        .iter()
        .map(u)
        .sum();
    let ratio = watched / summed as f64;
    assert!((0.8..1.25).contains(&ratio), "{watched} against {summed}");
    assert!(entries(target.path()).is_empty());
}
