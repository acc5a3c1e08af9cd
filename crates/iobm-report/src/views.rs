//! The files a run is saved as besides its JSON document, in one list ([`FORMATS`]) that the
//! command line's flags and the run layer's outputs read: a new format is one module of
//! `views/` implementing [`Exporter`] and one line here.

mod bonnie_csv;
mod page;
mod series;

pub use crate::exporter::{Commands, Exporter, Format, Written};

/// Every format, in the order their flags are listed and their files written.
pub const FORMATS: &[Format] = &[series::FORMAT, page::FORMAT, bonnie_csv::FORMAT];

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_results::RunResult;

    fn format(name: &str) -> &'static Format {
        FORMATS.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn every_format_has_its_own_flag_and_exporter() {
        let flags: Vec<String> = FORMATS.iter().map(Format::flag).collect();
        assert_eq!(flags, ["--csv", "--html", "--bonnie-csv"]);
        let appended: Vec<bool> = FORMATS
            .iter()
            .map(|f| f.written == Written::EachRepetition)
            .collect();
        assert_eq!(appended, [false, false, true]);
        let run: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        let series = format("csv").exporter.export(&run);
        assert!(series.starts_with("run_id,phase,"), "{}", &series[..80]);
        assert!(format("html")
            .exporter
            .export(&run)
            .starts_with("<!doctype html>"));
        // A stream run has no bonnie++ table, so no line.
        assert_eq!(format("bonnie-csv").exporter.export(&run), "");
        let bonnie: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/bonnie-tmpfs.json"))
                .unwrap();
        let line = format("bonnie-csv").exporter.export(&bonnie);
        assert!(
            line.starts_with("1.98,iobm-") && line.ends_with('\n'),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1);
    }
}
