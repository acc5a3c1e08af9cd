//! CPU placement (`--cpus LIST`, `--numa N`): a list of CPUs as Linux writes it ("0-3,8"),
//! the CPUs of a NUMA node, the CPUs this process may run on, and each worker thread pinned to
//! one CPU of the list in turn (worker w to the list's CPU w mod its length), with what the
//! kernel then allows the thread read back from `/proc/thread-self/status`.

use std::fmt;
use std::io;

/// CPUs by number, in the order given, each once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(Vec<usize>);

impl CpuList {
    /// Parses "0-3,8" (ranges and single CPUs, comma-separated).
    pub fn parse(text: &str) -> Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.trim().split(',') {
            let number = |s: &str| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("{part:?} is not a CPU number or range (0-3,8)"))
            };
            let (from, to) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if from > to || to >= libc::CPU_SETSIZE as usize {
                return Err(format!("{part:?} is not a range of CPUs"));
            }
            cpus.extend(
                (from..=to)
                    .filter(|c| !cpus.contains(c))
                    .collect::<Vec<_>>(),
            );
        }
        Ok(CpuList(cpus))
    }

    pub fn cpus(&self) -> &[usize] {
        &self.0
    }

    /// The CPU worker `worker` runs on: the list's in turn.
    pub fn for_worker(&self, worker: usize) -> usize {
        self.0[worker % self.0.len()]
    }

    /// The CPUs of NUMA node `node`, as /sys/devices/system/node tells.
    pub fn of_node(node: u32) -> Result<CpuList, String> {
        let root = "/sys/devices/system/node";
        let path = format!("{root}/node{node}/cpulist");
        let text = std::fs::read_to_string(&path).map_err(|_| {
            let online = std::fs::read_to_string(format!("{root}/online"));
            let online = online.map_or("none listed".to_string(), |t| t.trim().to_string());
            format!("no NUMA node {node} here ({path} missing; nodes: {online})")
        })?;
        match CpuList::parse(&text)? {
            list if list.0.is_empty() => Err(format!("NUMA node {node} has no CPUs")),
            list => Ok(list),
        }
    }

    /// The CPUs this process may run on (its affinity mask).
    pub fn allowed() -> io::Result<CpuList> {
        // SAFETY: a zeroed cpu_set_t is empty; sched_getaffinity fills it.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `set` is valid for `size` bytes.
        if unsafe { libc::sched_getaffinity(0, size, &mut set) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let cpus = 0..libc::CPU_SETSIZE as usize;
        // SAFETY: CPU_ISSET reads the set within its size.
        Ok(CpuList(
            cpus.filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
                .collect(),
        ))
    }
}

impl fmt::Display for CpuList {
    /// Linux's form: consecutive CPUs as ranges ("0-3,8").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        let mut i = 0;
        while i < self.0.len() {
            let mut j = i;
            while j + 1 < self.0.len() && self.0[j + 1] == self.0[j] + 1 {
                j += 1;
            }
            parts.push(match j == i {
                true => self.0[i].to_string(),
                false => format!("{}-{}", self.0[i], self.0[j]),
            });
            i = j + 1;
        }
        f.write_str(&parts.join(","))
    }
}

/// Pins the calling thread to `cpu`.
pub(crate) fn pin(cpu: usize) -> io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET marks one CPU under CPU_SETSIZE (parsed so).
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    unsafe { libc::CPU_SET(cpu, &mut set) };
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: pid 0 is the calling thread; `set` is valid for `size` bytes.
    if unsafe { libc::sched_setaffinity(0, size, &set) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The CPUs the kernel lets the calling thread run on, as `/proc/thread-self/status` writes
/// them (`Cpus_allowed_list`); None where it cannot be read.
pub(crate) fn allowed_here() -> Option<String> {
    let status = std::fs::read_to_string("/proc/thread-self/status").ok()?;
    let line = status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_as_linux_writes_them() {
        let list = CpuList::parse("0-3,8,10-11").unwrap();
        assert_eq!(list.cpus(), [0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(list.to_string(), "0-3,8,10-11");
        assert_eq!(CpuList::parse("5,1").unwrap().to_string(), "5,1");
        assert_eq!(CpuList::parse("2,2").unwrap().cpus(), [2]);
        assert_eq!(list.for_worker(8), 1);
        for bad in ["", "a", "3-1", "1-", "0,,1", "99999"] {
            assert!(CpuList::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pinned_thread_is_allowed_its_cpu_only() {
        let allowed = CpuList::allowed().unwrap();
        let last = *allowed.cpus().last().expect("some CPU allowed");
        let seen = std::thread::spawn(move || {
            pin(last).unwrap();
            allowed_here()
        });
        assert_eq!(seen.join().unwrap(), Some(last.to_string()));
        // This thread was not pinned.
        assert_eq!(allowed_here(), Some(allowed.to_string()));
    }
}
