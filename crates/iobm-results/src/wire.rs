//! The wire between this client and its storage: the interfaces' byte counters
//! (/sys/class/net/*/statistics) around a phase, which interface the storage is reached
//! through (the kernel's route to the mount's server or the S3 endpoints), and its link speed.

use crate::{Environment, NicIo};
use std::fs;
use std::net::{IpAddr, ToSocketAddrs, UdpSocket};

/// Every interface's (name, bytes received, bytes sent) now.
pub fn counters() -> Vec<(String, u64, u64)> {
    let Ok(entries) = fs::read_dir("/sys/class/net") else {
        return Vec::new();
    };
    let mut all: Vec<_> = entries
        .flatten()
        .filter_map(|e| {
            let stats = e.path().join("statistics");
            let read = |f: &str| -> Option<u64> {
                fs::read_to_string(stats.join(f)).ok()?.trim().parse().ok()
            };
            Some((
                crate::env::printable(&e.file_name().to_string_lossy()),
                read("rx_bytes")?,
                read("tx_bytes")?,
            ))
        })
        .collect();
    all.sort();
    all
}

/// What each interface moved between two readings (those that moved nothing left out), marked
/// towards the storage when `towards` names it (None: every interface but loopback).
pub fn io(
    host: &str,
    before: &[(String, u64, u64)],
    after: &[(String, u64, u64)],
    towards: Option<&[String]>,
) -> Vec<NicIo> {
    after
        .iter()
        .filter_map(|(nic, rx, tx)| {
            let (_, rx0, tx0) = before.iter().find(|b| &b.0 == nic)?;
            let (received, sent) = (rx.saturating_sub(*rx0), tx.saturating_sub(*tx0));
            (received + sent > 0).then(|| NicIo {
                host: host.to_string(),
                nic: nic.clone(),
                received_bytes: received,
                sent_bytes: sent,
                towards_storage: match towards {
                    Some(names) => names.contains(nic),
                    None => nic != "lo",
                },
            })
        })
        .collect()
}

/// The hosts the storage is reached at: the server in a network file system's mount source
/// (`server:/export`, `host:/volume`, `//server/share`, `10.0.0.1@tcp:/fs`, `mon1,mon2:/`).
/// None where the source names no host (BeeGFS: `beegfs_nodev`).
pub fn mount_server(source: &str) -> Option<String> {
    let host = if let Some(unc) = source.strip_prefix("//") {
        unc.split('/').next()?
    } else if let Some(rest) = source.strip_prefix('[') {
        // [fe80::1]:/export
        rest.split(']').next()?
    } else {
        let (host, _) = source.split_once(":/").or_else(|| source.split_once(':'))?;
        host
    };
    let host = host.split(',').next()?;
    // Lustre's NIDs: address@network.
    let host = host.split('@').next()?;
    // A Ceph monitor's port.
    let host = match host.rsplit_once(':') {
        Some((h, port)) if !h.contains(':') && port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    (!host.is_empty()).then(|| host.to_string())
}

/// The host of a URL (`http://host:port/path`), without its port.
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next()?
    } else {
        authority.split(':').next()?
    };
    (!host.is_empty()).then(|| host.to_string())
}

/// The interface the kernel routes traffic to `host` through (a UDP socket connected there
/// sends nothing): `lo` for this machine's own addresses. None where it does not resolve.
pub fn route(host: &str) -> Option<String> {
    let addr = (host, 9).to_socket_addrs().ok()?.next()?;
    let any: IpAddr = if addr.is_ipv4() {
        [0, 0, 0, 0].into()
    } else {
        [0u16; 8].into()
    };
    let socket = UdpSocket::bind((any, 0)).ok()?;
    socket.connect(addr).ok()?;
    let local = socket.local_addr().ok()?.ip();
    interface_of(local)
}

/// The interface holding address `ip` (getifaddrs).
fn interface_of(ip: IpAddr) -> Option<String> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a list we free below with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return None;
    }
    let mut found = None;
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is an element of the list getifaddrs returned, not yet freed.
        let entry = unsafe { &*at };
        at = entry.ifa_next;
        if entry.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr of the family it names.
        let addr = unsafe {
            match (*entry.ifa_addr).sa_family as i32 {
                libc::AF_INET => {
                    let v4 = &*(entry.ifa_addr as *const libc::sockaddr_in);
                    IpAddr::from(u32::from_be(v4.sin_addr.s_addr).to_be_bytes())
                }
                libc::AF_INET6 => {
                    let v6 = &*(entry.ifa_addr as *const libc::sockaddr_in6);
                    IpAddr::from(v6.sin6_addr.s6_addr)
                }
                _ => continue,
            }
        };
        if addr == ip {
            // SAFETY: ifa_name is a NUL-terminated string owned by the list.
            let name = unsafe { std::ffi::CStr::from_ptr(entry.ifa_name) };
            found = Some(name.to_string_lossy().into_owned());
            break;
        }
    }
    // SAFETY: `list` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The interfaces towards `hosts` (each host's route; a host that does not resolve is left
