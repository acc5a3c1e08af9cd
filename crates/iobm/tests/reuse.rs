//! `iobm s3 get --reuse PREFIX` (and head, mixed) on a data set kept by `iobm s3 put --keep`,
//! against `iobm serve` on loopback: the server's cache dropped in between gives an uncached
//! GET, the kept objects are only read and stay as they were, what is not a kept data set is
//! refused in one line naming --reuse, and a GET verdict says what would give an uncached figure.

mod common;

use common::{iobm_serve_with, load, u, warns};
use serde_json::Value;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const KEY: &str = "AKIOBMTEST";
const SECRET: &str = "iobmtestsecretiobmtestsecret";

fn iobm() -> assert_cmd::Command {
    let mut c = common::iobm();
    c.env_remove("AWS_ENDPOINT_URL")
        .env("AWS_ACCESS_KEY_ID", KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET);
    c
}

/// `iobm s3 ARGS --json` against `url`, which must succeed; its result.
fn s3(url: &str, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let out = iobm()
        .arg("s3")
        .args(args)
        .args(["--endpoint", url, "--timeout", "20s", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iobm s3 {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = load(&json);
    common::assert_matches_schema(&result);
    result
}

/// Every file under `dir` with its size, sorted.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = e.metadata().unwrap();
            if meta.is_dir() {
                dirs.push(e.path());
            } else {
                out.push((e.path(), meta.len()));
            }
        }
    }
    out.sort();
    out
}

/// Drops the pages of every file under `dir` from the page cache (what a user does on the
/// server between PUT and GET; as root `sync; echo 3 > /proc/sys/vm/drop_caches` does it for
/// all).
fn drop_pages(dir: &Path) {
    for (path, _) in files(dir) {
        let f = std::fs::File::open(&path).unwrap();
        // Dirty pages stay: written back first, as `sync` does.
        f.sync_all().unwrap();
        let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        assert_eq!(rc, 0, "{}", path.display());
    }
}

