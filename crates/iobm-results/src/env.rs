//! Captures the environment of a run: host, kernel, CPUs, memory, and the file system under the
//! measured directory (type, mount point, options, size) from /proc and statvfs.

use crate::{BlockDevice, Environment, Nic, StorageInfo};
use std::ffi::CStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Text taken from the system, made fit for reports and JSON: NUL padding and surrounding
/// whitespace trimmed (C strings in fixed buffers, sysfs's trailing newlines), a tab made a
/// space, any other control character (C0, DEL, C1) written as an escape (`\x07`, `\u{85}`):
/// nothing invisible, and nothing that could drive a terminal, reaches a report.
pub fn printable(s: &str) -> String {
    let s = s.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    if !s.chars().any(char::is_control) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\t' => out.push(' '),
            c if c.is_control() && (c as u32) < 0x80 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn uname() -> [String; 4] {
    // SAFETY: uname fills the zeroed struct; the fields are NUL-terminated C strings.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Default::default();
    }
    let field = |f: &[libc::c_char]| {
        // SAFETY: uname NUL-terminates every field within its array.
        printable(&unsafe { CStr::from_ptr(f.as_ptr()) }.to_string_lossy())
    };
    [
        field(&u.nodename),
        field(&u.release),
        field(&u.version),
        field(&u.machine),
    ]
}

/// Physical memory in bytes, from /proc/meminfo.
pub fn ram_bytes() -> u64 {
    fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

fn os_name() -> String {
    fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| printable(v.trim_matches('"')))
        })
        .unwrap_or_else(|| std::env::consts::OS.to_string())
}

fn cpu_model() -> Option<String> {
    let info = fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| printable(v))
}

/// The host name, as the kernel knows it.
pub fn hostname() -> String {
    uname()[0].clone()
}

/// Undoes the octal escapes of /proc/self/mountinfo (`\040` for a space).
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4);
        if bytes[i] == b'\\' && octal.is_some_and(|o| o.iter().all(|b| (b'0'..=b'7').contains(b))) {
            let o = octal.unwrap_or_default();
            out.push((o[0] - b'0') * 64 + (o[1] - b'0') * 8 + (o[2] - b'0'));
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The file system holding `path`: the mountinfo entry with the device of `path` and the
/// longest mount point that is a prefix of it.
pub fn storage_info(path: &Path) -> Option<StorageInfo> {
    let path = fs::canonicalize(path).ok()?;
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<(usize, StorageInfo)> = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 6 || r.len() < 3 {
            continue;
        }
        let mount_point = unescape(l[4]);
        if !path.starts_with(&mount_point) {
            continue;
        }
        // The longest mount point wins; among mounts stacked on one point, the last one.
        let depth = mount_point.len();
        if best.as_ref().is_some_and(|(d, _)| *d > depth) {
            continue;
        }
        best = Some((
            depth,
            StorageInfo {
                path: printable(&path.display().to_string()),
                fs_type: printable(r[0]),
                mount_point: printable(&mount_point),
                mount_source: printable(&unescape(r[1])),
                mount_options: printable(&format!("{},{}", l[5], r[2])),
                device: printable(l[2]),
                total_bytes: 0,
                available_bytes: 0,
                block_device: block_device(l[2]),
            },
        ));
    }
    let (_, mut info) = best?;
    if let Some((total, available)) = space(&path) {
        info.total_bytes = total;
        info.available_bytes = available;
    }
    Some(info)
}

/// The block device `major:minor` as sysfs describes it: for a partition, its whole disk.
fn block_device(major_minor: &str) -> Option<BlockDevice> {
    let dev = fs::canonicalize(format!("/sys/dev/block/{major_minor}")).ok()?;
    let disk = if dev.join("queue").is_dir() {
        dev
    } else {
        dev.parent()?.to_path_buf()
    };
    let read = |p: &str| {
        fs::read_to_string(disk.join(p))
            .ok()
            .map(|v| printable(&v))
            .filter(|v| !v.is_empty())
    };
    Some(BlockDevice {
        name: printable(&disk.file_name()?.to_string_lossy()),
        model: read("device/model"),
        rotational: read("queue/rotational").map(|r| r == "1"),
        scheduler: read("queue/scheduler").and_then(|s| {
            let (_, rest) = s.split_once('[')?;
            rest.split_once(']').map(|(name, _)| name.to_string())
        }),
        numa_node: Some(numa_node(&disk.join("device"))),
    })
}

