//! `--live` under MPI: every rank writes its own lines (rank 0 to FILE, rank N to FILE.rankN),
//! each equal in sum to its workers' part of the merged result.

use super::common::{load, u};
use super::mpirun_ok;

#[test]
fn four_ranks_each_write_their_own_live_lines() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let (json, live) = (work.path().join("r.json"), work.path().join("l.jsonl"));
    let args = [
        "write",
        "-j",
        "2",
        "--size-per-job",
        "8MiB",
        "--block",
        "64KiB",
        "--interval",
        "100ms",
        "--live",
        live.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(4, &args, target.path());
    let result = load(&json);
    let phase = &result["phases"][0];
    for rank in 0..4u64 {
        let file = match rank {
            0 => live.clone(),
            _ => work.path().join(format!("l.jsonl.rank{rank}")),
        };
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(!lines.is_empty(), "rank {rank}");
        assert!(lines.iter().all(|l| u(&l["rank"]) == rank), "{text}");
        let workers = phase["workers"].as_array().unwrap().iter();
        let mine: Vec<_> = workers.filter(|w| u(&w["rank"]) == rank).collect();
        assert_eq!(mine.len(), 2);
        let span = |key: &str| mine.iter().map(|w| u(&w["span"][key])).sum::<u64>();
        let sum = |key: &str| lines.iter().map(|l| u(&l[key])).sum::<u64>();
        assert_eq!(
            (sum("bytes"), sum("ops")),
            (span("bytes"), span("ops")),
            "rank {rank}"
        );
        assert_eq!(span("bytes"), 2 * (8 << 20));
    }
    assert!(!work.path().join("l.jsonl.rank4").exists());
}
