//! What a paced phase's figures say of it, as typed findings: whether it fell behind its
//! schedule ([`Behind`]), whether its response time was mostly the client's own lag in starting
//! operations ([`ClientLate`]), the warnings they give ([`PaceWarning`]), and whether it held
//! its rate ([`held`]), which no "bounded by" may then contradict.

use super::{trim, PaceResult, KEPT_SHARE};
use crate::phase::Latency;
use crate::PhaseResult;
use iobm_stats::format_duration;
use std::fmt;
use std::time::Duration;

/// Response time is mostly the client's lag when the p99 of its lag is at least this share of
/// the p99 response time.
pub const LATE_SHARE: f64 = 0.5;

/// When and how far a phase fell behind its schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Behind {
    /// The start of the first interval whose backlog passed the threshold, seconds in.
    pub at_s: f64,
    /// The largest backlog of any interval.
    pub most: u64,
    /// The backlog from which a phase is behind.
    pub threshold: u64,
}

impl fmt::Display for Behind {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "fell behind at {:.2}s ({} operations behind schedule at most, the threshold {})",
            self.at_s, self.most, self.threshold
        )
    }
}

/// Response time that is mostly the client's own lag in starting operations (iobm's threads
/// waking or working late), not the storage's service or queueing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientLate {
    pub lag_p99_ns: u64,
    pub response_p99_ns: u64,
    /// The phase's service time p99.
    pub service_p99_ns: Option<u64>,
}

fn ns(value: u64) -> String {
    format_duration(Duration::from_nanos(value))
}

impl fmt::Display for ClientLate {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "the client was late: {} of the {} p99 response time was iobm's own lag in starting operations (its p99, apart from the storage's queueing",
            ns(self.lag_p99_ns),
            ns(self.response_p99_ns),
        )?;
        if let Some(service) = self.service_p99_ns {
            write!(f, "; service time p99 {}", ns(service))?;
        }
        write!(
            f,
            "): these response times measure this client's threads, not the storage"
        )
    }
}

/// A paced phase's warnings.
#[derive(Debug, Clone, PartialEq)]
pub enum PaceWarning {
    /// It achieved less than [`KEPT_SHARE`] of its target (and may have fell behind too).
    Short {
        achieved: f64,
        target: f64,
        behind: Option<Behind>,
        /// The client was late: more workers are no remedy.
        client_late: bool,
    },
    /// It fell behind, though it achieved its rate over the phase.
    Behind { behind: Behind, share: f64 },
    /// Its response time was mostly the client's lag.
    ClientLate(ClientLate),
}

impl fmt::Display for PaceWarning {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self {
            PaceWarning::Short {
                achieved,
                target,
                behind,
                client_late,
            } => {
                write!(
                    f,
                    "could not keep its rate: {achieved:.1} of {} ops/s targeted ({:.0}%)",
                    trim(*target),
                    100.0 * achieved / target
                )?;
                if let Some(b) = behind {
                    write!(f, ", {b}")?;
                }
                f.write_str(if *client_late {
                    "; the client was late (below): a less loaded client may hold it"
                } else {
                    "; more workers (--jobs, --concurrent) or a deeper queue (--iodepth) may hold it"
                })
            }
            PaceWarning::Behind { behind, share } => write!(
                f,
                "{behind}, though it achieved {share:.0}% of its rate over the phase: the response times include that wait"
            ),
            PaceWarning::ClientLate(late) => late.fmt(f),
        }
    }
}

impl PaceResult {
    /// When and how far the phase fell behind; None: it kept its schedule.
    pub fn behind(&self) -> Option<Behind> {
        self.fell_behind_s.map(|at_s| Behind {
            at_s,
            most: self.most_behind(),
            threshold: self.behind_threshold_ops,
        })
    }

    /// Whether the response time was mostly the client's lag (its p99 at least [`LATE_SHARE`]
    /// of the p99 response time), given the phase's service time.
    pub fn client_late(&self, service: &Latency) -> Option<ClientLate> {
        let lag_p99_ns = self.lag.as_ref()?.p99_ns.filter(|&l| l > 0)?;
        let response_p99_ns = self.response.p99_ns?;
        (lag_p99_ns as f64 >= LATE_SHARE * response_p99_ns as f64).then_some(ClientLate {
            lag_p99_ns,
            response_p99_ns,
            service_p99_ns: service.p99_ns,
        })
    }

    /// Whether the phase held its rate: it achieved at least [`KEPT_SHARE`] of its target and
    /// never fell behind. The rate then bounded it, whatever else was busy.
    pub fn held(&self) -> bool {
        self.achieved_ops_per_s >= KEPT_SHARE * self.target_ops_per_s
            && self.fell_behind_s.is_none()
    }

    /// What to warn of, given the phase's service time: a rate not kept, a schedule not kept,
    /// response time that is mostly the client's lag.
    pub fn warnings(&self, service: &Latency) -> Vec<PaceWarning> {
        let late = self.client_late(service);
        let short = self.achieved_ops_per_s < KEPT_SHARE * self.target_ops_per_s;
        let share = 100.0 * self.achieved_ops_per_s / self.target_ops_per_s;
        let rate = match (short, self.behind()) {
            (true, behind) => Some(PaceWarning::Short {
                achieved: self.achieved_ops_per_s,
                target: self.target_ops_per_s,
                behind,
                client_late: late.is_some(),
            }),
            (false, Some(behind)) => Some(PaceWarning::Behind { behind, share }),
            (false, None) => None,
        };
        rate.into_iter()
            .chain(late.map(PaceWarning::ClientLate))
            .collect()
    }
}

/// Whether `phase` was paced and held its rate ([`PaceResult::held`]).
pub fn held(phase: &PhaseResult) -> bool {
    phase.pace.as_ref().is_some_and(PaceResult::held)
}

#[cfg(test)]
mod tests;
