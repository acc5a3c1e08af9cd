//! `--live` under MPI: every rank writes its own lines (rank 0 to FILE, rank N to FILE.rankN),
//! each equal in sum to its workers' part of the merged result; `--metrics-listen` served by
//! rank 0 with its own workers' counts, lingering after the result for a last scrape.

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

#[test]
fn under_mpi_rank_0_serves_the_counters_of_its_own_workers() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let port = super::common::free_port();
    let mut run = super::launcher(2)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "write",
            "-j",
            "1",
            "--size-per-job",
            "8MiB",
            "--block",
            "64KiB",
        ])
        .args(["--metrics-linger", "60s", "--metrics-listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The result is saved before the endpoint lingers for its last scrapes.
    let began = std::time::Instant::now();
    while !load_complete(&json) {
        assert!(began.elapsed().as_secs() < 60, "no result");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let scrape = || {
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        std::io::Write::write_all(&mut conn, b"GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut conn, &mut text).unwrap();
        text
    };
    let (text, _) = (scrape(), scrape());
    assert!(run.wait().unwrap().success());
    let bytes = "iobm_bytes_total{phase=\"write\",op=\"write\"} ";
    let line = text.lines().find(|l| l.starts_with(bytes)).expect(&text);
    let result = load(&json);
    let workers = result["phases"][0]["workers"].as_array().unwrap();
    let of = |rank: u64| -> u64 {
        let mine = workers.iter().filter(|w| u(&w["rank"]) == rank);
        mine.map(|w| u(&w["span"]["bytes"])).sum()
    };
    assert_eq!((of(0), of(1)), (8 << 20, 8 << 20));
    assert_eq!(line[bytes.len()..].parse::<u64>().unwrap(), of(0));
}

/// Whether the result at `json` is there and no longer running.
fn load_complete(json: &std::path::Path) -> bool {
    let text = std::fs::read_to_string(json).unwrap_or_default();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    doc["status"] == "complete"
}
