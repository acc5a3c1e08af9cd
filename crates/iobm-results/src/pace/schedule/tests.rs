use super::*;
use crate::pace::tests::paced;
use iobm_stats::names::OpName;
use iobm_stats::HistogramData;

/// A latency summary whose p99 is `p99_ns`.
fn p99(p99_ns: u64) -> Latency {
    Latency {
        measures: String::new(),
        mean_ns: None,
        p50_ns: None,
        p90_ns: None,
        p99_ns: Some(p99_ns),
        p999_ns: None,
        max_ns: None,
        histogram: HistogramData::empty(7),
    }
}

fn texts(p: &PaceResult, service: &Latency) -> Vec<String> {
    p.warnings(service).iter().map(|w| w.to_string()).collect()
}

#[test]
fn a_phase_falls_behind_in_the_first_interval_its_backlog_passes_the_threshold() {
    // 200/s: 20 operations behind is 100 ms.
    let mut p = paced(200.0, vec![0, 3, 20, 21, 90, 4]);
    p.assess(400, 2_000_000_000);
    assert_eq!(p.behind_threshold_ops, 20);
    assert_eq!(p.fell_behind_s, Some(1.5));
    assert_eq!(p.achieved_ops_per_s, 200.0);
    let service = p99(1_000);
    let w = texts(&p, &service);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("fell behind at 1.50s (90 operations behind schedule at most, the threshold 20), though it achieved 100%"),
        "{w:?}"
    );
    // Short of its rate too: both said.
    p.assess(300, 2_000_000_000);
    let w = texts(&p, &service);
    assert!(
        w[0].starts_with(
            "could not keep its rate: 150.0 of 200 ops/s targeted (75%), fell behind at 1.50s"
        ),
        "{w:?}"
    );
    assert!(w[0].ends_with(
        "more workers (--jobs, --concurrent) or a deeper queue (--iodepth) may hold it"
    ));
}

#[test]
fn a_phase_that_kept_its_schedule_and_rate_has_no_warning() {
    let mut p = paced(200.0, vec![0, 20, 5]);
    p.assess(390, 2_000_000_000);
    assert_eq!(p.fell_behind_s, None);
    assert_eq!(p.warnings(&p99(1_000)), []);
}

#[test]
fn a_phase_short_of_its_rate_says_so_though_never_behind() {
    let mut p = paced(200.0, vec![]);
    p.assess(300, 2_000_000_000);
    let w = texts(&p, &p99(1_000));
    assert!(
        w[0].starts_with("could not keep its rate: 150.0 of 200 ops/s targeted (75%)"),
        "{w:?}"
    );
}

#[test]
fn a_phase_whose_response_time_is_mostly_the_clients_lag_is_told_the_client_was_late() {
    // iobm write -j 1 --rate 2000/s on /dev/shm: service p99 21.9 µs, response p99 5.80 ms, of
    // which 5.78 ms the client's threads waking late.
    let mut p = paced(2000.0, vec![0, 11, 4]);
    p.assess(6000, 3_000_000_000);
    p.response = p99(5_800_000);
    p.lag = Some(p99(5_780_000));
    let service = p99(21_900);
    let late = p.client_late(&service).expect("the client was late");
    assert_eq!(
        late.to_string(),
        "the client was late: 5.78ms of the 5.80ms p99 response time was iobm's own lag in starting operations (its p99, apart from the storage's queueing; service time p99 21.9us): these response times measure this client's threads, not the storage"
    );
    // It kept its rate and its backlog stayed under the threshold: the lag is the one warning.
    assert_eq!(p.warnings(&service), [PaceWarning::ClientLate(late)]);
    // Short of its rate because of it: no more workers are asked for.
    p.assess(3000, 3_000_000_000);
    let w = texts(&p, &service);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(w[0].ends_with("the client was late (below): a less loaded client may hold it"));
    assert!(w[1].starts_with("the client was late: "));
}

#[test]
fn response_time_that_is_the_storages_queueing_is_not_the_clients_lag() {
    // A storage stall: the operations after it waited for it, the client started each at once.
    let mut p = paced(200.0, vec![0, 90]);
    p.assess(400, 2_000_000_000);
    p.response = p99(400_000_000);
    p.lag = Some(p99(30_000));
    assert_eq!(p.client_late(&p99(2_000_000)), None);
    assert!(!texts(&p, &p99(2_000_000))
        .iter()
        .any(|w| w.contains("the client was late")));
    // Half of it is the client's: late.
    p.lag = Some(p99(200_000_000));
    assert!(p.client_late(&p99(2_000_000)).is_some());
    // A document from before the lag was measured: nothing said of it.
    p.lag = None;
    assert_eq!(p.client_late(&p99(2_000_000)), None);
}

#[test]
fn a_rate_is_held_when_achieved_and_never_behind() {
    let mut p = paced(200.0, vec![0, 20, 5]);
    p.assess(390, 2_000_000_000);
    assert!(p.held());
    p.assess(300, 2_000_000_000);
    assert!(!p.held(), "short of its rate");
    let mut p = paced(200.0, vec![0, 30]);
    p.assess(400, 2_000_000_000);
    assert!(!p.held(), "behind");
}

#[test]
fn a_phase_that_held_its_rate_is_never_bounded_by_a_cpu() {
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::checks::{phase_warnings, Machine};
    use crate::server::NODE_EXPORTER;
    // A paced GET of 200 MiB in 1 s against a foreign server on 2 CPUs: the server's CPUs 97%
    // busy, iobm and a gateway on this machine 1.7 of the 2 CPU-s.
    let mut p = phase(OpName::Get, [100 * MIB, 100 * MIB], [1_000_000_000; 2]);
    p.operations = vec![crate::OperationResult {
        op: OpName::Get,
        ops: 200,
        bytes: 200 * MIB,
        errors: 0,
        retried: 0,
        keys: 0,
        ops_per_s: 200.0,
        bytes_per_s: (200 * MIB) as f64,
        latency: p.latency.clone(),
        ttfb: None,
        series: None,
    }];
    p.cpu.user_s = 0.5;
    p.cache.servers = vec![
        crate::ServerEvidence {
            endpoint: "http://srv:9100/metrics".into(),
            source: NODE_EXPORTER.into(),
            cpu_busy_s: Some(1.94),
            cpu_all_s: Some(2.0),
            ..crate::ServerEvidence::default()
        },
        crate::ServerEvidence {
            endpoint: "http://127.0.0.1:9000".into(),
            source: crate::server::GATEWAY.into(),
            cpu_s: 1.2,
            same_host: true,
            ..crate::ServerEvidence::default()
        },
    ];
    let machine = Machine {
        cpus: 2,
        ..Machine::with_ram(RAM)
    };
    let bounded = |p: &PhaseResult| -> Vec<String> {
        phase_warnings(p, &machine)
            .into_iter()
            .filter(|w| w.starts_with("bounded by"))
            .collect()
    };
    // Closed loop: both CPUs bounded it.
    assert_eq!(bounded(&p).len(), 2, "{:?}", phase_warnings(&p, &machine));
    // At 100% of a --rate of 200/s: the rate bounded it.
    let mut pace = paced(200.0, vec![0, 2]);
    pace.assess(200, 1_000_000_000);
    p.pace = Some(pace.clone());
    assert_eq!(bounded(&p), Vec::<String>::new());
    // A rate not held: the CPUs may have been why.
    pace.assess(100, 1_000_000_000);
    p.pace = Some(pace);
    assert_eq!(bounded(&p).len(), 2);
}
