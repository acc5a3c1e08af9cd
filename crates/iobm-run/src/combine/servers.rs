//! The servers' evidence of merged runs. Each run read the servers around its own phase, and a
//! server's counters count every client: an iobm gateway's bytes are counted per bucket (runs
//! on buckets of their own add up), while its device, its CPU and everything node_exporter
//! reads are the whole server's, so the runs' readings overlap. A reading that covers every
//! run is one whose phase began first and ended last: it saw them all.

use iobm_results::server::GATEWAY;
use iobm_results::{PhaseResult, ServerEvidence};

/// What one run's phase says of the servers, on the common clock.
pub struct Reading {
    pub start_ns: u64,
    pub end_ns: u64,
    /// The run's bucket (empty for runs that are not S3).
    pub bucket: String,
    pub servers: Vec<ServerEvidence>,
}

impl Reading {
    pub fn of(phase: &PhaseResult, bucket: &str) -> Reading {
        Reading {
            start_ns: phase.start_ns,
            end_ns: phase.end_ns,
            bucket: bucket.to_string(),
            servers: phase.cache.servers.clone(),
        }
    }
}

/// The merged phase's server evidence from every run's `readings`, and why any was left out.
/// `cut`: the merged phase keeps only a window of the runs, which no reading matches.
pub fn merge(readings: &[Reading], cut: bool) -> (Vec<ServerEvidence>, Option<String>) {
    if readings.iter().all(|r| r.servers.is_empty()) {
        return (Vec::new(), None);
    }
    if cut {
        return (Vec::new(), Some("the servers' readings span each run's whole phase, not the window kept: left out (merge with --whole keeps them)".into()));
    }
    let first = readings.iter().map(|r| r.start_ns).min().unwrap_or(0);
    let last = readings.iter().map(|r| r.end_ns).max().unwrap_or(0);
    let covering = readings
        .iter()
        .find(|r| r.start_ns <= first && r.end_ns >= last);
    let mut buckets: Vec<&str> = readings.iter().map(|r| r.bucket.as_str()).collect();
    buckets.sort_unstable();
    buckets.dedup();
    let own_buckets = buckets.len() == readings.len();
    let endpoints = readings.iter().flat_map(|r| &r.servers);
    let mut merged: Vec<ServerEvidence> = Vec::new();
    let (mut partly, mut left_out) = (Vec::new(), Vec::new());
    for endpoint in endpoints.map(|s| s.endpoint.as_str()) {
        if merged.iter().any(|m| m.endpoint == endpoint) || left_out.contains(&endpoint) {
            continue;
        }
        let all: Vec<&ServerEvidence> = readings
            .iter()
            .filter_map(|r| r.servers.iter().find(|s| s.endpoint == endpoint))
            .collect();
        let whole = covering.and_then(|r| r.servers.iter().find(|s| s.endpoint == endpoint));
        let own_buckets = own_buckets && all.len() == readings.len();
        match (one_server(&all, own_buckets), whole) {
            (Some(mut sum), Some(whole)) => {
                (sum.device_read_bytes, sum.device_written_bytes) =
                    (whole.device_read_bytes, whole.device_written_bytes);
                sum.cpu_s = whole.cpu_s;
                merged.push(sum);
            }
            (Some(sum), None) => {
                partly.push(endpoint);
                merged.push(sum);
            }
            (None, Some(whole)) => merged.push(whole.clone()),
            (None, None) => left_out.push(endpoint),
        }
    }
    let mut why = Vec::new();
    if !partly.is_empty() {
        why.push(format!("no run's phase spans every run's, so of {} only the bytes of each run's own bucket add up: its device figures are left out and its CPU is the most one run saw", partly.join(", ")));
    }
    if !left_out.is_empty() {
        why.push(format!("no run's phase spans every run's, so the readings of {} overlap and none counts them all: left out", left_out.join(", ")));
    }
    (merged, (!why.is_empty()).then(|| why.join("; ")))
}