/// The NUMA node sysfs gives the device at `device` (its own `numa_node`, or that of the
/// nearest device above it: a disk's controller, a virtio device's PCI function); -1 where
/// none does or the kernel says -1 (no node).
fn numa_node(device: &Path) -> i32 {
    let Ok(device) = fs::canonicalize(device) else {
        return -1;
    };
    device
        .ancestors()
        .take_while(|d| d.starts_with("/sys/devices"))
        .find_map(|d| fs::read_to_string(d.join("numa_node")).ok())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(-1)
}

/// CPUs online, and NUMA nodes, from sysconf and sysfs.
fn machine_counts() -> (u32, u32) {
    // SAFETY: sysconf has no preconditions.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }.max(0) as u32;
    let nodes = fs::read_dir("/sys/devices/system/node").map_or(0, |d| {
        d.flatten()
            .filter(|e| {
                let name = e.file_name();
                let name = name.to_string_lossy();
                name.strip_prefix("node")
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            })
            .count() as u32
    });
    (online, nodes)
}

/// How well the kernel keeps the wall clock (NTP, PTP): its own estimate, from `adjtimex`.
pub fn wall_clock_sync() -> Option<String> {
    // SAFETY: ntp_adjtime with modes 0 only reads the kernel's clock state into the zeroed
    // struct.
    let mut tx: libc::timex = unsafe { std::mem::zeroed() };
    let state = unsafe { libc::ntp_adjtime(&mut tx) };
    if state < 0 {
        return None;
    }
    Some(
        if state == libc::TIME_ERROR || tx.status & libc::STA_UNSYNC != 0 {
            "not synchronized (no NTP or PTP discipline): wall clocks of separate runs may differ by any amount".to_string()
        } else {
            format!(
                "synchronized, estimated error {} us, at most {} us",
                tx.esterror, tx.maxerror
            )
        },
    )
}

/// This process's affinity mask as a CPU list ("0-3,8").
fn affinity() -> String {
    // SAFETY: sched_getaffinity fills a zeroed cpu_set_t of the size given.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } != 0 {
        return String::new();
    }
    // SAFETY: CPU_ISSET reads the set filled above, within CPU_SETSIZE.
    let on = |c: usize| unsafe { libc::CPU_ISSET(c, &set) };
    let mut ranges: Vec<String> = Vec::new();
    let mut c = 0;
    let size = libc::CPU_SETSIZE as usize;
    while c < size {
        if !on(c) {
            c += 1;
            continue;
        }
        let start = c;
        while c + 1 < size && on(c + 1) {
            c += 1;
        }
        ranges.push(if start == c {
            start.to_string()
        } else {
            format!("{start}-{c}")
        });
        c += 1;
    }
    ranges.join(",")
}

/// The network interfaces but loopback, from /sys/class/net.
fn nics() -> Vec<Nic> {
    let Ok(entries) = fs::read_dir("/sys/class/net") else {
        return Vec::new();
    };
    let mut nics: Vec<Nic> = entries
        .flatten()
        .filter_map(|e| {
            let name = printable(&e.file_name().to_string_lossy());
            let dir = e.path();
            let read = |f: &str| fs::read_to_string(dir.join(f)).ok().map(|v| printable(&v));
            // Loopback is type 772 (ARPHRD_LOOPBACK).
            if read("type").as_deref() == Some("772") {
                return None;
            }
            Some(Nic {
                name,
                // Virtual and down interfaces say -1 or refuse.
                speed_mbit: read("speed")
                    .and_then(|s| s.parse::<i64>().ok())
                    .filter(|&s| s > 0)
                    .map(|s| s as u64),
                mtu: read("mtu").and_then(|m| m.parse().ok()),
                state: read("operstate").unwrap_or_default(),
                numa_node: Some(numa_node(&dir.join("device"))),
            })
        })
        .collect();
    nics.sort_by(|a, b| a.name.cmp(&b.name));
    nics
}

/// (size, available to unprivileged users) of the file system at `path`, in bytes.
pub fn space(path: &Path) -> Option<(u64, u64)> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct from a valid NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let frsize = s.f_frsize as u64;
    Some((s.f_blocks as u64 * frsize, s.f_bavail as u64 * frsize))
}

/// Inodes of the file system holding `path`: (all, free to unprivileged users); None where it
/// reports none (some FUSE and network file systems count no inodes).
pub fn inodes(path: &Path) -> Option<(u64, u64)> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs fills the zeroed struct from a valid NUL-terminated path.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 || s.f_files == 0 {
        return None;
    }
    Some((s.f_files as u64, s.f_favail as u64))
}

