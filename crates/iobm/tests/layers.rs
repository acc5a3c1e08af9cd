//! The layers below a file system, with real parts (root only: marked ignored, run by
//! `scripts/test` as root): an ext4 image mounted with `mount -o loop` whose file sits in the
//! page cache is not called uncached, its backing file named with the disk under it; a
//! resident data set read while `dd iflag=direct` reads the same device is not called
//! uncached, and the other I/O is named, never printed as a share above 100%; ext4 on a zram
//! device is memory.

mod common;

use common::mount::{LoopMount, ZramMount};
use common::{entries, iobm, load};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn run(args: &[&str], dir: &Path, json: &Path) -> Value {
    let out = iobm()
        .args(args)
        .arg("--json")
        .arg(json)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    load(json)
}

fn verdict(phase: &Value) -> (String, String) {
    let v = &phase["cache"]["verdict"];
    (
        v["verdict"].as_str().unwrap().to_string(),
        v["evidence"].as_str().unwrap().to_string(),
    )
}

#[test]
#[ignore = "needs root: mounts an ext4 image with mount -o loop (scripts/test runs it as root)"]
fn a_loop_mounted_image_in_the_page_cache_is_not_called_uncached() {
    let fs = LoopMount::new("512M");
    let image = fs.image.display().to_string();
    let json = fs.dir.path().join("r.json");
    // O_DIRECT on the ext4 inside: the loop device writes the image through this machine's
    // page cache, where it stays for the read.
    let result = run(
        &["stream", "--direct", "--size", "128MiB", "-j", "2"],
        &fs.mnt,
        &json,
    );
    let read = &result["phases"][1];
    assert_eq!(read["op"], "read");
    let (v, evidence) = verdict(read);
    assert_ne!(v, "uncached", "{evidence}");
    assert!(evidence.contains(&image), "{evidence}");
    // The loop device delivered the data set; the disk under the image far less.
    let top = read["cache"]["device"]["read_bytes"].as_u64().unwrap();
    assert!(top >= 128 << 20, "{}", read["cache"]);
    let below = &read["cache"]["below"][0];
    assert_eq!(below["backing_files"][0]["path"], image.as_str());
    assert_eq!(below["backing_files"][0]["direct_io"], false);
    let bottom: u64 = below["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["read_bytes"].as_u64().unwrap())
        .sum();
    assert!(bottom < top / 2, "{below}");
    // This run's own bytes beside the device's.
    assert!(
        read["cache"]["own_io"]["read_bytes"].as_u64().unwrap() >= 128 << 20,
        "{}",
        read["cache"]
    );
    common::assert_matches_schema(&result);

    // A --direct --fsync never write there stays in the image's pages.
    let result = run(
        &[
            "write", "--direct", "--fsync", "never", "--size", "128MiB", "-j", "2",
        ],
        &fs.mnt,
        &json,
    );
    let write = &result["phases"][0];
    let (v, evidence) = verdict(write);
    assert_ne!(v, "uncached", "{evidence}");
    assert!(evidence.contains(&image), "{evidence}");
    assert!(entries(&fs.mnt).iter().all(|e| e == "lost+found"));
}

#[test]
#[ignore = "needs root: adds a zram device and mounts ext4 on it (scripts/test runs it as root)"]
fn ext4_on_zram_is_memory_by_its_driver() {
    let fs = ZramMount::new("384M");
    let json = fs.dir.path().join("r.json");
    // O_DIRECT reaches the device, and the device delivers every byte: from RAM.
    let result = run(
        &["stream", "--direct", "--size", "128MiB", "-j", "2"],
        &fs.mnt,
        &json,
    );
    let device = format!("(zram{}) is zram, compressed RAM", fs.id);
    for phase in result["phases"].as_array().unwrap() {
        let (v, evidence) = verdict(phase);
        assert_eq!(v, "memory", "{}: {evidence}", phase["op"]);
        assert!(evidence.contains(&device), "{evidence}");
        let below = &phase["cache"]["below"][0];
        assert_eq!(
            below["devices"][0]["ram"], "zram, compressed RAM",
            "{below}"
        );
        let warnings = phase["warnings"].as_array().unwrap();
        assert!(
            warnings.iter().any(|w| w
                .as_str()
                .unwrap()
                .starts_with("memory: the data lives in RAM")),
            "{warnings:?}"
        );
    }
    // The read was O_DIRECT and the device delivered all of it: what once read as uncached.
    let read = &result["phases"][1];
    assert_eq!(read["op"], "read");
    assert!(read["cache"]["device"]["read_bytes"].as_u64().unwrap() >= 128 << 20);
    common::assert_matches_schema(&result);
}

#[test]
#[ignore = "needs root: mounts an ext4 image with mount -o loop (scripts/test runs it as root)"]
fn a_resident_data_set_read_while_dd_reads_the_device_is_not_called_uncached() {
    let fs = LoopMount::new("512M");
    let json = fs.dir.path().join("r.json");
    run(
        &["write", "--keep", "--size", "64MiB", "-j", "2"],
        &fs.mnt,
        &json,
    );
    let kept = fs.mnt.join(
        entries(&fs.mnt)
            .into_iter()
            .find(|e| e != "lost+found")
            .unwrap(),
    );
    // Every page of the data set in the page cache.
    for f in entries(&kept) {
        let _ = std::fs::read(kept.join(f)).unwrap();
    }
    // Another process reads the same device with O_DIRECT throughout the read.
    let device = fs.device();
    let mut dd = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "while :; do dd if={device} of=/dev/null iflag=direct bs=1M status=none; done"
        ))
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let result = run(&["read", "--keep-cache", "--duration", "2s"], &kept, &json);
    let _ = Command::new("pkill")
        .args(["-P", &dd.id().to_string()])
        .status();
    let _ = dd.kill();
    let _ = dd.wait();
    let read = &result["phases"][0];
    let (v, evidence) = verdict(read);
    assert_ne!(v, "uncached", "{evidence}");
    assert!(
        evidence.contains("other I/O ran on the device"),
        "{evidence}"
    );
    // The device moved far more than this run asked of it.
    let device_read = read["cache"]["device"]["read_bytes"].as_u64().unwrap();
    let own = read["cache"]["own_io"]["read_bytes"].as_u64().unwrap();
    assert!(device_read > 4 * own + (64 << 20), "{}", read["cache"]);
    let warnings: Vec<&str> = read["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("other I/O ran on the device")),
        "{warnings:?}"
    );
    // No share above 100% is evidence anywhere.
    for text in warnings.iter().copied().chain([evidence.as_str()]) {
        let over = text
            .split('%')
            .filter_map(|s| s.rsplit(['(', ' ']).next()?.parse::<f64>().ok())
            .any(|p| p > 100.0);
        assert!(!over, "{text}");
    }
    let _ = std::fs::remove_dir_all(&kept);
}
