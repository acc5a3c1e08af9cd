//! What the checks on a phase warn of ([`super::warnings`]), each carrying its figures; its
//! text is its `Display`, and [`super::phase_warnings`] is the one place they become the
//! document's strings.

use super::workers::Uneven;
use crate::pace::schedule::PaceWarning;
use crate::remote::RemoteWarning;
use crate::storage::StorageWarning;
use iobm_stats::{format_bytes, Disagreement};
use std::fmt;

/// What to do about a file read's cache effect.
const CACHE_HINT: &str = "use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM";

/// A warning about a phase's numbers.
#[derive(Debug, Clone, PartialEq)]
pub enum Warning {
    /// The aggregates' definitions disagree.
    Disagree(Disagreement),
    /// Workers that moved nothing or ran a small part of the phase.
    Uneven(Uneven),
    /// The phase was interrupted.
    Interrupted,
    /// The phase stopped for errors.
    Failed,
    /// The open loop's findings.
    Pace(PaceWarning),
    /// Operations that failed in a complete phase.
    FailedOperations { count: u64 },
    /// The file system is memory (tmpfs, ramfs).
    MemoryFs,
    /// The block devices are RAM by their driver (`ram`, as [`crate::storage::ram`] names
    /// them).
    MemoryDevice { ram: String },
    /// Servers', gateways' and object reads' cache effects and bounds.
    Server(ServerWarning),
    /// File reads' and writes' cache effects.
    Files(FileWarning),
    /// The device counters' judgement.
    Storage(StorageWarning),
    /// The servers', the wire's and the line rate's.
    Remote(RemoteWarning),
}

/// A warning of servers, gateways and object reads.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerWarning {
    /// The data set fits in a server's memory, which no client residency shows.
    ServerCache {
        data: u64,
        server: u64,
        source: &'static str,
    },
    /// iobm and a gateway on this machine used most of its CPUs' time.
    CpuBound {
        who: GatewayCpu,
        used: f64,
        available: f64,
        cpus: u32,
    },
    /// The gateway's page cache held much of what it served.
    GatewayCache { resident: u64, served: u64 },
    /// GETs faster than the line rate given.
    OverTheLine { rate: u64, line: u64 },
    /// GETs far faster than this run's PUTs.
    GetsOutranPuts { rate: f64, put: f64 },
    /// GETs read the data set many times over.
    ReadOver { data: u64, passes: f64 },
}

/// A warning of file reads and writes.
#[derive(Debug, Clone, PartialEq)]
pub enum FileWarning {
    /// Much of a file read's data set was in the page cache when it began.
    Resident { resident: u64, data: u64 },
    /// The block device delivered less than half of a file read.
    DeviceDelivered {
        device: String,
        read: u64,
        moved: u64,
    },
    /// A buffered read's data set fits in RAM, residency unknown.
    FitsInRam { data: u64, ram: u64 },
    /// Snapshots of buffered writes count bytes not yet flushed (`--fsync end`).
    UnflushedSnapshots,
    /// Less than half of a file write reached the block device.
    DeviceTook {
        device: String,
        written: u64,
        moved: u64,
    },
    /// Buffered writes without fsync.
    NoFsync,
}

/// Whose CPU time is the gateway's in [`ServerWarning::CpuBound`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayCpu {
    /// iobm's built-in gateway's threads.
    BuiltIn,
    /// The counters of one gateway on this host.
    OneHere,
    /// The counters of several gateways on this host.
    SeveralHere,
}

