//! The worker loop paced on a fake clock: intended starts, response time when the target
//! stalls, the client's own lag when it stalls itself, the backlog and the end of a paced
//! phase.

use super::worker::run_worker;
use super::*;
use crate::pace::fake::FakeClock;
use crate::pace::{Arrivals, Clock, Pace};
use crate::rhythm::{Burst, Rhythm};
use crate::task::Task;
use std::time::Duration;

/// Where a planted stall is: in the storage (the operation takes it) or in the client (preparing
/// the operation takes it, before its wait).
#[derive(Clone, Copy, PartialEq)]
enum Stalled {
    Storage,
    Client,
}

/// A task whose operations take `service` on the fake clock, operation `stall_at` `stall` (in
/// the storage or the client); it notes when each began.
struct Mock<'a> {
    clock: &'a FakeClock,
    ops: u64,
    service: Duration,
    stall_at: u64,
    stall: Duration,
    stalled: Stalled,
    i: u64,
    starts: &'a Mutex<Vec<Instant>>,
}

impl Task for Mock<'_> {
    fn prepare(&mut self, i: u64) -> bool {
        self.i = i;
        if i == self.stall_at && self.stalled == Stalled::Client {
            self.clock.advance(self.stall);
        }
        i < self.ops
    }
    fn execute(&mut self) -> io::Result<u64> {
        self.starts.lock().unwrap().push(self.clock.now());
        let took = if self.i == self.stall_at && self.stalled == Stalled::Storage {
            self.stall
        } else {
            self.service
        };
        self.clock.advance(took);
        Ok(4096)
    }
    fn describe(&self) -> String {
        format!("mock {}", self.i)
    }
    fn finish(&mut self) -> io::Result<u64> {
        Ok(0)
    }
}

struct Run {
    result: WorkerResult,
    starts: Vec<Instant>,
    origin: Instant,
    /// The fake clock when the worker returned.
    ended: Instant,
}

/// One worker of a phase stopping by `stop`, paced by `pace`, on a fake clock, operation
/// `stall_at` taking `stall` in the storage.
fn run(pace: Option<Pace>, stop: StopRule, ops: u64, stall_at: u64, stall: Duration) -> Run {
    run_stalled(pace, stop, ops, (stall_at, stall, Stalled::Storage))
}

/// [`run`] with the stall where `stalled` says.
fn run_stalled(
    pace: Option<Pace>,
    stop: StopRule,
    ops: u64,
    stall: (u64, Duration, Stalled),
) -> Run {
    run_resting(pace, None, stop, ops, stall)
}

