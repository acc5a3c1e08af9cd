//! `--rate` and `--arrivals`: the open-loop load of the file and S3 phases, each phase's
//! operations started at a target rate shared by every worker of every rank, and the check
//! before the run that its workers can hold it.

use super::units::{named, parse_op_rate, parse_positive_duration, parse_rate_sweep};
use clap::{ArgGroup, Args};
use iobm_engine::trial::ClientCost;
use iobm_engine::{Arrivals, Pace, Phase};
use std::fmt;
use std::time::Duration;

/// A target rate as given: operations per second, or bytes per second (converted with each
/// phase's transfer size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    Ops(f64),
    Bytes(u64),
}

impl Rate {
    /// Operations per second for operations of `block` bytes.
    pub fn ops_per_s(self, block: u64) -> f64 {
        match self {
            Rate::Ops(n) => n,
            Rate::Bytes(b) => b as f64 / block.max(1) as f64,
        }
    }
}

/// `--rate-sweep`: the phase run at STEPS rates from FROM to TO, evenly spaced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sweep {
    pub from: Rate,
    pub to: Rate,
    pub steps: u32,
}

impl Sweep {
    /// Operations per second of each step, for operations of `block` bytes.
    pub fn rates(&self, block: u64) -> Vec<f64> {
        let (a, b) = (self.from.ops_per_s(block), self.to.ops_per_s(block));
        let last = f64::from(self.steps - 1);
        (0..self.steps)
            .map(|k| a + (b - a) * f64::from(k) / last)
            .collect()
    }
}

/// The open-loop flags.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("pacing").args(["rate", "rate_sweep"])))]
pub struct RateArgs {
    /// Open loop: start operations at this rate over all jobs of all ranks (each its share),
    /// whether or not the last returned: N/s operations, or SIZE/s (200MiB/s) in the phase's
    /// transfer size; response time (from each intended start) is reported beside service time
    #[arg(long, value_name = "N/s|SIZE/s", value_parser = parse_op_rate)]
    pub rate: Option<Rate>,
    /// How --rate's starts are spaced: uniform (evenly) or poisson (exponential gaps, fio's
    /// rate_process=poisson) [default: uniform]
    #[arg(long, requires = "pacing", value_parser = named(&Arrivals::ALL, Arrivals::name, None))]
    pub arrivals: Option<Arrivals>,
    /// read: run the phase at STEPS rates from FROM to TO (operations or sizes per second:
    /// 100..1000/4, 10MiB..100MiB/4), then a table of achieved rate against response time
    #[arg(long, value_name = "FROM..TO/STEPS", value_parser = parse_rate_sweep, conflicts_with = "rate")]
    pub rate_sweep: Option<Sweep>,
    /// With --rate-sweep: the knee is the highest rate up to which every step's p99 response
    /// time stays under this
    #[arg(long, value_name = "TIME", requires = "rate_sweep", value_parser = parse_positive_duration)]
    pub slo: Option<Duration>,
}

impl RateArgs {
    /// Paces every phase: `workers` of each on each of `ranks` ranks share the rate; this is
    /// rank `rank`; `seed` seeds the Poisson gaps.
    pub fn apply(&self, phases: &mut [Phase], rank: usize, ranks: usize, seed: u64) {
        let Some(rate) = self.rate else { return };
        for phase in phases {
            let workers = (phase.workers * ranks.max(1)) as u64;
            let arrivals = self.arrivals.unwrap_or(Arrivals::Uniform);
            phase.pace = Some(Pace {
                first_worker: (rank * phase.workers) as u64,
                ..Pace::new(rate.ops_per_s(phase.block), workers, arrivals, seed)
            });
        }
    }

    /// The phase at each rate of `--rate-sweep` (named by its rate), or paced by `--rate` as
    /// [`RateArgs::apply`]; as it is without either.
    pub fn sweep(&self, phase: Phase, rank: usize, ranks: usize, seed: u64) -> Vec<Phase> {
        let Some(sweep) = self.rate_sweep else {
            let mut phases = vec![phase];
            self.apply(&mut phases, rank, ranks, seed);
            return phases;
        };
        let arrivals = self.arrivals.unwrap_or(Arrivals::Uniform);
        let workers = (phase.workers * ranks.max(1)) as u64;
        sweep
            .rates(phase.block)
            .into_iter()
            .map(|rate| {
                let pace = Pace {
                    first_worker: (rank * phase.workers) as u64,
                    ..Pace::new(rate, workers, arrivals, seed)
                };
                Phase {
                    name: format!(
                        "{} at {} ops/s",
                        phase.name,
                        iobm_results::pace::trim(pace.ops_per_s())
                    ),
                    pace: Some(pace),
                    ..phase.clone()
                }
            })
            .collect()
    }

    /// The fastest-paced phase's pace, if any.
    fn fastest(phases: &[Phase]) -> Option<(Pace, &Phase)> {
        phases
            .iter()
            .filter_map(|p| Some((p.pace?, p)))
            .max_by_key(|(pace, _)| pace.milli_ops_per_s)
    }