impl fmt::Display for GatewayCpu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GatewayCpu::BuiltIn => "its built-in gateway",
            GatewayCpu::OneHere => "the gateway on this machine (its counters)",
            GatewayCpu::SeveralHere => "the gateways on this machine (their counters)",
        })
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Warning::*;
        match self {
            Disagree(d) => d.fmt(f),
            Uneven(u) => u.fmt(f),
            Interrupted => f.write_str("interrupted: these numbers cover part of the phase"),
            Failed => f.write_str("failed: these numbers cover the phase until it stopped for errors (failed operations are not in them)"),
            Pace(p) => p.fmt(f),
            FailedOperations { count } => write!(
                f,
                "{count} operations failed and are not in these numbers (see errors)"
            ),
            MemoryFs => f.write_str("memory: the data lives in RAM (tmpfs or ramfs), so these rates are memory rates, not a storage device's, whether O_DIRECT or not"),
            MemoryDevice { ram } => write!(f, "memory: the data lives in RAM ({ram}, by its driver), so these rates are memory rates, not a storage device's, whether O_DIRECT or not"),
            Storage(w) => w.fmt(f),
            Remote(w) => w.fmt(f),
            Server(w) => w.fmt(f),
            Files(w) => w.fmt(f),
        }
    }
}

impl fmt::Display for ServerWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ServerWarning::*;
        match self {
            ServerCache { data, server, source } => write!(
                f,
                "possible server cache: the data set ({}) is smaller than the server's memory ({}, {source}), so the server can serve it from its cache whatever this client's cache holds",
                format_bytes(*data),
                format_bytes(*server)
            ),
            CpuBound { who, used, available, cpus } => write!(
                f,
                "bounded by this machine's CPU, not by the storage: iobm and {who} used {used:.1} of the {available:.1} CPU-s its {cpus} CPUs had in the phase ({:.0}%); give the gateway its own machine (iobm serve) to measure the storage",
                100.0 * used / available
            ),
            GatewayCache { resident, served } => {
                let share = crate::share::pct(*resident, *served);
                write!(
                    f,
                    "cache effect: the gateway's page cache held {share:.0}% of the {} it served before it read them, so this is {} a memory rate",
                    format_bytes(*served),
                    if share >= crate::share::MOST { "mostly" } else { "partly" }
                )
            }
            OverTheLine { rate, line } => write!(
                f,
                "impossible over the network: the GETs moved {}/s over the whole phase, above the line rate of {}/s ({:.3} Gbit/s) given with --line-rate; a cache on this side of the network served them",
                format_bytes(*rate),
                format_bytes(*line),
                *line as f64 * 8.0 / 1e9
            ),
            GetsOutranPuts { rate, put } => write!(
                f,
                "possible cache effect: the GETs moved {}/s, {:.1} times the {}/s this run's PUTs stored; a store's reads seldom outrun its writes that far unless a cache serves them",
                format_bytes(*rate as u64),
                rate / put,
                format_bytes(*put as u64)
            ),
            ReadOver { data, passes } => write!(
                f,
                "possible cache effect: the GETs read the data set ({}) {passes:.1} times over; after the first pass it can come from the server's caches (use more --objects than the server's memory holds)",
                format_bytes(*data)
            ),
        }
    }
}

