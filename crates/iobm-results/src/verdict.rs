//! The cache verdict of a phase (uncached, partly cached, cached, possibly cached, memory or
//! unknown) with its evidence in one line, from the best evidence the document holds: the
//! first of an ordered list of rules ([`rules::RULES`], one file each under `verdict/rules/`)
//! that fires decides; a gateway's own counters, the block device's, O_DIRECT or the flush
//! policy, page-cache residency, then the data set against the memory that could hold it.

mod rule;
pub(crate) mod rules;

pub use rule::{Class, Evidence, Rule, DROPPED_NOTE};

use crate::machine::Machine;
use crate::{CacheVerdict, PhaseResult};
use iobm_stats::format_bytes;
use iobm_stats::names::{OpName, Picks};

/// Whether the phase's rate is the storage's or a cache's: the verdict of the first rule that
/// fires, with what would give an uncached figure where its GETs may have read a cache.
pub fn verdict(phase: &PhaseResult, machine: &Machine) -> CacheVerdict {
    let evidence = Evidence::of(phase, machine);
    let mut v = rules::RULES
        .iter()
        .find_map(|rule| rule.judge(&evidence))
        .expect("each class of phase ends with a rule that always fires");
    let reads = phase
        .operations
        .iter()
        .any(|o| o.op == OpName::Get && o.bytes > 0);
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
    // A versioned phase reads the versions it stored itself: no drop before it, and no kept
    // data set, can keep them out of the server's cache.
    let own_writes = phase.op == OpName::Versioned;
    if machine.builtin_gateway && !phase.settings.drop_cache && !own_writes {
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
    if !crate::remote::servers_dropped(phase) && !machine.builtin_gateway && !own_writes {
        ways.push("--server-drop-cmd CMD to drop the server's caches after the upload, just before the GETs".to_string());
    }
    if machine.picks == Some(Picks::Random) {
        ways.push("--once, to read each object once: this run picked objects at random, so some GETs read an object an earlier one had brought into the server's cache".to_string());
    }
    if own_writes {
        ways.push("fewer reads of each version: this phase's GETs read versions it stored itself, which the server's cache may still hold".to_string());
    } else if !machine.reused_data_set {
        ways.push("keeping a data set (iobm s3 put --keep), dropping the server's page cache (sync; echo 3 > /proc/sys/vm/drop_caches on the server), then reading it with --reuse PREFIX: this run uploaded its data set just before reading it, so dropping caches before the run cannot help".to_string());
    } else if !phase.settings.drop_cache {
        // A drop by hand on the server is not seen: said as what was not recorded.
        ways.push("the server's page cache dropped just before reading the kept data set again (this run dropped none; a drop by hand on the server is not recorded)".to_string());
    }
    format!("; for an uncached figure: {}", ways.join("; or "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, says, MIB, RAM};
    use crate::{DeviceIo, OperationResult, Verdict};
    use iobm_stats::names::FsyncPolicy;

    fn verdict_of(p: &PhaseResult, machine: &Machine) -> Verdict {
        verdict(p, machine).verdict
    }

    #[test]
    fn the_verdict_follows_the_best_evidence() {
        let mut read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
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
        let mut write = phase(OpName::Write, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        assert_eq!(verdict_of(&write, &memory), Verdict::Memory);
        assert_eq!(verdict_of(&write, &machine), Verdict::PossiblyCached);
        write.settings.fsync = FsyncPolicy::End;
        assert_eq!(verdict_of(&write, &machine), Verdict::Uncached);
        let meta = phase(OpName::Create, [0, 0], [1_000_000_000; 2]);
        assert_eq!(verdict_of(&meta, &machine), Verdict::Unknown);
    }

    #[test]
    fn an_object_phases_verdict_is_the_gateways_word_else_the_networks() {
        let mut get = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
        get.operations = vec![OperationResult {
            op: OpName::Get,
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
