//! `iobm replay`: small traces of each format (fio iolog v2 and v3, blkparse's text) replayed
//! under strace, whose pread64, pwrite64 and fsync calls must be the trace's operations (their
//! offsets and lengths, in order per stream), the result's counts and bytes the trace's;
//! recorded timing keeps at least the recorded gaps; bad traces are refused in one line,
//! exit 2, nothing created.

mod common;

use common::{assert_matches_schema, entries, iobm, load, u};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// One traced call: `("pread64" | "pwrite64", length, offset)`, or `("fsync", 0, 0)`, and
/// when it was entered (seconds).
type Call = (String, u64, u64);

/// Each thread's calls, with when each was entered (seconds), by the thread's strace file.
type Threads = BTreeMap<String, Vec<(Call, f64)>>;

/// Each thread's calls in order, as strace recorded them with `-ff -ttt -s 0`: a file per
/// thread (`strace.TID`), a call a line, after its time (read by words).
fn calls_by_thread(dir: &Path) -> Threads {
    let mut threads = Threads::new();
    for name in entries(dir)
        .into_iter()
        .filter(|n| n.starts_with("strace."))
    {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        let calls = threads.entry(name).or_default();
        for line in text.lines() {
            let Some((at, rest)) = line.split_once(char::is_whitespace) else {
                continue;
            };
            let Some((call, args)) = rest.trim_start().split_once('(') else {
                continue;
            };
            let call = match call {
                "fsync" => ("fsync".to_string(), 0, 0),
                "pread64" | "pwrite64" => {
                    let args = args.split(") = ").next().unwrap();
                    let parts: Vec<&str> = args.split(", ").collect();
                    let n = |i: usize| parts[i].parse::<u64>().unwrap();
                    (call.to_string(), n(2), n(3))
                }
                _ => continue,
            };
            calls.push((call, at.parse().unwrap()));
        }
    }
    threads
}

/// Replays `trace` (its text) into a fresh directory under strace with `args`; returns each
/// thread's calls, the result and the directory (left empty by the run).
fn replay_traced(trace: &str, args: &[&str]) -> (Threads, Value, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (path, data) = (dir.path().join("trace.txt"), dir.path().join("data"));
    std::fs::write(&path, trace).unwrap();
    std::fs::create_dir(&data).unwrap();
    let (strace, json) = (dir.path().join("strace"), dir.path().join("r.json"));
    let status = std::process::Command::new("strace")
        .args(["-ff", "-qq", "-ttt", "-s", "0", "-o"])
        .arg(&strace)
        .args(["-e", "trace=pread64,pwrite64,fsync", "-e", "signal=none"])
        .arg(assert_cmd::cargo::cargo_bin("iobm"))
        .arg("replay")
        .args(args)
        .arg(&path)
        .arg(&data)
        .arg("--json")
        .arg(&json)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(entries(&data).is_empty(), "the run removes what it made");
    let result = load(&json);
    assert_matches_schema(&result);
    (calls_by_thread(dir.path()), result, dir)
}

fn call(name: &str, len: u64, offset: u64) -> Call {
    (name.to_string(), len, offset)
}

/// Where `stream` lies, one call after the other, in `calls` (the thread's other calls before
/// and after: the fill, the result saved), or None.
fn find(calls: &[(Call, f64)], stream: &[Call]) -> Option<usize> {
    let calls: Vec<&Call> = calls.iter().map(|(c, _)| c).collect();
    let stream: Vec<&Call> = stream.iter().collect();
    calls.windows(stream.len()).position(|w| w == stream)
}

/// Every expected stream lies, call after call, in exactly one thread's calls.
fn assert_streams(threads: &Threads, streams: &[Vec<Call>]) {
    for stream in streams {
        let found = threads.values().filter(|c| find(c, stream).is_some());
        assert_eq!(
            found.count(),
            1,
            "{stream:?} in one thread's calls: {threads:?}"
        );
    }
}

/// The replay phase's reads and writes: their counts and bytes.
fn counts(result: &Value) -> [(u64, u64); 2] {
    let replay = &result["phases"][1];
    assert_eq!(replay["name"], "replay");
    let ops = replay["operations"].as_array().unwrap();
    let of = |name: &str| {
        let o = ops.iter().find(|o| o["op"] == name).unwrap();
        (u(&o["ops"]), u(&o["bytes"]))
    };
    [of("read"), of("write")]
}