impl fmt::Display for FileWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FileWarning::*;
        match self {
            Resident { resident, data } => write!(
                f,
                "cache effect: {:.0}% of the data ({} of {}) was in the page cache when the read began, so this is partly a memory rate; {CACHE_HINT}",
                crate::share::pct(*resident, *data),
                format_bytes(*resident),
                format_bytes(*data)
            ),
            DeviceDelivered { device, read, moved } => write!(
                f,
                "cache effect: the block device {device} delivered {} for {} read ({:.0}%); the rest came from a cache",
                format_bytes(*read),
                format_bytes(*moved),
                crate::share::pct(*read, *moved)
            ),
            FitsInRam { data, ram } => write!(
                f,
                "possible cache effect: the data set ({}) fits in RAM ({}); {CACHE_HINT}",
                format_bytes(*data),
                format_bytes(*ram)
            ),
            UnflushedSnapshots => f.write_str("first done and steady state count the bytes other workers had handed to the page cache, not yet flushed by their final fsync (--fsync end); the makespan includes every flush"),
            DeviceTook { device, written, moved } => write!(
                f,
                "cache effect: only {} of the {} written reached the block device {device} during the phase; the rest stayed in or was overwritten in the page cache (use --direct, or --fsync end with a data set that is written once)",
                format_bytes(*written),
                format_bytes(*moved)
            ),
            NoFsync => f.write_str("possible cache effect: without --fsync or --direct, written data may still be in the page cache when the phase ends"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_stats::AggregateKind;

    const MIB: u64 = 1 << 20;

    #[test]
    fn each_warning_reads_with_its_figures() {
        let cases: [(Warning, &str); 12] = [
            (
                Warning::Disagree(Disagreement::Zero {
                    zero: AggregateKind::Makespan,
                    other: AggregateKind::SumOfRates,
                }),
                "aggregates disagree: makespan is zero while sum of rates is not",
            ),
            (
                Warning::FailedOperations { count: 3 },
                "3 operations failed and are not in these numbers (see errors)",
            ),
            (
                Warning::MemoryDevice { ram: "7:0 (ram0) is brd".into() },
                "memory: the data lives in RAM (7:0 (ram0) is brd, by its driver), so these rates are memory rates, not a storage device's, whether O_DIRECT or not",
            ),
            (
                Warning::Server(ServerWarning::ServerCache {
                    data: 1 << 30,
                    server: 4 << 30,
                    source: "--server-ram",
                }),
                "possible server cache: the data set (1.00 GiB) is smaller than the server's memory (4.00 GiB, --server-ram), so the server can serve it from its cache whatever this client's cache holds",
            ),
            (
                Warning::Server(ServerWarning::CpuBound {
                    who: GatewayCpu::SeveralHere,
                    used: 7.5,
                    available: 8.0,
                    cpus: 4,
                }),
                "bounded by this machine's CPU, not by the storage: iobm and the gateways on this machine (their counters) used 7.5 of the 8.0 CPU-s its 4 CPUs had in the phase (94%); give the gateway its own machine (iobm serve) to measure the storage",
            ),
            (
                Warning::Server(ServerWarning::GatewayCache {
                    resident: 50 * MIB,
                    served: 100 * MIB,
                }),
                "cache effect: the gateway's page cache held 50% of the 100.00 MiB it served before it read them, so this is partly a memory rate",
            ),
            (
                Warning::Server(ServerWarning::OverTheLine {
                    rate: 200 * MIB,
                    line: 125_000_000,
                }),
                "impossible over the network: the GETs moved 200.00 MiB/s over the whole phase, above the line rate of 119.21 MiB/s (1.000 Gbit/s) given with --line-rate; a cache on this side of the network served them",
            ),
            (
                Warning::Server(ServerWarning::GetsOutranPuts {
                    rate: (600 * MIB) as f64,
                    put: (100 * MIB) as f64,
                }),
                "possible cache effect: the GETs moved 600.00 MiB/s, 6.0 times the 100.00 MiB/s this run's PUTs stored; a store's reads seldom outrun its writes that far unless a cache serves them",
            ),
            (
                Warning::Files(FileWarning::Resident {
                    resident: 25 * MIB,
                    data: 100 * MIB,
                }),
                "cache effect: 25% of the data (25.00 MiB of 100.00 MiB) was in the page cache when the read began, so this is partly a memory rate; use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM",
            ),
            (
                Warning::Files(FileWarning::DeviceDelivered {
                    device: "8:0".into(),
                    read: 10 * MIB,
                    moved: 100 * MIB,
                }),
                "cache effect: the block device 8:0 delivered 10.00 MiB for 100.00 MiB read (10%); the rest came from a cache",
            ),
            (
                Warning::Files(FileWarning::FitsInRam {
                    data: 100 * MIB,
                    ram: 1 << 30,
                }),
                "possible cache effect: the data set (100.00 MiB) fits in RAM (1.00 GiB); use --direct, drop the page cache first (sync; echo 3 > /proc/sys/vm/drop_caches), or a data set over twice the RAM",
            ),
            (
                Warning::Files(FileWarning::DeviceTook {
                    device: "8:0".into(),
                    written: 10 * MIB,
                    moved: 100 * MIB,
                }),
                "cache effect: only 10.00 MiB of the 100.00 MiB written reached the block device 8:0 during the phase; the rest stayed in or was overwritten in the page cache (use --direct, or --fsync end with a data set that is written once)",
            ),
        ];
        for (warning, text) in cases {
            assert_eq!(warning.to_string(), text);
        }
    }
}
