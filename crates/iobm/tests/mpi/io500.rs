//! `iobm io500` under MPI: every phase of the rules on two ranks with a short stonewall, the
//! writes' wear-out agreed over the ranks so each read reads what the other rank wrote, the
//! scores equal to their formulas recomputed from the phases, the result not valid, nothing
//! left behind.

use super::common::io500 as one;
use super::common::{entries, load, phase_bytes, phase_ops};

#[test]
fn two_ranks_run_every_phase_with_a_stonewall_and_score_by_the_formulas() {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let json_arg = json.to_str().unwrap();
    // Sized so that the 3 s stonewall may stop the writes; whether it does is the machine's.
    let args = [
        "io500",
        "-j",
        "2",
        "--easy-size",
        "1GiB",
        "--easy-transfer",
        "1MiB",
        "--segments",
        "20000",
        "--items",
        "200000",
        "--stonewall",
        "3s",
        "--json",
        json_arg,
    ];
    let out = super::mpirun(2, &args, target.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = load(&json);
    assert_eq!(run["ranks"].as_array().unwrap().len(), 2);
    let names: Vec<&str> = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, one::RULES);
    for name in one::RULES {
        let p = one::phase(&run, name);
        assert_eq!(p["status"], "complete", "{name}");
        let workers = p["workers"].as_array().unwrap();
        assert_eq!(workers.len(), 4, "{name}: 2 ranks x 2 workers");
        assert!(workers.iter().any(|w| w["rank"] == 1), "{name}");
    }
    // What each write made, every later phase worked on: the reads read it, the lookups and
    // removals saw every file, wherever the wall stopped the writes.
    let at = |name: &str| one::phase(&run, name);
    assert_eq!(
        phase_bytes(at("ior-easy-read")),
        phase_bytes(at("ior-easy-write"))
    );
    assert_eq!(
        phase_bytes(at("ior-hard-read")),
        phase_bytes(at("ior-hard-write"))
    );
    let easy = phase_ops(at("mdtest-easy-write"));
    let hard = phase_ops(at("mdtest-hard-write"));
    assert_eq!(phase_ops(at("mdtest-easy-stat")), easy);
    assert_eq!(phase_ops(at("mdtest-easy-delete")), easy);
    assert_eq!(phase_ops(at("mdtest-hard-stat")), hard);
    assert_eq!(phase_ops(at("mdtest-hard-read")), hard);
    assert_eq!(phase_ops(at("mdtest-hard-delete")), hard);
    // Every worker of both ranks wrote as many as the others (the wear-out).
    for name in [
        "ior-easy-write",
        "ior-hard-write",
        "mdtest-easy-write",
        "mdtest-hard-write",
    ] {
        let ops: Vec<u64> = at(name)["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["span"]["ops"].as_u64().unwrap())
            .collect();
        assert!(
            ops.iter().all(|o| *o == ops[0] && *o > 0),
            "{name}: {ops:?}"
        );
    }
    // The reads and lookups were of the other rank's files.
    let stat = at("mdtest-easy-stat")["workers"].as_array().unwrap();
    for w in stat {
        let (rank, worker) = (w["rank"].as_u64().unwrap(), w["worker"].as_u64().unwrap());
        assert_eq!(
            w["items_of"].as_u64(),
            Some((worker % 2) + ((rank + 1) % 2) * 2),
            "{w}"
        );
    }
    assert_eq!(run["config"]["io500"]["stride"], 1);
    one::assert_find_counts_what_was_made(&run, 4);
    one::assert_scores_recomputed(&run);
    assert_eq!(run["io500"]["valid"], false);
    assert!(run["io500"]["invalid_because"]
        .to_string()
        .contains("stonewall was 3 s, not the rules' 300 s"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("NOT a valid IO500 submission"), "{stdout}");
    assert_eq!(
        stdout.matches("[SCORE] total").count(),
        1,
        "rank 0 prints: {stdout}"
    );
    assert!(
        entries(target.path()).is_empty(),
        "{:?}",
        entries(target.path())
    );
}
