//! What the storage is offered: a data set written by `iobm write` (256 MiB) or stored through
//! the gateway (64 objects of 4 MiB) does not compress with zstd (long window) or xz and holds
//! no duplicate 512-byte or 4 KiB block; `compressible:50` compresses about 2x and `dedupe:50`
//! repeats about half its 4 KiB blocks. Uses the zstd and xz programs, which scripts/test
//! installs.

mod common;

use common::{entries, iobm};
use std::collections::HashSet;
use std::io::Write;
use std::process::{Command, Stdio};

/// The files of a kept data set of `size` written with `--data data`, concatenated.
fn data_set(size: &str, data: &str) -> Vec<u8> {
    let parent = tempfile::tempdir().unwrap();
    iobm()
        .args([
            "write", "--keep", "-j", "2", "--block", "1M", "--size", size,
        ])
        .args(["--data", data])
        .arg(parent.path())
        .assert()
        .success();
    let dir = parent.path().join(&entries(parent.path())[0]);
    let mut bytes = std::fs::read(dir.join("data.0")).unwrap();
    bytes.extend(std::fs::read(dir.join("data.1")).unwrap());
    bytes
}

/// Bytes in over bytes out of `program args` compressing `input`.
fn ratio(program: &str, args: &[&str], input: &[u8]) -> f64 {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("{program} is needed for this test (scripts/test installs it): {e}")
        });
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let feeder = std::thread::spawn(move || stdin.write_all(&data).unwrap());
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    assert!(out.status.success(), "{program} failed");
    input.len() as f64 / out.stdout.len() as f64
}

fn duplicates(bytes: &[u8], size: usize) -> usize {
    let mut seen = HashSet::new();
    bytes.chunks(size).filter(|c| !seen.insert(*c)).count()
}

/// Neither zstd (long window) nor xz shrinks `bytes` by more than 1%, and no 512-byte or 4 KiB
/// block of it appears twice.
fn assert_nothing_to_flatter(bytes: &[u8]) {
    let zstd = ratio("zstd", &["-q", "--long=27", "-3", "-c"], bytes);
    let xz = ratio("xz", &["-1", "-T0", "-c"], bytes);
    assert!(zstd <= 1.01 && xz <= 1.01, "zstd {zstd}, xz {xz}");
    assert_eq!(duplicates(bytes, 512), 0);
    assert_eq!(duplicates(bytes, 4096), 0);
}

#[test]
fn random_data_neither_compresses_nor_deduplicates() {
    let bytes = data_set("256MiB", "random");
    assert_eq!(bytes.len(), 256 << 20);
    assert_nothing_to_flatter(&bytes);
}

#[test]
fn compressible_and_dedupe_data_are_what_they_say() {
    let bytes = data_set("16MiB", "compressible:50");
    let zstd = ratio("zstd", &["-q", "--long=27", "-3", "-c"], &bytes);
    assert!((1.8..=2.2).contains(&zstd), "zstd {zstd}");
    let bytes = data_set("16MiB", "dedupe:50");
    let share = duplicates(&bytes, 4096) as f64 / (bytes.len() / 4096) as f64;
    assert!((0.45..=0.55).contains(&share), "duplicate share {share}");
}

#[test]
fn dedupe_data_verifies() {
    let parent = tempfile::tempdir().unwrap();
    iobm()
        .args([
            "stream",
            "--verify",
            "--data",
            "dedupe:30",
            "--size",
            "4MiB",
            "-j",
            "2",
        ])
        .arg(parent.path())
        .assert()
        .success();
}

#[test]
fn zero_data_is_said_to_flatter_compressing_storage() {
    let parent = tempfile::tempdir().unwrap();
    let json = parent.path().join("z.json");
    let data = parent.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = iobm()
        .args(["write", "--data", "zero", "--size", "1MiB", "--json"])
        .arg(&json)
        .arg(&data)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("data zero: storage that compresses"),
        "{text}"
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(result["warnings"][0]
        .as_str()
        .unwrap()
        .starts_with("data zero"));
}

/// The files under `dir`, found by walking it.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

#[test]
fn objects_stored_through_the_gateway_neither_compress_nor_deduplicate() {
    let gateway = tempfile::tempdir().unwrap();
    iobm()
        .args(["s3", "put", "--keep", "--ops", "64", "--obj-size", "4MiB"])
        .arg("--dir")
        .arg(gateway.path())
        .assert()
        .success();
    let objects: Vec<_> = files_under(gateway.path())
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("obj."))
        .collect();
    assert_eq!(objects.len(), 64);
    let bytes: Vec<u8> = objects
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect();
    assert_nothing_to_flatter(&bytes);
}

