//! A live progress line on stderr (phase, current MiB/s and ops/s, done, ETA, or what the
//! phase is finishing), only when stderr is a terminal, so logs and pipes stay clean.

use iobm_engine::{Control, LivePhase};
use iobm_stats::format_bytes;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Draws the line until dropped.
pub struct ProgressLine {
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ProgressLine {
    pub fn start(control: Arc<Control>) -> ProgressLine {
        let done = Arc::new(AtomicBool::new(false));
        let thread = std::io::stderr().is_terminal().then(|| {
            let done = done.clone();
            std::thread::spawn(move || draw(&control, &done))
        });
        ProgressLine { done, thread }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
            let _ = write!(std::io::stderr(), "\r\x1b[K");
        }
    }
}

fn draw(control: &Control, done: &AtomicBool) {
    let tick = Duration::from_millis(500);
    let mut last = (Instant::now(), 0u64, 0u64);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(tick);
        let Some(phase) = control.live_phase() else {
            continue;
        };
        let now = Instant::now();
        let (bytes, ops) = (control.live_bytes(), control.live_ops());
        let dt = now.duration_since(last.0).as_secs_f64();
        let per_s = |now: u64, before: u64| {
            if now >= before && dt > 0.0 {
                (now - before) as f64 / dt
            } else {
                0.0
            }
        };
        let rates = (per_s(bytes, last.1), per_s(ops, last.2));
        last = (now, bytes, ops);
        let elapsed = now.duration_since(phase.started);
        let text = line(&phase, bytes, ops, rates, elapsed);
        let _ = write!(std::io::stderr(), "\r\x1b[K{text}");
    }
}

/// The progress line's text: what the phase is doing now. A phase that has moved all its
/// planned bytes is finishing (its final fsync or close), not stalled; a phase that moves no
/// bytes (metadata, HEAD, DELETE, LIST) counts operations.
fn line(
    phase: &LivePhase,
    bytes: u64,
    ops: u64,
    (rate, ops_rate): (f64, f64),
    elapsed: Duration,
) -> String {
    let name = &phase.name;
    if let Some(total) = phase.planned_bytes.filter(|&t| t > 0 && bytes >= t) {
        return format!(
            "{name}: all {} moved, finishing (final fsync or close)",
            format_bytes(total)
        );
    }
    let left = phase
        .duration
        .map(|d| format!(", {:.0}s left", d.saturating_sub(elapsed).as_secs_f64()));
    if bytes == 0 {
        return format!(
            "{name}: {ops_rate:.0} ops/s, {ops} operations done{}",
            left.unwrap_or_default()
        );
    }
    let done = match phase.planned_bytes {
        Some(total) if rate > 0.0 => format!(
            "{} of {}, ETA {:.0}s",
            format_bytes(bytes),
            format_bytes(total),
            total.saturating_sub(bytes) as f64 / rate
        ),
        _ => format!("{} done{}", format_bytes(bytes), left.unwrap_or_default()),
    };
    format!(
        "{name}: {:.1} MiB/s, {ops_rate:.0} ops/s, {done}",
        rate / (1024.0 * 1024.0)
    )
}

/// Says on the terminal what happens between phases (a clean-up that takes a while).
pub fn note(text: &str) {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[K{text}");
    }
}

/// Clears a progress line before printing a report line to the same terminal.
pub fn clear_line() {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(planned_bytes: Option<u64>, duration: Option<Duration>) -> LivePhase {
        LivePhase {
            name: "write".into(),
            started: Instant::now(),
            planned_bytes,
            duration,
        }
    }

    #[test]
    fn the_line_says_what_the_phase_is_doing() {
        let mib = 1 << 20;
        let sized = phase(Some(100 * mib), None);
        let rates = (10.0 * mib as f64, 10.0);
        assert_eq!(
            line(&sized, 50 * mib, 50, rates, Duration::from_secs(5)),
            "write: 10.0 MiB/s, 10 ops/s, 50.00 MiB of 100.00 MiB, ETA 5s"
        );
        // Every byte written, the final fsync still running: not "0.0 MiB/s".
        assert_eq!(
            line(&sized, 100 * mib, 100, (0.0, 0.0), Duration::from_secs(9)),
            "write: all 100.00 MiB moved, finishing (final fsync or close)"
        );
        // Phases that move no bytes count operations.
        let timed = phase(None, Some(Duration::from_secs(30)));
        assert_eq!(
            line(&timed, 0, 1200, (0.0, 400.0), Duration::from_secs(10)),
            "write: 400 ops/s, 1200 operations done, 20s left"
        );
        assert_eq!(
            line(
                &timed,
                3 * mib,
                3,
                (mib as f64, 1.0),
                Duration::from_secs(10)
            ),
            "write: 1.0 MiB/s, 1 ops/s, 3.00 MiB done, 20s left"
        );
    }
}
