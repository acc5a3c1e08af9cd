//! The page a person opens while the run goes (`--live` with `--html`, rank 0): written at
//! once, then rewritten whole (a temporary file and a rename, not synced) from the intervals passed so
//! far by a thread of its own, at most once per interval and never on a worker's thread; it
//! reloads itself while the run goes, and the final report, written over it, does not.

use crate::atomic::replace_unsynced;
use crate::session::describe_io;
use iobm_engine::LiveInterval;
use iobm_report::html::live::{live_page, LivePhase, LiveRun};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// The shortest reload: a page of 10 ms intervals is not reloaded a hundred times a second.
const MIN_RELOAD_MS: u64 = 1000;

/// What the writer's thread is told.
enum Told {
    /// A repetition begins: its title; the page starts again.
    Run(String),
    /// An interval every worker of this process has passed.
    Passed(Passed),
}

/// One interval's figures, as its `--live` line gives them.
struct Passed {
    phase: String,
    op: &'static str,
    index: usize,
    interval_ns: u64,
    bytes: u64,
    ops: u64,
    errors: u64,
    p99_us: Option<f64>,
}

/// The page's writer: a thread fed through a channel.
pub struct LivePage {
    told: Mutex<Option<Sender<Told>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl LivePage {
    /// Starts the writer of the page at `path`, which writes it at once; `whose` says whose
    /// intervals it shows where not the whole run's.
    pub fn start(path: &Path, whose: Option<String>) -> LivePage {
        let (tx, rx) = channel();
        let path = path.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("iobm-live-page".into())
            .spawn(move || Writer::new(path, whose).run(rx))
            .expect("a thread for the live page");
        LivePage {
            told: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        }
    }

    /// A repetition begins.
    pub fn run(&self, title: String) {
        self.tell(Told::Run(title));
    }

    /// Hands over an interval passed (a few numbers through a channel: the page is written
    /// on the writer's thread).
    pub fn passed(&self, i: &LiveInterval) {
        let total = i.total();
        let h = Some(&total.latency).filter(|h| h.count > 0);
        self.tell(Told::Passed(Passed {
            phase: i.phase.to_string(),
            op: i.op.name().as_str(),
            index: i.index,
            interval_ns: i.interval_ns,
            bytes: total.bytes,
            ops: total.ops,
            errors: total.errors,
            p99_us: h.and_then(|h| h.percentile(99.0)).map(|ns| ns as f64 / 1e3),
        }));
    }

    fn tell(&self, told: Told) {
        if let Some(tx) = &*self.told.lock().unwrap() {
            let _ = tx.send(told);
        }
    }

    /// Ends the writer: it writes the page a last time, without its reload, and stops; the
    /// final report may then be written over it. Later intervals are dropped.
    pub fn close(&self) {
        drop(self.told.lock().unwrap().take());
        if let Some(thread) = self.thread.lock().unwrap().take() {
            let _ = thread.join();
        }
    }
}

impl Drop for LivePage {
    fn drop(&mut self) {
        self.close();
    }
}

/// The writer's thread's own: the page so far.
struct Writer {
    path: PathBuf,
    page: LiveRun,
    warned: bool,
}

impl Writer {
    fn new(path: PathBuf, whose: Option<String>) -> Writer {
        let page = LiveRun {
            title: "iobm: a run begins".to_string(),
            whose,
            reload_ms: Some(MIN_RELOAD_MS),
            ..LiveRun::default()
        };
        Writer {
            path,
            page,
            warned: false,
        }
    }

    /// Writes the page at once, again after each batch of what it is told (all that came
    /// while it wrote the last: at most once per interval), and a last time, not reloading,
    /// when the channel closes.
    fn run(mut self, rx: Receiver<Told>) {
        self.write();
        while let Ok(told) = rx.recv() {
            self.take(told);
            while let Ok(more) = rx.try_recv() {
                self.take(more);
            }
            self.write();
        }
        self.page.reload_ms = None;
        self.write();
    }