/// out). None when no host was given or none could be routed: every interface but loopback.
pub fn towards(hosts: &[String]) -> Option<Vec<String>> {
    let mut nics: Vec<String> = hosts.iter().filter_map(|h| route(h)).collect();
    nics.sort();
    nics.dedup();
    (!nics.is_empty()).then_some(nics)
}

/// The link speed of the interfaces towards the storage, in bytes per second, and what it was
/// read from: the slowest of them that reports a speed (`environment.nics`). Err says why
/// there is none (loopback, a virtual interface).
pub fn link_rate(environment: &Environment, nics: &[String]) -> Result<(u64, String), String> {
    if nics.is_empty() {
        return Err("no interface carries the storage's traffic".into());
    }
    let speeds: Vec<(u64, &str)> = nics
        .iter()
        .filter_map(|n| {
            let nic = environment.nics.iter().find(|e| &e.name == n)?;
            Some((nic.speed_mbit?, nic.name.as_str()))
        })
        .collect();
    match speeds.iter().min() {
        Some(&(mbit, name)) => Ok((
            mbit * 1_000_000 / 8,
            format!("auto: {name}'s link, {mbit} Mbit/s"),
        )),
        None if nics.iter().all(|n| n == "lo") => Err(
            "the storage is reached over loopback (lo), which has no link speed: it is on this machine"
                .into(),
        ),
        None => Err(format!(
            "{} reports no link speed (a virtual interface, or its driver does not say)",
            nics.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_of_a_mount_source_is_found() {
        for (source, host) in [
            ("nfs1:/export/data", Some("nfs1")),
            ("10.0.0.5:/vol", Some("10.0.0.5")),
            ("localhost:/gv0", Some("localhost")),
            ("gluster1:gv0", Some("gluster1")),
            ("//fileserver/share", Some("fileserver")),
            ("10.1.2.3@tcp:/lustre", Some("10.1.2.3")),
            ("10.1.2.3@o2ib,10.1.2.4@o2ib:/lustre", Some("10.1.2.3")),
            ("mon1:6789,mon2:6789:/", Some("mon1")),
            ("[fd00::5]:/export", Some("fd00::5")),
            ("beegfs_nodev", None),
        ] {
            assert_eq!(mount_server(source).as_deref(), host, "{source}");
        }
        assert_eq!(url_host("http://gw:9000/x").as_deref(), Some("gw"));
        assert_eq!(url_host("https://[::1]:443").as_deref(), Some("::1"));
        assert_eq!(url_host("127.0.0.1:9100").as_deref(), Some("127.0.0.1"));
    }

    #[test]
    fn this_machines_addresses_route_through_loopback() {
        assert_eq!(route("127.0.0.1").as_deref(), Some("lo"));
        assert_eq!(route("localhost").as_deref(), Some("lo"));
        assert_eq!(route("name.invalid"), None);
        assert_eq!(towards(&["name.invalid".into()]), None);
        assert_eq!(towards(&["127.0.0.1".into()]), Some(vec!["lo".to_string()]));
    }

    #[test]
    fn interface_counters_are_differenced_and_marked_towards_the_storage() {
        let before = vec![("eth0".to_string(), 100, 50), ("lo".into(), 10, 10)];
        let after = vec![
            ("eth0".to_string(), 1100, 60),
            ("lo".into(), 10, 10),
            ("new0".into(), 5, 5),
        ];
        let moved = io("h", &before, &after, None);
        assert_eq!(moved.len(), 1, "{moved:?}");
        assert_eq!((moved[0].received_bytes, moved[0].sent_bytes), (1000, 10));
        assert!(moved[0].towards_storage);
        let to_lo = io("h", &before, &after, Some(&["lo".to_string()]));
        assert!(!to_lo[0].towards_storage);
        // This machine's own counters are there and count up.
        let now = counters();
        assert!(now.iter().any(|(n, _, _)| n == "lo"), "{now:?}");
    }

    #[test]
    fn the_link_rate_is_the_slowest_link_towards_the_storage() {
        let mut env = crate::env::capture(None);
        let nic = |name: &str, speed| crate::Nic {
            name: name.into(),
            speed_mbit: speed,
            mtu: Some(1500),
            state: "up".into(),
            numa_node: None,
        };
        env.nics = vec![
            nic("eth0", Some(10_000)),
            nic("eth1", Some(25_000)),
            nic("veth0", None),
        ];
        assert_eq!(
            link_rate(&env, &["eth0".into(), "eth1".into()]),
            Ok((1_250_000_000, "auto: eth0's link, 10000 Mbit/s".into()))
        );
        let lo = link_rate(&env, &["lo".into()]).unwrap_err();
        assert!(lo.contains("loopback"), "{lo}");
        let virt = link_rate(&env, &["veth0".into()]).unwrap_err();
        assert!(virt.contains("veth0 reports no link speed"), "{virt}");
    }
}