/// An iobm gateway's evidence summed over the runs, where each run had a bucket of its own
/// (`own_buckets`) and every reading answered: its per-bucket bytes add up; its device figures
/// are none and its CPU the most one run saw (the caller puts a covering reading's in). None
/// where the readings are not of that kind.
fn one_server(all: &[&ServerEvidence], own_buckets: bool) -> Option<ServerEvidence> {
    let gateway = all
        .iter()
        .all(|s| s.source.is_empty() || s.source == GATEWAY);
    let answered = all.iter().all(|s| s.unavailable.is_none());
    if !(gateway && own_buckets && answered) {
        return None;
    }
    let mut out = (*all.first()?).clone();
    out.served_bytes = all.iter().map(|s| s.served_bytes).sum();
    out.resident_bytes = all.iter().map(|s| s.resident_bytes).sum();
    out.received_bytes = all.iter().map(|s| s.received_bytes).sum();
    (out.device_read_bytes, out.device_written_bytes) = (None, None);
    out.cpu_s = all.iter().map(|s| s.cpu_s).fold(0.0, f64::max);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gateway(served: u64, device_read: u64) -> ServerEvidence {
        ServerEvidence {
            endpoint: "http://127.0.0.1:9000".into(),
            served_bytes: served,
            resident_bytes: served / 2,
            device_read_bytes: Some(device_read),
            source: GATEWAY.into(),
            ..ServerEvidence::default()
        }
    }

    fn reading(span: (u64, u64), bucket: &str, server: ServerEvidence) -> Reading {
        Reading {
            start_ns: span.0,
            end_ns: span.1,
            bucket: bucket.into(),
            servers: vec![server],
        }
    }

    #[test]
    fn a_gateways_bytes_add_up_over_buckets_of_their_own_and_its_device_is_read_once() {
        // b ran inside a's phase: a's reading of the device saw both runs.
        let a = reading((0, 10), "bucket-a", gateway(100, 70));
        let b = reading((2, 8), "bucket-b", gateway(40, 30));
        let (merged, why) = merge(&[a, b], false);
        assert_eq!(why, None);
        assert_eq!(merged.len(), 1);
        let m = &merged[0];
        assert_eq!((m.served_bytes, m.resident_bytes), (140, 70));
        assert_eq!(m.device_read_bytes, Some(70), "the covering run's, not 100");
    }

    #[test]
    fn one_bucket_counts_every_run_once_in_the_covering_reading() {
        let a = reading((0, 10), "shared", gateway(140, 70));
        let b = reading((2, 8), "shared", gateway(90, 30));
        let (merged, _) = merge(&[a, b], false);
        assert_eq!(
            merged[0].served_bytes, 140,
            "not summed: both counted b's GETs"
        );
    }

    #[test]
    fn without_a_covering_reading_or_in_a_window_the_servers_are_left_out_and_said() {
        let a = reading((0, 8), "a", gateway(100, 70));
        let b = reading((2, 10), "b", gateway(40, 30));
        let both = [a, b];
        // Buckets of their own: the bytes add up, the device is no one's to say.
        let (merged, why) = merge(&both, false);
        assert_eq!(merged[0].served_bytes, 140);
        assert_eq!(merged[0].device_read_bytes, None);
        assert!(why
            .unwrap()
            .contains("only the bytes of each run's own bucket add up"));
        // One bucket: nothing counts every run once.
        let shared = [
            reading((0, 8), "s", gateway(100, 70)),
            reading((2, 10), "s", gateway(40, 30)),
        ];
        let (merged, why) = merge(&shared, false);
        assert!(merged.is_empty());
        assert!(why.unwrap().contains("none counts them all: left out"));
        let (merged, why) = merge(&both, true);
        assert!(merged.is_empty());
        assert!(why.unwrap().contains("--whole keeps them"));
        let none = [Reading {
            start_ns: 0,
            end_ns: 10,
            bucket: String::new(),
            servers: Vec::new(),
        }];
        assert_eq!(merge(&none, true), (Vec::new(), None));
    }
}
