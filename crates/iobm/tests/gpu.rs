//! `--mem gpu`: the whole GPU path end to end on iobm's fake GPUs (`IOBM_TEST_FAKE_GPU`), so
//! it runs on every machine: the workers spread over the GPUs listed, every operation's copy
//! between its GPU buffer and the host bounce buffer timed inside it and reported apart,
//! `--verify` checking what the GPU holds; and, without an NVIDIA driver (this machine), the
//! one-line refusal before anything is created.

mod common;

use common::{assert_matches_schema, iobm, load, u};

/// Each fake copy takes this long.
const COPY_US: u64 = 1000;

/// `iobm` with fake GPUs: `count`, each copy `COPY_US`, and `corrupt` copies onto a GPU.
fn on_fake_gpus(count: u32, corrupt: bool) -> assert_cmd::Command {
    let mut cmd = iobm();
    let corrupt = if corrupt { ":corrupt" } else { "" };
    cmd.env("IOBM_TEST_FAKE_GPU", format!("{count}:{COPY_US}{corrupt}"));
    cmd
}

#[test]
fn stream_on_gpus_times_each_copy_inside_its_operation_and_verifies_the_gpus_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("g.json");
    let out = on_fake_gpus(2, false)
        .args(["stream", "--mem", "gpu:1,0", "-j", "3", "--size", "3MiB"])
        .args(["--block", "64KiB", "--verify", "--json"])
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("buffers on gpu:1,0 (fake) through a host bounce buffer"),
        "{text}"
    );
    assert!(text.contains("  gpu      1: iobm fake GPU"), "{text}");
    let run = load(&json);
    assert_matches_schema(&run);
    assert_eq!(
        run["config"]["memory"]["devices"],
        serde_json::json!([1, 0])
    );
    assert_eq!(run["config"]["memory"]["path"], "bounce");
    assert_eq!(run["environment"]["gpus"][0]["id"], 1);
    assert_eq!(run["phases"].as_array().unwrap().len(), 2);
    for phase in run["phases"].as_array().unwrap() {
        let ops = u(&phase["latency"]["histogram"]["count"]);
        assert_eq!(ops, 3 * 16);
        // Every operation's latency holds its copy.
        assert!(u(&phase["latency"]["histogram"]["min_ns"]) >= COPY_US * 1000);
        let mut copied = 0;
        for w in phase["workers"].as_array().unwrap() {
            assert!(u(&w["copy_ns"]) >= 16 * COPY_US * 1000, "{w}");
            copied += u(&w["copy_ns"]);
        }
        let copy = &phase["device_copy"];
        assert_eq!(u(&copy["copy_ns"]), copied);
        assert_eq!(
            u(&copy["op_ns"]),
            u(&phase["latency"]["histogram"]["sum_ns"])
        );
        let share = copy["share_pct"].as_f64().unwrap();
        assert!(share > 0.0 && share <= 100.0, "{copy}");
        let name = phase["name"].as_str().unwrap();
        assert!(
            text.contains(&format!(
                "  gpu copies: {share:.1}% of the operations' time"
            )),
            "{name}: {text}"
        );
    }
    // The read's check copies each GPU buffer back, outside the operations.
    let read = &run["phases"][1];
    for w in read["workers"].as_array().unwrap() {
        assert!(u(&w["verify_ns"]) >= 16 * COPY_US * 1000, "{w}");
    }
}

#[test]
fn verify_checks_what_the_gpu_holds_not_the_bounce_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("w.json");
    iobm()
        .args([
            "write", "--keep", "-j", "2", "--size", "1MiB", "--block", "64KiB",
        ])
        .arg("--json")
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let run_dir = dir
        .path()
        .join(format!("iobm-{}", load(&json)["run_id"].as_str().unwrap()));
    // Reads land intact in the bounce buffer; the GPU's copy of them is damaged.
    let out = on_fake_gpus(1, true)
        .args(["read", "--mem", "gpu:0", "--verify"])
        .arg(&run_dir)
        .assert()
        .failure();
    let said = String::from_utf8_lossy(&out.get_output().stdout).to_string()
        + &String::from_utf8_lossy(&out.get_output().stderr);
    assert!(said.contains("corrupt"), "{said}");
    on_fake_gpus(1, false)
        .args(["read", "--mem", "gpu:0", "--verify"])
        .arg(&run_dir)
        .assert()
        .success();
}

#[test]
fn gpus_not_there_are_refused_in_one_line_before_anything_is_created() {
    let dir = tempfile::tempdir().unwrap();
    // This machine has no NVIDIA driver.
    let refused = |cmd: &mut assert_cmd::Command, mem: &str, says: &str| {
        let out = cmd
            .args(["write", "--mem", mem, "--size", "1MiB"])
            .arg(dir.path())
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.contains(says), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    };
    refused(
        &mut iobm(),
        "gpu:0",
        "--mem gpu:0: libcuda.so.1 cannot be loaded (",
    );
    refused(
        &mut on_fake_gpus(2, false),
        "gpu:0,2",
        "--mem gpu:0,2: GPU 2: this machine has 2 GPUs, numbered 0 to 1",
    );
    let out = on_fake_gpus(1, false)
        .args(["read", "--mem", "gpu:0", "--iodepth", "8"])
        .arg(dir.path())
        .assert()
        .code(2);
    let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(stderr.contains("use --engine sync"), "{stderr}");
}

#[test]
fn mem_is_in_the_spec_and_the_config_hash() {
    let dir = tempfile::tempdir().unwrap();
    let run = |mem: Option<&str>, flag: &str| {
        let mut cmd = on_fake_gpus(2, false);
        cmd.args(["write", "--size", "1MiB", flag]);
        if let Some(mem) = mem {
            cmd.args(["--mem", mem]);
        }
        let out = cmd.arg(dir.path()).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    assert!(run(Some("gpu:1,0"), "--print-spec").contains("mem = \"gpu:1,0\""));
    let on_gpus = run(Some("gpu:1,0"), "--check-only");
    let on_host = run(None, "--check-only");
    assert!(on_gpus.starts_with("config_hash "), "{on_gpus}");
    assert_ne!(on_gpus, on_host);
    assert_eq!(on_host, run(Some("host"), "--check-only"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}
