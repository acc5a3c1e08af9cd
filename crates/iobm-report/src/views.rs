//! The files a whole run is saved as besides its JSON document: each view, the flag that asks
//! for it and its renderer, in one list (`VIEWS`), so a new format is added in one place.

use iobm_results::RunResult;

/// A file made from a whole run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// The time series as tidy CSV (`--csv`).
    Series,
    /// The self-contained HTML page (`--html`).
    Page,
}

/// Every view, in the order they are written.
pub const VIEWS: [View; 2] = [View::Series, View::Page];

impl View {
    /// The flag that asks for this view.
    pub fn flag(self) -> &'static str {
        match self {
            View::Series => "--csv",
            View::Page => "--html",
        }
    }

    /// The view of `run` (its per-worker series attached where it has a side file).
    pub fn render(self, run: &RunResult) -> String {
        match self {
            View::Series => crate::series::csv(run),
            View::Page => crate::html::run_page(run),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_view_has_its_own_flag_and_renderer() {
        let flags: Vec<&str> = VIEWS.iter().map(|v| v.flag()).collect();
        assert_eq!(flags, ["--csv", "--html"]);
        let run: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        assert!(
            View::Series.render(&run).starts_with("run_id,phase,"),
            "{}",
            &View::Series.render(&run)[..80]
        );
        assert!(View::Page.render(&run).starts_with("<!doctype html>"));
    }
}