/// The environment of a run measuring `dir` (None for targets that are not directories).
pub fn capture(dir: Option<&Path>) -> Environment {
    let [hostname, kernel, kernel_version, arch] = uname();
    let (cpus_online, numa_nodes) = machine_counts();
    Environment {
        hostname,
        os: os_name(),
        kernel,
        kernel_version,
        arch,
        cpus: std::thread::available_parallelism()
            .map(|n| n.get() as u32)
            .unwrap_or(1),
        cpus_online,
        numa_nodes,
        cpu_model: cpu_model(),
        ram_bytes: ram_bytes(),
        iobm_version: env!("CARGO_PKG_VERSION").to_string(),
        storage: dir.and_then(storage_info),
        affinity: affinity(),
        nics: nics(),
        mpi: None,
        gpus: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_of_a_temp_dir() {
        let dir = std::env::temp_dir();
        let env = capture(Some(&dir));
        assert!(!env.hostname.is_empty());
        assert!(!env.kernel.is_empty());
        assert!(env.cpus >= 1);
        assert!(env.cpus_online >= env.cpus, "{env:?}");
        assert!(env.ram_bytes > 0);
        let storage = env.storage.expect("temp dir has a file system");
        assert!(!storage.fs_type.is_empty());
        assert!(dir
            .canonicalize()
            .unwrap()
            .starts_with(&storage.mount_point));
        assert!(storage.total_bytes >= storage.available_bytes);
        // The affinity list names as many CPUs as `cpus` counts.
        let listed: u32 = env
            .affinity
            .split(',')
            .map(|r| match r.split_once('-') {
                Some((a, b)) => b.parse::<u32>().unwrap() - a.parse::<u32>().unwrap() + 1,
                None => 1,
            })
            .sum();
        assert_eq!(listed, env.cpus);
        assert!(env.nics.iter().all(|n| n.name != "lo"), "{:?}", env.nics);
    }

    #[test]
    fn cpus_are_the_affinity_mask_and_cpus_online_the_machine() {
        // SAFETY: sched_{get,set}affinity on this thread with a valid cpu_set_t.
        unsafe {
            let mut before: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of_val(&before), &mut before),
                0
            );
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            let first = (0..libc::CPU_SETSIZE as usize)
                .find(|&c| libc::CPU_ISSET(c, &before))
                .unwrap();
            libc::CPU_SET(first, &mut one);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of_val(&one), &one),
                0
            );
            let env = capture(None);
            libc::sched_setaffinity(0, std::mem::size_of_val(&before), &before);
            assert_eq!(env.cpus, 1);
            assert_eq!(env.affinity, first.to_string());
            assert!(env.cpus_online >= 1);
        }
    }

    #[test]
    fn text_from_the_system_carries_no_nul_or_control_bytes() {
        // Open MPI's library version as MPI_Get_library_version returns it, NUL and all.
        assert_eq!(
            printable("Open MPI v4.1.4, May 26, 2022\0"),
            "Open MPI v4.1.4, May 26, 2022"
        );
        assert_eq!(printable("  Intel(R) Xeon(R)\n\0\0"), "Intel(R) Xeon(R)");
        assert_eq!(
            printable("a\tb\0c\x1b[2Jd\u{85}e"),
            "a b\\x00c\\x1b[2Jd\\u{85}e"
        );
        let env = capture(Some(std::path::Path::new(".")));
        let json = serde_json::to_string(&env).unwrap();
        assert!(!json.contains("\\u00"), "{json}");
        assert!(!json.chars().any(char::is_control), "{json}");
    }

    #[test]
    fn a_devices_numa_node_is_the_nearest_one_sysfs_gives_or_none() {
        // No device, and a virtual interface with none above it: -1, never a guess.
        assert_eq!(numa_node(Path::new("/nonexistent/device")), -1);
        assert_eq!(numa_node(Path::new("/sys/class/net/lo/device")), -1);
        // A PCI device's own file, as the kernel wrote it.
        let pci = fs::read_dir("/sys/bus/pci/devices").expect("this test needs PCI in sysfs");
        let first = pci.flatten().next().expect("a PCI device").path();
        let said: i32 = fs::read_to_string(first.join("numa_node"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_eq!(numa_node(&first), said);
        // A device below it (a virtio disk's `virtio1`) takes the node of the device above.
        if let Some(child) = fs::read_dir(fs::canonicalize(&first).unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.is_dir() && !p.join("numa_node").exists() && p.join("uevent").exists())
        {
            assert_eq!(numa_node(&child), said, "{}", child.display());
        }
    }

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/mnt/my\040disk"), "/mnt/my disk");
        assert_eq!(unescape("plain"), "plain");
    }
}
