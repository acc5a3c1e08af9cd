//! A trend in a phase's rates over its repetitions, in their order: the first faster than
//! every later one, or a drift one way at every step. Repetitions with one are not
//! independent draws of one figure (a cache or a device's burst the first found fresh, a
//! device filling up or heating), which the median and the interval assume.

use super::UNSTABLE_CV;

/// How the rates of a phase's repetitions moved, in order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Trend {
    /// The first repetition faster than every later one, by more than [`UNSTABLE_CV`]: its
    /// rate and the fastest of the others.
    FirstFaster { first: f64, rest: f64 },
    /// Every repetition faster (`rising`) or slower than the one before, from `first` to
    /// `last`, by more than [`UNSTABLE_CV`] in all.
    Drift { rising: bool, first: f64, last: f64 },
}

/// The fewest repetitions in which a drift at every step is told: with 3, one order in 3 is
/// monotone by chance; with 4, one in 12.
pub const MIN_FOR_DRIFT: usize = 4;

impl Trend {
    /// The trend of `values` (rates, in the repetitions' order), if any; needs 3 values (a
    /// drift [`MIN_FOR_DRIFT`]).
    pub fn of(values: &[f64]) -> Option<Trend> {
        let (&first, rest) = values.split_first()?;
        let most = rest.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if rest.len() >= 2 && first > most * (1.0 + UNSTABLE_CV) {
            return Some(Trend::FirstFaster { first, rest: most });
        }
        let last = *values.last()?;
        let steps = values.windows(2);
        let rising = steps.clone().all(|w| w[1] > w[0]);
        let falling = steps.clone().all(|w| w[1] < w[0]);
        let moved = (last - first).abs() > UNSTABLE_CV * first.min(last);
        (values.len() >= MIN_FOR_DRIFT && (rising || falling) && moved).then_some(Trend::Drift {
            rising,
            first,
            last,
        })
    }

    /// The warning for phase `name`, its rates shown by `rate`.
    pub fn warning(&self, name: &str, rate: &dyn Fn(f64) -> String) -> String {
        let what = match *self {
            Trend::FirstFaster { first, rest } => format!(
                "the first of the repetitions ran at {}, faster than every later one (at most {})",
                rate(first),
                rate(rest)
            ),
            Trend::Drift {
                rising,
                first,
                last,
            } => format!(
                "the rate {} at every repetition, from {} to {}",
                if rising { "rose" } else { "fell" },
                rate(first),
                rate(last)
            ),
        };
        format!(
            "trend: {name}: {what}: the repetitions are not independent (a cache or a burst the first found fresh, storage filling or warming), which the median and the interval assume"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_repetition_faster_than_the_rest_or_a_drift_is_a_trend() {
        // The first read of three runs: 1085-1364 MiB/s against 259-382.
        assert_eq!(
            Trend::of(&[1364.0, 382.0, 259.0]),
            Some(Trend::FirstFaster {
                first: 1364.0,
                rest: 382.0
            })
        );
        assert_eq!(
            Trend::of(&[100.0, 104.0, 109.0, 115.0]),
            Some(Trend::Drift {
                rising: true,
                first: 100.0,
                last: 115.0
            })
        );
        assert!(matches!(
            Trend::of(&[115.0, 110.0, 104.0, 100.0, 90.0]),
            Some(Trend::Drift { rising: false, .. })
        ));
        assert_eq!(Trend::of(&[100.0, 120.0, 110.0, 105.0, 90.0]), None);
        // Noise: no order, a first within the spread, a drift of 3 or within 5%, too few.
        for values in [
            &[100.0, 97.0, 103.0, 99.0][..],
            &[103.0, 100.0, 99.0, 101.0],
            &[100.0, 110.0, 120.0],
            &[100.0, 101.0, 102.0, 103.0],
            &[200.0, 100.0],
            &[],
        ] {
            assert_eq!(Trend::of(values), None, "{values:?}");
        }
        let told = Trend::of(&[1364.0, 382.0, 259.0])
            .unwrap()
            .warning("read", &|r| format!("{r:.0} MiB/s"));
        assert_eq!(told, "trend: read: the first of the repetitions ran at 1364 MiB/s, faster than every later one (at most 382 MiB/s): the repetitions are not independent (a cache or a burst the first found fresh, storage filling or warming), which the median and the interval assume");
    }
}
