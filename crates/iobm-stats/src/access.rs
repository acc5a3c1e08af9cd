//! Which block or object an operation picks: uniform (every one alike), or skewed as fio's
//! `random_distribution` skews it: zipf, pareto or normal. A pick is a function of uniform
//! 64-bit numbers the caller draws from its seeded generator, so a run is reproducible; zipf
//! and pareto put the hottest at 0, normal around the middle.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an operation's block or object is chosen among `n`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase", tag = "kind", deny_unknown_fields)]
#[schemars(transform = describe_kind)]
pub enum AccessDist {
    /// Every one alike.
    Uniform,
    /// The k-th hottest (k from 1) with weight 1/k^theta (fio's `zipf:THETA`).
    Zipf {
        /// The exponent, over 0.
        theta: f64,
    },
    /// fio's `pareto:H`: the pick is (n - 1) u^p for u uniform in [0, 1), p = ln H / ln(1 - H):
    /// the hottest share f of them takes f^(1/p) of the picks (H 0.2: 80% on the hottest 20%).
    Pareto {
        /// Between 0 and 1, not 0.5 or over (0.2: 80/20).
        h: f64,
    },
    /// Normal around the middle, its deviation SIGMA percent of the blocks or objects, cut to
    /// them (fio's `normal:DEV`).
    Normal {
        /// The deviation, percent of the data set (over 0, at most 100).
        sigma: f64,
    },
}

/// The schema's word for the tag each variant carries.
fn describe_kind(schema: &mut schemars::Schema) {
    let variants = schema.get_mut("oneOf").and_then(|v| v.as_array_mut());
    for variant in variants.into_iter().flatten() {
        if let Some(kind) = variant.pointer_mut("/properties/kind") {
            kind["description"] = "The distribution: uniform, zipf, pareto or normal.".into();
        }
    }
}

/// Equality is total: no parameter is ever NaN (`parse` takes finite numbers only).
impl Eq for AccessDist {}

/// A uniform number in [0, 1) from the 53 high bits of `u`.
fn unit(u: u64) -> f64 {
    (u >> 11) as f64 / (1u64 << 53) as f64
}

impl AccessDist {
    /// `uniform`, `zipf:THETA`, `pareto:H` or `normal:SIGMA`.
    pub fn parse(s: &str) -> Result<AccessDist, String> {
        let number = |what: &str, v: &str, ok: &dyn Fn(f64) -> bool, range: &str| {
            (v.trim().parse::<f64>().ok())
                .filter(|x| x.is_finite() && ok(*x))
                .ok_or(format!("{what}: {v:?} is not a number {range}"))
        };
        match s.split_once(':') {
            None if s == "uniform" => Ok(AccessDist::Uniform),
            Some(("zipf", v)) => Ok(AccessDist::Zipf {
                theta: number("zipf", v, &|x| x > 0.0 && x <= 10.0, "over 0, at most 10")?,
            }),
            Some(("pareto", v)) => Ok(AccessDist::Pareto {
                h: number("pareto", v, &|x| x > 0.0 && x < 0.5, "over 0 and under 0.5")?,
            }),
            Some(("normal", v)) => Ok(AccessDist::Normal {
                sigma: number(
                    "normal",
                    v,
                    &|x| x > 0.0 && x <= 100.0,
                    "over 0, at most 100",
                )?,
            }),
            _ => Err(format!(
                "{s:?}: expected uniform, zipf:THETA, pareto:H or normal:SIGMA"
            )),
        }
    }

    pub fn is_uniform(&self) -> bool {
        *self == AccessDist::Uniform
    }

    /// For the workload line: "uniform", "zipf 1.2", "pareto 0.2", "normal 5%".
    pub fn describe(&self) -> String {
        match self {
            AccessDist::Uniform => "uniform".into(),
            AccessDist::Zipf { theta } => format!("zipf {theta}"),
            AccessDist::Pareto { h } => format!("pareto {h}"),
            AccessDist::Normal { sigma } => format!("normal {sigma}%"),
        }
    }

    /// The picker among `n` (at least 1).
    pub fn picker(&self, n: u64) -> Picker {
        let n = n.max(1);
        let kind = match *self {
            AccessDist::Uniform => Kind::Uniform,
            AccessDist::Zipf { theta } => Kind::Zipf(Zipf::new(n, theta)),
            AccessDist::Pareto { h } => Kind::Pareto(h.ln() / (1.0 - h).ln()),
            AccessDist::Normal { sigma } => Kind::Normal(sigma / 100.0 * n as f64),
        };
        Picker { n, kind }
    }

