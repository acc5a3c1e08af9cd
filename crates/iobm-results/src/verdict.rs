//! The cache verdict of a phase (uncached, partly cached, cached, possibly cached, memory or
//! unknown) with its evidence in one line, from the best evidence the document holds: a
//! gateway's own counters, the block device's, O_DIRECT or the flush policy, page-cache
//! residency, then the data set against the memory that could hold it.

use crate::checks::{pct, Machine};
use crate::storage::share_text;
use crate::{CacheVerdict, PhaseResult, Verdict};
use iobm_stats::format_bytes;
use iobm_stats::names::ops;
use iobm_stats::names::FsyncPolicy;

/// Shares at or above this say "uncached" (or "cached"), below it "partly cached".
pub const MOST: f64 = 90.0;

pub(crate) fn by_share(share_from_storage: f64) -> Verdict {
    if share_from_storage >= MOST {
        Verdict::Uncached
    } else if share_from_storage <= 100.0 - MOST {
        Verdict::Cached
    } else {
        Verdict::PartlyCached
    }
}

fn judged(verdict: Verdict, evidence: String) -> CacheVerdict {
    CacheVerdict { verdict, evidence }
}

/// Whether the phase's rate is the storage's or a cache's, from the best evidence it has: a
/// gateway's own counters, then the block device's, then O_DIRECT or the flush policy, then
/// page-cache residency, then the data set against the memory that could hold it.
pub fn verdict(phase: &PhaseResult, machine: &Machine) -> CacheVerdict {
    let moved = phase.bytes();
    let s = &phase.settings;
    if machine.memory_fs {
        return judged(
            Verdict::Memory,
            "the storage is RAM (tmpfs or ramfs): every rate is a memory rate, O_DIRECT or not"
                .into(),
        );
    }
    if let Some(v) = machine
        .meta_made_by
        .and_then(|made| crate::metadata::verdict(phase, made))
    {
        return v;
    }
    if moved == 0 {
        return judged(
            Verdict::Unknown,
            format!("no data moved ({} operations)", phase.op),
        );
    }
    let op = phase.op.as_str();
    let object = matches!(
        op,
        ops::PUT | ops::GET | ops::HEAD | ops::LIST | ops::MULTIPART | ops::MIXED
    ) || (op == ops::DELETE && !phase.operations.is_empty());
    if object {
        return object_verdict(phase, machine);
    }
    let writes = matches!(op, ops::WRITE | ops::PUTC);
    let reads = matches!(
        op,
        ops::READ | ops::GETC | ops::SEEK | ops::REWRITE | ops::READWRITE
    );
    if !writes && !reads {
        return judged(
            Verdict::Unknown,
            "metadata operations: their caching (dentries, inodes) is not measured".into(),
        );
    }
    // Beyond the client: the line rate, the wire, the servers' own counters.
    if machine.network_fs {
        if let Some(v) = crate::remote::file_verdict(phase, machine) {
            return v;
        }
    }
    // The counters that are this run's evidence, and what the layers below say.
    let storage = crate::storage::judge(phase);
    if let Some(mut v) = storage.verdict.clone() {
        v.evidence.push_str(&storage.note);
        return v;
    }
    let dev = storage.device.as_ref();
    let servers_dropped = crate::remote::servers_dropped(phase);
    let server = crate::remote::server_memory(phase, machine)
        .filter(|&(ram, _)| s.data_bytes > 0 && s.data_bytes < ram && !servers_dropped);
    let server_note = |(ram, source): (u64, &str)| {
        format!(
            "; the data set ({}) fits in the server's memory ({}, {source}), so its cache may have served it",
            format_bytes(s.data_bytes),
            format_bytes(ram)
        )
    };
    if writes {
        let mut v = match dev {
            Some(d) => {
                let share = pct(d.written_bytes, moved);
                judged(
                    by_share(share),
                    format!(
                        "the block device {} took {} of the {} written during the phase ({})",
                        d.device,
                        format_bytes(d.written_bytes),
                        format_bytes(moved),
                        share_text(d.written_bytes, moved)
                    ),
                )
            }
            None if s.direct => judged(Verdict::Uncached, "O_DIRECT writes bypass the page cache (no device counters to confirm)".into()),
            None if s.fsync == FsyncPolicy::Each => judged(Verdict::Uncached, "every write was followed by fsync inside its time (no device counters to confirm)".into()),
            None if s.fsync == FsyncPolicy::End => judged(Verdict::Uncached, "each worker's final fsync is inside its time and the makespan (no device counters to confirm)".into()),
            None => judged(Verdict::PossiblyCached, "without fsync or O_DIRECT the written data may still be in the page cache when the phase ends (no device counters)".into()),
        };
        v.evidence.push_str(&storage.note);
        return v;
    }
    let mut v = if let (Some(d), ops::READWRITE) = (dev, op) {
        // Reads and writes judged apart; the verdict is the more cached of the two.
        let of = |name: &str| {
            phase
                .operations
                .iter()
                .filter(|o| o.op == name)
                .map(|o| o.bytes)
                .sum::<u64>()
        };
        let (read, written) = (of(ops::READ), of(ops::WRITE));
        let shares = [
            (read > 0).then(|| pct(d.read_bytes, read)),
            (written > 0).then(|| pct(d.written_bytes, written)),
        ];
        let least = shares.iter().flatten().fold(f64::MAX, |a, &b| a.min(b));
        judged(
            by_share(least),
            format!(
                "the block device {} delivered {} of the {} read ({}) and took {} of the {} written ({})",
                d.device,
                format_bytes(d.read_bytes),
                format_bytes(read),
                share_text(d.read_bytes, read),
                format_bytes(d.written_bytes),
                format_bytes(written),
                share_text(d.written_bytes, written)
            ),
        )
    } else if let (Some(d), ops::REWRITE) = (dev, op) {
        // Each block is read, then written back: both halves count, neither for more than
        // its own (readahead does not make up for writes left in the page cache).
        let both = d.read_bytes.min(moved) + d.written_bytes.min(moved);
        judged(
            by_share(pct(both, 2 * moved)),
            format!(
                "the block device {} delivered {} and took {} of the {} read and written back ({})",
                d.device,
                format_bytes(d.read_bytes),
                format_bytes(d.written_bytes),
                format_bytes(moved),
                share_text(both, 2 * moved)
            ),
        )
    } else if let Some(d) = dev {
        let share = pct(d.read_bytes, moved);
        judged(
            by_share(share),
            format!(
                "the block device {} delivered {} of the {} read ({})",
                d.device,
                format_bytes(d.read_bytes),
                format_bytes(moved),
                share_text(d.read_bytes, moved)
            ),
        )
    } else if s.direct {
        judged(
            Verdict::Uncached,
            "O_DIRECT reads bypass this machine's page cache (no device counters to confirm)"
                .into(),
        )
    } else if let Some(resident) = phase.cache.resident_before_bytes {
        let share = pct(resident, s.data_bytes);
        judged(
            by_share(100.0 - share),
            format!(
                "{share:.0}% of the data ({} of {}) was in the page cache when the phase began (no device counters)",
                format_bytes(resident),
                format_bytes(s.data_bytes)
            ),
        )
    } else if s.data_bytes >= 2 * machine.ram_bytes {
        judged(
            Verdict::Uncached,
            format!(
                "the data set ({}) is over twice the RAM ({}): most of it cannot be in the page cache",
                format_bytes(s.data_bytes),
                format_bytes(machine.ram_bytes)
            ),
        )
    } else {
        judged(
            Verdict::PossiblyCached,
            format!(
                "the data set ({}) fits in the page cache (RAM {}) and nothing tells where the bytes came from",
                format_bytes(s.data_bytes),
                format_bytes(machine.ram_bytes)
            ),
        )
    };
    v.evidence.push_str(&storage.note);
    if let Some(server) = server {
        if v.verdict == Verdict::Uncached {
            v.verdict = Verdict::PossiblyCached;
        }
        v.evidence.push_str(&server_note(server));
    }
    if servers_dropped {
        v.evidence.push_str(crate::remote::DROPPED_NOTE);
    }
    v
}