#[test]
fn an_object_changed_on_the_gateways_disk_is_caught_by_verify() {
    let gateway = tempfile::tempdir().unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iobm"))
        .args([
            "s3",
            "get",
            "--verify",
            "--objects",
            "8",
            "--obj-size",
            "64KiB",
        ])
        .args(["--concurrent", "2", "--duration", "20s", "--dir"])
        .arg(gateway.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the data set is stored, change one byte in the middle of one object.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let object = loop {
        let stored: Vec<_> = files_under(gateway.path())
            .into_iter()
            .filter(|p| p.file_name().unwrap().to_string_lossy() == "obj.3")
            .collect();
        if let Some(p) = stored.first() {
            break p.clone();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the data set was never stored"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::thread::sleep(std::time::Duration::from_millis(300));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&object)
        .unwrap();
    std::os::unix::fs::FileExt::write_at(&file, b"\xff", 40_000).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("obj.3")
            && err.contains("the 4 KiB at offset 36864")
            && err.contains("corrupt"),
        "{err}"
    );
}

#[test]
fn the_result_says_what_the_storage_was_offered() {
    let parent = tempfile::tempdir().unwrap();
    for (data, check) in [
        ("random", (0.99..=1.01, 0.0..=0.0)),
        ("dedupe:50", (1.5..=2.5, 0.45..=0.55)),
    ] {
        let json = parent.path().join("o.json");
        iobm()
            .args([
                "write", "--size", "32MiB", "-j", "2", "--data", data, "--json",
            ])
            .arg(&json)
            .arg(parent.path())
            .assert()
            .success();
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let offered = &result["phases"][0]["offered"];
        let (ratio, share) = (
            offered["zstd3_ratio"].as_f64().unwrap(),
            offered["duplicate_4k_share"].as_f64().unwrap(),
        );
        assert!(
            check.0.contains(&ratio) && check.1.contains(&share),
            "{data}: {offered}"
        );
        common::assert_matches_schema(&result);
    }
}

#[test]
fn put_verify_checks_the_gateways_etags() {
    let parent = tempfile::tempdir().unwrap();
    let json = parent.path().join("p.json");
    iobm()
        .args([
            "s3",
            "put",
            "--verify",
            "--ops",
            "8",
            "--obj-size",
            "256KiB",
            "--json",
        ])
        .arg(&json)
        .assert()
        .success();
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let checked: u64 = result["phases"][0]["workers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["verify_ns"].as_u64().unwrap())
        .sum();
    assert!(checked > 0, "the ETags were checked");
}

/// A loopback proxy in front of `backend` that changes the last hex digit of every ETag
/// header of its answers (same length, so the framing holds): a store that answers every PUT
/// with an MD5 of something else. Returns its URL.
fn wrong_etags(backend: &str) -> String {
    use std::io::Read;
    use std::net::{TcpListener, TcpStream};
    let backend = backend.trim_start_matches("http://").to_string();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = TcpStream::connect(&backend) else {
                continue;
            };
            let (mut up_from, mut up_to) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut up_from, &mut up_to);
                let _ = up_to.shutdown(std::net::Shutdown::Write);
            });
            let (mut from, mut to) = (server, client);
            std::thread::spawn(move || {
                // Bytes held back until the header they may start is whole.
                let mut held: Vec<u8> = Vec::new();
                let mut buf = vec![0u8; 1 << 16];
                while let Ok(n @ 1..) = from.read(&mut buf) {
                    held.extend_from_slice(&buf[..n]);
                    let lower = held.to_ascii_lowercase();
                    let mut at = 0;
                    while let Some(i) = find(&lower[at..], b"\r\netag: \"") {
                        let digit = at + i + 9 + 31;
                        if digit >= held.len() {
                            break;
                        }
                        held[digit] = if held[digit] == b'0' { b'1' } else { b'0' };
                        at = digit;
                    }
                    // Keep back only an ETag header not yet whole at the end (a "\r", or a
                    // "\r\netag: \"" and its 32 digits cut short): everything else goes on
                    // at once, so an answer's last bytes are never held back.
                    let lower = held.to_ascii_lowercase();
                    let needle = b"\r\netag: \"";
                    let cut = match lower[at..].iter().rposition(|&b| b == b'\r') {
                        Some(i) => {
                            let tail = &lower[at + i..];
                            // A "\r\n" right after a "\r\n" ends the headers: none follows.
                            let ends_headers = lower[..at + i].ends_with(b"\r\n");
                            let partial = !ends_headers
                                && ((tail.len() < needle.len() && needle.starts_with(tail))
                                    || (tail.starts_with(needle)
                                        && tail.len() < needle.len() + 32));
                            if partial {
                                at + i
                            } else {
                                held.len()
                            }
                        }
                        None => held.len(),
                    };
                    let send = cut;
                    if to.write_all(&held[..send]).is_err() {
                        return;
                    }
                    held.drain(..send);
                }
                let _ = to.write_all(&held);
                let _ = to.shutdown(std::net::Shutdown::Write);
            });
        }
    });
    url
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn a_put_answered_with_wrong_etags_fails_the_run_with_exit_3() {
    let root = tempfile::tempdir().unwrap();
    let server = common::iobm_serve_with(root.path(), "etagkey", "etagsecret");
    let url = wrong_etags(&server.url);
    let parent = tempfile::tempdir().unwrap();
    let json = parent.path().join("p.json");
    let out = iobm()
        .args(["s3", "put", "--verify", "--ops", "8", "--obj-size", "64KiB"])
        .args(["--endpoint", &url, "--json"])
        .arg(&json)
        .env("AWS_ACCESS_KEY_ID", "etagkey")
        .env("AWS_SECRET_ACCESS_KEY", "etagsecret")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let result = common::load(&json);
    let errors = result["phases"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["kind"], "bad data");
    assert_eq!(errors[0]["count"], 8, "every PUT's ETag was wrong");
    assert!(
        errors[0]["first"]
            .as_str()
            .unwrap()
            .contains("not the MD5 of what was sent"),
        "{errors:?}"
    );
    // Straight to the gateway, the same PUTs are right.
    let ok = iobm()
        .args(["s3", "put", "--verify", "--ops", "8", "--obj-size", "64KiB"])
        .args(["--endpoint", &server.url])
        .env("AWS_ACCESS_KEY_ID", "etagkey")
        .env("AWS_SECRET_ACCESS_KEY", "etagsecret")
        .output()
        .unwrap();
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
}
