//! `iobm merge`: runs of one workload started by hand on several clients, combined by their
//! wall clocks into one run; runs of different workloads refused.

mod common;

use common::{assert_matches_schema, iobm, load, u};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const KEY: &str = "AKIOBMMERGE";
const SECRET: &str = "iobmmergesecretiobmmergesecret";

/// `iobm s3 OP` against `url` for two seconds, saving to `json`, as a child process.
fn client(url: &str, op: &str, json: &Path) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "s3",
            op,
            "--endpoint",
            url,
            "--concurrent",
            "2",
            "--obj-size",
            "16KiB",
        ])
        .args(["--objects", "20", "--duration", "2s", "--json"])
        .arg(json)
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env_remove("AWS_ENDPOINT_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The kernel's own word on the wall clock, read here as NTP tools read it: "synchronized"
/// unless adjtimex reports an error state or STA_UNSYNC.
fn kernel_clock_state() -> &'static str {
    // SAFETY: ntp_adjtime with modes 0 only reads the kernel's clock state into the zeroed
    // struct.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::ntp_adjtime(&mut tx) };
    assert!(state >= 0, "adjtimex failed");
    if state == libc::TIME_ERROR || tx.status & libc::STA_UNSYNC != 0 {
        "not synchronized (no NTP or PTP discipline): wall clocks of separate runs may differ by any amount"
    } else {
        "synchronized"
    }
}

fn put_ops(result: &Value) -> u64 {
    u(&result["phases"][0]["operations"][0]["ops"])
}

#[test]
fn overlapping_runs_merge_into_one_and_different_workloads_do_not() {
    let root = tempfile::tempdir().unwrap();
    let server = common::iobm_serve_with(root.path(), KEY, SECRET);
    let url = server.url.clone();
    let out = tempfile::tempdir().unwrap();
    let (a, b) = (out.path().join("a.json"), out.path().join("b.json"));
    // Two clients, the second started a second after the first: a second of overlap.
    let mut first = client(&url, "put", &a);
    std::thread::sleep(Duration::from_secs(1));
    let mut second = client(&url, "put", &b);
    assert!(first.wait().unwrap().success());
    assert!(second.wait().unwrap().success());
    let (ra, rb) = (load(&a), load(&b));
    // Each run says how well its wall clock was kept, which the merge repeats.
    let wall = ra["clock"]["wall_clock"].as_str().unwrap().to_string();
    assert_eq!(
        wall.split(',').next().unwrap(),
        kernel_clock_state(),
        "{wall}"
    );

    let merge = |extra: &[&str], json: &Path| {
        let out = iobm()
            .arg("merge")
            .args(extra)
            .arg(&a)
            .arg(&b)
            .arg("--json")
            .arg(json)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let merged = load(json);
        assert_matches_schema(&merged);
        merged
    };
    // Whole: every operation of both runs.
    let whole = merge(&["--whole"], &out.path().join("whole.json"));
    assert_eq!(put_ops(&whole), put_ops(&ra) + put_ops(&rb));
    let bytes = |r: &Value| u(&r["phases"][0]["operations"][0]["bytes"]);
    assert_eq!(bytes(&whole), bytes(&ra) + bytes(&rb));
    let workers = whole["phases"][0]["workers"].as_array().unwrap();
    assert_eq!(workers.len(), 4);
    assert_eq!(workers.iter().filter(|w| w["rank"] == 1).count(), 2);
    assert_eq!(whole["ranks"].as_array().unwrap().len(), 2);
    assert_eq!(whole["merged_from"], serde_json::json!(["a", "b"]));
    // Both runs' gateway readings counted the one bucket ("iobm") over their own phases, and
    // neither phase spans the other's: no reading counts each byte once, so none is kept.
    let servers = |r: &Value| r["phases"][0]["cache"]["servers"].clone();
    assert_eq!(ra["config"]["s3"]["bucket"], rb["config"]["s3"]["bucket"]);
    assert!(u(&servers(&ra)[0]["received_bytes"]) > 0);
    assert_eq!(servers(&whole), serde_json::json!([]));
    assert!(whole["warnings"]
        .to_string()
        .contains("overlap and none counts them all: left out"));

    // By default only the second in which both ran: less than all, and it says how much less.
    let window = merge(&[], &out.path().join("window.json"));
    let kept = put_ops(&window);
    assert!(kept > 0 && kept < put_ops(&whole), "{kept}");
    // The window is the overlap of the two phases, on the wall clock: the later start to the
    // earlier end.
    let wall_ns = |r: &Value, key: &str| u(&r["clock"]["origin_unix_ns"]) + u(&r["phases"][0][key]);
    let from = wall_ns(&ra, "start_ns").max(wall_ns(&rb, "start_ns"));
    let to = wall_ns(&ra, "end_ns").min(wall_ns(&rb, "end_ns"));
    assert_eq!(
        (wall_ns(&window, "start_ns"), wall_ns(&window, "end_ns")),
        (from, to)
    );
    let warnings = window["warnings"].to_string();
    let said = format!(
        "kept the {:.3}s in which every run was active",
        (to - from) as f64 / 1e9
    );
    assert!(
        warnings.contains(&said) && warnings.contains("cut"),
        "{said}: {warnings}"
    );
    assert!(
        warnings.contains("NTP") && warnings.contains(&wall),
        "{warnings}"
    );
    // The readings span the whole phases, not the window: left out, and said.
    assert_eq!(
        window["phases"][0]["cache"]["servers"],
        serde_json::json!([])
    );
    assert!(
        warnings.contains("merge with --whole keeps them"),
        "{warnings}"
    );
    // The merged document reads back like any run.
    let report = iobm()
        .arg("report")
        .arg(out.path().join("window.json"))
        .output()
        .unwrap();
    assert!(report.status.success());

    // A put and a get are different workloads.
    let c = out.path().join("c.json");
    assert!(client(&url, "get", &c).wait().unwrap().success());
    let refused = iobm().arg("merge").arg(&a).arg(&c).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("s3 put") && err.contains("s3 get"), "{err}");
    drop(server);
}
