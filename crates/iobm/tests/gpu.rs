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

#[test]
fn limits_measure_a_gpus_copies_and_a_gpu_phase_is_shown_as_a_share_of_them() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("limits.json");
    let out = on_fake_gpus(1, false)
        .args(["limits", "--gpu", "0", "--time", "20ms", "--json"])
        .arg(&json)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("  gpu 0 (iobm fake GPU)  copies of 64.00 MiB\n    host to device: pinned "),
        "{text}"
    );
    assert!(text.contains("    device to host: pinned "), "{text}");
    assert_eq!(text.matches("/s, pageable ").count(), 2, "{text}");
    let limits = load(&json);
    let gpu = &limits["gpu"];
    assert_eq!(
        (gpu["id"].as_u64(), &gpu["memory"]),
        (Some(0), &"fake-gpu".into())
    );
    let labels: Vec<(String, String)> = gpu["rates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            // Each copy of 64 MiB sleeps COPY_US on the fake: below 64 MiB per COPY_US.
            let rate = r["bytes_per_s"].as_f64().unwrap();
            assert!(
                rate > 0.0 && rate < (64u64 << 20) as f64 / (COPY_US as f64 * 1e-6),
                "{r}"
            );
            (r["direction"].to_string(), r["host"].to_string())
        })
        .collect();
    let pair = |d: &str, h: &str| (format!("\"{d}\""), format!("\"{h}\""));
    assert_eq!(
        labels,
        [
            pair("host-to-device", "pinned"),
            pair("host-to-device", "pageable"),
            pair("device-to-host", "pinned"),
            pair("device-to-host", "pageable"),
        ]
    );
    // A --mem gpu run on that GPU: each phase a share of the GPU's copy its bytes crossed.
    let run = dir.path().join("run.json");
    on_fake_gpus(1, false)
        .args([
            "stream", "--mem", "gpu:0", "--size", "1MiB", "--block", "256KiB", "--json",
        ])
        .arg(&run)
        .arg(dir.path())
        .assert()
        .success();
    let out = iobm()
        .arg("report")
        .arg(&run)
        .arg("--limits")
        .arg(&json)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    // Limits of another GPU, or of a real GPU: the run on fake GPU 0 is not judged by them.
    for (key, value) in [("id", serde_json::json!(1)), ("memory", "gpu".into())] {
        let mut other = limits.clone();
        other["gpu"][key] = value;
        let other_json = dir.path().join("other.json");
        std::fs::write(&other_json, other.to_string()).unwrap();
        let out = iobm()
            .arg("report")
            .arg(&run)
            .arg("--limits")
            .arg(&other_json)
            .assert()
            .success();
        let other_text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let judged = other_text.split("\nagainst the limits of ").nth(1).unwrap();
        assert!(judged.contains("% of memory copy"), "{judged}");
        assert!(!judged.contains("GPU"), "{key}: {judged}");
    }
    for (phase, copy) in [("write", "device-to-host"), ("read", "host-to-device")] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  {phase}: ")))
            .unwrap_or_else(|| panic!("{phase}: {text}"));
        assert!(
            line.contains(&format!("% of the GPU's pinned {copy} copy on one GPU (")),
            "{text}"
        );
    }
}

#[test]
fn limits_of_a_gpu_not_there_are_one_line_and_nothing_saved() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("limits.json");
    // This machine has no NVIDIA driver.
    for (cmd, gpu, says) in [
        (
            iobm(),
            "0",
            "iobm: error: --gpu 0: libcuda.so.1 cannot be loaded (",
        ),
        (
            on_fake_gpus(1, false),
            "3",
            "iobm: error: --gpu 3: GPU 3: this machine has one GPU, number 0",
        ),
    ] {
        let mut cmd = cmd;
        let out = cmd
            .args(["limits", "--gpu", gpu, "--json"])
            .arg(&json)
            .assert()
            .code(2);
        let stderr = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(stderr.starts_with(says), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(out.get_output().stdout.is_empty());
        assert!(!json.exists());
    }
}

#[test]
fn gdsio_line_follows_each_phase_in_gdsios_form() {
    let dir = tempfile::tempdir().unwrap();
    let stream = |gdsio: bool| {
        let mut cmd = on_fake_gpus(1, false);
        cmd.args(["stream", "--mem", "gpu:0", "-j", "2", "--size", "2MiB"])
            .args(["--block", "256KiB"]);
        if gdsio {
            cmd.arg("--gdsio-line");
        }
        let out = cmd.arg(dir.path()).assert().success();
        String::from_utf8(out.get_output().stdout.clone()).unwrap()
    };
    let text = stream(true);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("IoType: ")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    for (line, io) in lines.iter().zip(["WRITE", "READ"]) {
        let head = format!("IoType: {io} XferType: CPU_GPU Threads: 2 DataSetSize: 2048/2048(KiB) IOSize: 256(KiB) Throughput: ");
        assert!(line.starts_with(&head), "{line}");
        assert!(line.contains(" GiB/sec, Avg_Latency: "), "{line}");
        assert!(line.contains(" usecs ops: 8 total_time "), "{line}");
        assert!(line.ends_with(" secs"), "{line}");
        // Every operation's latency holds its fake copy of COPY_US.
        let mean: f64 = line
            .split("Avg_Latency: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(mean >= COPY_US as f64, "{line}");
    }
    // The write's line comes after the write's report, before the read's.
    let write_line = text.find("IoType: WRITE").unwrap();
    assert!(text.find("\nwrite: ").unwrap() < write_line, "{text}");
    assert!(write_line < text.find("\nread: ").unwrap(), "{text}");
    assert!(!stream(false).contains("IoType:"));
}