/// The verdict of an object phase, with what would give an uncached figure where its GETs
/// may have read a cache.
fn object_verdict(phase: &PhaseResult, machine: &Machine) -> CacheVerdict {
    let mut v = object_evidence(phase, machine);
    let reads = phase
        .operations
        .iter()
        .any(|o| o.op == ops::GET && o.bytes > 0);
    if reads && v.verdict.maybe_cached() {
        v.evidence.push_str(&uncached_advice(phase, machine));
    }
    v
}

/// The ways to an uncached GET figure on this set-up: a data set no server cache holds, a kept
/// data set read after the server's cache was dropped, the built-in gateway's `--drop-caches`.
pub fn uncached_advice(phase: &PhaseResult, machine: &Machine) -> String {
    let data = phase.settings.data_bytes;
    let here = phase.cache.servers.iter().any(|e| e.same_host);
    let ram = crate::remote::server_memory(phase, machine)
        .map(|(ram, _)| ram)
        .or(here.then_some(machine.ram_bytes));
    let mut ways = Vec::new();
    if machine.builtin_gateway && !phase.settings.drop_cache {
        ways.push(
            "--drop-caches (the built-in gateway's page cache is this machine's)".to_string(),
        );
    }
    match ram {
        Some(ram) if data < ram => ways.push(format!(
            "a data set larger than the server's RAM ({}; this one is {})",
            format_bytes(ram),
            format_bytes(data)
        )),
        Some(_) => {}
        None => ways.push(
            "a data set larger than the server's RAM (state it with --server-ram)".to_string(),
        ),
    }
    if !crate::remote::servers_dropped(phase) && !machine.builtin_gateway {
        ways.push("--server-drop-cmd CMD to drop the server's caches after the upload, just before the GETs".to_string());
    }
    ways.push(if machine.reused_data_set {
        "the server's page cache dropped just before reading the kept data set again (it was still cached)".to_string()
    } else {
        "keeping a data set (iobm s3 put --keep), dropping the server's page cache (sync; echo 3 > /proc/sys/vm/drop_caches on the server), then reading it with --reuse PREFIX: this run uploaded its data set just before reading it, so dropping caches before the run cannot help".to_string()
    });
    format!("; for an uncached figure: {}", ways.join("; or "))
}

