//! The chart of what the storage servers' devices did through a phase (`--server-metrics`,
//! read once per interval), drawn beside the client's rate per interval.

use iobm_results::PhaseResult;
use serde_json::{json, Value};

const MIB: f64 = (1u64 << 20) as f64;

/// The servers' data devices' MiB/s read and written between each two readings, every endpoint
/// read through the phase, as steps from the reading before to each reading (seconds since the
/// phase began); a gap where a reading did not answer. None when no endpoint has `min_steps`
/// readings.
pub(super) fn server_devices(phase: &PhaseResult, min_steps: usize) -> Option<Value> {
    let since_start = |ns: u64| (ns as f64 - phase.start_ns as f64) / 1e9;
    let mut x: Vec<f64> = Vec::new();
    let mut lines = Vec::new();
    for e in &phase.cache.servers {
        let Some(s) = e.series.as_ref().filter(|s| s.at_ns.len() >= min_steps) else {
            continue;
        };
        // One x axis for every endpoint: the first endpoint read's stamps (all are read
        // together, one after the other, by one thread).
        if x.is_empty() {
            x.push(since_start(s.before_ns));
            x.extend(s.at_ns.iter().map(|&t| since_start(t)));
        }
        let begins = std::iter::once(s.before_ns).chain(s.at_ns.iter().copied());
        let lengths: Vec<f64> = begins
            .zip(&s.at_ns)
            .map(|(from, &to)| to.saturating_sub(from) as f64 / 1e9)
            .collect();
        let rate = |bytes: &[Option<u64>]| {
            let mut y: Vec<Value> = bytes
                .iter()
                .zip(&lengths)
                .take(x.len() - 1)
                .map(|(b, &t)| match b {
                    Some(b) if t > 0.0 => Value::from(*b as f64 / t / MIB),
                    _ => Value::Null,
                })
                .collect();
            y.resize(x.len() - 1, Value::Null);
            let last = y.last().cloned().unwrap_or(Value::Null);
            y.push(last);
            y
        };
        lines.push(
            json!({"label": format!("{} read", e.endpoint), "values": rate(&s.device_read_bytes)}),
        );
        lines.push(json!({"label": format!("{} written", e.endpoint), "values": rate(&s.device_written_bytes)}));
    }
    (!lines.is_empty()).then(|| {
        json!({
            "kind": "lines", "step": true,
            "title": format!("{}: the servers' devices, MiB/s between readings (--server-metrics)", phase.name),
            "xlabel": "seconds since the phase began", "ylabel": "MiB/s", "x": x, "series": lines,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_results::{RunResult, ServerEvidence, ServerSeries};

    const S: u64 = 1_000_000_000;

    fn phase_with(series: Option<ServerSeries>) -> PhaseResult {
        let mut p: PhaseResult =
            serde_json::from_str(include_str!("../../../iobm/tests/fixtures/stream.json"))
                .map(|r: RunResult| r.phases[0].clone())
                .unwrap();
        p.start_ns = 10 * S;
        p.cache.servers = vec![ServerEvidence {
            endpoint: "http://srv:9100/metrics".into(),
            series,
            ..ServerEvidence::default()
        }];
        p
    }

    #[test]
    fn each_step_is_the_bytes_between_two_readings_over_their_time() {
        let series = ServerSeries {
            interval_ns: S,
            before_ns: 10 * S,
            at_ns: vec![11 * S, 12 * S, 14 * S],
            device_read_bytes: vec![Some(4 << 20), None, Some(8 << 20)],
            device_written_bytes: vec![Some(0), None, Some(2 << 20)],
            cpu_busy: vec![None; 3],
            page_cache_bytes: vec![None; 3],
        };
        let chart = server_devices(&phase_with(Some(series)), 3).unwrap();
        assert_eq!(chart["step"], true);
        assert_eq!(chart["x"], json!([0.0, 1.0, 2.0, 4.0]));
        assert_eq!(chart["series"][0]["label"], "http://srv:9100/metrics read");
        // 4 MiB in the first second, a gap, then 8 MiB over two seconds.
        assert_eq!(chart["series"][0]["values"], json!([4.0, null, 4.0, 4.0]));
        assert_eq!(chart["series"][1]["values"], json!([0.0, null, 1.0, 1.0]));
    }

    #[test]
    fn a_phase_without_enough_readings_has_no_server_chart() {
        assert!(server_devices(&phase_with(None), 3).is_none());
        let short = ServerSeries {
            at_ns: vec![11 * S, 12 * S],
            device_read_bytes: vec![Some(1), Some(1)],
            device_written_bytes: vec![Some(1), Some(1)],
            ..ServerSeries::default()
        };
        assert!(server_devices(&phase_with(Some(short)), 3).is_none());
    }
}
