//! What a storage server says about a phase: an iobm gateway's counters (`/metrics`) or
//! node_exporter's (devices, page cache, memory, network, CPU), both Prometheus text, read
//! before and after, and their difference.

use crate::prometheus::{self, Sample};
use crate::{DeviceIo, ServerEvidence};

/// Who counted, as [`ServerEvidence::source`] says it.
pub const GATEWAY: &str = "iobm gateway";
pub const NODE_EXPORTER: &str = "node_exporter";

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
        source: GATEWAY.to_string(),
        ..ServerEvidence::default()
    }
}

/// One reading of node_exporter's counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeCounters {
    /// (device, bytes read, bytes written) of every device it reports.
    pub disks: Vec<(String, u64, u64)>,
    pub cached_bytes: Option<u64>,
    pub memory_bytes: Option<u64>,
    /// Bytes received and sent by every interface but loopback.
    pub net_received: Option<u64>,
    pub net_sent: Option<u64>,
    /// CPU seconds of every CPU, busy (all modes but idle and iowait) and in all.
    pub cpu_busy_s: Option<f64>,
    pub cpu_all_s: Option<f64>,
}

/// One reading of a `--server-metrics` endpoint.
#[derive(Debug, Clone, PartialEq)]
pub enum Reading {
    Gateway(Counters),
    Node(NodeCounters),
}

/// The reading in `text`: an iobm gateway's counters (for `bucket`), or node_exporter's; an
/// answer with neither is an error saying so.
pub fn read(text: &str, bucket: &str) -> Result<Reading, String> {
    let samples = prometheus::parse(text);
    if samples.iter().any(|s| s.name.starts_with("iobm_gateway_")) {
        return Ok(Reading::Gateway(parse(text, bucket)));
    }
    if samples.iter().any(|s| s.name.starts_with("node_")) {
        return Ok(Reading::Node(node_counters(&samples)));
    }
    Err(
        "its answer holds neither node_exporter's metrics (node_*) nor an iobm gateway's (iobm_gateway_*)"
            .to_string(),
    )
}

fn node_counters(samples: &[Sample]) -> NodeCounters {
    let mut c = NodeCounters::default();
    let add = |slot: &mut Option<u64>, v: f64| *slot = Some(slot.unwrap_or(0) + v.max(0.0) as u64);
    for s in samples.iter().filter(|s| s.value.is_finite()) {
        let device = s.label("device").unwrap_or("");
        match s.name.as_str() {
            "node_disk_read_bytes_total" | "node_disk_written_bytes_total" => {
                let i = match c.disks.iter().position(|d| d.0 == device) {
                    Some(i) => i,
                    None => {
                        c.disks.push((device.to_string(), 0, 0));
                        c.disks.len() - 1
                    }
                };
                if s.name == "node_disk_read_bytes_total" {
                    c.disks[i].1 = s.value as u64;
                } else {
                    c.disks[i].2 = s.value as u64;
                }
            }
            "node_memory_Cached_bytes" => c.cached_bytes = Some(s.value as u64),
            "node_memory_MemTotal_bytes" => c.memory_bytes = Some(s.value as u64),
            "node_network_receive_bytes_total" if device != "lo" => {
                add(&mut c.net_received, s.value)
            }
            "node_network_transmit_bytes_total" if device != "lo" => add(&mut c.net_sent, s.value),
            "node_cpu_seconds_total" => {
                *c.cpu_all_s.get_or_insert(0.0) += s.value;
                if !matches!(s.label("mode"), Some("idle" | "iowait")) {
                    *c.cpu_busy_s.get_or_insert(0.0) += s.value;
                }
            }
            _ => {}
        }
    }
    c
}

/// Whether node_exporter's device `name` is a data device when `--server-devices` names none:
/// a disk, not a layer over disks (device-mapper, md, drbd), a partition of one, a loop device
/// or memory, so that every byte from storage counts once.
pub fn default_data_device(name: &str) -> bool {
    let layered = ["dm-", "md", "drbd", "loop", "ram", "zram", "sr", "fd"];
    if layered.iter().any(|p| name.starts_with(p)) {
        return false;
    }
    // Partitions: sda1, vdb2, xvda1, nvme0n1p1, mmcblk0p1.
    let digits = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let numbered = digits.len() < name.len();
    let disk_letters = |prefix: &str| {
        digits
            .strip_prefix(prefix)
            .is_some_and(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_lowercase()))
    };
    let partition = numbered
        && (["sd", "vd", "hd", "xvd"].iter().any(|p| disk_letters(p))
            || ((name.starts_with("nvme") || name.starts_with("mmcblk")) && digits.ends_with('p')));
    !partition
}

