//! A phase's cache evidence in the text report: what was dropped before it, its data set's
//! residency, the block device's counters, the layers below it and this run's own I/O (the
//! `cache:` line), each server's counters and the client's interfaces.

use iobm_results::{Environment, PhaseResult};
use iobm_stats::format_bytes;
use iobm_stats::names::CacheDrop;
use std::fmt::Write;

/// The phase's cache evidence, a line each: `cache:`, one per server, `wire:`.
pub(super) fn render(out: &mut String, phase: &PhaseResult, env: &Environment) {
    let mut cache = Vec::new();
    let dropped = phase.settings.cache_dropped;
    match dropped.client {
        Some(CacheDrop::System) => {
            cache.push("the whole page cache dropped before the phase (as root)".into())
        }
        Some(CacheDrop::Files) => {
            cache.push("the data set's pages dropped before the phase".into())
        }
        Some(CacheDrop::Nothing) | None => {}
    }
    if dropped.servers {
        cache.push("the servers' caches dropped before the phase (--server-drop-cmd)".into());
    }
    if let Some(resident) = phase.cache.resident_before_bytes {
        cache.push(format!(
            "{} of {} in the page cache before the phase",
            format_bytes(resident),
            format_bytes(phase.settings.data_bytes)
        ));
    }
    if let Some(d) = &phase.cache.device {
        cache.push(format!(
            "device {} read {} and wrote {} during the phase",
            d.device,
            format_bytes(d.read_bytes),
            format_bytes(d.written_bytes)
        ));
    }
    cache.extend(below(phase));
    if let Some(own) = phase.cache.own_io {
        cache.push(format!(
            "this run's own I/O read {} and wrote {} (/proc/self/io)",
            format_bytes(own.read_bytes),
            format_bytes(own.written_bytes)
        ));
    }
    if cache.is_empty() && phase.cache.servers.is_empty() {
        cache.push(format!(
            "no page-cache or device counters for this target (RAM {})",
            format_bytes(env.ram_bytes)
        ));
    }
    if !cache.is_empty() {
        let _ = writeln!(out, "  cache: {}", cache.join("; "));
    }
    for e in &phase.cache.servers {
        if let Some(line) = node_line(e) {
            let _ = writeln!(out, "  {line}");
            continue;
        }
        let device = match (e.device_read_bytes, e.device_written_bytes) {
            (Some(r), Some(w)) => format!(
                "its storage read {} and wrote {}",
                format_bytes(r),
                format_bytes(w)
            ),
            _ => "no device counters".to_string(),
        };
        let _ = writeln!(
            out,
            "  gateway {}: served {} ({} in its page cache before), received {}; {device}; {:.2} CPU-s",
            e.endpoint,
            format_bytes(e.served_bytes),
            format_bytes(e.resident_bytes),
            format_bytes(e.received_bytes),
            e.cpu_s
        );
    }
    if let Some(line) = wire_line(&phase.cache.wire) {
        let _ = writeln!(out, "  {line}");
    }
}

/// What the layers below the file system's device showed, when they are more than that device:
/// the devices at the bottom (each host's, named when there are several) and the backing
/// files' residency.
fn below(phase: &PhaseResult) -> Vec<String> {
    let below = &phase.cache.below;
    let several_hosts = below.iter().any(|b| b.host != below[0].host);
    let mut parts = Vec::new();
    for b in below {
        let devices: Vec<String> = b
            .devices
            .iter()
            .filter(|d| d.device != b.top)
            .map(|d| {
                format!(
                    "{} ({}) read {} and wrote {}",
                    d.device,
                    d.name,
                    format_bytes(d.read_bytes),
                    format_bytes(d.written_bytes)
                )
            })
            .collect();
        if !devices.is_empty() {
            let host = if several_hosts {
                format!("{} ", b.host)
            } else {
                String::new()
            };
            parts.push(format!("below {host}{}: {}", b.top, devices.join(", ")));
        }
        for f in &b.backing_files {
            if let Some(r) = f.resident_before_bytes {
                parts.push(format!(
                    "backing file {}: {} of {} in the page cache before the phase",
                    f.path,
                    format_bytes(r),
                    format_bytes(f.size_bytes)
                ));
            }
        }
    }
    parts
}