#[test]
fn an_iolog_v2_of_two_files_is_replayed_call_for_call_one_stream_per_worker() {
    let trace = "fio version 2 iolog\n/dev/sda add\n/dev/sdb add\n/dev/sda open\n/dev/sdb open\n\
        /dev/sda write 8192 4096\n/dev/sdb read 12288 512\n/dev/sda read 0 8192\n\
        /dev/sda sync 0 0\n/dev/sdb write 0 1024\n/dev/sda write 32768 16384\n\
        /dev/sdb trim 0 512\n/dev/sda close\n/dev/sdb close\n";
    let (threads, result, _dir) = replay_traced(trace, &["--timing", "fast", "-j", "2"]);
    let sda = vec![
        call("pwrite64", 4096, 8192),
        call("pread64", 8192, 0),
        call("fsync", 0, 0),
        call("pwrite64", 16384, 32768),
    ];
    let sdb = vec![call("pread64", 512, 12288), call("pwrite64", 1024, 0)];
    assert_streams(&threads, &[sda, sdb]);
    assert_eq!(counts(&result), [(2, 8192 + 512), (3, 4096 + 1024 + 16384)]);
    let replay = &result["config"]["replay"];
    assert_eq!(replay["format"], "iolog2");
    assert_eq!(
        (
            u(&replay["reads"]),
            u(&replay["writes"]),
            u(&replay["syncs"]),
            u(&replay["trims"])
        ),
        (2, 3, 1, 1)
    );
    assert_eq!(replay["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(u(&result["config"]["jobs"]), 2);
    // The files are the trace's extents: 48 KiB and 12.5 KiB, filled before the replay, whose
    // files' pages are dropped first.
    assert_eq!(u(&result["config"]["total_bytes"]), 49152 + 12800);
    let fill = &result["phases"][0];
    assert_eq!(
        (fill["name"].as_str(), common::phase_bytes(fill)),
        (Some("fill"), 49152 + 12800)
    );
    // Files under the fill's 1 MiB block are written whole: its block (and so what its latency
    // line says one write moved) is the largest file's size.
    assert_eq!(u(&fill["settings"]["block_bytes"]), 49152);
    assert_eq!(result["phases"][1]["settings"]["cache_dropped"], "files");
}

#[test]
fn keep_leaves_the_files_the_trace_became() {
    let dir = tempfile::tempdir().unwrap();
    let (path, data) = (dir.path().join("t.iolog"), dir.path().join("data"));
    std::fs::write(
        &path,
        "fio version 2 iolog\n/dev/sdz add\n/dev/sdz write 1000 24\n",
    )
    .unwrap();
    std::fs::create_dir(&data).unwrap();
    let out = iobm()
        .arg("replay")
        .arg("--keep")
        .arg(&path)
        .arg(&data)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let run_dirs = entries(&data);
    assert_eq!(run_dirs.len(), 1);
    let kept = data.join(&run_dirs[0]);
    assert_eq!(entries(&kept), ["replay.0"]);
    assert_eq!(
        std::fs::metadata(kept.join("replay.0")).unwrap().len(),
        1024
    );
}

#[test]
fn blkparse_queue_events_are_replayed_by_process_with_flushes_as_fsync() {
    let trace = "  8,0    0        1     0.000000000   101  Q   W 16 + 8 [dd]\n\
          8,0    0        2     0.000001000   101  G   W 16 + 8 [dd]\n\
          8,0    0        3     0.000002000   101  D   W 16 + 8 [dd]\n\
          8,0    1        4     0.000100000   202  Q   R 64 + 16 [cat]\n\
          8,0    0        5     0.000200000   101  Q FWS [dd]\n\
          8,0    1        6     0.000300000   202  Q  RA 8 + 8 [cat]\n\
          8,0    0        7     0.000400000   101  Q  WS 0 + 1 [dd]\n\
          8,0    0        8     0.000500000   101  C   W 16 + 8 [0]\n\n\
        CPU0 (8,0):\n Reads Queued:           0,        0KiB\n";
    let (threads, result, _dir) = replay_traced(trace, &["--timing", "fast", "-j", "2"]);
    let dd = vec![
        call("pwrite64", 4096, 8192),
        call("fsync", 0, 0),
        call("pwrite64", 512, 0),
    ];
    let cat = vec![call("pread64", 8192, 32768), call("pread64", 4096, 4096)];
    assert_streams(&threads, &[dd, cat]);
    assert_eq!(counts(&result), [(2, 8192 + 4096), (2, 4096 + 512)]);
    assert_eq!(result["config"]["replay"]["format"], "blkparse");
}

#[test]
fn an_iolog_v3_timed_as_recorded_keeps_at_least_the_recorded_gaps() {
    // Recorded 300 ms apart, replayed twice as fast: starts at 0, 150, 300 and 450 ms.
    let trace = "fio version 3 iolog\n0 f add\n0 f open\n1000 f write 0 4096\n\
        1300 f read 0 4096\n1600 f write 4096 4096\n1900 f read 4096 4096\n2000 f close\n";
    let (threads, result, _dir) = replay_traced(trace, &["--timing", "recorded", "--speed", "2"]);
    let stream = vec![
        call("pwrite64", 4096, 0),
        call("pread64", 4096, 0),
        call("pwrite64", 4096, 4096),
        call("pread64", 4096, 4096),
    ];
    assert_streams(&threads, std::slice::from_ref(&stream));
    assert_eq!(counts(&result), [(2, 8192), (2, 8192)]);
    let (calls, at) = threads
        .values()
        .find_map(|c| Some((c, find(c, &stream)?)))
        .unwrap();
    let starts: Vec<f64> = calls[at..at + 4].iter().map(|(_, at)| *at).collect();
    // The first started at most its response time after its intended start; each later one
    // no earlier than its own (strace stamps a call's entry, after iobm's start).
    let pace = &result["phases"][1]["pace"];
    let first_late = u(&pace["response"]["max_ns"]) as f64 / 1e9;
    for (k, at) in starts.iter().enumerate() {
        let recorded = 0.150 * k as f64;
        assert!(
            at - starts[0] >= recorded - first_late,
            "start {k} at {:.4}s after the first, recorded {recorded}s: {starts:?}",
            at - starts[0]
        );
    }
    assert_eq!(result["config"]["replay"]["timing"], "recorded");
    assert_eq!(result["config"]["replay"]["speed"], 2.0);
    // The schedule's rate: 4 operations over the 450 ms --speed 2 made of the recorded 900.
    let target = pace["target_ops_per_s"].as_f64().unwrap();
    assert!((target - 4.0 / 0.45).abs() < 0.01, "{target}");
    assert_eq!(u(&pace["response"]["histogram"]["count"]), 4);
}

/// Runs `iobm replay` on `trace` (written to a file unless None) into an empty directory;
/// returns its stderr, checking the refusal: exit 2, one line, nothing created.
fn refused(trace: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let (path, data) = (dir.path().join("trace.txt"), dir.path().join("data"));
    if let Some(text) = trace {
        std::fs::write(&path, text).unwrap();
    }
    std::fs::create_dir(&data).unwrap();
    let out = iobm().arg("replay").arg(&path).arg(&data).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        entries(&data).is_empty(),
        "nothing created: {:?}",
        entries(&data)
    );
    refused_nothing_else(dir.path());
    err
}

fn refused_nothing_else(dir: &Path) {
    let names = entries(dir);
    assert!(
        names.iter().all(|n| n == "data" || n == "trace.txt"),
        "{names:?}"
    );
}

#[test]
fn bad_traces_are_refused_in_one_line_naming_the_line_and_why() {
    let err = refused(None);
    assert!(
        err.contains("TRACE") && err.contains("No such file"),
        "{err}"
    );
    let err = refused(Some("hello world\n"));
    assert!(err.contains("line 1: not a trace iobm knows"), "{err}");
    let err = refused(Some(
        "fio version 2 iolog\nf add\nf read 0 4096\nf write -1 4096\n",
    ));
    assert!(
        err.contains("line 4: the offset '-1' is not a whole number"),
        "{err}"
    );
    let err = refused(Some("fio version 2 iolog\nf add\nf sync 0 0\nf close\n"));
    assert!(err.contains("no read or write"), "{err}");
    let err = refused(Some(
        "8,0 0 1 0.000000000 9 Q W 8 + 8 [x]\n8,0 0 2 0.1 9 Q Z 8 + 8 [x]\n",
    ));
    assert!(err.contains("line 2: RWBS 'Z'"), "{err}");
    // A write at 1 EiB: more than any test machine's free space.
    let err = refused(Some(
        "fio version 2 iolog\n/dev/sda add\n/dev/sda write 1152921504606846976 4096\n",
    ));
    assert!(err.contains("its files need 1.00 EiB"), "{err}");
}
