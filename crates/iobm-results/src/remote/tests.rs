//! Unit tests of the verdict's and the warnings' rules from beyond the client.

use super::*;
use crate::checks::tests::{phase, MIB, RAM};
use crate::verdict::{verdict, DROPPED_NOTE};
use crate::Verdict;
use crate::{NicIo, OperationResult};
use iobm_stats::names::{FsyncPolicy, OpName};

/// A network file system's client with this much RAM.
fn nfs() -> Machine {
    Machine {
        network_fs: true,
        ..Machine::with_ram(RAM)
    }
}

/// node_exporter's evidence of one server whose data devices read and wrote this much.
fn node(read: u64, written: u64) -> ServerEvidence {
    ServerEvidence {
        endpoint: "http://srv:9100/metrics".into(),
        source: NODE_EXPORTER.into(),
        device_read_bytes: Some(read),
        device_written_bytes: Some(written),
        device: Some("vda".into()),
        memory_bytes: Some(64 << 30),
        page_cache_before_bytes: Some(1 << 30),
        page_cache_after_bytes: Some((1 << 30) + 180 * MIB),
        cpu_busy_s: Some(0.2),
        cpu_all_s: Some(2.0),
        ..ServerEvidence::default()
    }
}

fn nic(received: u64, sent: u64) -> NicIo {
    NicIo {
        host: "h".into(),
        nic: "eth0".into(),
        received_bytes: received,
        sent_bytes: sent,
        towards_storage: true,
    }
}

/// A read of 200 MiB in one second by two workers of host "h".
fn read() -> PhaseResult {
    phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2])
}

#[test]
fn the_servers_devices_against_what_was_read_decide_a_network_read() {
    let mut p = read();
    p.cache.servers = vec![node(12 * MIB, 0)];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Cached);
    assert_eq!(
        v.evidence,
        "the servers' devices (srv: vda) read 12.00 MiB of the 200.00 MiB served (6.0%): served by their caches"
    );
    p.cache.servers = vec![node(100 * MIB, 0)];
    assert_eq!(verdict(&p, &nfs()).verdict, Verdict::PartlyCached);
    p.cache.servers = vec![node(200 * MIB, 0)];
    let v = verdict(&p, &nfs());
    assert_eq!(
        (v.verdict.clone(), v.evidence.contains("(100.0%)")),
        (Verdict::Uncached, true),
        "{v:?}"
    );
    // Two servers' devices add up.
    p.cache.servers = vec![node(100 * MIB, 0), node(90 * MIB, 0)];
    assert_eq!(verdict(&p, &nfs()).verdict, Verdict::Uncached);
    // More than the phase read: other I/O, which proves nothing; no share above 100%.
    p.cache.servers = vec![node(400 * MIB, 0)];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Unknown);
    assert!(
        v.evidence.starts_with("other I/O ran on the servers' devices (srv: vda): they read 400.00 MiB during the phase, 200.00 MiB more than the 200.00 MiB served"),
        "{}",
        v.evidence
    );
    assert!(!v.evidence.contains('%'), "{}", v.evidence);
    let w = crate::checks::phase_warnings(&p, &nfs());
    assert!(
        w.contains(&"other I/O ran on the servers' devices: they read 400.00 MiB during the phase for the 200.00 MiB served; their counters are not this phase's evidence".to_string()),
        "{w:?}"
    );
    // Only on a network file system: a local one's own device is its evidence.
    p.cache.servers = vec![node(12 * MIB, 0)];
    assert!(!verdict(&p, &Machine::with_ram(RAM))
        .evidence
        .contains("servers' devices"));
}

#[test]
fn a_server_that_did_not_answer_is_no_evidence_and_is_said() {
    let mut p = read();
    p.cache.servers = vec![ServerEvidence {
        unavailable: Some("after the phase: Connection refused (os error 111)".into()),
        ..node(12 * MIB, 0)
    }];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::PossiblyCached, "{v:?}");
    // Its memory is not taken either: the guess from this client's RAM stands.
    assert!(
        v.evidence.contains("assumed twice this client's RAM"),
        "{}",
        v.evidence
    );
    let w = crate::checks::phase_warnings(&p, &nfs());
    assert!(
        w.contains(&"server evidence unavailable: http://srv:9100/metrics did not answer after the phase: Connection refused (os error 111)".to_string()),
        "{w:?}"
    );
    assert!(
        w.iter().any(|w| w.starts_with("possible server cache")),
        "{w:?}"
    );
}

