//! `--until-stable`: a phase that stops by time ends early once its rate has held steady, every
//! rate of the last window within a tolerance of their mean (fio's `steadystate` on `iops` or
//! `bw`, warp's autoterm). The rate is of all workers of all ranks, sampled by each rank's
//! coordinating thread at the same ticks and summed across ranks, so every rank decides alike.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Rates in one window: the window is cut into this many ticks.
pub const TICKS_PER_WINDOW: u32 = 10;

/// The rule: steady when each of the last window's rates is within the tolerance of their
/// mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Steady {
    /// The tolerance in millionths of the mean (75,000: 7.5%).
    pub tolerance_ppm: u32,
    pub window: Duration,
}

impl Steady {
    /// The tolerance as a fraction of the mean.
    pub fn tolerance(&self) -> f64 {
        f64::from(self.tolerance_ppm) / 1e6
    }

    /// How often the rate is sampled: a tenth of the window.
    pub fn tick(&self) -> Duration {
        self.window / TICKS_PER_WINDOW
    }
}

/// What the rule saw of a phase.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyOutcome {
    pub rule: Steady,
    /// When the phase was found steady, since its counted start (after a warm-up); None when it
    /// ended otherwise (its duration, an error, Ctrl-C) before it was.
    pub stable_at: Option<Duration>,
    /// The last window's rates, one per tick, oldest first (fewer when the phase was shorter
    /// than a window): bytes/s, or operations/s when the phase moved no bytes.
    pub rates: Vec<f64>,
    /// Whether `rates` are operations/s.
    pub ops: bool,
}

/// One rank's progress at a tick, or all ranks' summed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    pub bytes: u64,
    pub ops: u64,
    /// Every worker (of this rank, or of all ranks) has ended its operations.
    pub done: bool,
    /// Some worker (of this rank, or of any rank) has ended its operations: a tick that saw
    /// one end (into its final flush, or done) is not a whole tick of the phase's rate.
    pub ending: bool,
}

/// The sum across ranks of every rank's tally, made by every rank at the same tick (this rank's
/// alone without MPI).
pub type SumRanks<'a> = &'a dyn Fn(Tally) -> Tally;

/// The last window's rates and whether they are steady.
#[derive(Debug, Clone)]
pub struct Detector {
    rule: Steady,
    rates: std::collections::VecDeque<f64>,
    ops: bool,
}

impl Detector {
    pub fn new(rule: Steady) -> Detector {
        Detector {
            rule,
            rates: std::collections::VecDeque::with_capacity(TICKS_PER_WINDOW as usize + 1),
            ops: false,
        }
    }

    /// Adds one tick's rate (operations/s when `ops`, else bytes/s; a change of unit starts the
    /// window again) and says whether the full window is now steady.
    pub fn push(&mut self, rate: f64, ops: bool) -> bool {
        if ops != self.ops {
            self.rates.clear();
            self.ops = ops;
        }
        if self.rates.len() == TICKS_PER_WINDOW as usize {
            self.rates.pop_front();
        }
        self.rates.push_back(rate);
        self.steady()
    }

    /// A full window whose rates are all within the tolerance of their mean (a window of
    /// zeros is not steady: nothing is being done, and [`Detector::most_off`] is infinite).
    fn steady(&self) -> bool {
        self.rates.len() == TICKS_PER_WINDOW as usize && self.most_off() <= self.rule.tolerance()
    }

    /// The largest distance of a rate of the window from their mean, as a fraction of it
    /// (infinite without a positive mean).
    pub fn most_off(&self) -> f64 {
        let mean = self.rates.iter().sum::<f64>() / self.rates.len().max(1) as f64;
        if mean <= 0.0 {
            return f64::INFINITY;
        }
        self.rates
            .iter()
            .map(|r| (r - mean).abs() / mean)
            .fold(0.0, f64::max)
    }

    fn outcome(&self, stable_at: Option<Duration>) -> SteadyOutcome {
        SteadyOutcome {
            rule: self.rule,
            stable_at,
            rates: self.rates.iter().copied().collect(),
            ops: self.ops,
        }
    }
}

