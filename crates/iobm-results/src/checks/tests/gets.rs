//! The GET warnings' thresholds, and a data set that fits in RAM.

use super::*;

/// GETs of `get` MiB in `seconds` over a data set of `data` MiB.
fn gets(get: u64, seconds: u64, data: u64) -> PhaseResult {
    let mut p = phase(
        OpName::Get,
        [get * MIB / 2, get * MIB / 2],
        [seconds * 1_000_000_000; 2],
    );
    p.operations = vec![OperationResult {
        op: OpName::Get,
        ops: get,
        bytes: get * MIB,
        errors: 0,
        retried: 0,
        keys: 0,
        ops_per_s: 0.0,
        bytes_per_s: 0.0,
        latency: p.latency.clone(),
        ttfb: None,
        series: None,
    }];
    p.settings.data_bytes = data * MIB;
    p
}

#[test]
fn get_warnings_start_just_past_their_thresholds_and_need_a_rate() {
    let on = |line: Option<u64>, put: Option<u64>| Machine {
        line_rate_bytes_per_s: line.map(|l| l * MIB),
        put_bytes_per_s: put.map(|p| (p * MIB) as f64),
        ..Machine::with_ram(RAM)
    };
    // 200 MiB in 2 s is 100 MiB/s: over a line of 99, not of 100 or 150.
    let p = gets(200, 2, 1 << 20);
    for (line, said) in [(99, true), (100, false), (150, false)] {
        assert_eq!(
            says(&p, &on(Some(line), None), "impossible over the network"),
            said,
            "{line}"
        );
    }
    // Over PUTs: 100 MiB/s is 5.0 times 20 (not told), 2.0 times 50 (not told), more than 5
    // times 19 (told).
    for (put, said) in [(19, true), (20, false), (50, false)] {
        assert_eq!(
            says(
                &p,
                &on(None, Some(put)),
                "possible cache effect: the GETs moved"
            ),
            said,
            "{put}"
        );
    }
    // A phase of no time has no rate.
    let mut instant = gets(200, 2, 1 << 20);
    instant.end_ns = instant.start_ns;
    let machine = on(Some(1), Some(1));
    assert!(!says(&instant, &machine, "impossible over the network"));
    assert!(!says(
        &instant,
        &machine,
        "possible cache effect: the GETs moved"
    ));
    // Passes: three times over is told, twice is not, and no data set tells none.
    let passes = "possible cache effect: the GETs read the data set";
    assert!(says(
        &gets(300, 1, 100),
        &on(None, None),
        "possible cache effect: the GETs read the data set (100.00 MiB) 3.0 times over"
    ));
    assert!(!says(&gets(200, 1, 100), &on(None, None), passes));
    assert!(!says(&gets(200, 1, 0), &on(None, None), passes));
}

#[test]
fn a_data_set_fits_in_ram_only_when_smaller_than_it() {
    let read = phase(OpName::Read, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    let fits = "possible cache effect: the data set";
    assert!(!says(&read, &Machine::with_ram(200 * MIB), fits));
    assert!(says(&read, &Machine::with_ram(200 * MIB + 1), fits));
}