    /// A warning before the run when each worker's share of the fastest rate leaves it less
    /// time per operation than `cost` measures this client takes at that phase's shape
    /// `against` no storage: no worker could hold it.
    pub fn check(
        &self,
        phases: &[Phase],
        against: Against,
        cost: impl FnOnce(&Phase) -> ClientCost,
    ) -> Option<Unholdable> {
        let (pace, phase) = Self::fastest(phases)?;
        Unholdable::of(pace, cost(phase), against)
    }
}

/// What a client's cost per operation was measured against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// iobm's null target: file operations that do nothing.
    NullTarget,
    /// A null S3 server on loopback: requests through iobm's S3 client, answered at once.
    NullS3Server,
}

impl fmt::Display for Against {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(match self {
            Against::NullTarget => "iobm's null target",
            Against::NullS3Server => "a null S3 server on loopback, through iobm's S3 client",
        })
    }
}

/// A `--rate` whose workers must each start operations faster than this client alone can: its
/// measured cost per operation against no storage is above a worker's share of the rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unholdable {
    pub pace: Pace,
    pub cost: ClientCost,
    pub against: Against,
}

impl Unholdable {
    /// Whether a worker's share of `pace` leaves it less time per operation than `cost`.
    pub fn of(pace: Pace, cost: ClientCost, against: Against) -> Option<Unholdable> {
        let unholdable = cost.per_op.as_nanos() as f64 > pace.gap_ns();
        unholdable.then_some(Unholdable {
            pace,
            cost,
            against,
        })
    }
}

impl fmt::Display for Unholdable {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let (pace, cost) = (&self.pace, &self.cost);
        write!(
            f,
            "--rate {} ops/s over {} workers: each must start an operation every {:.1} µs, and against no storage ({}, {} ms closed loop at this shape) each took {:.1} µs per operation; this client cannot hold it whatever the storage (more --jobs/--concurrent hold more)",
            iobm_results::pace::trim(pace.ops_per_s()),
            pace.workers,
            pace.gap_ns() / 1e3,
            self.against,
            cost.trial.as_millis(),
            cost.per_op.as_nanos() as f64 / 1e3,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_engine::{Layout, Op};

    fn phases(block: u64, workers: usize) -> Vec<Phase> {
        let layout = Layout::file_per_worker(workers, 1 << 20);
        vec![Phase::new("read", Op::Read, block, layout)]
    }

    #[test]
    fn a_byte_rate_is_paced_in_the_phases_transfer_size_and_shared_by_every_rank() {
        let args = RateArgs {
            rate: Some(Rate::Bytes(200 << 20)),
            arrivals: Some(Arrivals::Poisson),
            rate_sweep: None,
            slo: None,
        };
        let mut p = phases(1 << 20, 2);
        args.apply(&mut p, 1, 2, 9);
        let pace = p[0].pace.unwrap();
        assert_eq!(pace.ops_per_s(), 200.0);
        assert_eq!((pace.workers, pace.first_worker), (4, 2));
        assert_eq!(pace.arrivals, Arrivals::Poisson);
        // Each of the 4 workers starts one every 20 ms.
        assert_eq!(pace.gap_ns(), 20e6);
    }

    #[test]
    fn a_sweep_runs_the_phase_at_each_rate_from_its_first_to_its_last() {
        let args = RateArgs {
            rate: None,
            arrivals: None,
            rate_sweep: Some(Sweep {
                from: Rate::Bytes(100 << 12),
                to: Rate::Bytes(400 << 12),
                steps: 4,
            }),
            slo: None,
        };
        let phase = phases(4096, 2).remove(0);
        let swept = args.sweep(phase, 0, 1, 0);
        let rates: Vec<f64> = swept.iter().map(|p| p.pace.unwrap().ops_per_s()).collect();
        assert_eq!(rates, [100.0, 200.0, 300.0, 400.0]);
        assert_eq!(swept[1].name, "read at 200 ops/s");
    }

    #[test]
    fn a_rate_no_worker_can_start_at_the_measured_cost_is_warned_of() {
        let args = RateArgs {
            rate: Some(Rate::Ops(200_000.0)),
            arrivals: None,
            rate_sweep: None,
            slo: None,
        };
        // 200,000/s over 2 workers: each must start one every 10 µs.
        let mut p = phases(4096, 2);
        args.apply(&mut p, 0, 1, 0);
        let cost = |us| {
            move |_: &Phase| ClientCost {
                per_op: Duration::from_micros(us),
                trial: Duration::from_millis(100),
            }
        };
        let w = args
            .check(&p, Against::NullTarget, cost(12))
            .expect("a warning");
        assert_eq!(
            w.to_string(),
            "--rate 200000 ops/s over 2 workers: each must start an operation every 10.0 µs, and against no storage (iobm's null target, 100 ms closed loop at this shape) each took 12.0 µs per operation; this client cannot hold it whatever the storage (more --jobs/--concurrent hold more)"
        );
        assert_eq!(args.check(&p, Against::NullTarget, cost(8)), None);
        // Unpaced: nothing measured, nothing said.
        let unpaced = RateArgs {
            rate: None,
            arrivals: None,
            rate_sweep: None,
            slo: None,
        };
        assert_eq!(
            unpaced.check(&phases(4096, 1), Against::NullTarget, |_| {
                panic!("measured")
            }),
            None
        );
    }
}
