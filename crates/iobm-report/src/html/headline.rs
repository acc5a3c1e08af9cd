//! The page's headline, before anything else: each phase's figure (its makespan rate), p99
//! latency, cache verdict and count of warnings in one table row.

use super::{esc, latency_text};
use crate::compare::{headline, Unit};
use iobm_results::RunResult;
use iobm_stats::AggregateKind;
use std::fmt::Write;

/// The headline table of `run`; nothing for a run without phases.
pub(super) fn headline_section(out: &mut String, run: &RunResult) {
    if run.phases.is_empty() {
        return;
    }
    out.push_str(
        "<section id=\"headline\"><h2>In short</h2>\n<table class=\"headline\">\n\
<tr><th>phase</th><th>figure (makespan)</th><th>p99 latency</th><th>cache verdict</th><th>warnings</th></tr>\n",
    );
    for phase in &run.phases {
        let (value, unit) = headline(phase, AggregateKind::Makespan, Unit::MiB);
        let unit = if unit == "/s" { "ops/s" } else { unit };
        let figure = value.map_or("-".to_string(), |v| format!("{v:.2} {unit}"));
        let verdict = phase
            .cache
            .verdict
            .as_ref()
            .map_or("-", |v| v.verdict.as_str());
        let _ = writeln!(
            out,
            "<tr data-phase=\"{}\"><td>{}</td><td class=\"figure\">{}</td>\
<td>{}</td><td class=\"verdict\" data-verdict=\"{}\">{}</td><td>{}</td></tr>",
            esc(&phase.name),
            esc(&phase.name),
            esc(&figure),
            latency_text(phase.latency.p99_ns),
            esc(verdict),
            esc(verdict),
            phase.warnings.len()
        );
    }
    out.push_str("</table>\n</section>\n");
}
