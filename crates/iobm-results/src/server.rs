//! What an iobm gateway says about a phase: its counters (`/metrics`, Prometheus text) read
//! before and after, and their difference for the run's bucket.

use crate::ServerEvidence;

/// One reading of a gateway's counters for one bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    pub served_bytes: u64,
    pub resident_bytes: u64,
    pub received_bytes: u64,
    pub device_read_bytes: Option<u64>,
    pub device_written_bytes: Option<u64>,
    /// The block device those counters are of, as major:minor.
    pub device: Option<String>,
    pub cpu_s: f64,
}

/// The counters of `bucket` (0 where the gateway has not seen it yet) and the gateway's own.
pub fn parse(text: &str, bucket: &str) -> Counters {
    let mut c = Counters::default();
    let label = format!(
        "{{bucket=\"{}\"}}",
        bucket.replace('\\', "\\\\").replace('"', "\\\"")
    );
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, value)) = line.rsplit_once(' ') else {
            continue;
        };
        let Ok(value) = value.parse::<f64>() else {
            continue;
        };
        let (metric, labels) = name.split_once('{').map_or((name, ""), |(m, l)| (m, l));
        let ours = name.ends_with(&label);
        let n = value as u64;
        match metric {
            "iobm_gateway_served_bytes_total" if ours => c.served_bytes = n,
            "iobm_gateway_served_resident_bytes_total" if ours => c.resident_bytes = n,
            "iobm_gateway_received_bytes_total" if ours => c.received_bytes = n,
            "iobm_gateway_device_read_bytes_total" => {
                c.device_read_bytes = Some(n);
                c.device = labels
                    .strip_prefix("device=\"")
                    .and_then(|l| l.split('"').next())
                    .map(str::to_string);
            }
            "iobm_gateway_device_written_bytes_total" => c.device_written_bytes = Some(n),
            "iobm_gateway_cpu_seconds_total" if labels.starts_with("mode=") => c.cpu_s += value,
            _ => {}
        }
    }
    c
}

/// What the gateway at `endpoint` did between two readings.
pub fn evidence(endpoint: &str, before: &Counters, after: &Counters) -> ServerEvidence {
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    ServerEvidence {
        endpoint: endpoint.to_string(),
        served_bytes: after.served_bytes.saturating_sub(before.served_bytes),
        resident_bytes: after.resident_bytes.saturating_sub(before.resident_bytes),
        received_bytes: after.received_bytes.saturating_sub(before.received_bytes),
        device_read_bytes: delta(before.device_read_bytes, after.device_read_bytes),
        device_written_bytes: delta(before.device_written_bytes, after.device_written_bytes),
        device: after.device.clone(),
        cpu_s: (after.cpu_s - before.cpu_s).max(0.0),
        same_host: on_this_host(endpoint),
    }
}

/// Whether the host of `endpoint` (a URL) is this machine: a loopback address, or an address
/// one of its interfaces has (binding to it succeeds only then). A name that does not resolve
/// is not.
pub fn on_this_host(endpoint: &str) -> bool {
    use std::net::ToSocketAddrs;
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let addrs = match authority.to_socket_addrs() {
        Ok(a) => a,
        // No port: the scheme's.
        Err(_) => match (authority, 80).to_socket_addrs() {
            Ok(a) => a,
            Err(_) => return false,
        },
    };
    let addrs: Vec<_> = addrs.collect();
    !addrs.is_empty()
        && addrs
            .iter()
            .all(|a| a.ip().is_loopback() || std::net::UdpSocket::bind((a.ip(), 0)).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# HELP iobm_gateway_served_bytes_total Bytes.\n\
        # TYPE iobm_gateway_served_bytes_total counter\n\
        iobm_gateway_served_bytes_total{bucket=\"other\"} 5\n\
        iobm_gateway_served_bytes_total{bucket=\"run\"} 1000\n\
        iobm_gateway_served_resident_bytes_total{bucket=\"run\"} 900\n\
        iobm_gateway_received_bytes_total{bucket=\"run\"} 7\n\
        iobm_gateway_device_read_bytes_total{device=\"8:0\"} 4096\n\
        iobm_gateway_cpu_seconds_total{mode=\"user\"} 1.500\n\
        iobm_gateway_cpu_seconds_total{mode=\"system\"} 0.250\n";

    #[test]
    fn a_buckets_counters_are_read_and_differenced() {
        let after = parse(TEXT, "run");
        assert_eq!(after.served_bytes, 1000);
        assert_eq!(after.resident_bytes, 900);
        assert_eq!(after.received_bytes, 7);
        assert_eq!(after.device_read_bytes, Some(4096));
        assert_eq!(after.device.as_deref(), Some("8:0"));
        assert_eq!(after.device_written_bytes, None);
        assert!((after.cpu_s - 1.75).abs() < 1e-9);
        // A bucket it has not seen: zero.
        assert_eq!(parse(TEXT, "new").served_bytes, 0);
        let before = Counters {
            served_bytes: 400,
            resident_bytes: 400,
            device_read_bytes: Some(96),
            cpu_s: 0.75,
            ..Counters::default()
        };
        let e = evidence("http://h:9000", &before, &after);
        assert_eq!((e.served_bytes, e.resident_bytes), (600, 500));
        assert_eq!(e.device_read_bytes, Some(4000));
        assert_eq!(e.device_written_bytes, None);
        assert!((e.cpu_s - 1.0).abs() < 1e-9);
        assert!(!e.same_host, "h does not resolve");
        assert!(evidence("http://127.0.0.1:9000", &before, &after).same_host);
    }

    #[test]
    fn an_endpoint_on_this_machine_is_told_apart() {
        for here in [
            "http://127.0.0.1:9000",
            "http://localhost:7070",
            "https://[::1]:443/",
            "http://127.0.0.5",
        ] {
            assert!(on_this_host(here), "{here}");
        }
        // TEST-NET-1 (RFC 5737) is no machine's own address; .invalid never resolves.
        for elsewhere in [
            "http://192.0.2.1:9000",
            "http://gw.invalid:9000",
            "not a url",
        ] {
            assert!(!on_this_host(elsewhere), "{elsewhere}");
        }
    }
}