/// The data devices of a reading: those named (`--server-devices`), else the disks.
pub(crate) fn data_devices<'a>(
    c: &'a NodeCounters,
    named: &'a [String],
) -> impl Iterator<Item = &'a (String, u64, u64)> {
    c.disks.iter().filter(move |(d, _, _)| {
        if named.is_empty() {
            default_data_device(d)
        } else {
            named.contains(d)
        }
    })
}

/// What node_exporter at `endpoint` counted between two readings, on the data devices.
pub fn node_evidence(
    endpoint: &str,
    before: &NodeCounters,
    after: &NodeCounters,
    named: &[String],
) -> ServerEvidence {
    let delta = |a: Option<u64>, b: Option<u64>| Some(b?.saturating_sub(a?));
    let devices: Vec<DeviceIo> = data_devices(after, named)
        .filter_map(|(name, read, written)| {
            let (_, r0, w0) = before.disks.iter().find(|d| &d.0 == name)?;
            Some(DeviceIo {
                device: name.clone(),
                read_bytes: read.saturating_sub(*r0),
                written_bytes: written.saturating_sub(*w0),
            })
        })
        .collect();
    let some = !devices.is_empty();
    ServerEvidence {
        endpoint: endpoint.to_string(),
        source: NODE_EXPORTER.to_string(),
        device_read_bytes: some.then(|| devices.iter().map(|d| d.read_bytes).sum()),
        device_written_bytes: some.then(|| devices.iter().map(|d| d.written_bytes).sum()),
        device: some.then(|| {
            devices
                .iter()
                .map(|d| d.device.as_str())
                .collect::<Vec<_>>()
                .join(",")
        }),
        devices,
        page_cache_before_bytes: before.cached_bytes,
        page_cache_after_bytes: after.cached_bytes,
        memory_bytes: after.memory_bytes,
        net_received_bytes: delta(before.net_received, after.net_received),
        net_sent_bytes: delta(before.net_sent, after.net_sent),
        cpu_busy_s: before
            .cpu_busy_s
            .zip(after.cpu_busy_s)
            .map(|(b, a)| (a - b).max(0.0)),
        cpu_all_s: before
            .cpu_all_s
            .zip(after.cpu_all_s)
            .map(|(b, a)| (a - b).max(0.0)),
        same_host: on_this_host(endpoint),
        ..ServerEvidence::default()
    }
}

/// The evidence of an endpoint that did not answer around the phase.
pub fn unavailable(endpoint: &str, source: &str, why: &str) -> ServerEvidence {
    ServerEvidence {
        endpoint: endpoint.to_string(),
        source: source.to_string(),
        unavailable: Some(why.to_string()),
        same_host: on_this_host(endpoint),
        ..ServerEvidence::default()
    }
}

/// The evidence of one `--server-metrics` endpoint over a phase from its two readings.
pub fn reading_evidence(
    endpoint: &str,
    before: &Reading,
    after: &Reading,
    named: &[String],
) -> ServerEvidence {
    match (before, after) {
        (Reading::Gateway(b), Reading::Gateway(a)) => evidence(endpoint, b, a),
        (Reading::Node(b), Reading::Node(a)) => node_evidence(endpoint, b, a, named),
        (_, a) => unavailable(
            endpoint,
            match a {
                Reading::Gateway(_) => GATEWAY,
                Reading::Node(_) => NODE_EXPORTER,
            },
            "it answered as another kind of server after the phase",
        ),
    }
}