/// Watches a phase from its counted start `from` (after any warm-up) on the coordinating
/// thread: at each tick this rank's progress (`local`: the live counters, and whether its
/// workers have ended their operations) is summed across ranks; once the rate is steady
/// `settled` is set (the workers stop at their next operation). Returns when the phase is
/// steady or every worker of every rank has ended. A rank whose workers have all ended makes
/// its next calls at once (its counters no longer move), so the phase does not wait a tick.
pub(crate) fn watch(
    rule: Steady,
    from: Instant,
    local: &dyn Fn() -> Tally,
    sum: SumRanks,
    settled: &AtomicBool,
) -> SteadyOutcome {
    let tick = rule.tick();
    let mut detector = Detector::new(rule);
    let mut last = sum(local());
    for k in 1u32.. {
        if last.done {
            return detector.outcome(None);
        }
        let at = from + tick * k;
        // Sleeps in short steps so that this rank sees its workers end without waiting a tick.
        while Instant::now() < at && !local().done {
            std::thread::sleep((at - Instant::now()).min(Duration::from_millis(10)));
        }
        let now = sum(local());
        let ops = now.bytes == 0;
        let moved = if ops {
            now.ops.saturating_sub(last.ops)
        } else {
            now.bytes.saturating_sub(last.bytes)
        };
        // A tick that saw a worker end is not a whole one: its rate is not counted.
        if !now.ending && detector.push(moved as f64 / tick.as_secs_f64(), ops) {
            settled.store(true, Ordering::SeqCst);
            return detector.outcome(Some(tick * k));
        }
        last = now;
    }
    unreachable!("ticks are counted to the phase's end")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(tolerance_ppm: u32) -> Steady {
        Steady {
            tolerance_ppm,
            window: Duration::from_secs(10),
        }
    }

    #[test]
    fn steady_only_once_a_full_window_is_within_the_tolerance_of_its_mean() {
        let mut d = Detector::new(rule(50_000));
        // A ramp, then a plateau within 4% of its mean.
        let ramp = [10.0, 40.0, 70.0, 90.0];
        let plateau = [
            100.0, 104.0, 97.0, 101.0, 99.0, 103.0, 98.0, 100.0, 102.0, 96.0,
        ];
        for r in ramp {
            assert!(!d.push(r, false));
        }
        for (i, r) in plateau.iter().enumerate() {
            // Steady only at the tenth rate of the plateau: before, the ramp is in the window.
            assert_eq!(d.push(*r, false), i == plateau.len() - 1, "rate {i}");
        }
        assert!((d.most_off() - 0.04).abs() < 1e-9, "{}", d.most_off());
        let out = d.outcome(Some(Duration::from_secs(14)));
        assert_eq!(out.rates, plateau);
        assert!(!out.ops);
    }

    #[test]
    fn one_rate_past_the_tolerance_or_a_window_of_zeros_is_not_steady() {
        let mut d = Detector::new(rule(50_000));
        for _ in 0..9 {
            assert!(!d.push(100.0, false));
        }
        // 110 is 9% above the mean of nine 100s and it (101): past 5%.
        assert!(!d.push(110.0, false));
        let mut idle = Detector::new(rule(50_000));
        for _ in 0..20 {
            assert!(!idle.push(0.0, true));
        }
        assert_eq!(idle.most_off(), f64::INFINITY);
    }

    #[test]
    fn a_change_of_unit_starts_the_window_again() {
        let mut d = Detector::new(rule(500_000));
        for _ in 0..9 {
            assert!(!d.push(5.0, true));
        }
        // The first byte: the nine operation rates are dropped.
        assert!(!d.push(1000.0, false));
        for _ in 0..8 {
            assert!(!d.push(1000.0, false));
        }
        assert!(d.push(1000.0, false));
    }

    #[test]
    fn the_watch_sums_ranks_and_settles_on_a_steady_rate() {
        let idle = Tally::default();
        let settled = AtomicBool::new(false);
        let rule = Steady {
            tolerance_ppm: 10_000,
            window: Duration::from_millis(100),
        };
        // A second rank that has always moved 1,000 bytes per call more than this one's
        // (nothing): the rate is that rank's alone, exactly steady.
        let calls = std::cell::Cell::new(0u64);
        let sum = |mine: Tally| {
            calls.set(calls.get() + 1);
            Tally {
                bytes: mine.bytes + 1000 * calls.get(),
                ops: mine.ops + calls.get(),
                ..mine
            }
        };
        let out = watch(rule, Instant::now(), &|| idle, &sum, &settled);
        assert!(settled.load(Ordering::SeqCst));
        // The first call is the baseline; each tick after it is one rate.
        assert_eq!(out.stable_at, Some(rule.tick() * TICKS_PER_WINDOW));
        assert_eq!(calls.get(), 1 + TICKS_PER_WINDOW as u64);
        let per_tick = 1000.0 / rule.tick().as_secs_f64();
        assert!(
            out.rates.iter().all(|r| (r - per_tick).abs() < 1e-6),
            "{out:?}"
        );
    }

    #[test]
    fn a_tick_that_saw_a_worker_end_is_not_counted() {
        let settled = AtomicBool::new(false);
        let rule = Steady {
            tolerance_ppm: 500_000,
            window: Duration::from_millis(100),
        };
        let calls = std::cell::Cell::new(0u64);
        // A steady 1,000 bytes a tick, but from the fifth call a worker of another rank has
        // ended (its final flush): no window fills before every rank is done at the 30th.
        let sum = |_: Tally| {
            calls.set(calls.get() + 1);
            Tally {
                bytes: 1000 * calls.get(),
                ops: calls.get(),
                done: calls.get() >= 30,
                ending: calls.get() >= 5,
            }
        };
        let out = watch(rule, Instant::now(), &|| Tally::default(), &sum, &settled);
        assert!(!settled.load(Ordering::SeqCst));
        assert_eq!(out.stable_at, None);
        // The three whole ticks before it (calls 2 to 4) are the window's.
        assert_eq!(out.rates.len(), 3, "{out:?}");
        assert_eq!(calls.get(), 30);
    }

    #[test]
    fn the_watch_ends_unsettled_when_every_rank_is_done() {
        let idle = Tally::default();
        let settled = AtomicBool::new(false);
        let rule = Steady {
            tolerance_ppm: 500_000,
            window: Duration::from_millis(100),
        };
        let calls = std::cell::Cell::new(0u32);
        // The other rank ends at its third tick; this one never says it is done.
        let sum = |mine: Tally| {
            calls.set(calls.get() + 1);
            Tally {
                done: mine.done || calls.get() >= 3,
                ..mine
            }
        };
        let out = watch(rule, Instant::now(), &|| idle, &sum, &settled);
        assert!(!settled.load(Ordering::SeqCst));
        assert_eq!(out.stable_at, None);
        assert_eq!(calls.get(), 3);
    }
}