    fn take(&mut self, told: Told) {
        let p = match told {
            Told::Run(title) => {
                self.page.title = title;
                self.page.phases.clear();
                return;
            }
            Told::Passed(p) => p,
        };
        let phases = &mut self.page.phases;
        // Intervals come in order of index within a phase; a new index 0 is a new phase.
        let same = |last: &LivePhase| last.name == p.phase && last.bytes.len() == p.index;
        if !phases.last().is_some_and(same) {
            phases.push(LivePhase {
                name: p.phase.clone(),
                op: p.op.to_string(),
                interval_ns: p.interval_ns,
                ..LivePhase::default()
            });
        }
        let phase = phases.last_mut().expect("a phase");
        phase.bytes.push(p.bytes);
        phase.ops.push(p.ops);
        phase.errors.push(p.errors);
        phase.p99_us.push(p.p99_us);
        let interval_ms = p.interval_ns.div_ceil(1_000_000);
        if let Some(ms) = self.page.reload_ms.as_mut() {
            *ms = interval_ms.max(MIN_RELOAD_MS);
        }
    }

    fn write(&mut self) {
        self.page.written_unix_ns = iobm_stats::time::unix_ns_now();
        let text = live_page(&self.page);
        if let Err(e) = replace_unsynced(&self.path, text.as_bytes()) {
            if !std::mem::replace(&mut self.warned, true) {
                eprintln!(
                    "iobm: warning: --html {}: cannot write the live page: {}",
                    self.path.display(),
                    describe_io(&e)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    fn passed(phase: &str, index: usize) -> Told {
        Told::Passed(Passed {
            phase: phase.to_string(),
            op: "write",
            index,
            interval_ns: 200_000_000,
            bytes: 1 << 20,
            ops: 16,
            errors: 0,
            p99_us: Some(900.0),
        })
    }

    #[test]
    fn a_reader_of_the_page_only_ever_sees_a_whole_page() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.html");
        let page = LivePage::start(&path, None);
        page.run("iobm write test".into());
        let done = Arc::new(AtomicBool::new(false));
        let reader = {
            let (path, done) = (path.clone(), done.clone());
            std::thread::spawn(move || {
                let mut whole = 0;
                // At least one read after the writer closed, however late this thread runs.
                loop {
                    let last = done.load(Ordering::Relaxed);
                    match std::fs::read_to_string(&path) {
                        Ok(text) => {
                            let ends = text.ends_with("</html>\n");
                            assert!(
                                text.starts_with("<!doctype html>") && ends,
                                "{}",
                                text.len()
                            );
                            whole += 1;
                        }
                        // Only before the first page.
                        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound),
                    }
                    if last {
                        break whole;
                    }
                }
            })
        };
        // A pause after each, so the page is rewritten many times while it is read.
        for k in 0..400 {
            page.tell(passed("write", k));
            std::thread::sleep(std::time::Duration::from_micros(250));
        }
        page.close();
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
        // Closed: the last page holds every interval and reloads no more.
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("data-intervals=\"400\""), "{text:.3000}");
        assert!(!text.contains("location.reload"));
        // Nothing of the writer's left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn each_phase_and_repetition_starts_its_own_intervals() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.html");
        let (tx, rx) = channel();
        let writer = Writer::new(path.clone(), Some("rank 0's workers of 2 ranks".into()));
        for told in [
            Told::Run("iobm stream a".into()),
            passed("write", 0),
            passed("write", 1),
            passed("read", 0),
            Told::Run("iobm stream b".into()),
            passed("write", 0),
            passed("write", 1),
            passed("write", 2),
        ] {
            tx.send(told).unwrap();
        }
        drop(tx);
        writer.run(rx);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("<title>iobm stream b</title>"));
        assert!(text.contains("data-phase=\"write\" data-intervals=\"3\""));
        assert!(!text.contains("data-phase=\"read\""));
        assert!(text.contains("(rank 0&#39;s workers of 2 ranks)"));
    }
}