/// The names of `--server-devices` that no reading reports (each is a typo or another host's).
pub fn unknown_devices<'a>(readings: &[Reading], named: &'a [String]) -> Vec<&'a str> {
    named
        .iter()
        .filter(|n| {
            !readings.iter().any(|r| match r {
                Reading::Node(c) => c.disks.iter().any(|d| &&d.0 == n),
                Reading::Gateway(_) => false,
            })
        })
        .map(String::as_str)
        .collect()
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

    /// node_exporter 1.5's names, values as it prints them.
    fn node_text(vda_read: f64, cached: f64, busy: f64) -> String {
        format!(
            "# HELP node_disk_read_bytes_total The total number of bytes read successfully.\n\
             # TYPE node_disk_read_bytes_total counter\n\
             node_disk_read_bytes_total{{device=\"vda\"}} {vda_read:e}\n\
             node_disk_read_bytes_total{{device=\"dm-0\"}} {vda_read:e}\n\
             node_disk_read_bytes_total{{device=\"zram0\"}} 0\n\
             node_disk_written_bytes_total{{device=\"vda\"}} 2e6\n\
             node_disk_written_bytes_total{{device=\"dm-0\"}} 2e6\n\
             node_memory_Cached_bytes {cached:e}\n\
             node_memory_MemTotal_bytes 2.5276502016e+10\n\
             node_network_receive_bytes_total{{device=\"eth0\"}} 1000\n\
             node_network_receive_bytes_total{{device=\"lo\"}} 9e9\n\
             node_network_transmit_bytes_total{{device=\"eth0\"}} {vda_read:e}\n\
             node_cpu_seconds_total{{cpu=\"0\",mode=\"idle\"}} 100\n\
             node_cpu_seconds_total{{cpu=\"0\",mode=\"iowait\"}} 10\n\
             node_cpu_seconds_total{{cpu=\"0\",mode=\"user\"}} {busy}\n\
             node_cpu_seconds_total{{cpu=\"1\",mode=\"idle\"}} 100\n"
        )
    }

    #[test]
    fn node_exporters_counters_are_read_and_differenced_on_the_data_devices() {
        let Ok(Reading::Node(before)) = read(&node_text(1e6, 3e9, 5.0), "") else {
            panic!("node_exporter's text read as something else");
        };
        assert_eq!(before.memory_bytes, Some(25_276_502_016));
        assert_eq!(before.net_received, Some(1000), "loopback is not counted");
        assert_eq!(before.cpu_busy_s, Some(5.0));
        assert_eq!(before.cpu_all_s, Some(215.0));
        let Ok(Reading::Node(after)) = read(&node_text(1e6 + 12e6, 3.5e9, 8.0), "") else {
            panic!("node_exporter's text read as something else");
        };
        // dm-0 sits on vda and zram0 is memory: vda alone, each byte once.
        let e = node_evidence("http://srv:9100/metrics", &before, &after, &[]);
        assert_eq!(e.source, NODE_EXPORTER);
        assert_eq!(e.device_read_bytes, Some(12_000_000));
        assert_eq!(e.device_written_bytes, Some(0));
        assert_eq!(e.device.as_deref(), Some("vda"));
        assert_eq!(
            (e.page_cache_before_bytes, e.page_cache_after_bytes),
            (Some(3_000_000_000), Some(3_500_000_000))
        );
        assert_eq!(e.net_sent_bytes, Some(12_000_000));
        assert_eq!(e.cpu_busy_s, Some(3.0));
        assert_eq!(e.cpu_all_s, Some(3.0));
        assert_eq!(e.served_bytes, 0);
        // Named devices instead.
        let named = vec!["dm-0".to_string()];
        let e = node_evidence("http://srv:9100/metrics", &before, &after, &named);
        assert_eq!(e.device.as_deref(), Some("dm-0"));
        assert_eq!(e.device_read_bytes, Some(12_000_000));
        let readings = [Reading::Node(after.clone())];
        assert_eq!(
            unknown_devices(&readings, &["vda".into(), "sdz".into()]),
            vec!["sdz"]
        );
        // An answer of neither kind.
        assert!(read("<html>hello</html>", "").is_err());
        assert!(matches!(read(TEXT, "run"), Ok(Reading::Gateway(c)) if c.served_bytes == 1000));
    }

    #[test]
    fn data_devices_are_disks_not_their_layers_or_partitions() {
        for disk in [
            "sda", "vda", "xvdb", "nvme0n1", "mmcblk0", "sdaa", "nbd0", "rbd0",
        ] {
            assert!(default_data_device(disk), "{disk}");
        }
        for not in [
            "sda1",
            "vdb2",
            "xvda1",
            "nvme0n1p1",
            "mmcblk0p2",
            "dm-0",
            "md127",
            "loop3",
            "zram0",
            "ram1",
            "sr0",
            "drbd1",
        ] {
            assert!(!default_data_device(not), "{not}");
        }
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
