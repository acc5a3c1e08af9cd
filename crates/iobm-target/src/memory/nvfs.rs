//! nvidia-fs's counters (`/proc/driver/nvidia-fs/stats`): the bytes the kernel module moved
//! GPU-direct, read and written, which cuFile's compatibility mode does not move. Read before
//! and after a `--gds` phase; for tests the file is another one
//! (`IOBM_TEST_NVFS_STATS=PATH`), which the fake cuFile adds to.

use std::io;
use std::path::PathBuf;

/// Where nvidia-fs says its counters.
pub const NVFS_STATS: &str = "/proc/driver/nvidia-fs/stats";

/// The stats file read: [`NVFS_STATS`], or for tests the file `IOBM_TEST_NVFS_STATS` names.
pub fn source() -> PathBuf {
    std::env::var_os("IOBM_TEST_NVFS_STATS")
        .map_or_else(|| PathBuf::from(NVFS_STATS), PathBuf::from)
}

/// What nvidia-fs has moved GPU-direct since it was loaded, in bytes (it counts MiB).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NvfsStats {
    pub read_bytes: u64,
    pub written_bytes: u64,
}

impl NvfsStats {
    /// The counters now; None where there is no stats file (nvidia-fs not loaded) or it holds
    /// neither counter.
    pub fn now() -> Option<NvfsStats> {
        NvfsStats::parse(&std::fs::read_to_string(source()).ok()?)
    }

    /// The counters of the stats file's text: `readMiB=` on its `Reads` line, `writeMiB=` on
    /// its `Writes` line.
    pub fn parse(text: &str) -> Option<NvfsStats> {
        let field = |line: &str, key: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key)?.parse::<u64>().ok())
        };
        let (mut read, mut written) = (None, None);
        for line in text.lines() {
            let line = line.trim_start();
            if line.starts_with("Reads") {
                read = read.or(field(line, "readMiB="));
            } else if line.starts_with("Writes") {
                written = written.or(field(line, "writeMiB="));
            }
        }
        (read.is_some() || written.is_some()).then(|| NvfsStats {
            read_bytes: read.unwrap_or(0) << 20,
            written_bytes: written.unwrap_or(0) << 20,
        })
    }

    /// What moved from `self` to `after`.
    pub fn until(&self, after: &NvfsStats) -> NvfsStats {
        NvfsStats {
            read_bytes: after.read_bytes.saturating_sub(self.read_bytes),
            written_bytes: after.written_bytes.saturating_sub(self.written_bytes),
        }
    }

    /// The two lines of the stats file that hold the counters, as nvidia-fs writes them.
    pub fn render(&self) -> String {
        format!(
            "Reads                           : n=0 ok=0 err=0 readMiB={} io_state_err=0\nWrites                          : n=0 ok=0 err=0 writeMiB={} io_state_err=0 pg-cache=0 pg-cache-fail=0 pg-cache-eio=0\n",
            self.read_bytes >> 20,
            self.written_bytes >> 20
        )
    }
}

/// The fake cuFile's GPU-direct bytes added to the test's stats file (only where
/// `IOBM_TEST_NVFS_STATS` names one: the real file is the kernel's).
pub(crate) fn add_to_fake(moved: NvfsStats) -> io::Result<()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = LOCK.lock().unwrap();
    let Some(path) = std::env::var_os("IOBM_TEST_NVFS_STATS") else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)?;
    let was = NvfsStats::parse(&text).unwrap_or_default();
    let now = NvfsStats {
        read_bytes: was.read_bytes + moved.read_bytes,
        written_bytes: was.written_bytes + moved.written_bytes,
    };
    std::fs::write(path, now.render())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counters_are_read_from_the_reads_and_writes_lines() {
        let text = "GDS Version: 1.9.0.20\nNVFS statistics(ver: 4.0)\nActive Shadow-Buffer (MiB): 0\nReads                           : n=12 ok=12 err=0 readMiB=4096 io_state_err=0\nReads                           : Bandwidth(MiB/s)=0 Avg-Latency(usec)=0\nSparse Reads                    : n=0 io=0 holes=0 pages=0\nWrites                          : n=3 ok=3 err=0 writeMiB=7 io_state_err=0 pg-cache=0\n";
        let stats = NvfsStats::parse(text).unwrap();
        assert_eq!(stats.read_bytes, 4096 << 20);
        assert_eq!(stats.written_bytes, 7 << 20);
        assert_eq!(NvfsStats::parse(&stats.render()), Some(stats));
        assert_eq!(NvfsStats::parse("GDS Version: 1.9\n"), None);
        let later = NvfsStats {
            read_bytes: 5000 << 20,
            ..stats
        };
        assert_eq!(stats.until(&later).read_bytes, 904 << 20);
        assert_eq!(stats.until(&later).written_bytes, 0);
    }
}
