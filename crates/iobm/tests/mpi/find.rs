//! IO500's find on two ranks, its work stolen across them: every entry below mdtest-hard's
//! shared directory (rank 0's starting directory) and almost nothing below rank 1's; what each
//! rank examined is read from its own system calls (strace), never from what iobm records.

use super::common::{load, phase_ops};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One traced system call of a rank: when (unix seconds), the call, the path it named.
struct Call {
    at: f64,
    call: String,
    path: String,
    creates: bool,
}

/// The calls of one rank's trace (`strace -f -ttt`) that name a path under `under`.
fn calls(trace: &Path, under: &str) -> Vec<Call> {
    let text = std::fs::read_to_string(trace).unwrap();
    let mut calls = Vec::new();
    for line in text.lines() {
        // "PID SECONDS.MICROS call(ARGS) = RESULT", the PID padded to five columns ("4006  ...").
        let Some((_, stamped)) = line.trim_start().split_once(' ') else {
            continue;
        };
        let Some((at, rest)) = stamped.trim_start().split_once(' ') else {
            continue;
        };
        let (Ok(at), Some(open)) = (at.parse::<f64>(), rest.find('(')) else {
            continue;
        };
        let Some(path) = rest.split('"').nth(1) else {
            continue;
        };
        if !path.starts_with(under) || rest.contains("= -1") {
            continue;
        }
        calls.push(Call {
            at,
            call: rest[..open].to_string(),
            path: path.to_string(),
            creates: rest.contains("O_CREAT"),
        });
    }
    calls
}

#[test]
fn find_ranks_steal_work_and_examine_every_file_once() {
    // Two traced ranks writing 20,000 files load the machine as the timed tests fear.
    let _alone = super::ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let json = work.path().join("r.json");
    let trace = work.path().join("trace");
    // Each rank traced on its own: `strace -f -o trace.RANK`, only the calls that name a path.
    let traced = format!(
        "exec strace -f -qq -ttt -e trace=openat,statx,newfstatat -o {}.$OMPI_COMM_WORLD_RANK \"$0\" \"$@\"",
        trace.display()
    );
    let out = super::launcher(2)
        .args(["sh", "-c", &traced])
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "io500",
            "-j",
            "1",
            "--easy-size",
            "1MiB",
            "--easy-transfer",
            "1MiB",
        ])
        .args([
            "--segments",
            "1",
            "--easy-items",
            "4",
            "--hard-items",
            "20000",
        ])
        .args(["--stonewall", "600s", "--json", json.to_str().unwrap()])
        .arg(target.path())
        .output()
        .expect("mpirun runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = load(&json);
    let find = run["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "find")
        .unwrap();
    let origin = run["clock"]["origin_unix_ns"].as_u64().unwrap() as f64 / 1e9;
    let ns = |p: &Value, k: &str| p[k].as_u64().unwrap() as f64 / 1e9;
    let (start, end) = (origin + ns(find, "start_ns"), origin + ns(find, "end_ns"));
    let under = target.path().to_str().unwrap();
    let traces: Vec<Vec<Call>> = (0..2)
        .map(|r| calls(&work.path().join(format!("trace.{r}")), under))
        .collect();
    // Every file the writes created (by either rank), once each.
    let created: BTreeSet<&str> = (traces.iter().flatten())
        .filter(|c| c.creates && c.at < start)
        .map(|c| c.path.as_str())
        .collect();
    let hard_files = created
        .iter()
        .filter(|p| p.contains("/mdtest-hard/"))
        .count();
    let made = run["phases"].as_array().unwrap().iter();
    let made: Vec<(String, u64)> = made
        .map(|p| (p["name"].to_string(), phase_ops(p)))
        .collect();
    let lines: Vec<usize> = traces.iter().map(Vec::len).collect();
    assert!(
        hard_files >= 20000,
        "{hard_files} mdtest-hard files created in the traces ({lines:?} calls under {under} before {start}); the phases: {made:?}"
    );
    // find examines every file (iobm's count) ...
    assert_eq!(phase_ops(find), created.len() as u64);
    // ... and asks the size of each whose name holds "01": each exactly once, by one rank.
    let mut stated: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (rank, calls) in traces.iter().enumerate() {
        for c in calls.iter().filter(|c| c.at >= start && c.at <= end) {
            if c.call.contains("stat") {
                stated.entry(c.path.as_str()).or_default().push(rank);
            }
        }
    }
    let named_01: BTreeSet<&str> = (created.iter().copied())
        .filter(|p| p.rsplit('/').next().unwrap().contains("01"))
        .collect();
    assert_eq!(stated.keys().copied().collect::<BTreeSet<_>>(), named_01);
    let twice: Vec<_> = stated.iter().filter(|(_, r)| r.len() != 1).collect();
    assert!(twice.is_empty(), "examined more than once: {twice:?}");
    // mdtest-hard's directory is rank 0's to start from: rank 1 examined some of it all the
    // same, having stolen it.
    let by_rank_1 = (stated.iter())
        .filter(|(p, r)| p.contains("/mdtest-hard/") && r == &&vec![1])
        .count();
    let of = named_01
        .iter()
        .filter(|p| p.contains("/mdtest-hard/"))
        .count();
    assert!(
        by_rank_1 > 0,
        "rank 1 examined none of mdtest-hard's {of} files named *01*"
    );
    // Both ranks' workers counted files (iobm's own books agree).
    for w in find["workers"].as_array().unwrap() {
        assert!(w["span"]["ops"].as_u64().unwrap() > 0, "{w}");
    }
}

#[test]
fn a_traced_call_is_read_whatever_the_width_of_its_pid() {
    // strace pads a PID to five columns: a fresh machine's small PIDs leave two spaces.
    let work = tempfile::tempdir().unwrap();
    let trace = work.path().join("trace");
    let lines = [
        "4006  1796247961.324263 openat(AT_FDCWD, \"/t/a\", O_WRONLY|O_CREAT, 0644) = 5",
        "123456 1796247961.5 newfstatat(AT_FDCWD, \"/t/b\", {st_mode=S_IFREG}, 0) = 0",
        "4007  1796247962.0 openat(AT_FDCWD, \"/t/c\", O_RDONLY) = -1 ENOENT",
    ];
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let read = calls(&trace, "/t/");
    let got: Vec<_> = (read.iter())
        .map(|c| (c.at, c.call.as_str(), c.path.as_str(), c.creates))
        .collect();
    assert_eq!(
        got,
        [
            (1796247961.324263, "openat", "/t/a", true),
            (1796247961.5, "newfstatat", "/t/b", false)
        ]
    );
}
