//! `--server-drop-cmd`: the command that drops the servers' caches, run at rank 0 before every
//! phase that reads data (every rank waits for it), and "servers" in what the phase says was
//! dropped.

use super::{Probe, Refusal, Scene};
use crate::progress;
use iobm_engine::{ObjectOp, Op, Phase, PhaseOutcome};
use iobm_results::PhaseResult;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The command, and whether it ran before the current phase.
pub struct DropCmd {
    cmd: String,
    dropped: AtomicBool,
}

impl DropCmd {
    pub fn new(cmd: &str) -> DropCmd {
        DropCmd {
            cmd: cmd.to_string(),
            dropped: AtomicBool::new(false),
        }
    }

    /// Runs the command; Err names the flag, the command, its exit status and the end of what
    /// it wrote to stderr.
    fn drop_servers(&self, phase: &str) -> Result<(), String> {
        let cmd = &self.cmd;
        progress::note(&format!(
            "dropping the servers' caches before '{phase}' ..."
        ));
        let done = run_drop_cmd(cmd).map(|_| ()).map_err(|why| {
            format!("--server-drop-cmd '{cmd}' before phase '{phase}': {why}; the run ends here")
        });
        progress::clear_line();
        done
    }
}

/// Whether the servers' caches are dropped before `phase`: a phase that reads data.
fn drops_before(phase: &Phase) -> bool {
    matches!(
        phase.op,
        Op::Read
            | Op::Rewrite
            | Op::ReadWrite { .. }
            | Op::GetChar(_)
            | Op::Seek { .. }
            | Op::Object(ObjectOp::Get | ObjectOp::Mixed | ObjectOp::Versioned)
    )
}

impl Probe for DropCmd {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        let drops = drops_before(scene.phase);
        self.dropped.store(drops, Ordering::SeqCst);
        if !drops {
            return Ok(());
        }
        // Rank 0 drops them once for all.
        let dropped = match scene.ranks.is_root() {
            true => self.drop_servers(&scene.phase.name),
            false => Ok(()),
        };
        scene.ranks.share(&dropped).map_err(Refusal::Run)
    }

    fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        if self.dropped.load(Ordering::SeqCst) {
            result.settings.cache_dropped.servers = true;
            result.settings.drop_cache = true;
        }
    }
}

/// Runs `cmd` through `sh -c`, stdin closed and stdout discarded, and says how it failed.
fn run_drop_cmd(cmd: &str) -> Result<Duration, String> {
    let started = std::time::Instant::now();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if out.status.success() {
        return Ok(started.elapsed());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    let status = match out.status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".to_string(),
    };
    Err(match last {
        Some(line) => format!("{status} ({})", iobm_results::env::printable(line.trim())),
        None => status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drop_command_is_checked_and_its_failure_told() {
        assert!(run_drop_cmd("true").is_ok());
        assert_eq!(
            run_drop_cmd("echo first >&2; echo 'no such host' >&2; exit 3").unwrap_err(),
            "exit status 3 (no such host)"
        );
        assert_eq!(run_drop_cmd("exit 1").unwrap_err(), "exit status 1");
    }
}
