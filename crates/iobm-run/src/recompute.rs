//! Aggregates and warnings computed again from a saved run's per-worker records (`iobm report`,
//! `iobm compare`): what is printed never depends on derived values stored in the document.

use iobm_results::checks::{check, Machine, LEGACY_NOTES};
use iobm_results::RunResult;
use iobm_stats::aggregates;

/// Recomputes aggregates and warnings; returns the names of phases whose saved aggregates
/// differ from the recomputed ones.
pub fn recompute(run: &mut RunResult) -> Vec<String> {
    let mut differing = Vec::new();
    let machine = Machine::of(run);
    for phase in &mut run.phases {
        let fresh = aggregates(&phase.spans());
        let same = fresh.len() == phase.aggregates.len()
            && fresh.iter().zip(&phase.aggregates).all(|(a, b)| {
                a.kind == b.kind
                    && a.bytes == b.bytes
                    && (a.bytes_per_s - b.bytes_per_s).abs() <= 1e-6 * a.bytes_per_s.abs().max(1.0)
            });
        if !same {
            differing.push(phase.name.clone());
        }
        phase.aggregates = fresh;
        if phase.notes.is_empty() {
            // Written before phases had notes: they are among the warnings.
            phase.notes = phase
                .warnings
                .iter()
                .filter(|w| LEGACY_NOTES.contains(&w.as_str()))
                .cloned()
                .collect();
        }
        check(phase, &machine);
    }
    if run.bonnie.is_some() {
        run.bonnie = Some(iobm_results::bonnie::summarize(run));
    }
    if let Some(stonewall_s) = run.io500.as_ref().map(|s| s.stonewall_s) {
        run.io500 = Some(iobm_results::io500::summarize(run, stonewall_s));
    }
    differing
}
