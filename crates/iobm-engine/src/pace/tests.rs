use super::*;

/// Mean and variance of the gaps between `n` intended starts.
fn gaps(pacer: &mut Pacer, n: usize) -> (f64, f64) {
    let mut last = pacer.next_start();
    let gaps: Vec<f64> = (0..n)
        .map(|_| {
            let at = pacer.next_start();
            let gap = at.duration_since(last).as_nanos() as f64;
            last = at;
            gap
        })
        .collect();
    let mean = gaps.iter().sum::<f64>() / n as f64;
    let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
    (mean, var)
}

#[test]
fn uniform_starts_are_one_gap_apart_and_workers_share_the_schedule() {
    // 4 workers sharing 1000/s: each one start every 4 ms, staggered by 1 ms.
    let pace = Pace::new(1000.0, 4, Arrivals::Uniform, 0);
    let origin = Instant::now();
    let (mean, var) = gaps(&mut Pacer::new(&pace, origin, 0), 1000);
    assert!((mean - 4e6).abs() < 1.0, "{mean}");
    assert!(var < 1.0, "{var}");
    let firsts: Vec<u128> = (0..4)
        .map(|w| {
            Pacer::new(&pace, origin, w)
                .next_start()
                .duration_since(origin)
                .as_nanos()
        })
        .collect();
    assert_eq!(firsts, [0, 1_000_000, 2_000_000, 3_000_000]);
}

#[test]
fn poisson_gaps_have_the_mean_and_variance_of_an_exponential() {
    let pace = Pace::new(500.0, 1, Arrivals::Poisson, 7);
    let (mean, var) = gaps(&mut Pacer::new(&pace, Instant::now(), 0), 200_000);
    let gap = 2e6;
    assert!((mean / gap - 1.0).abs() < 0.02, "mean {mean}");
    // An exponential's variance is its mean squared.
    assert!((var / (gap * gap) - 1.0).abs() < 0.05, "variance {var}");
}

#[test]
fn poisson_workers_draw_different_gaps_from_one_seed() {
    let pace = Pace::new(100.0, 2, Arrivals::Poisson, 7);
    let origin = Instant::now();
    let (mut a, mut b) = (Pacer::new(&pace, origin, 0), Pacer::new(&pace, origin, 1));
    let a: Vec<Instant> = (0..10).map(|_| a.next_start()).collect();
    let b: Vec<Instant> = (0..10).map(|_| b.next_start()).collect();
    assert_ne!(a, b);
    let again: Vec<Instant> = {
        let mut p = Pacer::new(&pace, origin, 0);
        (0..10).map(|_| p.next_start()).collect()
    };
    assert_eq!(a, again, "the same seed repeats");
}

#[test]
fn operations_behind_schedule_are_the_lateness_in_gaps() {
    let pace = Pace::new(1000.0, 1, Arrivals::Uniform, 0);
    let origin = Instant::now();
    let pacer = Pacer::new(&pace, origin, 0);
    let at = origin + Duration::from_millis(5);
    assert_eq!(pacer.behind(at, at), 0);
    assert_eq!(pacer.behind(at, at + Duration::from_micros(999)), 0);
    assert_eq!(pacer.behind(at, at + Duration::from_micros(3500)), 3);
}

#[test]
fn books_of_workers_add_their_backlog_interval_by_interval() {
    let pace = Pace::new(1000.0, 2, Arrivals::Uniform, 0);
    let mut a = PaceOutcome::new(pace, Duration::from_secs(1));
    let mut b = a.clone();
    a.backlog = vec![0, 2];
    b.backlog = vec![1, 0, 5];
    b.response.record(10);
    a.merge(&b);
    assert_eq!(a.backlog, [1, 2, 5]);
    assert_eq!(a.response.count(), 1);
}

#[test]
fn a_replay_starts_at_its_recorded_times_then_one_mean_gap_apart() {
    let pace = Pace::new(10.0, 1, Arrivals::Uniform, 0);
    let origin = Instant::now();
    let mut pacer = Pacer::new(&pace, origin, 0).recorded(vec![0, 150_000_000, 160_000_000]);
    let after = |at: Instant| at.duration_since(origin).as_nanos() as u64;
    let starts: Vec<u64> = (0..4).map(|_| after(pacer.next_start())).collect();
    assert_eq!(starts, [0, 150_000_000, 160_000_000, 260_000_000]);
}
