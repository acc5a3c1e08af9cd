//! The workers behind uneven figures, named for the warnings: those that moved nothing and
//! those that ran a small part of the phase, each as a count and the first few ids (by rank
//! under MPI), so a list stays one line for thousands of workers.

use crate::{PhaseResult, WorkerResult};
use iobm_stats::format_duration;
use iobm_stats::names::OpName;
use std::fmt;
use std::time::Duration;

/// A worker that ran less than this share of the phase (its first stamp to its last, against
/// the earliest start to the latest end of the workers that did something) ran a small part.
pub const SHORT_RUN: f64 = 0.90;

/// How many ids a list names before "...".
pub const FEW: usize = 5;

/// Workers behind uneven figures: those that moved nothing and those that ran a small part of
/// the phase, each counted with the first few named. Its text is its `Display`.
#[derive(Debug, Clone, PartialEq)]
pub struct Uneven {
    /// Workers of the phase, all ranks.
    pub workers: usize,
    /// The phase moves bytes (an idle worker moved 0 bytes), else it did no operation.
    pub moves_bytes: bool,
    /// The workers that moved nothing.
    pub idle: Named,
    /// The workers that ran less than [`SHORT_RUN`] of `window_ns`.
    pub short: Named,
    /// The busy workers' window: the earliest start to the latest end.
    pub window_ns: u64,
}

/// A count of workers and the first [`FEW`] of them, (rank, worker) in order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Named {
    pub count: usize,
    pub first: Vec<(u32, u32)>,
    /// Named by rank (MPI).
    pub by_rank: bool,
}

/// The workers that moved nothing (did no operation, in a phase that moves no bytes), always,
/// and when the aggregates disagree (`uneven`) those that ran less than [`SHORT_RUN`] of the
/// phase; None when none did, or when no worker did anything (nothing to compare with).
pub fn named(phase: &PhaseResult, uneven: bool) -> Option<Uneven> {
    // A tree's own directories are made by its owner alone (worker 0 for a shared tree).
    if matches!(phase.op, OpName::TreeCreate | OpName::TreeRemove) {
        return None;
    }
    let moves_bytes = phase.bytes() > 0;
    let idle = |w: &WorkerResult| {
        if moves_bytes {
            w.span.bytes == 0
        } else {
            w.span.ops == 0
        }
    };
    let (idle, busy): (Vec<&WorkerResult>, Vec<&WorkerResult>) =
        phase.workers.iter().partition(|w| idle(w));
    let start = busy.iter().map(|w| w.span.start_ns).min()?;
    let end = busy.iter().map(|w| w.span.end_ns).max()?;
    let window = end.saturating_sub(start);
    let short: Vec<&WorkerResult> = if uneven {
        busy.into_iter()
            .filter(|w| {
                (w.span.end_ns.saturating_sub(w.span.start_ns) as f64) < SHORT_RUN * window as f64
            })
            .collect()
    } else {
        Vec::new()
    };
    let by_rank = phase.workers.iter().any(|w| w.rank > 0);
    let (idle, short) = (Named::of(&idle, by_rank), Named::of(&short, by_rank));
    (idle.count > 0 || short.count > 0).then_some(Uneven {
        workers: phase.workers.len(),
        moves_bytes,
        idle,
        short,
        window_ns: window,
    })
}

impl Named {
    fn of(workers: &[&WorkerResult], by_rank: bool) -> Named {
        let mut sorted: Vec<(u32, u32)> = workers.iter().map(|w| (w.rank, w.worker)).collect();
        sorted.sort_unstable();
        let count = sorted.len();
        sorted.truncate(FEW);
        Named {
            count,
            first: sorted,
            by_rank,
        }
    }
}

impl fmt::Display for Uneven {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let of = format!("of {} workers", self.workers);
        let mut parts = Vec::new();
        if self.idle.count > 0 {
            parts.push(format!(
                "{} {of} {} ({})",
                self.idle.count,
                if self.moves_bytes {
                    "moved 0 bytes"
                } else {
                    "did no operation"
                },
                self.idle
            ));
        }
        if self.short.count > 0 {
            parts.push(format!(
                "{} {}ran less than {:.0}% of the phase's {} ({})",
                self.short.count,
                match (self.idle.count == 0, self.short.count) {
                    (true, _) => of + " ",
                    (false, 1) => "other ".to_string(),
                    (false, _) => "others ".to_string(),
                },
                SHORT_RUN * 100.0,
                format_duration(Duration::from_nanos(self.window_ns)),
                self.short
            ));
        }
        write!(f, "uneven workers: {}", parts.join("; "))
    }
}

