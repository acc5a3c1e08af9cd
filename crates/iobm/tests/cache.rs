//! What was dropped from the page cache before a read is what the result says: the whole cache
//! with `--drop-caches` as root, the data set's pages otherwise, nothing on storage that is
//! memory (which every phase then says it measures).

mod common;

use common::{iobm, load, warns};
use std::path::Path;
use std::sync::Mutex;

/// Held by every test here: they drop the whole page cache (as root), need it kept, or read
/// from the disk whose counters (device-wide) the others' verdicts rest on.
static PAGE_CACHE: Mutex<()> = Mutex::new(());

fn stream(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("c.json");
    iobm()
        .args(["stream", "--size", "4MiB", "--json"])
        .arg(&json)
        .args(extra)
        .arg(dir)
        .assert()
        .success();
    load(&json)
}

#[test]
fn the_result_says_what_was_dropped_before_each_read() {
    let _cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let disk = tempfile::tempdir().unwrap();
    let root = common::is_root();
    let asked = stream(disk.path(), &["--drop-caches"]);
    let read = &asked["phases"][1]["settings"];
    assert_eq!(read["cache_dropped"], if root { "system" } else { "files" });
    assert_eq!(asked["phases"][0]["settings"]["cache_dropped"], "nothing");
    // Every byte of the read came from the disk, which the verdict says.
    assert_eq!(
        verdict(&asked, 1),
        "uncached",
        "{}",
        asked["phases"][1]["cache"]
    );
    let default = stream(disk.path(), &[]);
    assert_eq!(default["phases"][1]["settings"]["cache_dropped"], "files");
    let kept = stream(disk.path(), &["--keep-cache"]);
    assert_eq!(kept["phases"][1]["settings"]["cache_dropped"], "nothing");
    assert_eq!(kept["phases"][1]["settings"]["drop_cache"], false);
    // Read right after it was written, from the page cache.
    assert_eq!(
        verdict(&kept, 1),
        "cached",
        "{}",
        kept["phases"][1]["cache"]
    );
}

/// The cache verdict of phase `index`.
fn verdict(result: &serde_json::Value, index: usize) -> &str {
    result["phases"][index]["cache"]["verdict"]["verdict"]
        .as_str()
        .unwrap()
}

#[test]
fn storage_that_is_memory_drops_nothing_and_says_it_is_memory() {
    let _cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let shm = Path::new("/dev/shm");
    assert!(shm.is_dir(), "this test needs /dev/shm, a tmpfs on Linux");
    let memory = tempfile::tempdir_in(shm).unwrap();
    let result = stream(memory.path(), &["--drop-caches"]);
    // O_DIRECT or not, writes and reads: memory (tmpfs takes O_DIRECT since Linux 6.6).
    let direct = stream(memory.path(), &["--direct"]);
    for index in [0, 1] {
        assert_eq!(verdict(&result, index), "memory");
        assert_eq!(verdict(&direct, index), "memory");
    }
    for phase in result["phases"].as_array().unwrap() {
        assert_eq!(phase["settings"]["cache_dropped"], "nothing");
        let warnings = phase["warnings"].as_array().unwrap();
        assert!(
            warnings
                .iter()
                .any(|w| w.as_str().unwrap().starts_with("memory:")),
            "{warnings:?}"
        );
    }
}

#[test]
fn drop_caches_and_keep_cache_do_not_go_together_and_write_reads_nothing() {
    let _cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    iobm()
        .args(["stream", "--drop-caches", "--keep-cache"])
        .arg(dir.path())
        .assert()
        .code(2);
    iobm()
        .args(["write", "--drop-caches"])
        .arg(dir.path())
        .assert()
        .code(2);
}

#[test]
fn bonnie_drops_caches_before_each_read_test_and_flags_a_server_cache() {
    let _cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("b.json");
    iobm()
        .args([
            "bonnie",
            "--size",
            "1MiB",
            "--files",
            "0",
            "--seeks",
            "50",
            "--drop-caches",
            "--server-ram",
            "1GiB",
        ])
        .arg("--json")
        .arg(&json)
        .arg(dir.path())
        .assert()
        .success();
    let result = load(&json);
    let root = common::is_root();
    assert_eq!(result["config"]["server_ram_bytes"], 1u64 << 30);
    for phase in result["phases"].as_array().unwrap() {
        let server_cache = warns(phase, "possible server cache");
        // The 1 MiB file is smaller than the stated server's 1 GiB: its reads say so.
        assert_eq!(
            server_cache,
            phase["op"] == "read",
            "{}: {}",
            phase["name"],
            phase["warnings"]
        );
        let dropped = &phase["settings"]["cache_dropped"];
        match phase["name"].as_str().unwrap() {
            "per-char read" | "block read" | "random seeks" => {
                assert_eq!(
                    dropped,
                    if root { "system" } else { "files" },
                    "{}",
                    phase["name"]
                )
            }
            _ => assert_eq!(dropped, "nothing", "{}", phase["name"]),
        }
    }
}

#[test]
fn a_data_set_smaller_than_the_stated_server_memory_is_flagged_on_reads_only() {
    let _cache = PAGE_CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let disk = tempfile::tempdir().unwrap();
    let server_cache = |phase: &serde_json::Value| warns(phase, "possible server cache");
    let stated = stream(disk.path(), &["--server-ram", "1GiB"]);
    assert_eq!(stated["config"]["server_ram_bytes"], 1u64 << 30);
    assert!(!server_cache(&stated["phases"][0]), "the write");
    assert!(
        server_cache(&stated["phases"][1]),
        "{}",
        stated["phases"][1]["warnings"]
    );
    let larger = stream(disk.path(), &["--server-ram", "1MiB"]);
    assert!(!server_cache(&larger["phases"][1]));
    let unstated = stream(disk.path(), &[]);
    assert!(unstated["config"]["server_ram_bytes"].is_null());
}
