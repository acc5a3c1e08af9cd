//! A live progress line on stderr (phase, current MiB/s, done, ETA), only when stderr is a
//! terminal, so logs and pipes stay clean.

use iobm_engine::Control;
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
        let (rate, ops_rate) = (per_s(bytes, last.1), per_s(ops, last.2));
        last = (now, bytes, ops);
        let elapsed = now.duration_since(phase.started);
        let eta = match (phase.planned_bytes, phase.duration) {
            (Some(total), _) if rate > 0.0 => {
                let left = total.saturating_sub(bytes) as f64 / rate;
                format!(
                    "{} of {}, ETA {left:.0}s",
                    format_bytes(bytes),
                    format_bytes(total)
                )
            }
            (_, Some(d)) => format!(
                "{} done, {:.0}s left",
                format_bytes(bytes),
                d.saturating_sub(elapsed).as_secs_f64()
            ),
            _ => format!("{} done", format_bytes(bytes)),
        };
        let _ = write!(
            std::io::stderr(),
            "\r\x1b[K{}: {:.1} MiB/s, {ops_rate:.0} ops/s, {eta}",
            phase.name,
            rate / (1024.0 * 1024.0)
        );
    }
}

/// Clears a progress line before printing a report line to the same terminal.
pub fn clear_line() {
    if std::io::stderr().is_terminal() {
        let _ = write!(std::io::stderr(), "\r\x1b[K");
    }
}
