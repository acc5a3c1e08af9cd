//! Runs a list of phases against a target on every rank and fills in the run's result (at rank
//! 0), handing the run to its observers after each merged phase; stops at the first phase that
//! was interrupted or failed on any rank.

use crate::around::{with_servers, Around};
use crate::observe::Observer;
use crate::offered;
use crate::progress;
use crate::progress::ProgressLine;
use crate::ranks::{RankPhase, Ranks};
use crate::record::phase_result;
use iobm_engine::{run_phase_ranked, Control, Op, Phase, PhaseOutcome, StopRule, Tally};
use iobm_results::checks::{check, Machine};
use iobm_results::{PhaseResult, RunResult, RunStatus};
use iobm_target::Target;
use std::sync::Arc;

/// Runs `phases` in order, appending each phase's result to `run` (rank 0) and handing the run
/// to every observer. Later phases on the files of a write that stopped by time are limited to
/// the data it wrote; those on the items of a creation a stonewall cut short, to what it made.
pub fn execute(
    target: &dyn Target,
    mut phases: Vec<Phase>,
    run: &mut RunResult,
    control: &Arc<Control>,
    ranks: &Ranks,
    observers: &mut [&mut dyn Observer],
) {
    let _progress = ranks
        .is_root()
        .then(|| ProgressLine::start(control.clone()));
    for o in observers.iter_mut().filter(|_| ranks.is_root()) {
        o.started(run);
    }
    let host = run.environment.hostname.clone();
    let machine = Machine::of(run);
    let around = Around::of(run);
    for index in 0..phases.len() {
        if !ranks.all(!control.stop_requested()) {
            run.status = RunStatus::Interrupted;
            break;
        }
        let phase = phases[index].clone();
        // Outside the phase's timing: the servers' caches dropped (rank 0, once for all).
        let servers_dropped = match drop_servers(&around, &phase, ranks) {
            Ok(dropped) => dropped,
            Err(why) => {
                run.warnings.push(why);
                run.status = RunStatus::Failed;
                break;
            }
        };
        let servers_before = if ranks.is_root() {
            around.servers()
        } else {
            Vec::new()
        };
        // Rank 0 reads the servers through the phase too, until its merge is done.
        let sampler = ranks
            .is_root()
            .then(|| around.sample(&servers_before, phase.interval, control.origin))
            .flatten();
        let nics_before = around.nics();
        let outcome = run_ranked(target, &phase, control, ranks);
        let nics_after = around.nics();
        limit_later(&mut phases[index + 1..], &phase, &outcome);
        let mut recorded = phase_result(&phase, &outcome, ranks.rank(), &host, &machine);
        mark(&mut recorded, target, servers_dropped);
        recorded.cache.wire = around.wire(&nics_before, &nics_after);
        // Outside the phase's timing and CPU: what its data offered the storage.
        recorded.offered = offered::measure(&phase, phase.verify.unwrap_or(control.run_id));
        let local = RankPhase {
            phase: recorded,
            traces: outcome.workers.into_iter().map(|w| w.trace).collect(),
            origin_unix_ns: run.clock.origin_unix_ns,
        };
        let mut status = RunStatus::Complete;
        if let Some(mut merged) = ranks.merge(local, run.clock.origin_unix_ns, &machine) {
            if around.active() {
                // Every rank is done with the phase once the merge has gathered it.
                let servers_after = around.servers();
                let evidence = around.evidence(&servers_before, &servers_after, sampler);
                merged.cache.servers.extend(evidence);
                check(&mut merged, &machine);
            }
            status = merged.status;
            run.phases.push(merged);
            for o in observers.iter_mut() {
                o.phase_done(run);
            }
        }
        let status = ranks.share(&status);
        if status != RunStatus::Complete {
            run.status = status;
            break;
        }
    }
}

/// Runs `phase` on this rank's workers, with every rank's.
fn run_ranked(
    target: &dyn Target,
    phase: &Phase,
    control: &Control,
    ranks: &Ranks,
) -> PhaseOutcome {
    // A stonewall's wear-out is the most any worker of any rank did.
    let agree = |most: u64| ranks.max(most);
    // --until-stable's rate is of every rank's workers.
    let sum = |mine: Tally| ranks.sum_tally(mine);
    let gate = || ranks.barrier();
    run_phase_ranked(target, phase, control, &gate, &agree, &sum)
}

/// Marks this rank's record of a phase: the endpoint each worker of an object phase sent its
/// requests to (before the merge adds up each endpoint's series), the servers' caches dropped.
fn mark(recorded: &mut PhaseResult, target: &dyn Target, servers_dropped: bool) {
    for w in &mut recorded.workers {
        w.endpoint = target.endpoint_of(w.worker as usize).map(str::to_string);
    }
    if servers_dropped {
        recorded.settings.cache_dropped = with_servers(&recorded.settings.cache_dropped);
        recorded.settings.drop_cache = true;
    }
}

/// Drops the servers' caches before `phase` when it asks (rank 0, once for all ranks): whether
/// they were dropped, or why not (every rank's failure, printed at rank 0).
fn drop_servers(around: &Around, phase: &Phase, ranks: &Ranks) -> Result<bool, String> {
    if !around.drops_before(phase) {
        return Ok(false);
    }
    let dropped: Result<(), String> = if ranks.is_root() {
        progress::note(&format!(
            "dropping the servers' caches before '{}' ...",
            phase.name
        ));
        let done = around.drop_servers(&phase.name).map(|_| ());
        progress::clear_line();
        done
    } else {
        Ok(())
    };
    ranks.share(&dropped).inspect_err(|why| {
        if ranks.is_root() {
            eprintln!("iobm: {why}");
        }
    })?;
    Ok(true)
}

/// Limits the `later` phases to what `phase` did: those on the files of a write that stopped
/// by time to the data it wrote, those on the items of a creation a stonewall cut short to
/// what it made.
fn limit_later(later: &mut [Phase], phase: &Phase, outcome: &PhaseOutcome) {
    if phase.op == Op::Write && matches!(phase.stop, StopRule::Duration(_)) {
        let written: Vec<u64> = outcome.workers.iter().map(|w| w.span.bytes).collect();
        let same_data = |p: &&mut Phase| p.layout.files == phase.layout.files;
        for p in later.iter_mut().filter(same_data) {
            p.limit_to_written(phase, &written);
        }
    }
    if let Some(made) = outcome.items_done() {
        for p in later.iter_mut() {
            p.limit_to_made(phase, made);
        }
    }
}
