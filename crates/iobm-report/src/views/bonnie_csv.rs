//! bonnie++'s CSV line (`--bonnie-csv`), one per repetition appended to the file, as bonnie++
//! users collect many runs in one file for `bon_csv2html`.

use crate::exporter::{Commands, Exporter, Format, Written};
use iobm_results::RunResult;

pub(super) const FORMAT: Format = Format {
    name: "bonnie-csv",
    help: "Append bonnie++'s CSV line (format 1.98, for bon_csv2txt and bon_csv2html) to FILE, \
           which collects one line per run",
    saved: None,
    commands: Commands::Bonnie,
    written: Written::EachRepetition,
    exporter: &BonnieCsv,
};

struct BonnieCsv;

impl Exporter for BonnieCsv {
    fn export(&self, run: &RunResult) -> String {
        crate::bonnie::csv_line(run).map_or(String::new(), |l| l + "\n")
    }
}
