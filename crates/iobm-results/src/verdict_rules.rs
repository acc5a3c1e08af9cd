//! One unit test per rule of the cache verdict on files and of the object rules that judge by
//! bytes (a read/write mix, a rewrite, writes the device counted, `--fsync each`, a PUT judged
//! by what the gateway received, GETs over PUTs at the exact factor); the layers' and other
//! I/O's rules are tested in `storage`.

use crate::checks::tests::{phase, says, MIB, RAM};
use crate::checks::{Machine, GET_OVER_PUT};
use crate::verdict::verdict;
use crate::{DeviceIo, OperationResult, PhaseResult, ServerEvidence};

fn device(read: u64, written: u64) -> Option<DeviceIo> {
    Some(DeviceIo {
        device: "8:0".into(),
        read_bytes: read * MIB,
        written_bytes: written * MIB,
    })
}

fn operation(p: &PhaseResult, op: &str, bytes: u64) -> OperationResult {
    OperationResult {
        op: op.into(),
        ops: bytes / MIB,
        bytes,
        errors: 0,
        retried: 0,
        keys: 0,
        ops_per_s: 0.0,
        bytes_per_s: bytes as f64,
        latency: p.latency.clone(),
        ttfb: None,
        series: None,
    }
}

fn of(p: &PhaseResult) -> (String, String) {
    let v = verdict(p, &Machine::with_ram(RAM));
    (v.verdict, v.evidence)
}

#[test]
fn a_read_write_mix_is_as_cached_as_the_more_cached_half() {
    let mut mix = phase("readwrite", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    mix.operations = vec![
        operation(&mix, "read", 100 * MIB),
        operation(&mix, "write", 100 * MIB),
    ];
    for ((read, written), expected) in [
        ((100, 100), "uncached"),
        ((100, 50), "partly cached"),
        ((100, 5), "cached"),
        ((5, 100), "cached"),
    ] {
        mix.cache.device = device(read, written);
        let (v, evidence) = of(&mix);
        assert_eq!(v, expected, "{read}/{written}: {evidence}");
    }
    mix.cache.device = device(100, 50);
    let (_, evidence) = of(&mix);
    assert!(
        evidence.contains("delivered 100.00 MiB of the 100.00 MiB read (100%) and took 50.00 MiB of the 100.00 MiB written (50%)"),
        "{evidence}"
    );
}

#[test]
fn a_rewrite_counts_both_halves_neither_for_more_than_its_own() {
    let mut rewrite = phase("rewrite", [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    rewrite.cache.device = device(100, 100);
    assert_eq!(of(&rewrite).0, "uncached");
    // Read from the device, written back into the page cache: half of it.
    rewrite.cache.device = device(100, 0);
    let (v, evidence) = of(&rewrite);
    assert_eq!(v, "partly cached", "{evidence}");
    assert!(
        evidence.ends_with("read and written back (50%)"),
        "{evidence}"
    );
    // Readahead's extra reads (this run's own, by /proc/self/io) do not make up for the writes
    // that stayed in memory.
    rewrite.cache.device = device(300, 0);
    rewrite.cache.own_io = Some(crate::storage::OwnIo {
        read_bytes: 300 * MIB,
        written_bytes: 100 * MIB,
    });
    let (v, evidence) = of(&rewrite);
    assert_eq!(v, "partly cached", "{evidence}");
    rewrite.cache.device = device(5, 5);
    assert_eq!(of(&rewrite).0, "cached");
}

#[test]
fn writes_are_judged_by_what_the_device_took_before_any_flag() {
    let mut write = phase("write", [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    for (written, expected) in [(95, "uncached"), (50, "partly cached"), (5, "cached")] {
        write.cache.device = device(0, written);
        assert_eq!(of(&write).0, expected, "{written} MiB");
    }
    // The device's counters outrank O_DIRECT and the flush policy.
    write.settings.direct = true;
    write.settings.fsync = "each".into();
    write.cache.device = device(0, 5);
    let (v, evidence) = of(&write);
    assert_eq!(v, "cached", "{evidence}");
    assert!(
        evidence.starts_with(
            "the block device 8:0 took 5.00 MiB of the 100.00 MiB written during the phase (5%)"
        ),
        "{evidence}"
    );
}

#[test]
fn without_device_counters_writes_are_judged_by_o_direct_and_fsync() {
    let mut write = phase("write", [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    let (v, evidence) = of(&write);
    assert_eq!(v, "possibly cached", "{evidence}");
    write.settings.fsync = "each".into();
    let (v, evidence) = of(&write);
    assert_eq!(v, "uncached");
    assert!(
        evidence.starts_with("every write was followed by fsync inside its time"),
        "{evidence}"
    );
    write.settings.fsync = "end".into();
    assert!(of(&write).1.starts_with("each worker's final fsync"));
    write.settings.fsync = "never".into();
    write.settings.direct = true;
    let (v, evidence) = of(&write);
    assert_eq!(v, "uncached");
    assert!(evidence.starts_with("O_DIRECT writes bypass"), "{evidence}");
}

fn put_phase(received: u64, device_written: Option<u64>) -> PhaseResult {
    let mut put = phase("put", [50 * MIB, 50 * MIB], [1_000_000_000; 2]);
    put.operations = vec![operation(&put, "put", 100 * MIB)];
    put.settings.data_bytes = 0;
    // From its JSON, which leaves every field it does not name at its default.
    let gateway: ServerEvidence = serde_json::from_value(serde_json::json!({
        "endpoint": "http://h:9000",
        "served_bytes": 0,
        "resident_bytes": 0,
        "received_bytes": received * MIB,
        "device_read_bytes": device_written.map(|_| 0),
        "device_written_bytes": device_written.map(|w| w * MIB),
        "device": device_written.map(|_| "8:0"),
        "cpu_s": 0.0,
    }))
    .unwrap();
    put.cache.servers = vec![gateway];
    put
}

#[test]
fn a_put_is_judged_by_what_the_gateway_received_and_its_device_wrote() {
    for (written, expected) in [(100, "uncached"), (40, "partly cached"), (2, "cached")] {
        let (v, evidence) = of(&put_phase(100, Some(written)));
        assert_eq!(v, expected, "{written}: {evidence}");
    }
    let (_, evidence) = of(&put_phase(100, Some(40)));
    assert!(
        evidence.starts_with(
            "the gateway received 100.00 MiB; its storage wrote 40.00 MiB during the phase (40%)"
        ),
        "{evidence}"
    );
    // Shares are of what the gateway received, not of what the clients sent.
    let (v, _) = of(&put_phase(50, Some(48)));
    assert_eq!(v, "uncached");
    let (v, evidence) = of(&put_phase(100, None));
    assert_eq!(v, "possibly cached");
    assert!(evidence.contains("no device counters"), "{evidence}");
}

#[test]
fn gets_over_puts_are_flagged_only_beyond_the_exact_factor() {
    // 200 MiB of GETs in one second.
    let mut get = phase("get", [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    get.operations = vec![operation(&get, "get", 200 * MIB)];
    get.settings.data_bytes = 1 << 40;
    let after_puts_of = |put: f64| Machine {
        put_bytes_per_s: Some(put),
        ..Machine::with_ram(RAM)
    };
    let at_factor = 200.0 * MIB as f64 / GET_OVER_PUT;
    assert!(!says(
        &get,
        &after_puts_of(at_factor),
        "possible cache effect"
    ));
    assert!(says(
        &get,
        &after_puts_of(at_factor * 0.999),
        "possible cache effect: the GETs moved 200.00 MiB/s, 5.0 times"
    ));
}