/// [`run_stalled`] with the phase's idle times.
fn run_resting(
    pace: Option<Pace>,
    rhythm: Option<Rhythm>,
    stop: StopRule,
    ops: u64,
    (stall_at, stall, stalled): (u64, Duration, Stalled),
) -> Run {
    let clock = FakeClock::new();
    let starts = Mutex::new(Vec::new());
    let phase = Phase {
        pace,
        rhythm,
        stop,
        interval: Duration::from_millis(10),
        ..Phase::new("write", Op::Write, 4096, Layout::file_per_worker(1, 4096))
    };
    let control = Control::new(1, 1);
    let shared = Shared {
        workers: 1,
        abort: AtomicBool::new(false),
        errors: AtomicU64::new(0),
        settled: AtomicBool::new(false),
        left: std::sync::atomic::AtomicUsize::new(0),
        gather: None,
    };
    let task = Mock {
        clock: &clock,
        ops,
        service: Duration::from_micros(100),
        stall_at,
        stall,
        stalled,
        i: 0,
        starts: &starts,
    };
    let origin = clock.now();
    let walled = Walled {
        wall: None,
        agree: None,
    };
    let (result, errors) = run_worker(
        Box::new(task),
        0,
        &phase,
        &control,
        &shared,
        origin,
        walled,
        &clock,
    );
    assert!(errors.is_empty());
    Run {
        result,
        starts: starts.into_inner().unwrap(),
        origin,
        ended: clock.now(),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[test]
fn a_paced_worker_starts_each_operation_at_its_intended_time() {
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let out = run(Some(pace), StopRule::Once, 50, u64::MAX, Duration::ZERO);
    let at: Vec<f64> = out.starts.iter().map(|s| ms(*s - out.origin)).collect();
    let expected: Vec<f64> = (0..50).map(|k| k as f64).collect();
    assert_eq!(at, expected);
    let pace = out.result.pace.expect("a paced worker's books");
    assert_eq!(pace.response.count(), 50);
    // On schedule: response time is service time.
    assert_eq!(pace.response.max(), out.result.classes[0].latency.max());
    assert!(pace.backlog.iter().all(|&b| b == 0), "{:?}", pace.backlog);
}

#[test]
fn a_closed_loop_worker_waits_for_nothing_and_keeps_no_pace_books() {
    let out = run(None, StopRule::Once, 50, u64::MAX, Duration::ZERO);
    let last = *out.starts.last().unwrap() - out.origin;
    assert_eq!(last, Duration::from_micros(100 * 49));
    assert!(out.result.pace.is_none());
}

#[test]
fn poisson_starts_have_exponential_gaps_on_the_fake_clock() {
    let pace = Pace::new(1000.0, 1, Arrivals::Poisson, 3);
    // Service far below the mean gap of 1 ms: the worker is (almost) never late.
    let out = run(Some(pace), StopRule::Once, 20_000, u64::MAX, Duration::ZERO);
    let gaps: Vec<f64> = out
        .starts
        .windows(2)
        .map(|w| (w[1] - w[0]).as_secs_f64() * 1e3)
        .collect();
    let n = gaps.len() as f64;
    let mean = gaps.iter().sum::<f64>() / n;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n;
    assert!((mean - 1.0).abs() < 0.03, "mean gap {mean} ms");
    assert!((var - 1.0).abs() < 0.08, "variance {var} ms²");
}

#[test]
fn response_time_runs_from_the_intended_start_when_the_target_stalls() {
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let stall = Duration::from_millis(50);
    let out = run(Some(pace), StopRule::Once, 100, 10, stall);
    // The same schedule worked out by hand: op k meant at k ms, started when both it is due
    // and the last ended.
    let (mut end, mut total, mut worst_behind) = (0.0f64, 0.0, vec![0u64; 10]);
    for k in 0..100 {
        let intended = k as f64;
        let start = end.max(intended);
        end = start + if k == 10 { 50.0 } else { 0.1 };
        total += end - intended;
        let behind = ((start - intended) / 1.0 + 1e-9).floor() as u64;
        let at = (start / 10.0 + 1e-9).floor() as usize;
        worst_behind[at] = worst_behind[at].max(behind);
    }
    let pace = out.result.pace.unwrap();
    let service = &out.result.classes[0].latency;
    assert_eq!(service.max(), Some(stall.as_nanos() as u64));
    let mean_ms = pace.response.mean().unwrap() / 1e6;
    assert!(
        (mean_ms - total / 100.0).abs() < 1e-6,
        "{mean_ms} vs {}",
        total / 100.0
    );
    // After the stall the next operation waited for it: its response is 49.1 ms, its service
    // time 0.1 ms.
    assert!(pace.response.percentile(50.0) > service.percentile(50.0));
    let mut backlog = pace.backlog.clone();
    backlog.resize(10, 0);
    assert_eq!(backlog, worst_behind);
    assert_eq!(backlog[6], 49, "{backlog:?}");
    assert!(backlog[..6].iter().all(|&b| b == 0));
    // The storage's queueing, not the client's lag: every wait ended on time or when the
    // storage was done with the operations before.
    assert_eq!(pace.lag.count(), 100);
    assert_eq!(pace.lag.max(), Some(0));
}

#[test]
fn a_stall_of_the_client_is_its_lag_and_in_the_response_times_after_it() {
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let stall = Duration::from_millis(50);
    let out = run_stalled(
        Some(pace),
        StopRule::Once,
        100,
        (10, stall, Stalled::Client),
    );
    // By hand: operation 10 (meant at 10 ms) is prepared from 9.1 ms to 59.1 ms, then each
    // starts as the one before ends, 0.1 ms apart, until the schedule is caught up. An instant
    // client would have started each at its intended time: all the lateness is the client's.
    let (mut end, mut lags, mut total) = (0.0f64, Vec::new(), 0.0);
    for k in 0..100 {
        let intended = k as f64;
        let ready = end + if k == 10 { 50.0 } else { 0.0 };
        let start = ready.max(intended);
        end = start + 0.1;
        lags.push(start - intended);
        total += end - intended;
    }
    let pace = out.result.pace.unwrap();
    let service = &out.result.classes[0].latency;
    assert_eq!(service.max(), Some(100_000), "the storage never stalled");
    assert_eq!(pace.lag.count(), 100);
    let lagged_ns: f64 = lags.iter().sum::<f64>() * 1e6;
    assert!(
        (pace.lag.mean().unwrap() * 100.0 - lagged_ns).abs() < 100.0,
        "{:?} vs {lagged_ns}",
        pace.lag.mean()
    );
    assert_eq!(pace.lag.max(), Some(49_100_000));
    // The operations after the stall: their response times hold the lag from their intended
    // starts (from their actual starts they would all be 0.1 ms).
    let late = lags.iter().filter(|&&l| l >= 1.0).count();
    assert!(late > 50, "{late}");
    assert!(pace.lag.percentile(50.0) >= Some(1_000_000));
    assert!(pace.response.percentile(50.0) >= Some(1_000_000));
    let mean_ms = pace.response.mean().unwrap() / 1e6;
    assert!((mean_ms - total / 100.0).abs() < 1e-6, "{mean_ms}");
}

#[test]
fn a_paced_phase_that_stops_by_time_starts_only_what_is_due_before_its_end() {
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let stop = StopRule::Duration(Duration::from_millis(100));
    let out = run(Some(pace), stop, u64::MAX, u64::MAX, Duration::ZERO);
    assert_eq!(out.starts.len(), 100);
    assert_eq!(out.result.outcome.span.ops, 100);
}

#[test]
fn a_thinking_worker_idles_between_operations_outside_their_latency() {
    let rhythm = Rhythm {
        think: Duration::from_millis(2),
        burst: None,
    };
    let out = run_resting(
        None,
        Some(rhythm),
        StopRule::Once,
        20,
        (u64::MAX, Duration::ZERO, Stalled::Storage),
    );
    let at: Vec<f64> = out.starts.iter().map(|s| ms(*s - out.origin)).collect();
    // Each starts 2 ms after the last ended (100 µs of service): at k * 2.1 ms.
    let expected: Vec<f64> = (0..20).map(|k| k as f64 * 2.1).collect();
    for (a, e) in at.iter().zip(&expected) {
        assert!((a - e).abs() < 1e-6, "{at:?}");
    }
    assert_eq!(out.result.classes[0].latency.max(), Some(100_000));
    // 19 thoughts and 20 services, and no idle time after the last.
    assert_eq!(
        out.ended - out.origin,
        Duration::from_micros(19 * 2000 + 20 * 100)
    );
}

#[test]
fn a_bursting_worker_is_idle_off_and_a_paced_one_keeps_its_rate_on() {
    let burst = Burst {
        on: Duration::from_millis(10),
        off: Duration::from_millis(30),
    };
    let rhythm = Some(Rhythm {
        think: Duration::ZERO,
        burst: Some(burst),
    });
    let no_stall = (u64::MAX, Duration::ZERO, Stalled::Storage);
    // Closed loop: 100 operations of 100 µs per 10 ms burst, none in the 30 ms between.
    let out = run_resting(None, rhythm, StopRule::Once, 250, no_stall);
    let at: Vec<f64> = out.starts.iter().map(|s| ms(*s - out.origin)).collect();
    assert!(at.iter().all(|&t| t % 40.0 < 10.0), "{at:?}");
    assert!(
        (at[100] - 40.0).abs() < 1e-6 && (at[200] - 80.0).abs() < 1e-6,
        "{at:?}"
    );
    // Open loop at 1000/s: a start each ms of the bursts, 10 per burst.
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let out = run_resting(Some(pace), rhythm, StopRule::Once, 25, no_stall);
    let at: Vec<f64> = out.starts.iter().map(|s| ms(*s - out.origin)).collect();
    let expected: Vec<f64> = (0..25u32)
        .map(|k| f64::from(k % 10 + 40 * (k / 10)))
        .collect();
    assert_eq!(at, expected);
    // The idle periods are no lag of the client's, nor a response time.
    let pace = out.result.pace.unwrap();
    assert_eq!(pace.lag.max(), Some(0));
    assert_eq!(pace.response.max(), Some(100_000));
}