/// An object phase's verdict and its evidence: the gateways' own counters, else what the
/// network and the server's memory allow.
fn object_evidence(phase: &PhaseResult, machine: &Machine) -> CacheVerdict {
    let servers = &phase.cache.servers;
    let get_bytes: u64 = phase
        .operations
        .iter()
        .filter(|o| o.op == ops::GET)
        .map(|o| o.bytes)
        .sum();
    let served: u64 = servers.iter().map(|e| e.served_bytes).sum();
    let received: u64 = servers.iter().map(|e| e.received_bytes).sum();
    // Several gateways of one host on one device each count all of its bytes: once.
    let device = |f: fn(&crate::ServerEvidence) -> Option<u64>| -> Option<u64> {
        let mut seen: Vec<(&str, &str)> = Vec::new();
        let mut total = Some(0u64);
        for e in servers.iter().filter(|e| crate::remote::is_gateway(e)) {
            let host = e.endpoint.split("://").nth(1).unwrap_or(&e.endpoint);
            let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
            let key = (host, e.device.as_deref().unwrap_or(""));
            if e.device.is_some() && seen.contains(&key) {
                continue;
            }
            seen.push(key);
            total = total.zip(f(e)).map(|(a, b)| a + b);
        }
        total
    };
    if served > 0 {
        let resident: u64 = servers.iter().map(|e| e.resident_bytes).sum();
        let from_storage = 100.0 - pct(resident, served);
        let device_read = device(|e| e.device_read_bytes).map_or(String::new(), |d| {
            format!(
                "; its storage read {} ({:.0}% of it)",
                format_bytes(d),
                pct(d, served)
            )
        });
        let data = phase.settings.data_bytes;
        let passes = if data > 0 && get_bytes > 0 {
            format!(
                "; the GETs read the data set ({}) {:.1} times over",
                format_bytes(data),
                get_bytes as f64 / data as f64
            )
        } else {
            String::new()
        };
        return judged(
            by_share(from_storage),
            format!(
                "the gateway served {}: {:.0}% was in its page cache before it read it{device_read}{passes}",
                format_bytes(served),
                pct(resident, served)
            ),
        );
    }
    if received > 0 && get_bytes == 0 {
        return match device(|e| e.device_written_bytes) {
            Some(written) => judged(
                by_share(pct(written, received)),
                format!(
                    "the gateway received {}; its storage wrote {} during the phase ({:.0}%), the rest was still in its page cache",
                    format_bytes(received),
                    format_bytes(written),
                    pct(written, received)
                ),
            ),
            None => judged(
                Verdict::PossiblyCached,
                format!(
                    "the gateway received {}; it has no device counters (tmpfs or a network file system)",
                    format_bytes(received)
                ),
            ),
        };
    }
    // A foreign server's own counters (node_exporter), or the wire.
    if let Some(v) = crate::remote::beyond_verdict(phase) {
        return v;
    }
    if get_bytes == 0 {
        return judged(
            Verdict::Unknown,
            "a foreign S3 server's write-back caches cannot be seen from the client".into(),
        );
    }
    let seconds = phase.end_ns.saturating_sub(phase.start_ns) as f64 / 1e9;
    let rate = if seconds > 0.0 {
        get_bytes as f64 / seconds
    } else {
        0.0
    };
    let data = phase.settings.data_bytes;
    if let Some(line) = machine.line_rate_bytes_per_s.filter(|&l| rate > l as f64) {
        return judged(
            Verdict::Cached,
            format!(
                "the GETs moved {}/s, above the line rate of {}/s: a cache on this side of the network served them",
                format_bytes(rate as u64),
                format_bytes(line)
            ),
        );
    }
    if data > 0 && get_bytes > 2 * data {
        return judged(
            Verdict::PossiblyCached,
            format!(
                "the GETs read the data set ({}) {:.1} times over; a server's caches can hold it",
                format_bytes(data),
                get_bytes as f64 / data as f64
            ),
        );
    }
    if let Some((ram, source)) = machine
        .server_cache()
        .filter(|&(ram, _)| data > 0 && data < ram)
    {
        return judged(
            Verdict::PossiblyCached,
            format!(
                "the data set ({}) fits in the server's memory ({}, {source})",
                format_bytes(data),
                format_bytes(ram)
            ),
        );
    }
    let why = if machine.builtin_gateway {
        "the built-in gateway's counters are not in this document"
    } else {
        "the server is not an iobm gateway, so where its bytes came from cannot be seen; state --server-ram or --line-rate"
    };
    judged(Verdict::Unknown, why.into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, says, MIB, RAM};
    use crate::{DeviceIo, OperationResult};

    fn verdict_of(p: &PhaseResult, machine: &Machine) -> Verdict {
        verdict(p, machine).verdict
    }

    #[test]
    fn the_verdict_follows_the_best_evidence() {
        let mut read = phase("read", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        let machine = Machine::with_ram(RAM);
        // Nothing but a data set that fits in RAM.
        assert_eq!(verdict_of(&read, &machine), Verdict::PossiblyCached);
        assert_eq!(
            verdict_of(&read, &Machine::with_ram(50 * MIB)),
            Verdict::Uncached
        );
        read.cache.resident_before_bytes = Some(190 * MIB);
        assert_eq!(verdict_of(&read, &machine), Verdict::Cached);
        read.cache.resident_before_bytes = Some(100 * MIB);
        assert_eq!(verdict_of(&read, &machine), Verdict::PartlyCached);
        // The device's counters outrank residency.
        for (device_read, expected) in [
            (200, Verdict::Uncached),
            (100, Verdict::PartlyCached),
            (0, Verdict::Cached),
        ] {
            read.cache.device = Some(DeviceIo {
                device: "8:0".into(),
                read_bytes: device_read * MIB,
                written_bytes: 0,
            });
            assert_eq!(verdict_of(&read, &machine), expected);
        }
        // A network file system's server may hold what the client's device never saw.
        let nfs = Machine {
            network_fs: true,
            ..Machine::with_ram(RAM)
        };
        read.cache.device = None;
        read.settings.direct = true;
        assert_eq!(
            verdict_of(&read, &Machine::with_ram(RAM)),
            Verdict::Uncached
        );
        let v = verdict(&read, &nfs);
        assert_eq!(v.verdict, Verdict::PossiblyCached);
        assert!(v.evidence.contains("server's memory"), "{}", v.evidence);
        // Memory is memory, writes and reads, O_DIRECT or not.
        let memory = Machine {
            memory_fs: true,
            ..Machine::with_ram(RAM)
        };
        assert_eq!(verdict_of(&read, &memory), Verdict::Memory);
        let mut write = phase("write", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        assert_eq!(verdict_of(&write, &memory), Verdict::Memory);
        assert_eq!(verdict_of(&write, &machine), Verdict::PossiblyCached);
        write.settings.fsync = FsyncPolicy::End;
        assert_eq!(verdict_of(&write, &machine), Verdict::Uncached);
        let meta = phase("create", [0, 0], [1_000_000_000; 2]);
        assert_eq!(verdict_of(&meta, &machine), Verdict::Unknown);
    }

    #[test]
    fn an_object_phases_verdict_is_the_gateways_word_else_the_networks() {
        let mut get = phase("get", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        get.operations = vec![OperationResult {
            op: "get".into(),
            ops: 200,
            bytes: 200 * MIB,
            errors: 0,
            retried: 0,
            keys: 0,
            ops_per_s: 200.0,
            bytes_per_s: 200.0 * MIB as f64,
            latency: get.latency.clone(),
            ttfb: None,
            series: None,
        }];
        get.settings.data_bytes = 1 << 40;
        let machine = Machine::with_ram(RAM);
        assert_eq!(verdict_of(&get, &machine), Verdict::Unknown);
        // 200 MiB/s of GETs against PUTs of 10 MiB/s and of 100 MiB/s.
        let times_put = |put: u64| Machine {
            put_bytes_per_s: Some((put * MIB) as f64),
            ..machine
        };
        assert!(says(
            &get,
            &times_put(10),
            "possible cache effect: the GETs moved 200.00 MiB/s, 20.0 times"
        ));
        assert!(!says(&get, &times_put(100), "possible cache effect"));
        let slow_line = Machine {
            line_rate_bytes_per_s: Some(MIB),
            ..machine
        };
        assert_eq!(verdict_of(&get, &slow_line), Verdict::Cached);
        let served = |resident| crate::ServerEvidence {
            endpoint: "http://h:9000".into(),
            served_bytes: 100 * MIB,
            resident_bytes: resident,
            received_bytes: 0,
            device_read_bytes: Some(100 * MIB - resident),
            device_written_bytes: Some(0),
            device: Some("8:0".into()),
            cpu_s: 1.0,
            same_host: false,
            ..crate::ServerEvidence::default()
        };
        get.cache.servers = vec![served(100 * MIB), served(90 * MIB)];
        let v = verdict(&get, &slow_line);
        assert_eq!(v.verdict, Verdict::Cached);
        assert!(
            v.evidence.starts_with("the gateway served 200.00 MiB: 95%"),
            "{}",
            v.evidence
        );
        // Two gateways of one host on one device: its bytes counted once.
        assert!(
            v.evidence.contains("its storage read 0 B"),
            "{}",
            v.evidence
        );
        get.cache.servers = vec![served(0), served(MIB)];
        assert_eq!(verdict_of(&get, &machine), Verdict::Uncached);
        assert!(!says(&get, &machine, "cache effect"));
    }
}