/// The prefix a `--keep` run's hint names: `s3://BUCKET/PREFIX/`.
fn kept_prefix(result: &Value) -> String {
    let hint = result["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|w| w.contains("kept as a data set"))
        .unwrap_or_else(|| panic!("no data-set hint in {}", result["warnings"]));
    hint.rsplit("--reuse ").next().unwrap().to_string()
}

#[test]
fn a_kept_data_set_is_read_again_uncached_and_left_as_it_was() {
    // On a disk (the build directory's), not a tmpfs: its pages can be dropped.
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let serve = iobm_serve_with(root.path(), KEY, SECRET);
    let objects = ["--obj-size", "256KiB", "--concurrent", "3"];
    let put = s3(
        &serve.url,
        &[&["put", "--keep", "--ops", "24"][..], &objects].concat(),
    );
    let prefix = kept_prefix(&put);
    assert_eq!(
        format!(
            "s3://iobm/{}",
            put["config"]["s3"]["prefix"].as_str().unwrap()
        ),
        prefix
    );
    let kept = files(root.path());
    // 24 objects and their description.
    assert_eq!(kept.len(), 25, "{kept:?}");
    assert!(kept.iter().any(|(p, _)| p.ends_with("iobm-data-set.json")));

    // Without --reuse a GET uploads a fresh data set first: cached, and told what to do.
    let fresh = s3(
        &serve.url,
        &[&["get", "--objects", "8", "--ops", "8"][..], &objects].concat(),
    );
    let v = &fresh["phases"][0]["cache"]["verdict"];
    assert_eq!(v["verdict"], "cached", "{v}");
    let advice = v["evidence"].as_str().unwrap();
    for way in [
        "for an uncached figure: a data set larger than the server's RAM",
        "then reading it with --reuse PREFIX: this run uploaded its data set just before",
    ] {
        assert!(advice.contains(way), "{advice}");
    }
    assert!(fresh["phases"][0]["cache"]["servers"][0]["same_host"] == true);

    // The server's cache dropped, then the kept set read: from the disk, every byte checked.
    drop_pages(root.path());
    let before = files(root.path());
    let get = s3(
        &serve.url,
        &[
            &["get", "--reuse", &prefix, "--ops", "12", "--verify"][..],
            &objects,
        ]
        .concat(),
    );
    assert_eq!(get["status"], "complete");
    let phase = &get["phases"][0];
    assert_eq!(u(&phase["operations"][0]["ops"]), 12);
    assert_eq!(u(&phase["settings"]["data_bytes"]), 24 * 256 * 1024);
    let server = &phase["cache"]["servers"][0];
    let served = u(&server["served_bytes"]);
    assert_eq!(served, 12 * 256 * 1024);
    // No more reads than objects: each read once (a read again would find the first's
    // pages), so none was in the server's page cache.
    assert_eq!(get["config"]["s3"]["picks"], "once");
    assert_eq!(u(&server["resident_bytes"]), 0, "{server}");
    let verdict = &phase["cache"]["verdict"]["verdict"];
    assert!(
        verdict != "cached" && verdict != "partly cached",
        "{verdict}"
    );
    assert!(get["config"]["s3"]["reused"]
        .as_str()
        .unwrap()
        .starts_with(&prefix));
    assert!(!get["config"]["s3"]["bucket_created"].as_bool().unwrap());
    assert!(warns(&get, "was only read, and is left as it was"));
    assert_eq!(files(root.path()), before, "the kept data set changed");

    // More reads than objects: at random, unless --once.
    let again = ["get", "--reuse", &prefix, "--ops", "30"];
    let random = s3(&serve.url, &[&again[..], &objects].concat());
    assert_eq!(random["config"]["s3"]["picks"], "random");
    let once = s3(&serve.url, &[&again[..], &["--once"], &objects].concat());
    assert_eq!(once["config"]["s3"]["picks"], "once");

    // head and a mixed run of GETs and HEADs read it too, and leave it.
    let head = s3(
        &serve.url,
        &["head", "--reuse", &prefix, "--ops", "6", "-c", "2"],
    );
    assert_eq!(u(&head["phases"][0]["operations"][0]["ops"]), 6);
    // Given no --obj-size, the kept objects' own size is recorded, not the flag's default.
    let kept = &head["config"]["s3"];
    let sizes = (u(&kept["obj_size_min"]), u(&kept["obj_size_max"]));
    assert_eq!(sizes, (256 << 10, 256 << 10));
    let mixed = s3(
        &serve.url,
        &[
            "mixed", "--reuse", &prefix, "--get", "60", "--head", "40", "--ops", "10", "-c", "2",
        ],
    );
    assert_eq!(mixed["status"], "complete");
    assert_eq!(files(root.path()), before, "the kept data set changed");
}

/// `iobm s3 ARGS` against `url`, which must fail with exit code 2 and one line naming --reuse.
fn refused(url: &str, args: &[&str], why: &str) {
    let out = iobm()
        .arg("s3")
        .args(args)
        .args(["--endpoint", url])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("iobm: error:"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].contains("--reuse"), "{stderr}");
    assert!(errors[0].contains(why), "{args:?}: {stderr}");
}

