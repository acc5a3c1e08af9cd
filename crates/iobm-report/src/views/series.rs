//! The time series as tidy CSV (`--csv`).

use crate::exporter::{Commands, Exporter, Format, Written};
use iobm_results::RunResult;

pub(super) const FORMAT: Format = Format {
    name: "csv",
    help: "Save the time series as tidy CSV to FILE: one row per phase, worker and second (and \
           per kind of S3 operation over all workers), with bytes, operations and rates",
    saved: Some("time series as tidy CSV"),
    commands: Commands::Workloads,
    written: Written::Once,
    exporter: &Series,
};

struct Series;

impl Exporter for Series {
    fn export(&self, run: &RunResult) -> String {
        crate::series::csv(run)
    }
}
