//! `--live` under MPI: every rank writes its own lines (rank 0 to FILE, rank N to FILE.rankN),
//! each equal in sum to its workers' part of the merged result; `--metrics-listen` served by
//! rank 0 with the sum over the ranks while the phase runs, lingering after the result for a
//! last scrape; with `--html`, the page of the run so far written by rank 0 alone.

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
fn under_mpi_rank_0_serves_the_sum_over_the_ranks_while_the_phase_runs() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let port = super::common::free_port();
    // 64 writes of 64 KiB a rank, 32 a second for both: about 4 s.
    let mut run = super::launcher(2)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["write", "-j", "1", "--size-per-job", "4MiB"])
        .args(["--block", "64KiB", "--rate", "32/s", "--interval", "200ms"])
        .args(["--metrics-linger", "60s", "--metrics-listen"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let scrape = || {
        let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        std::io::Write::write_all(&mut conn, b"GET /metrics HTTP/1.0\r\n\r\n").ok()?;
        let mut text = String::new();
        std::io::Read::read_to_string(&mut conn, &mut text).ok()?;
        Some(text)
    };
    let key = "iobm_bytes_total{phase=\"write\",op=\"write\"} ";
    let bytes = |text: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..].parse().ok()
    };
    // While the phase runs: more than rank 0's own 4 MiB, and not yet the whole 8 MiB.
    let began = std::time::Instant::now();
    let mut seen = Vec::new();
    while !load_complete(&json) {
        assert!(began.elapsed().as_secs() < 120, "no result");
        if let Some(b) = scrape().as_deref().and_then(bytes) {
            seen.push(b);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let both = (4 << 20) + 1..8 << 20;
    assert!(seen.iter().any(|b| both.contains(b)), "{seen:?}");
    // The result is saved after every rank's last counts are in; the endpoint lingers for
    // two scrapes.
    let (text, _) = (scrape().unwrap(), scrape());
    assert!(run.wait().unwrap().success());
    let result = load(&json);
    let workers = result["phases"][0]["workers"].as_array().unwrap();
    let of = |rank: u64| -> u64 {
        let mine = workers.iter().filter(|w| u(&w["rank"]) == rank);
        mine.map(|w| u(&w["span"]["bytes"])).sum()
    };
    assert_eq!((of(0), of(1)), (4 << 20, 4 << 20));
    assert_eq!(bytes(&text), Some(of(0) + of(1)), "{text}");
    let ops = "iobm_latency_seconds_count{phase=\"write\",op=\"write\"} 128";
    assert!(text.lines().any(|l| l == ops), "{text}");
}

/// Whether the result at `json` is there and no longer running.
fn load_complete(json: &std::path::Path) -> bool {
    let text = std::fs::read_to_string(json).unwrap_or_default();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    doc["status"] == "complete"
}

#[test]
fn under_mpi_rank_0_alone_writes_the_page_of_the_run_so_far() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let (json, live, html) = (
        work.path().join("r.json"),
        work.path().join("l.jsonl"),
        work.path().join("r.html"),
    );
    // 64 writes of 64 KiB a rank, 32 a second for both: about 4 s.
    let mut run = super::launcher(2)
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args(["write", "-j", "1", "--size-per-job", "4MiB"])
        .args(["--block", "64KiB", "--rate", "32/s", "--interval", "500ms"])
        .arg("--live")
        .arg(&live)
        .arg("--html")
        .arg(&html)
        .arg("--json")
        .arg(&json)
        .arg(target.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // While the phase runs: rank 0's page, saying whose intervals it shows, and never
    // another rank's.
    let began = std::time::Instant::now();
    let mut running = 0;
    while run.try_wait().unwrap().is_none() {
        let text = std::fs::read_to_string(&html).unwrap_or_default();
        assert!(
            !text.contains("rank 1&#39;s workers"),
            "rank 1 wrote the page"
        );
        if text.contains("data-running=\"true\" data-phase=\"write\"") {
            assert!(
                text.contains("(rank 0&#39;s workers of 2 ranks)"),
                "{text:.3000}"
            );
            running += 1;
        }
        assert!(began.elapsed().as_secs() < 120, "the run did not end");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(running > 0, "no running page seen");
    assert!(run.wait().unwrap().success());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("location.reload") && !page.contains("id=\"live\""));
    assert!(page.contains("<tr data-phase=\"write\">"));
    // Rank 1 wrote no page of its own, and no temporary is left.
    let mut names: Vec<String> = std::fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["l.jsonl", "l.jsonl.rank1", "r.html", "r.json"]);
}