#[test]
fn the_servers_memory_replaces_the_guess() {
    let mut p = read();
    p.settings.direct = true;
    // node_exporter answered but has no device counters (a server without disks here).
    p.cache.servers = vec![ServerEvidence {
        device_read_bytes: None,
        device_written_bytes: None,
        device: None,
        ..node(0, 0)
    }];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::PossiblyCached);
    assert!(
        v.evidence.contains("(64.00 GiB, node_exporter's MemTotal)"),
        "{}",
        v.evidence
    );
    // A data set over that memory is not downgraded.
    p.settings.data_bytes = 65 << 30;
    assert_eq!(verdict(&p, &nfs()).verdict, Verdict::Uncached);
}

#[test]
fn dropped_server_caches_cannot_have_served_the_read() {
    let mut p = read();
    p.settings.direct = true;
    assert_eq!(verdict(&p, &nfs()).verdict, Verdict::PossiblyCached);
    p.settings.cache_dropped = "servers".to_string().try_into().unwrap();
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Uncached);
    assert!(v.evidence.ends_with(DROPPED_NOTE), "{}", v.evidence);
    assert!(!crate::checks::phase_warnings(&p, &nfs())
        .iter()
        .any(|w| w.starts_with("possible server cache")));
    // With the servers' devices it is said beside their evidence.
    p.settings.cache_dropped = "files+servers".to_string().try_into().unwrap();
    p.cache.servers = vec![node(200 * MIB, 0)];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Uncached);
    assert!(
        v.evidence
            .ends_with("their caches were dropped before the phase (--server-drop-cmd)"),
        "{}",
        v.evidence
    );
}

#[test]
fn the_wire_shows_the_clients_own_cache() {
    let mut p = read();
    p.cache.servers = vec![node(200 * MIB, 0)];
    p.cache.wire = vec![nic(12 * MIB, MIB)];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Cached);
    assert_eq!(
        v.evidence,
        "the client received 12.00 MiB over eth0 for the 200.00 MiB read (6%): the client's cache served the rest"
    );
    assert!(crate::checks::phase_warnings(&p, &nfs())
        .iter()
        .any(|w| w.starts_with("cache effect: the client received 12.00 MiB over eth0")));
    // Most of it crossed: the servers' devices decide, the wire is said beside them.
    p.cache.wire = vec![nic(205 * MIB, MIB)];
    let v = verdict(&p, &nfs());
    assert_eq!(v.verdict, Verdict::Uncached);
    assert!(
        v.evidence
            .ends_with("; the client received 205.00 MiB over eth0"),
        "{}",
        v.evidence
    );
    // Interfaces not towards the storage are not evidence.
    p.cache.wire = vec![NicIo {
        towards_storage: false,
        ..nic(0, 0)
    }];
    assert_eq!(verdict(&p, &nfs()).verdict, Verdict::Uncached);
    // Writes: what was sent.
    let mut w = phase(OpName::Write, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    w.cache.wire = vec![nic(MIB, 20 * MIB)];
    let v = verdict(&w, &nfs());
    assert_eq!(v.verdict, Verdict::Cached);
    assert!(v.evidence.starts_with("sent 20.00 MiB over eth0 for the 200.00 MiB written (10%): the rest is in the client's cache"), "{}", v.evidence);
}

