//! `--until-stable`: a phase that ends once its rate per interval has stayed within a
//! tolerance of its mean over a window (warp's autoterm: 7.5% over 15 s), its duration the
//! most it runs; the coordinator watches the live counters and stops the workers.

use crate::control::Control;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// When a phase is stable enough to end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stable {
    /// The time over which the rate must hold.
    pub window: Duration,
    /// How far from the window's mean each interval's rate may be, in thousandths (75: 7.5%).
    pub tolerance_permille: u32,
    /// Length of one sample of the rate.
    pub interval: Duration,
}

impl Stable {
    /// warp's autoterm: within 7.5% over 15 s, sampled every `interval`.
    pub fn warp(interval: Duration) -> Stable {
        Stable {
            window: Duration::from_secs(15),
            tolerance_permille: 75,
            interval,
        }
    }

    /// Samples in a window (at least 2).
    fn samples(&self) -> usize {
        let n = self.window.as_nanos() / self.interval.as_nanos().max(1);
        (n as usize).max(2)
    }
}

/// What the watch found.
#[derive(Debug, Clone, PartialEq)]
pub struct StableOutcome {
    pub stable: Stable,
    /// When the window that held began and ended, ns since the run's origin, and its mean
    /// rate in bytes (or operations, for phases that move none) per second. None: the phase
    /// ended (its duration, Ctrl-C, an error) before its rate held.
    pub window: Option<(u64, u64, f64)>,
}

/// Whether a phase of `op` is watched in bytes (else in operations: it moves none).
pub fn by_bytes(op: crate::Op) -> bool {
    use crate::{ObjectOp, Op};
    !(op.is_metadata()
        || matches!(
            op,
            Op::Object(ObjectOp::Head | ObjectOp::List | ObjectOp::Delete)
        ))
}

/// Whether every one of `rates` is within `tolerance` (a fraction) of their mean, which is
/// above zero.
pub fn steady(rates: &[f64], tolerance: f64) -> bool {
    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
    mean > 0.0 && rates.iter().all(|r| (r - mean).abs() <= tolerance * mean)
}

/// Watches the phase's live counters from `start` (after any warm-up) every interval until
/// `done()` or the rate held over the window, then sets `stop`.
pub(crate) fn watch(
    stable: Stable,
    control: &Control,
    start: Instant,
    by_bytes: bool,
    stop: &AtomicBool,
    done: &dyn Fn() -> bool,
) -> StableOutcome {
    let need = stable.samples();
    let tolerance = f64::from(stable.tolerance_permille) / 1000.0;
    let amount = || {
        if by_bytes {
            control.live_bytes()
        } else {
            control.live_ops()
        }
    };
    let mut rates: Vec<f64> = Vec::new();
    let (mut at, mut last) = (start, amount());
    let step = stable.interval;
    while !done() && !control.stop_requested() {
        let next = at + step;
        let now = Instant::now();
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(20)));
            continue;
        }
        let counted = amount();
        rates.push(counted.saturating_sub(last) as f64 / step.as_secs_f64());
        (at, last) = (next, counted);
        let window = &rates[rates.len().saturating_sub(need)..];
        if window.len() == need && steady(window, tolerance) {
            stop.store(true, Ordering::SeqCst);
            let mean = window.iter().sum::<f64>() / need as f64;
            let began = at - step * need as u32;
            return StableOutcome {
                stable,
                window: Some((control.ns(began), control.ns(at), mean)),
            };
        }
    }
    StableOutcome {
        stable,
        window: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_steady_when_every_interval_is_within_the_tolerance_of_the_mean() {
        assert!(steady(&[100.0, 104.0, 96.0, 100.0], 0.075));
        assert!(!steady(&[100.0, 120.0, 80.0, 100.0], 0.075));
        // Ramping up is not steady, nor is nothing.
        assert!(!steady(&[50.0, 70.0, 90.0, 110.0], 0.075));
        assert!(!steady(&[0.0, 0.0], 0.075));
    }

    #[test]
    fn a_phase_at_a_steady_rate_ends_once_it_held_over_the_window() {
        use crate::pace::{Arrivals, Pace};
        use crate::{run_phase, Layout, Op, Phase, PhaseEnd, StopRule};
        let interval = Duration::from_millis(50);
        let phase = Phase {
            stop: StopRule::Duration(Duration::from_secs(60)),
            // Paced: the rate is the target's whatever the machine does.
            pace: Some(Pace::new(4000.0, 2, Arrivals::Uniform, 0)),
            until_stable: Some(Stable {
                window: Duration::from_millis(400),
                tolerance_permille: 250,
                interval,
            }),
            interval,
            ..Phase::new("read", Op::Read, 512, Layout::file_per_worker(2, 1 << 20))
        };
        let out = run_phase(&iobm_target::null::NullTarget, &phase, &Control::new(1, 2));
        assert_eq!(out.end, PhaseEnd::Completed);
        let (began, ended, mean) = out.stable.unwrap().window.expect("the rate held");
        assert_eq!(ended - began, 400_000_000);
        // 4000 reads of 512 bytes a second.
        assert!((mean / 2_048_000.0 - 1.0).abs() < 0.25, "{mean}");
        // Stopped by the watch, far before its 60 s.
        assert!(out.end_ns - out.start_ns < 30_000_000_000);
    }

    #[test]
    fn warps_window_is_fifteen_seconds_of_samples() {
        assert_eq!(Stable::warp(Duration::from_secs(1)).samples(), 15);
        assert_eq!(Stable::warp(Duration::from_millis(100)).samples(), 150);
        let short = Stable {
            window: Duration::from_millis(100),
            ..Stable::warp(Duration::from_secs(1))
        };
        assert_eq!(short.samples(), 2);
    }
}
