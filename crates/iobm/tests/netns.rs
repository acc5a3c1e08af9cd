//! Two hosts on one machine: an `iobm serve` in one network namespace, `iobm s3` clients in
//! another, joined by a veth pair, each side with an address of its own and no other route.
//! Needs root (marked ignored: `scripts/test` runs it as root, as CI does, and counts it
//! skipped otherwise).

mod common;

use common::{load, u};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY: &str = "AKIOBMNETNS";
const SECRET: &str = "iobmnetnssecretiobmnetnssecret";

/// Two namespaces joined by a veth pair, removed when dropped.
struct Hosts {
    server: String,
    client: String,
}

fn ip(args: &[&str]) {
    let status = Command::new("ip").args(args).status().expect("ip runs");
    assert!(status.success(), "ip {}", args.join(" "));
}

impl Hosts {
    fn new() -> Hosts {
        common::assert_root("this test makes network namespaces and needs root");
        let id = std::process::id() % 100_000;
        let hosts = Hosts {
            server: format!("iobm-s{id}"),
            client: format!("iobm-c{id}"),
        };
        let (veth_s, veth_c) = (format!("ivs{id}"), format!("ivc{id}"));
        for ns in [&hosts.server, &hosts.client] {
            ip(&["netns", "add", ns]);
            ip(&["-n", ns, "link", "set", "lo", "up"]);
        }
        ip(&[
            "link", "add", &veth_s, "type", "veth", "peer", "name", &veth_c,
        ]);
        for (dev, ns, addr) in [
            (&veth_s, &hosts.server, "10.213.0.1/24"),
            (&veth_c, &hosts.client, "10.213.0.2/24"),
        ] {
            ip(&["link", "set", dev, "netns", ns]);
            ip(&["-n", ns, "addr", "add", addr, "dev", dev]);
            ip(&["-n", ns, "link", "set", dev, "up"]);
        }
        hosts
    }

    /// `iobm ARGS` in namespace `ns`.
    fn iobm(&self, ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(assert_cmd::cargo::cargo_bin("iobm"))
            .args(args)
            .env("AWS_ACCESS_KEY_ID", KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET)
            .env_remove("AWS_ENDPOINT_URL");
        c
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in [&self.server, &self.client] {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs root: network namespaces (scripts/test runs it as root)"]
fn a_gateway_and_its_clients_on_two_hosts() {
    let hosts = Hosts::new();
    let dir = tempfile::tempdir().unwrap();
    let listen = "10.213.0.1:9000";
    let _server = Killed(
        hosts
            .iobm(
                &hosts.server,
                &["serve", dir.path().to_str().unwrap(), "--listen", listen],
            )
            .args(["--access-key", KEY, "--secret-key", SECRET])
            .stdout(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("http://{listen}");
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("put.json");
    // The server listens (its socket in LISTEN in its own namespace's table, port 9000 =
    // 0x2328) before the client runs once: a failure of that one run fails the test.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let table = Command::new("ip")
            .args(["netns", "exec", &hosts.server, "cat", "/proc/net/tcp"])
            .output()
            .unwrap();
        let listening = String::from_utf8_lossy(&table.stdout).lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.len() > 3 && f[1].ends_with(":2328") && f[3] == "0A"
        });
        if listening {
            break;
        }
        assert!(Instant::now() < deadline, "iobm serve never listened");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The client reaches the server's address; nothing else is routed.
    let run = hosts
        .iobm(
            &hosts.client,
            &["s3", "put", "--endpoint", &url, "--ops", "40"],
        )
        .args(["--concurrent", "4", "--obj-size", "64KiB", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let result = load(&json);
    let phase = &result["phases"][0];
    assert_eq!(u(&phase["operations"][0]["ops"]), 40);
    assert_eq!(result["config"]["s3"]["endpoints"][0], url.as_str());
    for w in phase["workers"].as_array().unwrap() {
        assert_eq!(w["endpoint"], url.as_str());
    }
    // The gateway on the other host counted what it received.
    assert_eq!(
        u(&phase["cache"]["servers"][0]["received_bytes"]),
        40 * 65536
    );
    // The client's host has only its own address: the server's loopback is out of reach.
    let local = hosts
        .iobm(
            &hosts.client,
            &["s3", "put", "--endpoint", "http://127.0.0.1:9000"],
        )
        .args(["--ops", "1", "--timeout", "2s"])
        .output()
        .unwrap();
    assert_eq!(local.status.code(), Some(1));
}
