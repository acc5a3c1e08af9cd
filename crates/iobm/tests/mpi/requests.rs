//! `--requests` under MPI: each rank writes its own file (rank 0 FILE, rank N FILE.rankN) with
//! its rank and host in every frame, and `iobm report --requests FILE` reads them all: counts
//! and bytes per rank equal to the merged result's.

use super::common::{load, stdout_of, u};
use super::mpirun_ok;
use iobm_run::requests::read;

#[test]
fn every_rank_keeps_its_requests_and_one_report_reads_them_all() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let (json, file) = (work.path().join("r.json"), work.path().join("r.zst"));
    let args = [
        "write",
        "-j",
        "2",
        "--size-per-job",
        "4MiB",
        "--block",
        "64KiB",
        "--requests",
        file.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ];
    mpirun_ok(3, &args, target.path());
    let result = load(&json);
    let workers = result["phases"][0]["workers"].as_array().unwrap();
    let mut total = 0;
    for rank in 0..3u64 {
        let path = match rank {
            0 => file.clone(),
            _ => work.path().join(format!("r.zst.rank{rank}")),
        };
        let (chunks, cut) = read(&std::fs::read(&path).unwrap()).unwrap();
        assert!(!cut, "rank {rank}");
        assert!(
            chunks.iter().all(|c| u64::from(c.rank) == rank),
            "rank {rank}"
        );
        assert!(chunks.iter().all(|c| !c.host.is_empty()));
        let mine = workers.iter().filter(|w| u(&w["rank"]) == rank);
        let (ops, bytes) = mine.fold((0, 0), |(o, b), w| {
            (o + u(&w["span"]["ops"]), b + u(&w["span"]["bytes"]))
        });
        let records = chunks.iter().flat_map(|c| c.records.iter());
        let kept = records.fold((0, 0), |(o, b), r| (o + 1, b + r.bytes));
        assert_eq!(kept, (ops, bytes), "rank {rank}");
        assert_eq!(bytes, 2 * (4 << 20), "rank {rank}");
        total += ops;
    }
    assert!(!work.path().join("r.zst.rank3").exists());
    // One FILE brings its ranks' files along: every rank's requests in one report.
    let report = stdout_of(
        super::common::iobm()
            .arg("report")
            .arg("--requests")
            .arg(&file),
    );
    assert!(
        report.contains(&format!("phase write: {total} requests")),
        "{report}"
    );
    for rank in 0..3 {
        assert!(
            report.contains(&format!("  {rank:<12} {:>6}", total / 3)),
            "rank {rank}:\n{report}"
        );
    }
}
