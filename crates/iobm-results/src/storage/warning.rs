//! What the device counters' judgement warns of: other I/O on the device, so that its counters
//! are not this run's evidence. Each carries its figures; its text is its `Display`.

use iobm_stats::format_bytes;
use std::fmt;

/// A warning of the storage judgement ([`super::Judged::warnings`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageWarning {
    /// The device delivered more than this run's reads had fetched (`/proc/self/io`).
    OtherReads {
        device: String,
        delivered: u64,
        fetched: u64,
    },
    /// The device delivered more than the phase read.
    MoreRead {
        device: String,
        delivered: u64,
        read: u64,
    },
    /// The device took more than this run wrote.
    MoreWritten {
        device: String,
        took: u64,
        wrote: u64,
    },
}

impl fmt::Display for StorageWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageWarning::OtherReads {
                device,
                delivered,
                fetched,
            } => write!(
                f,
                "other I/O ran on the device: {device} delivered {} during the phase while this run's reads had {} fetched from storage (/proc/self/io); its counters are not this run's evidence",
                format_bytes(*delivered),
                format_bytes(*fetched)
            ),
            StorageWarning::MoreRead {
                device,
                delivered,
                read,
            } => write!(
                f,
                "the device {device} delivered {} for the {} read: more than the phase read, so other I/O ran on it (or readahead fetched more); its counters are not this run's evidence",
                format_bytes(*delivered),
                format_bytes(*read)
            ),
            StorageWarning::MoreWritten { device, took, wrote } => write!(
                f,
                "the device {device} took {} during the phase, more than this run wrote ({}): other I/O (or the write-back of earlier data, a mirror's second copy) ran on it; its counters are not this run's evidence",
                format_bytes(*took),
                format_bytes(*wrote)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StorageWarning;

    #[test]
    fn each_warning_reads_with_its_figures() {
        let device = || "254:0".to_string();
        let other = StorageWarning::OtherReads {
            device: device(),
            delivered: 2 << 30,
            fetched: 0,
        };
        assert_eq!(other.to_string(), "other I/O ran on the device: 254:0 delivered 2.00 GiB during the phase while this run's reads had 0 B fetched from storage (/proc/self/io); its counters are not this run's evidence");
        let read = StorageWarning::MoreRead {
            device: device(),
            delivered: 3 << 20,
            read: 1 << 20,
        };
        assert!(read
            .to_string()
            .starts_with("the device 254:0 delivered 3.00 MiB for the 1.00 MiB read: more than"));
        let written = StorageWarning::MoreWritten {
            device: device(),
            took: 3 << 20,
            wrote: 1 << 20,
        };
        assert!(written
            .to_string()
            .starts_with("the device 254:0 took 3.00 MiB during the phase, more than this run wrote (1.00 MiB): other I/O"));
    }
}
