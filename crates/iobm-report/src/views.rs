//! The files a run is saved as besides its JSON document: each view, the flag that asks for it,
//! its renderer and whether it is written once from the whole run or appended to after each
//! repetition, in one list (`VIEWS`), so a new format is added in one place.

use iobm_results::RunResult;

/// A file made from a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The time series as tidy CSV (`--csv`).
    Series,
    /// The self-contained HTML page (`--html`).
    Page,
    /// bonnie++'s CSV line, one per repetition appended to the file (`--bonnie-csv`), as
    /// bonnie++ users collect many runs in one file for `bon_csv2html`.
    BonnieCsv,
}

/// Every view, in the order they are written.
pub const VIEWS: [View; 3] = [View::Series, View::Page, View::BonnieCsv];

impl View {
    /// The flag that asks for this view.
    pub fn flag(self) -> &'static str {
        match self {
            View::Series => "--csv",
            View::Page => "--html",
            View::BonnieCsv => "--bonnie-csv",
        }
    }

    /// Appended to after each repetition rather than written once from the last run.
    pub fn appends(self) -> bool {
        self == View::BonnieCsv
    }

    /// The view of `run` (its per-worker series attached where it has a side file).
    pub fn render(self, run: &RunResult) -> String {
        match self {
            View::Series => crate::series::csv(run),
            View::Page => crate::html::run_page(run),
            View::BonnieCsv => crate::bonnie::csv_line(run).map_or(String::new(), |l| l + "\n"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_has_its_own_flag_and_renderer() {
        let flags: Vec<&str> = VIEWS.iter().map(|v| v.flag()).collect();
        assert_eq!(flags, ["--csv", "--html", "--bonnie-csv"]);
        let appended: Vec<bool> = VIEWS.iter().map(|v| v.appends()).collect();
        assert_eq!(appended, [false, false, true]);
        let run: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        assert!(
            View::Series.render(&run).starts_with("run_id,phase,"),
            "{}",
            &View::Series.render(&run)[..80]
        );
        assert!(View::Page.render(&run).starts_with("<!doctype html>"));
        // A stream run has no bonnie++ table, so no line.
        assert_eq!(View::BonnieCsv.render(&run), "");
        let bonnie: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/bonnie-tmpfs.json"))
                .unwrap();
        let line = View::BonnieCsv.render(&bonnie);
        assert!(
            line.starts_with("1.98,iobm-") && line.ends_with('\n'),
            "{line}"
        );
        assert_eq!(line.lines().count(), 1);
    }
}