#[test]
fn what_is_not_a_kept_data_set_is_refused_and_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let serve = iobm_serve_with(root.path(), KEY, SECRET);
    let url = serve.url.as_str();
    // A mixed run's objects are not a whole data set: kept, but not described.
    let mixed = s3(
        url,
        &[
            "mixed",
            "--keep",
            "--objects",
            "6",
            "--ops",
            "12",
            "--obj-size",
            "4KiB",
            "-c",
            "2",
        ],
    );
    assert!(
        warns(&mixed, "not a whole data set"),
        "{}",
        mixed["warnings"]
    );
    let foreign = format!(
        "s3://iobm/{}",
        mixed["config"]["s3"]["prefix"].as_str().unwrap()
    );
    let put = s3(
        url,
        &[
            "put",
            "--keep",
            "--ops",
            "4",
            "--obj-size",
            "4KiB",
            "-c",
            "2",
        ],
    );
    let kept = kept_prefix(&put);
    let before = files(root.path());
    refused(
        url,
        &["get", "--reuse", &foreign],
        "not a data set kept by iobm",
    );
    refused(
        url,
        &["get", "--reuse", "s3://iobm/nothing-here/"],
        "no objects under it",
    );
    refused(
        url,
        &["get", "--reuse", "s3://absent/x/"],
        "there is no bucket 'absent'",
    );
    refused(url, &["get", "--reuse", "s3://iobm"], "no prefix");
    refused(
        url,
        &["put", "--reuse", &kept],
        "works with get, head and mixed",
    );
    refused(
        url,
        &["delete", "--reuse", &kept],
        "works with get, head and mixed",
    );
    refused(url, &["mixed", "--reuse", &kept], "--put 0 --delete 0");
    // An object of the set gone: incomplete, named.
    let last = root
        .path()
        .join("iobm")
        .join(kept.trim_start_matches("s3://iobm/"))
        .join("obj.3");
    std::fs::remove_file(&last).unwrap();
    refused(
        url,
        &["get", "--reuse", &kept],
        "obj.3 of the 4 objects it describes is not there",
    );
    let mut after = files(root.path());
    after.push((last.clone(), 4096));
    after.sort();
    assert_eq!(after, before, "a refused run changed the store");
}

#[test]
fn sizes_drawn_from_a_distribution_are_stored_kept_and_read_back_as_drawn() {
    let root = tempfile::tempdir().unwrap();
    let serve = iobm_serve_with(root.path(), KEY, SECRET);
    let sizes = ["--obj-size", "4KiB:3,64KiB:1", "--concurrent", "2"];
    let put = s3(
        &serve.url,
        &[&["put", "--keep", "--ops", "40"][..], &sizes].concat(),
    );
    let config = &put["config"]["s3"];
    assert_eq!(
        config["obj_sizes"],
        serde_json::json!({"kind": "buckets", "sizes": [4096, 65536], "weights": [3, 1]})
    );
    assert_eq!(
        (u(&config["obj_size_min"]), u(&config["obj_size_max"])),
        (4096, 65536)
    );
    // Every object stored has one of the two sizes, about three small to one large, and the
    // bytes PUT are theirs.
    let stored: Vec<u64> = files(root.path())
        .into_iter()
        .filter(|(p, _)| !p.ends_with("iobm-data-set.json") && p.to_string_lossy().contains("obj."))
        .map(|(_, size)| size)
        .collect();
    assert_eq!(stored.len(), 40, "{stored:?}");
    assert!(
        stored.iter().all(|&s| s == 4096 || s == 65536),
        "{stored:?}"
    );
    let small = stored.iter().filter(|&&s| s == 4096).count();
    assert!((20..=38).contains(&small), "{small} of 40 small");
    let put_bytes = u(&put["phases"][0]["operations"][0]["bytes"]);
    assert_eq!(put_bytes, stored.iter().sum::<u64>());
    // Read back with the kept description's sizes, every byte checked.
    let prefix = kept_prefix(&put);
    let get = s3(
        &serve.url,
        &[
            "get", "--reuse", &prefix, "--ops", "40", "--verify", "-c", "2",
        ],
    );
    assert_eq!(get["status"], "complete");
    assert_eq!(get["config"]["s3"]["obj_sizes"], config["obj_sizes"]);
    assert_eq!(u(&get["phases"][0]["operations"][0]["bytes"]), put_bytes);
    assert_eq!(get["phases"][0]["errors"], serde_json::json!([]));
    // A bad distribution: one line naming the flag, nothing run.
    let bad = iobm()
        .args([
            "s3",
            "put",
            "--obj-size",
            "log2:8KiB..4KiB",
            "--endpoint",
            &serve.url,
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("--obj-size") && err.contains("larger than MAX"),
        "{err}"
    );
}
