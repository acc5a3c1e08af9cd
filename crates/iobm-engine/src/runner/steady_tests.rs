//! `--until-stable` in the runner: a phase that stops by time ends once its rate is steady, and
//! runs its whole duration when it never is.

use super::*;
use crate::steady::{Steady, TICKS_PER_WINDOW};
use iobm_target::null::NullTarget;

fn timed(workers: usize, duration: Duration, steady: Steady) -> Phase {
    let mut p = Phase::new(
        "write",
        Op::Write,
        4096,
        Layout::file_per_worker(workers, 1 << 20),
    );
    p.stop = StopRule::Duration(duration);
    p.steady = Some(steady);
    p
}

#[test]
fn a_steady_phase_ends_before_its_duration_with_its_last_window_in_the_tolerance() {
    for workers in [1, 2] {
        let control = Control::new(1, workers);
        let rule = Steady {
            tolerance_ppm: 500_000,
            window: Duration::from_millis(200),
        };
        let duration = Duration::from_secs(120);
        let out = run_phase(
            &NullTarget,
            &timed(workers, duration, rule),
            &control,
            &Ranked::ALONE,
        );
        assert_eq!(out.end, PhaseEnd::Completed);
        let steady = out.steady.expect("watched");
        let at = steady
            .stable_at
            .expect("a null target's rate is steady within 50%");
        assert!(at < duration, "{at:?}");
        // It ended at the tick that found it steady, not at its duration.
        assert!(out.end_ns - out.start_ns < duration.as_nanos() as u64);
        assert_eq!(steady.rates.len(), TICKS_PER_WINDOW as usize);
        let mean = steady.rates.iter().sum::<f64>() / steady.rates.len() as f64;
        assert!(steady.rates.iter().all(|r| (r - mean).abs() <= 0.5 * mean));
        assert!(!steady.ops, "a write's rate is of bytes");
        assert!(
            out.workers.iter().all(|w| w.span.ops > 0),
            "{workers} workers"
        );
    }
}

#[test]
fn a_phase_never_steady_runs_its_whole_duration() {
    let control = Control::new(1, 1);
    // No tolerance: ten rates of a real target are never all equal.
    let rule = Steady {
        tolerance_ppm: 0,
        window: Duration::from_millis(100),
    };
    let duration = Duration::from_millis(400);
    let out = run_phase(
        &NullTarget,
        &timed(1, duration, rule),
        &control,
        &Ranked::ALONE,
    );
    assert_eq!(out.end, PhaseEnd::Completed);
    let steady = out.steady.expect("watched");
    assert_eq!(steady.stable_at, None);
    assert_eq!(steady.rates.len(), TICKS_PER_WINDOW as usize);
    assert!(out.end_ns - out.start_ns >= duration.as_nanos() as u64);
}

#[test]
fn a_phase_without_the_rule_is_not_watched() {
    let control = Control::new(1, 1);
    let mut p = timed(
        1,
        Duration::from_millis(50),
        Steady {
            tolerance_ppm: 500_000,
            window: Duration::from_millis(10),
        },
    );
    p.steady = None;
    let out = run_phase(&NullTarget, &p, &control, &Ranked::ALONE);
    assert_eq!(out.steady, None);
}