/// A `--server-metrics` endpoint's line: node_exporter's counters, or why there are none.
/// None for an iobm gateway's counters (their own line).
fn node_line(e: &iobm_results::ServerEvidence) -> Option<String> {
    if let Some(why) = &e.unavailable {
        return Some(format!("server {}: unavailable: {why}", e.endpoint));
    }
    if e.source != iobm_results::server::NODE_EXPORTER {
        return None;
    }
    let mut parts = Vec::new();
    parts.push(
        match (&e.device, e.device_read_bytes, e.device_written_bytes) {
            (Some(d), Some(r), Some(w)) => format!(
                "devices {d} read {} and wrote {}",
                format_bytes(r),
                format_bytes(w)
            ),
            _ => "no data devices".to_string(),
        },
    );
    if let (Some(b), Some(a)) = (e.page_cache_before_bytes, e.page_cache_after_bytes) {
        parts.push(format!(
            "page cache {} to {}",
            format_bytes(b),
            format_bytes(a)
        ));
    }
    if let Some(m) = e.memory_bytes {
        parts.push(format!("memory {}", format_bytes(m)));
    }
    if let (Some(r), Some(s)) = (e.net_received_bytes, e.net_sent_bytes) {
        parts.push(format!(
            "network received {}, sent {}",
            format_bytes(r),
            format_bytes(s)
        ));
    }
    if let (Some(busy), Some(all)) = (e.cpu_busy_s, e.cpu_all_s) {
        if all > 0.0 {
            parts.push(format!("CPU {:.0}% busy", 100.0 * busy / all));
        }
    }
    Some(format!(
        "server {} (node_exporter): {}",
        e.endpoint,
        parts.join("; ")
    ))
}

/// The client's interfaces over the phase, those towards the storage marked.
fn wire_line(wire: &[iobm_results::NicIo]) -> Option<String> {
    if wire.is_empty() {
        return None;
    }
    let several_hosts = wire.iter().any(|n| n.host != wire[0].host);
    let nics: Vec<String> = wire
        .iter()
        .map(|n| {
            format!(
                "{}{} received {}, sent {}{}",
                if several_hosts {
                    format!("{} ", n.host)
                } else {
                    String::new()
                },
                n.nic,
                format_bytes(n.received_bytes),
                format_bytes(n.sent_bytes),
                if n.towards_storage {
                    " (towards the storage)"
                } else {
                    ""
                }
            )
        })
        .collect();
    Some(format!("wire: {}", nics.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_results::storage::{BackingFile, Below, BottomIo, OwnIo};
    use iobm_results::RunResult;

    const MIB: u64 = 1 << 20;

    /// The read phase of a saved stream (8 MiB read, its device 254:0) with this run's own
    /// bytes and the layers below set, and its `cache:` line.
    fn cache_line(below: Vec<Below>) -> String {
        let run: RunResult =
            serde_json::from_str(include_str!("../../../iobm/tests/fixtures/stream.json")).unwrap();
        let mut phase = run.phases[1].clone();
        phase.cache.own_io = Some(OwnIo {
            read_bytes: 6 * MIB,
            written_bytes: 0,
        });
        phase.cache.below = below;
        let mut out = String::new();
        render(&mut out, &phase, &run.environment);
        out.lines()
            .find(|l| l.starts_with("  cache: "))
            .unwrap()
            .to_string()
    }

    fn device(device: &str, name: &str, read_bytes: u64) -> BottomIo {
        BottomIo {
            device: device.into(),
            name: name.into(),
            read_bytes,
            written_bytes: 0,
            virtual_disk: None,
            ram: None,
        }
    }

    #[test]
    fn the_cache_line_shows_the_devices_below_a_loop_device_and_this_runs_own_io() {
        let below = Below {
            host: "h".into(),
            top: "254:0".into(),
            steps: vec!["254:0 (loop0): a loop device over /img/disk.ext4 on 254:1".into()],
            devices: vec![device("254:1", "vda1", MIB)],
            backing_files: vec![BackingFile {
                loop_device: "254:0".into(),
                path: "/img/disk.ext4".into(),
                size_bytes: 64 * MIB,
                resident_before_bytes: Some(7 * MIB),
                ..BackingFile::default()
            }],
            unfollowed: vec![],
        };
        assert_eq!(
            cache_line(vec![below]),
            "  cache: 0 B of 8.00 MiB in the page cache before the phase; device 254:0 read 8.00 MiB and wrote 0 B during the phase; below 254:0: 254:1 (vda1) read 1.00 MiB and wrote 0 B; backing file /img/disk.ext4: 7.00 MiB of 64.00 MiB in the page cache before the phase; this run's own I/O read 6.00 MiB and wrote 0 B (/proc/self/io)"
        );
    }

    #[test]
    fn a_device_that_is_its_own_bottom_is_named_once_and_hosts_only_when_several() {
        let disk = |host: &str| Below {
            host: host.into(),
            top: "254:0".into(),
            devices: vec![device("254:0", "vda", 8 * MIB)],
            ..Below::default()
        };
        let line = cache_line(vec![disk("h")]);
        assert!(!line.contains("below"), "{line}");
        let mut other = disk("h2");
        other.top = "btrfs 0f1e".into();
        other.devices = vec![device("8:16", "sdb", 2 * MIB)];
        let line = cache_line(vec![disk("h"), other]);
        assert!(
            line.contains("; below h2 btrfs 0f1e: 8:16 (sdb) read 2.00 MiB and wrote 0 B; "),
            "{line}"
        );
    }
}