    /// The share of picks among `n` that fall on the hottest `fraction` of them (at least one).
    pub fn hot_share(&self, n: u64, fraction: f64) -> f64 {
        let n = n.max(1);
        let m = ((fraction * n as f64).ceil() as u64).clamp(1, n);
        match *self {
            AccessDist::Uniform => m as f64 / n as f64,
            AccessDist::Zipf { theta } => zipf_sum(m, theta) / zipf_sum(n, theta),
            // pick < m exactly when u < (m / (n - 1))^(1/p).
            AccessDist::Pareto { .. } if n == 1 => 1.0,
            AccessDist::Pareto { h } => {
                let p = h.ln() / (1.0 - h).ln();
                (m as f64 / (n - 1) as f64).powf(p.recip()).min(1.0)
            }
            // The m around the middle, of the normal cut to the n.
            AccessDist::Normal { sigma } => {
                let s = sigma / 100.0 * n as f64 * std::f64::consts::SQRT_2;
                erf(m as f64 / 2.0 / s) / erf(n as f64 / 2.0 / s)
            }
        }
    }
}

/// Sum of k^-theta for k in 1..=m: exact to 10,000, then the midpoint integral of the rest.
fn zipf_sum(m: u64, theta: f64) -> f64 {
    let exact = m.min(10_000);
    let head: f64 = (1..=exact).map(|k| (k as f64).powf(-theta)).sum();
    if m == exact {
        return head;
    }
    let (a, b) = (exact as f64 + 0.5, m as f64 + 0.5);
    let tail = if (theta - 1.0).abs() < 1e-12 {
        (b / a).ln()
    } else {
        (b.powf(1.0 - theta) - a.powf(1.0 - theta)) / (1.0 - theta)
    };
    head + tail
}

/// The error function (Abramowitz and Stegun 7.1.26, within 1.5e-7).
pub fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    y.copysign(x)
}

/// A distribution set up for `n` blocks or objects.
#[derive(Debug, Clone)]
pub struct Picker {
    n: u64,
    kind: Kind,
}

#[derive(Debug, Clone)]
enum Kind {
    Uniform,
    Zipf(Zipf),
    /// fio's pareto power p = ln h / ln(1 - h).
    Pareto(f64),
    /// The deviation in blocks or objects.
    Normal(f64),
}

impl Picker {
    /// The one picked, below n, from as many uniform numbers of `next` as it takes.
    pub fn pick(&self, next: &mut impl FnMut() -> u64) -> u64 {
        let n = self.n;
        match &self.kind {
            Kind::Uniform => next() % n,
            Kind::Zipf(z) => z.sample(next) - 1,
            Kind::Pareto(power) => {
                let v = (n - 1) as f64 * unit(next()).powf(*power);
                (v as u64).min(n - 1)
            }
            Kind::Normal(sigma) => loop {
                // Box-Muller from the two halves of one number; redrawn when outside.
                let u = next();
                let u1 = ((u >> 32) as f64 + 0.5) / (1u64 << 32) as f64;
                let u2 = (u & 0xffff_ffff) as f64 / (1u64 << 32) as f64;
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let at = n as f64 / 2.0 + z * sigma;
                if at >= 0.0 && at < n as f64 {
                    return at as u64;
                }
            },
        }
    }
}

/// Zipf over 1..=n by rejection-inversion (Hörmann and Derflinger 1996): O(1) per draw for
/// any n, no table.
#[derive(Debug, Clone)]
struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.s = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// The integral of h: (x^(1 - theta) - 1) / (1 - theta), ln x at theta 1.
    fn big_h(&self, x: f64) -> f64 {
        let ln = x.ln();
        helper2((1.0 - self.theta) * ln) * ln
    }

    fn big_h_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.theta)).max(-1.0);
        (helper1(t) * x).exp()
    }

    fn sample(&self, next: &mut impl FnMut() -> u64) -> u64 {
        loop {
            let u = self.h_n + unit(next()) * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// ln(1 + x) / x, 1 at 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x - 1) / x, 1 at 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests;
