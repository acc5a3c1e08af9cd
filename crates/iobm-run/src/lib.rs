//! iobm-run: the run layer under every command. A command checks its flags and hands over a
//! plan; this crate sets it up, runs and tears it down on every rank ([`lifecycle`]), runs the
//! phases ([`execute`]), turns what the engine measured into
//! the result contract ([`record`]), merges the ranks' phases onto one clock ([`ranks`]), hands
//! the run to its observers after each phase (the printed report, the result file saved as the
//! run goes: [`observe`]; what a run shows while a phase goes: [`live`], [`metrics`]), draws the progress line, handles Ctrl-C ([`signals`]) and maps the
//! outcome to an exit code ([`exit`]).

pub mod atomic;
pub mod combine;
pub mod execute;
pub mod exit;
pub mod http;
pub mod lifecycle;
pub mod live;
pub mod metrics;
pub mod observe;
pub mod offered;
pub mod outputs;
pub mod plan;
pub mod probe;
pub mod progress;
pub mod ranks;
pub mod recompute;
pub mod record;
pub mod requests;
pub mod session;
pub mod signals;