#[test]
fn writes_the_servers_devices_did_not_take_are_in_their_caches() {
    let mut w = phase(OpName::Write, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    w.settings.fsync = FsyncPolicy::End;
    w.cache.servers = vec![node(0, 20 * MIB)];
    let v = verdict(&w, &nfs());
    assert_eq!(v.verdict, Verdict::Cached);
    assert_eq!(
        v.evidence,
        "the servers' devices (srv: vda) wrote 20.00 MiB of the 200.00 MiB written (10.0%): the rest is in their caches (their page cache grew by 180.00 MiB)"
    );
    assert!(crate::checks::phase_warnings(&w, &nfs())
        .iter()
        .any(|w| w.starts_with("cache effect: the servers' devices wrote 20.00 MiB")));
    // Three times what was written: replication, or other I/O; which cannot be told, so
    // the share is never printed above 100% nor called uncached.
    w.cache.servers = vec![node(0, 600 * MIB)];
    let v = verdict(&w, &nfs());
    assert_eq!(v.verdict, Verdict::Unknown);
    assert_eq!(
        v.evidence,
        "other I/O ran on the servers' devices (srv: vda): they wrote 600.00 MiB during the phase, 400.00 MiB more than the 200.00 MiB written (or a mirror's copies, parity), so this phase's share cannot be told"
    );
}

#[test]
fn a_rate_above_the_line_rate_of_one_client_is_a_cache_on_its_side() {
    let mut p = read();
    p.cache.servers = vec![node(200 * MIB, 0)];
    let line = |mib: u64| Machine {
        line_rate_bytes_per_s: Some(mib * MIB),
        ..nfs()
    };
    let v = verdict(&p, &line(100));
    assert_eq!(v.verdict, Verdict::Cached);
    assert_eq!(
        v.evidence,
        "h read 200.00 MiB/s, above the line rate of 100.00 MiB/s: the client's cache served it"
    );
    assert!(crate::checks::phase_warnings(&p, &line(100))
        .iter()
        .any(|w| w.starts_with("impossible over the network: h moved 200.00 MiB/s")));
    assert_eq!(verdict(&p, &line(300)).verdict, Verdict::Uncached);
    // Two clients of 100 MiB/s each: each within its own link of 150 MiB/s.
    p.workers[1].host = "other".into();
    assert_eq!(verdict(&p, &line(150)).verdict, Verdict::Uncached);
    assert!(!crate::checks::phase_warnings(&p, &line(150))
        .iter()
        .any(|w| w.starts_with("impossible over the network")));
    let mut w = phase(OpName::Write, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    w.settings.fsync = FsyncPolicy::End;
    assert!(verdict(&w, &line(100))
        .evidence
        .ends_with("the client's cache took the writes"));
}

#[test]
fn a_server_cpu_that_is_all_busy_bounded_the_phase() {
    let mut p = read();
    p.cache.servers = vec![ServerEvidence {
        cpu_busy_s: Some(1.94),
        cpu_all_s: Some(2.0),
        ..node(200 * MIB, 0)
    }];
    let w = crate::checks::phase_warnings(&p, &nfs());
    assert!(
        w.contains(&"bounded by the server's CPU: server CPU (http://srv:9100/metrics) was 97% busy over the phase: the server, not its storage, bounded this".to_string()),
        "{w:?}"
    );
    p.cache.servers[0].cpu_busy_s = Some(1.7);
    assert!(!crate::checks::phase_warnings(&p, &nfs())
        .iter()
        .any(|w| w.starts_with("bounded by the server's CPU")));
}

#[test]
fn a_foreign_s3_servers_devices_judge_its_gets_and_puts() {
    let mut get = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    let op = |op: OpName, bytes| OperationResult {
        op,
        ops: 200,
        bytes,
        errors: 0,
        retried: 0,
        keys: 0,
        ops_per_s: 200.0,
        bytes_per_s: bytes as f64,
        latency: get.latency.clone(),
        ttfb: None,
        series: None,
    };
    get.operations = vec![op(OpName::Get, 200 * MIB)];
    get.settings.data_bytes = 200 * MIB;
    let machine = Machine::with_ram(RAM);
    get.cache.servers = vec![node(0, 0)];
    let v = verdict(&get, &machine);
    assert_eq!(v.verdict, Verdict::Cached);
    assert!(v.evidence.starts_with("the servers' devices (srv: vda) read 0 B of the 200.00 MiB served (0.0%): served by their caches; for an uncached figure:"), "{}", v.evidence);
    assert!(v.evidence.contains("--server-drop-cmd"), "{}", v.evidence);
    get.cache.servers = vec![node(199 * MIB, 0)];
    assert_eq!(verdict(&get, &machine).verdict, Verdict::Uncached);
    // No guesses from sizes or PUT rates once the server told.
    let fast_puts = Machine {
        put_bytes_per_s: Some(MIB as f64),
        ..machine
    };
    assert!(!crate::checks::phase_warnings(&get, &fast_puts)
        .iter()
        .any(|w| w.starts_with("possible cache effect")));
    let mut put = get.clone();
    put.op = OpName::Put;
    put.operations = vec![op(OpName::Put, 200 * MIB)];
    put.cache.servers = vec![node(0, 200 * MIB)];
    assert_eq!(verdict(&put, &machine).verdict, Verdict::Uncached);
    put.cache.servers = vec![node(0, 0)];
    assert_eq!(verdict(&put, &machine).verdict, Verdict::Cached);
    // A gateway's own counters still come first.
    get.cache.servers = vec![
        node(0, 0),
        ServerEvidence {
            endpoint: "http://srv:9000".into(),
            served_bytes: 200 * MIB,
            device_read_bytes: Some(200 * MIB),
            ..ServerEvidence::default()
        },
    ];
    let v = verdict(&get, &machine);
    assert_eq!(v.verdict, Verdict::Uncached);
    // Its storage's bytes are its own, not node_exporter's added in.
    assert!(
        v.evidence
            .contains("its storage read 200.00 MiB (100% of it)"),
        "{}",
        v.evidence
    );
}
