//! The self-contained HTML page (`--html`).

use crate::exporter::{Commands, Exporter, Format, Written};
use iobm_results::RunResult;

pub(super) const FORMAT: Format = Format {
    name: "html",
    help: "Save a report to look at as one self-contained HTML file (no network needed): \
           throughput and latency over time, per-worker and per-rank bars, aggregates, cache \
           verdict",
    saved: Some("HTML report"),
    commands: Commands::Workloads,
    written: Written::Once,
    exporter: &Page,
};

struct Page;

impl Exporter for Page {
    fn export(&self, run: &RunResult) -> String {
        crate::html::run_page(run)
    }
}
