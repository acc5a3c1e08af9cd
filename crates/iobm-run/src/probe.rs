//! The seam of a phase's evidence: a [`Probe`] reads something before a phase, once per
//! interval through it and after it, and puts what it saw into the phase's result. The run
//! layer assembles the probes of a run ([`Probes::of`]) and drives them around every phase
//! ([`crate::execute`]); the engine's runner keeps barriers and timing only. One module each:
//! the page cache dropped (`drop`), the phase's files resident in it (`residency`), the block
//! devices and the layers below them (`devices`), this process's own block-layer bytes
//! (`own_io`), this client's interfaces (`nics`), the servers' `--server-metrics` (`servers`),
//! `--server-drop-cmd` (`drop_cmd`), what iobm gateways count (`gateway`) and, around a
//! `--gds` phase, what nvidia-fs moved GPU-direct (`nvfs`).

mod devices;
pub mod drop;
pub mod drop_cmd;
pub mod gateway;
mod nics;
mod nvfs;
mod own_io;
mod residency;
mod servers;
#[cfg(test)]
mod tests;

use crate::ranks::Ranks;
use iobm_engine::{Phase, PhaseOutcome};
use iobm_results::{PhaseResult, RunResult};
use iobm_target::Target;
use std::io;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What a probe sees of the phase it is around.
#[derive(Clone, Copy)]
pub struct Scene<'a> {
    pub phase: &'a Phase,
    pub target: &'a dyn Target,
    pub ranks: &'a Ranks,
}

/// Why a phase does not start.
#[derive(Debug)]
pub enum Refusal {
    /// This rank's phase fails before its workers start: the error, and what was being done.
    Phase(io::Error, &'static str),
    /// The run ends before the phase, on every rank, for this reason.
    Run(String),
}

/// One kind of evidence around a phase. Every hook is outside the phase's timing; a probe
/// keeps what it read between its hooks.
pub trait Probe: Send + Sync {
    /// Before the phase's workers are prepared.
    fn before(&self, _scene: &Scene) -> Result<(), Refusal> {
        Ok(())
    }
    /// How often it reads through the phase (None: never), from the phase's series interval.
    fn period(&self, _scene: &Scene) -> Option<Duration> {
        None
    }
    /// Once per [`Probe::period`] through the phase, on a thread of its own beside the workers.
    fn tick(&self) {}
    /// Once the phase has ended on this rank: its evidence into this rank's part of the result
    /// (`outcome`: what the engine measured).
    fn after(&self, _scene: &Scene, _outcome: &PhaseOutcome, _result: &mut PhaseResult) {}
    /// At rank 0, once every rank's part is merged: evidence of the whole phase.
    fn merged(&self, _scene: &Scene, _result: &mut PhaseResult) {}
}

/// The probes of a run, in the order their `before` hooks run; the other hooks run in the
/// reverse order, so that the first probe to look before a phase is the last to look after it.
pub struct Probes {
    list: Vec<Arc<dyn Probe>>,
    /// How many of them looked before the current phase without refusing it (the others do
    /// not look after it).
    began: usize,
}

impl Probes {
    /// `first` (those of a step's target), then those `run` asks for, from its configuration
    /// and environment: the servers' (rank 0 reads them, on the clock of `origin`), this
    /// client's, and those of the target's place.
    pub fn of(run: &RunResult, origin: Instant, first: Vec<Arc<dyn Probe>>) -> Probes {
        let host = run.environment.hostname.clone();
        let mut list = first;
        if let Some(cmd) = &run.config.server_drop_cmd {
            list.push(Arc::new(drop_cmd::DropCmd::new(cmd)));
        }
        if let Some(servers) = servers::Servers::of(run, origin) {
            list.push(Arc::new(servers));
        }
        if let Some(nics) = nics::Nics::of(run) {
            list.push(Arc::new(nics));
        }
        let memory_fs = iobm_results::checks::Machine::of(run).memory_fs;
        list.push(Arc::new(drop::PageCacheDrop::new(memory_fs)));
        list.push(Arc::new(residency::Residency::default()));
        list.push(Arc::new(devices::Devices::new(&host)));
        list.push(Arc::new(own_io::OwnIo::default()));
        let direct = run.config.memory.as_ref().map(|m| m.path);
        if direct == Some(iobm_results::device::TransferPath::Direct) {
            list.push(Arc::new(nvfs::Nvfs::default()));
        }
        Probes::new(list)
    }

    /// These probes, in this order.
    pub fn new(list: Vec<Arc<dyn Probe>>) -> Probes {
        Probes { list, began: 0 }
    }

    /// Every probe's `before`, in order, until one refuses the phase.
    pub fn before(&mut self, scene: &Scene) -> Result<(), Refusal> {
        self.began = 0;
        for probe in &self.list {
            probe.before(scene)?;
            self.began += 1;
        }
        Ok(())
    }

    /// Starts a thread for each probe that reads through the phase.
    pub fn ticking(&self, scene: &Scene) -> Ticking {
        let threads = self.list[..self.began]
            .iter()
            .filter_map(|p| Some((p.clone(), p.period(scene)?)))
            .filter_map(|(probe, period)| Ticker::start(probe, period))
            .collect();
        Ticking { _threads: threads }
    }

    /// The `after` of every probe that looked before the phase, in reverse order.
    pub fn after(&self, scene: &Scene, outcome: &PhaseOutcome, result: &mut PhaseResult) {
        for probe in self.list[..self.began].iter().rev() {
            probe.after(scene, outcome, result);
        }
    }

    /// The `merged` of every probe that looked before the phase, in reverse order, once
    /// `ticking` has stopped.
    pub fn merged(&self, scene: &Scene, ticking: Option<Ticking>, result: &mut PhaseResult) {
        drop(ticking);
        for probe in self.list[..self.began].iter().rev() {
            probe.merged(scene, result);
        }
    }
}

/// The threads of the probes that read through a phase; stopped when dropped (after the
/// reading each may be taking).
pub struct Ticking {
    _threads: Vec<Ticker>,
}

struct Ticker {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    /// A thread calling `probe.tick()` at each edge of `period` from now; a late tick skips
    /// the edges it missed. None when no thread can be started.
    fn start(probe: Arc<dyn Probe>, period: Duration) -> Option<Ticker> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("iobm-probe".into())
            .spawn(move || {
                let mut next = Instant::now() + period;
                loop {
                    let (lock, wake) = &*stopped;
                    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                    while !*done && Instant::now() < next {
                        let wait = next.saturating_duration_since(Instant::now());
                        done = wake
                            .wait_timeout(done, wait)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    if *done {
                        return;
                    }
                    drop(done);
                    probe.tick();
                    while next <= Instant::now() {
                        next += period;
                    }
                }
            })
            .ok()?;
        Some(Ticker {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        *self.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.1.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
