//! The picks of each distribution against its definition (Pearson's chi-square, seeded).

use super::*;
use crate::sizes::mix;

/// `draws` picks among `n`, counted per pick, from a seeded generator.
fn counts(dist: AccessDist, n: u64, draws: u64) -> Vec<u64> {
    let picker = dist.picker(n);
    let mut state = 0x5eed_u64;
    let mut next = || {
        state = mix(state);
        state
    };
    let mut counts = vec![0u64; n as usize];
    for _ in 0..draws {
        counts[picker.pick(&mut next) as usize] += 1;
    }
    counts
}

/// Pearson's statistic of `counts` against the probabilities `p` (cells with an expectation
/// under 5 pooled into one), and its degrees of freedom.
fn chi_square(counts: &[u64], p: &[f64]) -> (f64, usize) {
    let total: u64 = counts.iter().sum();
    let (mut stat, mut cells) = (0.0, 0);
    let (mut pooled_seen, mut pooled_expected) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(p) {
        let expected = p * total as f64;
        if expected < 5.0 {
            pooled_seen += c as f64;
            pooled_expected += expected;
            continue;
        }
        stat += (c as f64 - expected).powi(2) / expected;
        cells += 1;
    }
    if pooled_expected > 0.0 {
        stat += (pooled_seen - pooled_expected).powi(2) / pooled_expected;
        cells += 1;
    }
    (stat, cells - 1)
}

/// The chi-square quantile at 0.999 for `df` degrees of freedom (Wilson-Hilferty).
fn critical(df: usize) -> f64 {
    let k = df as f64;
    let z = 3.090_232; // the normal's 0.999 quantile
    k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

fn fits(dist: AccessDist, n: u64, p: &[f64]) {
    let c = counts(dist, n, 200_000);
    let (stat, df) = chi_square(&c, p);
    assert!(df > 10, "{dist:?}: {df} cells");
    assert!(
        stat < critical(df),
        "{dist:?}: chi2 {stat:.1} over {:.1} ({df} df)",
        critical(df)
    );
    // And the statistic does tell: uniform picks do not fit a skewed definition.
    if !dist.is_uniform() {
        let (wrong, _) = chi_square(&counts(AccessDist::Uniform, n, 200_000), p);
        assert!(
            wrong > 10.0 * critical(df),
            "{dist:?}: uniform gives {wrong:.1}"
        );
    }
}

#[test]
fn zipf_picks_fit_one_over_k_to_the_theta() {
    for theta in [0.8, 1.0, 1.2] {
        let n = 1000u64;
        let weights: Vec<f64> = (1..=n).map(|k| (k as f64).powf(-theta)).collect();
        let sum: f64 = weights.iter().sum();
        let p: Vec<f64> = weights.iter().map(|w| w / sum).collect();
        fits(AccessDist::Zipf { theta }, n, &p);
    }
}

#[test]
fn pareto_picks_fit_fios_power_law() {
    let (n, h) = (1000u64, 0.2f64);
    let power = h.ln() / (1.0 - h).ln();
    // pick = floor((n - 1) u^p): pick k when u^p is in [k, k + 1) / (n - 1).
    let cdf = |x: f64| (x / (n - 1) as f64).min(1.0).powf(power.recip());
    let p: Vec<f64> = (0..n)
        .map(|k| cdf(k as f64 + 1.0) - cdf(k as f64))
        .collect();
    fits(AccessDist::Pareto { h }, n, &p);
}

#[test]
fn normal_picks_fit_the_cut_normal_around_the_middle() {
    let (n, sigma) = (1000u64, 10.0);
    let s = sigma / 100.0 * n as f64;
    let cdf = |x: f64| 0.5 * (1.0 + erf((x - n as f64 / 2.0) / (s * std::f64::consts::SQRT_2)));
    let inside = cdf(n as f64) - cdf(0.0);
    let p: Vec<f64> = (0..n)
        .map(|k| (cdf(k as f64 + 1.0) - cdf(k as f64)) / inside)
        .collect();
    fits(AccessDist::Normal { sigma }, n, &p);
}

#[test]
fn uniform_picks_fit_uniform() {
    let n = 1000u64;
    fits(AccessDist::Uniform, n, &vec![1.0 / n as f64; n as usize]);
}

#[test]
fn the_hot_shares_are_what_the_picks_give() {
    let n = 10_000u64;
    for dist in ["uniform", "zipf:1.2", "zipf:0.9", "pareto:0.2", "normal:5"] {
        let dist = AccessDist::parse(dist).unwrap();
        let c = counts(dist, n, 400_000);
        for fraction in [0.01, 0.1] {
            let m = (fraction * n as f64) as usize;
            // The hottest by the definition: from 0, or (normal) the m around the middle.
            let first = match dist {
                AccessDist::Normal { .. } => n as usize / 2 - m / 2,
                _ => 0,
            };
            let seen = c[first..first + m].iter().sum::<u64>() as f64 / 400_000.0;
            let share = dist.hot_share(n, fraction);
            assert!(
                (seen - share).abs() < 0.01,
                "{dist:?} {fraction}: {seen} {share}"
            );
        }
    }
    // fio's pareto:0.2 is 80/20.
    let pareto = AccessDist::Pareto { h: 0.2 };
    assert!((pareto.hot_share(1_000_001, 0.2) - 0.8).abs() < 1e-6);
    // Past the exact sum, zipf's tail integral agrees with the sum.
    let z = AccessDist::Zipf { theta: 1.1 };
    let exact: f64 = (1..=200_000u64).map(|k| (k as f64).powf(-1.1)).sum();
    let head: f64 = (1..=2_000u64).map(|k| (k as f64).powf(-1.1)).sum();
    assert!((z.hot_share(200_000, 0.01) - head / exact).abs() < 1e-4);
}

#[test]
fn each_form_parses_and_a_bad_one_names_what_is_wrong() {
    assert_eq!(AccessDist::parse("uniform"), Ok(AccessDist::Uniform));
    assert_eq!(
        AccessDist::parse("zipf:1.2"),
        Ok(AccessDist::Zipf { theta: 1.2 })
    );
    assert_eq!(
        AccessDist::parse("pareto:0.2"),
        Ok(AccessDist::Pareto { h: 0.2 })
    );
    assert_eq!(
        AccessDist::parse("normal:5"),
        Ok(AccessDist::Normal { sigma: 5.0 })
    );
    for (bad, says) in [
        ("zipf:0", "zipf"),
        ("zipf:x", "zipf"),
        ("pareto:0.7", "under 0.5"),
        ("normal:-1", "normal"),
        ("normal:NaN", "normal"),
        ("gauss:1", "expected uniform"),
        ("zipf", "expected uniform"),
    ] {
        let err = AccessDist::parse(bad).unwrap_err();
        assert!(err.contains(says), "{bad}: {err}");
    }
    assert_eq!(AccessDist::Zipf { theta: 1.2 }.describe(), "zipf 1.2");
}

#[test]
fn picks_are_reproducible_and_a_single_one_is_always_picked() {
    let dist = AccessDist::Zipf { theta: 1.2 };
    assert_eq!(counts(dist, 500, 10_000), counts(dist, 500, 10_000));
    for d in ["zipf:1.2", "pareto:0.2", "normal:5", "uniform"] {
        assert_eq!(counts(AccessDist::parse(d).unwrap(), 1, 100), vec![100]);
    }
}