/// The first [`FEW`] in (rank, worker) order, "workers 3, 7, ..." or by rank "rank 0 workers
/// 3, 7; rank 2 worker 1, ...".
impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |ids: &[u32]| {
            let plural = if ids.len() > 1 { "workers" } else { "worker" };
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            format!("{plural} {}", ids.join(", "))
        };
        let named = if self.by_rank {
            self.first
                .chunk_by(|a, b| a.0 == b.0)
                .map(|group| {
                    let ids: Vec<u32> = group.iter().map(|&(_, w)| w).collect();
                    format!("rank {} {}", group[0].0, list(&ids))
                })
                .collect::<Vec<_>>()
                .join("; ")
        } else {
            let ids: Vec<u32> = self.first.iter().map(|&(_, w)| w).collect();
            list(&ids)
        };
        f.write_str(&named)?;
        if self.count > self.first.len() {
            f.write_str(", ...")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::checks::{phase_warnings, Machine};

    /// A phase of `n` workers (ranks of `per_rank` workers each), every one moving 1 MiB from
    /// 0 to 4 s, then changed by `change(rank, worker, span)`.
    fn workers(
        n: u32,
        per_rank: u32,
        change: impl Fn(u32, u32, &mut iobm_stats::WorkerSpan),
    ) -> PhaseResult {
        let mut p = phase(OpName::Write, [MIB, MIB], [4_000_000_000, 4_000_000_000]);
        let template = p.workers[0].clone();
        p.workers = (0..n)
            .map(|i| {
                let mut w = template.clone();
                (w.rank, w.worker) = (i / per_rank, i % per_rank);
                change(w.rank, w.worker, &mut w.span);
                w
            })
            .collect();
        p
    }

    fn idle(span: &mut iobm_stats::WorkerSpan) {
        (span.bytes, span.ops) = (0, 0);
    }

    #[test]
    fn even_workers_are_not_named() {
        let p = workers(8, 8, |_, _, _| {});
        assert_eq!(named(&p, true), None);
        assert_eq!(named(&p, false), None);
    }

    #[test]
    fn idle_and_short_workers_are_counted_and_the_first_few_named() {
        // Every fourth worker from 3 moved nothing (16 of 64); of the others, those below 32
        // ended at 3.5 s (24 of them).
        let p = workers(64, 64, |_, w, span| {
            if w % 4 == 3 {
                idle(span);
            } else if w < 32 {
                span.end_ns = 3_500_000_000;
            }
        });
        assert_eq!(
            named(&p, true).unwrap().to_string(),
            "uneven workers: 16 of 64 workers moved 0 bytes (workers 3, 7, 11, 15, 19, ...); \
             24 others ran less than 90% of the phase's 4.000s (workers 0, 1, 2, 4, 5, ...)"
        );
        // Aggregates that agree: the idle ones only.
        assert_eq!(
            named(&p, false).unwrap().to_string(),
            "uneven workers: 16 of 64 workers moved 0 bytes (workers 3, 7, 11, 15, 19, ...)"
        );
    }

    #[test]
    fn short_means_under_ninety_percent_of_the_busy_workers_window() {
        // The window runs from the earliest start (1 s) to the latest end (11 s) of the workers
        // that moved bytes; the idle worker's stamps (0 .. 20 s) are not in it.
        let at = |start: u64, end: u64| {
            move |span: &mut iobm_stats::WorkerSpan| {
                (span.start_ns, span.end_ns) = (start, end);
            }
        };
        let p = workers(4, 4, |_, w, span| match w {
            0 => at(1_000_000_000, 11_000_000_000)(span),
            1 => at(2_000_000_000, 11_000_000_000)(span), // exactly 90%: not short
            2 => at(2_000_000_000, 10_999_999_999)(span), // just under
            _ => {
                at(0, 20_000_000_000)(span);
                idle(span);
            }
        });
        assert_eq!(
            named(&p, true).unwrap().to_string(),
            "uneven workers: 1 of 4 workers moved 0 bytes (worker 3); \
             1 other ran less than 90% of the phase's 10.000s (worker 2)"
        );
    }

    #[test]
    fn under_mpi_the_ids_are_by_rank_and_a_short_list_ends_without_dots() {
        let p = workers(12, 4, |rank, w, span| {
            if (rank, w) == (0, 1) || rank == 2 && w != 2 {
                span.end_ns = 1_000_000_000;
            }
        });
        assert_eq!(
            named(&p, true).unwrap().to_string(),
            "uneven workers: 4 of 12 workers ran less than 90% of the phase's 4.000s \
             (rank 0 worker 1; rank 2 workers 0, 1, 3)"
        );
    }

    #[test]
    fn a_phase_that_moves_no_bytes_names_the_workers_that_did_no_operation() {
        let p = workers(3, 3, |_, w, span| {
            span.bytes = 0;
            span.ops = if w == 1 { 0 } else { 10 };
        });
        assert_eq!(
            named(&p, false).unwrap().to_string(),
            "uneven workers: 1 of 3 workers did no operation (worker 1)"
        );
        // A phase in which no worker did anything has no one to compare with.
        let nothing = workers(3, 3, |_, _, span| idle(span));
        assert_eq!(named(&nothing, true), None);
        // A shared tree's directories are made and removed by one worker alone.
        for op in [OpName::TreeCreate, OpName::TreeRemove] {
            let mut tree = p.clone();
            tree.op = op;
            assert_eq!(named(&tree, true), None, "{op}");
        }
        let mut files = p.clone();
        files.op = OpName::FileCreate;
        assert!(named(&files, false).is_some());
    }

    #[test]
    fn the_names_follow_the_disagreement_among_the_warnings() {
        let mut p = phase(
            OpName::Read,
            [100 * MIB, 100 * MIB],
            [1_000_000_000, 2_000_000_000],
        );
        p.cache.resident_before_bytes = Some(0);
        let w = phase_warnings(&p, &Machine::with_ram(RAM));
        assert!(w[0].starts_with("aggregates differ"), "{w:?}");
        assert_eq!(
            w[1],
            "uneven workers: 1 of 2 workers ran less than 90% of the phase's 2.000s (worker 0)"
        );
    }
}
