//! What the evidence from beyond the client warns of (servers, the network, the servers'
//! devices). Each carries its figures; its text is its `Display`.

use super::Way;
use crate::share::pct;
use iobm_stats::format_bytes;
use std::fmt;

/// A warning of [`super::warnings`].
#[derive(Debug, Clone, PartialEq)]
pub enum RemoteWarning {
    /// A server's metrics did not answer.
    Unanswered { endpoint: String, why: String },
    /// A host moved more per second than the network's line rate.
    OverTheLine { host: String, rate: u64, line: u64 },
    /// The client received less than half of what it read over its NICs.
    WireReceived {
        received: u64,
        read: u64,
        nics: String,
    },
    /// The client sent less than half of what it wrote over its NICs.
    WireSent {
        sent: u64,
        written: u64,
        nics: String,
    },
    /// The servers' devices moved more than the phase one way.
    OtherServerIo { way: Way, counted: u64, moved: u64 },
    /// The servers' devices read less than half of what was served.
    ServersRead { read: u64, served: u64 },
    /// The servers' devices wrote less than half of what was written.
    ServersWrote { wrote: u64, written: u64 },
    /// A server's CPU was busy enough to bound the phase (`same_host`: node_exporter on this
    /// machine).
    ServerCpu {
        endpoint: String,
        same_host: bool,
        busy_pct: f64,
    },
}

impl fmt::Display for RemoteWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use RemoteWarning::*;
        match self {
            Unanswered { endpoint, why } => write!(
                f,
                "server evidence unavailable: {endpoint} did not answer {why}"
            ),
            OverTheLine { host, rate, line } => write!(
                f,
                "impossible over the network: {host} moved {}/s over the whole phase, above the line rate of {}/s ({:.3} Gbit/s); a cache on this side of the network served or took it",
                format_bytes(*rate),
                format_bytes(*line),
                *line as f64 * 8.0 / 1e9
            ),
            WireReceived { received, read, nics } => write!(
                f,
                "cache effect: the client received {} over {nics} for the {} read ({:.0}%): its own cache served the rest",
                format_bytes(*received),
                format_bytes(*read),
                pct(*received, *read)
            ),
            WireSent { sent, written, nics } => write!(
                f,
                "cache effect: the client sent {} over {nics} for the {} written ({:.0}%): the rest is still in its cache",
                format_bytes(*sent),
                format_bytes(*written),
                pct(*sent, *written)
            ),
            OtherServerIo { way, counted, moved } => write!(
                f,
                "other I/O ran on the servers' devices: they {} {} during the phase for the {} {}{}; their counters are not this phase's evidence",
                way.did(),
                format_bytes(*counted),
                format_bytes(*moved),
                way.moved(),
                way.besides()
            ),
            ServersRead { read, served } => write!(
                f,
                "cache effect: the servers' devices read {} of the {} served ({:.1}%): their caches served the rest",
                format_bytes(*read),
                format_bytes(*served),
                pct(*read, *served)
            ),
            ServersWrote { wrote, written } => write!(
                f,
                "cache effect: the servers' devices wrote {} of the {} written during the phase ({:.1}%): the rest is in their caches",
                format_bytes(*wrote),
                format_bytes(*written),
                pct(*wrote, *written)
            ),
            ServerCpu {
                endpoint,
                same_host,
                busy_pct,
            } => {
                let whose = if *same_host {
                    format!("this machine's CPUs (node_exporter at {endpoint}) were")
                } else {
                    format!("server CPU ({endpoint}) was")
                };
                write!(
                    f,
                    "bounded by the server's CPU: {whose} {busy_pct:.0}% busy over the phase: the server, not its storage, bounded this"
                )
            }
        }
    }
}
