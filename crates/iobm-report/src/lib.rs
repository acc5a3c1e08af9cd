//! iobm-report: turns a result document into text for people. Everything printed comes from
//! the document, so `iobm report saved.json` prints what the run printed.

pub mod bonnie;
pub mod compare;
mod exporter;
pub mod gdsio;
pub mod html;
pub mod io500;
pub mod series;
pub mod table;
pub mod text;
pub mod views;

pub use text::{
    render_footer, render_header, render_phase, render_repeats, render_run, render_steady,
    render_verdicts,
};
