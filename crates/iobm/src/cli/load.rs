//! The shape of the load beside its rate: which blocks or objects operations pick
//! (`--access`) and the idle time between a worker's operations (`--think`, `--burst`), for
//! the file and S3 phases alike.

use super::units::parse_positive_duration;
use clap::Args;
use iobm_engine::rhythm::{Burst, Rhythm};
use iobm_engine::{Pattern, Phase};
use iobm_run::exit::Failure;
use iobm_stats::access::AccessDist;
use std::time::Duration;

/// `--access`, `--think` and `--burst`.
#[derive(Debug, Args)]
pub struct LoadArgs {
    /// Which blocks (with --random) or objects (s3 get, head and mixed's reads) operations
    /// pick: uniform, zipf:THETA (the k-th hottest with weight 1/k^THETA), pareto:H (fio's:
    /// 0.2 puts 80% on the hottest 20%) or normal:SIGMA (around the middle, SIGMA percent of the
    /// data set); skewed picks are drawn with replacement, seeded. fio's random_distribution
    /// (warp has no equivalent: its GETs pick uniformly) [default: uniform]
    #[arg(long, value_name = "DIST", value_parser = AccessDist::parse)]
    pub access: Option<AccessDist>,
    /// Idle this long after each operation before the worker starts its next, outside its
    /// latency (fio's thinktime; elbencho has none); under --rate the idle time delays the
    /// next start and is no lag of the client's
    #[arg(long, value_name = "TIME", value_parser = parse_positive_duration)]
    pub think: Option<Duration>,
    /// Load in bursts: operations for ON, then idle for OFF, every worker in step from the
    /// phase's start (fio's thinktime_blocks/thinktime_spin come closest); under --rate the
    /// rate holds during ON and the phase's target is rate x ON / (ON + OFF)
    #[arg(long, value_name = "ON/OFF", value_parser = parse_burst)]
    pub burst: Option<Burst>,
}

/// `ON/OFF`: two durations, ON over 0.
pub(super) fn parse_burst(s: &str) -> Result<Burst, String> {
    let (on, off) = s
        .split_once('/')
        .ok_or("expected ON/OFF, e.g. 2s/8s (load for 2 s, idle for 8 s)")?;
    let on = parse_positive_duration(on.trim()).map_err(|e| format!("ON {on:?}: {e}"))?;
    let off = parse_positive_duration(off.trim()).map_err(|e| format!("OFF {off:?}: {e}"))?;
    Ok(Burst { on, off })
}

impl LoadArgs {
    /// The access distribution asked for (uniform without the flag).
    pub fn access(&self) -> AccessDist {
        self.access.unwrap_or(AccessDist::Uniform)
    }

    /// Refuses a skewed `--access` on blocks read or written in order.
    pub fn check_files(&self, random: bool) -> Result<(), Failure> {
        match self.access {
            Some(a) if !a.is_uniform() && !random => Err(Failure::input(format!(
                "--access {}: blocks are picked by a distribution only at random: add --random",
                a.describe()
            ))),
            _ => Ok(()),
        }
    }

    /// The order of a file phase's blocks: `random` ones drawn from `--access` when skewed.
    pub fn pattern(&self, random: bool, seed: u64) -> Pattern {
        match (random, self.access()) {
            (false, _) => Pattern::Sequential,
            (true, AccessDist::Uniform) => Pattern::Random { seed },
            (true, access) => Pattern::Skewed { seed, access },
        }
    }

    /// The phases' idle times (none without `--think` or `--burst`).
    pub fn rhythm(&self) -> Option<Rhythm> {
        (self.think.is_some() || self.burst.is_some()).then(|| Rhythm {
            think: self.think.unwrap_or_default(),
            burst: self.burst,
        })
    }

    /// Gives every phase the idle times.
    pub fn apply(&self, phases: &mut [Phase]) {
        for phase in phases {
            phase.rhythm = self.rhythm();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_two_durations() {
        let b = parse_burst("2s/8s").unwrap();
        assert_eq!(
            (b.on, b.off),
            (Duration::from_secs(2), Duration::from_secs(8))
        );
        assert!(parse_burst("2s").unwrap_err().contains("ON/OFF"));
        assert!(parse_burst("0s/1s").unwrap_err().contains("ON"));
        assert!(parse_burst("1s/x").unwrap_err().contains("OFF"));
    }
}
