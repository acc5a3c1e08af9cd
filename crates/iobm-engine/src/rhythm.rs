//! Idle time between a worker's operations, outside their latency: a think time after each
//! (`--think`) and load in bursts (`--burst ON/OFF`: load for ON, idle for OFF, every worker
//! in step from the phase's start). A worker without either runs [`Restless`], which costs
//! nothing per operation; the runner picks once per worker.

use std::time::{Duration, Instant};

/// A phase's idle times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rhythm {
    /// Idle after an operation ends before the worker starts its next.
    pub think: Duration,
    /// Load in bursts; None: load all along.
    pub burst: Option<Burst>,
}

/// Load for `on`, idle for `off`, over and over from the phase's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Burst {
    pub on: Duration,
    pub off: Duration,
}

impl Burst {
    /// The share of the time under load: on / (on + off).
    pub fn duty(&self) -> f64 {
        let cycle = (self.on + self.off).as_secs_f64();
        if cycle > 0.0 {
            self.on.as_secs_f64() / cycle
        } else {
            1.0
        }
    }

    /// The first instant at or after `t` inside a load period, the cycles counted from
    /// `origin`.
    pub fn next_on(&self, origin: Instant, t: Instant) -> Instant {
        let cycle = (self.on + self.off).as_nanos();
        if cycle == 0 || self.off.is_zero() {
            return t;
        }
        let since = t.saturating_duration_since(origin).as_nanos();
        let into = since % cycle;
        if into < self.on.as_nanos() {
            t
        } else {
            let ahead = cycle - into;
            t + Duration::from_nanos(ahead as u64)
        }
    }

    /// The open loop's schedule with the idle periods let in: a start `ns` after the phase's
    /// start, counted in time under load, is that plus one `off` per full `on` before it.
    pub fn stretch_ns(&self, ns: f64) -> f64 {
        let on = self.on.as_nanos() as f64;
        if on <= 0.0 {
            return ns;
        }
        ns + (ns / on).floor() * self.off.as_nanos() as f64
    }
}

/// When a worker may start its next operation.
pub(crate) trait Rest {
    /// The earliest start of operation `i`, the last having ended at `last_end`; None: at once.
    fn until(&self, i: u64, last_end: Instant) -> Option<Instant>;
}

/// No idle time: nothing to compute.
pub(crate) struct Restless;

impl Rest for Restless {
    #[inline(always)]
    fn until(&self, _: u64, _: Instant) -> Option<Instant> {
        None
    }
}

/// A phase's [`Rhythm`] from its start.
pub(crate) struct Resting {
    pub(crate) rhythm: Rhythm,
    pub(crate) origin: Instant,
}

impl Rest for Resting {
    fn until(&self, i: u64, last_end: Instant) -> Option<Instant> {
        let thought = if i > 0 {
            last_end + self.rhythm.think
        } else {
            last_end
        };
        Some(match self.rhythm.burst {
            Some(burst) => burst.next_on(self.origin, thought),
            None => thought,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_burst_waits_out_its_idle_period() {
        let origin = Instant::now();
        let burst = Burst {
            on: 10 * MS,
            off: 30 * MS,
        };
        assert_eq!(burst.next_on(origin, origin), origin);
        assert_eq!(burst.next_on(origin, origin + 9 * MS), origin + 9 * MS);
        assert_eq!(burst.next_on(origin, origin + 10 * MS), origin + 40 * MS);
        assert_eq!(burst.next_on(origin, origin + 39 * MS), origin + 40 * MS);
        assert_eq!(burst.next_on(origin, origin + 45 * MS), origin + 45 * MS);
        assert_eq!(burst.duty(), 0.25);
        // The open loop's schedule: 25 ms of load-time is 5 ms into the third burst.
        assert_eq!(burst.stretch_ns(25e6), 25e6 + 2.0 * 30e6);
        assert_eq!(burst.stretch_ns(5e6), 5e6);
    }

    #[test]
    fn think_time_follows_each_operation_but_the_first() {
        let origin = Instant::now();
        let resting = Resting {
            rhythm: Rhythm {
                think: 5 * MS,
                burst: None,
            },
            origin,
        };
        assert_eq!(resting.until(0, origin), Some(origin));
        assert_eq!(resting.until(3, origin + MS), Some(origin + 6 * MS));
        assert_eq!(Restless.until(3, origin), None);
        let bursty = Resting {
            rhythm: Rhythm {
                think: 5 * MS,
                burst: Some(Burst {
                    on: 10 * MS,
                    off: 10 * MS,
                }),
            },
            origin,
        };
        // Thought to 12 ms, in the idle period: the next burst at 20 ms.
        assert_eq!(bursty.until(1, origin + 7 * MS), Some(origin + 20 * MS));
    }
}
