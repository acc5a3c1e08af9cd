//! The stonewall with wear-out ([`crate::StopRule::Stonewall`]): the deadline a phase's workers
//! share, what each had done when it stopped them, and the most any worker of any rank had
//! done, which every stopped worker then goes on to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// What a stonewall did in a phase, per worker of this rank.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stonewall {
    /// Operations each worker had done when the wall stopped it; None for one that ended
    /// before (its pass done, an error, Ctrl-C).
    pub at_wall: Vec<Option<u64>>,
    /// The most operations any worker of any rank had done when the wall stopped it or it
    /// ended, which every worker the wall stopped went on to (or to the end of its pass): the
    /// items later phases work on. None only when the phase could not agree it (it did not
    /// start).
    pub wear_out: Option<u64>,
}

/// The agreement across ranks: the most operations of this rank's workers in, every rank's
/// most out (an MPI all-reduce with max); one rank alone passes it through.
pub type Agree<'a> = &'a dyn Fn(u64) -> u64;

struct State {
    arrived: usize,
    most: u64,
    target: Option<u64>,
    at_wall: Vec<Option<u64>>,
}

/// A phase's wall, shared by its workers. Every worker arrives exactly once: stopped by the
/// wall ([`Wall::stop`], then it waits for the wear-out target) or at its end
/// ([`Wall::ended`]); once all have, the most is agreed across ranks ([`Wall::resolve`], on
/// the coordinating thread, or by the last worker to arrive when it runs alone).
pub(crate) struct Wall {
    hit: AtomicBool,
    workers: usize,
    state: Mutex<State>,
    cond: Condvar,
}

impl Wall {
    pub fn new(workers: usize) -> Wall {
        Wall {
            hit: AtomicBool::new(false),
            workers,
            state: Mutex::new(State {
                arrived: 0,
                most: 0,
                target: None,
                at_wall: vec![None; workers],
            }),
            cond: Condvar::new(),
        }
    }

    /// Whether the wall stops a worker whose last operation ended at `now`: the `deadline`
    /// has passed, or another worker found it had.
    pub fn reached(&self, now: Instant, deadline: Instant) -> bool {
        if self.hit.load(Ordering::Relaxed) {
            return true;
        }
        if now >= deadline {
            self.hit.store(true, Ordering::Relaxed);
            return true;
        }
        false
    }

    /// Worker `worker`, stopped by the wall with `done` operations done, waits until every
    /// worker has arrived and the most is agreed; returns the operations to go on to.
    /// `agree` is for a worker running alone on the coordinating thread.
    pub fn stop(&self, worker: usize, done: u64, agree: Option<Agree>) -> u64 {
        let mut state = self.arrive(worker, done, true, agree);
        while state.target.is_none() {
            state = self.cond.wait(state).unwrap();
        }
        state.target.expect("agreed")
    }

    /// Worker `worker` ended with `done` operations done, never stopped by the wall.
    pub fn ended(&self, worker: usize, done: u64, agree: Option<Agree>) {
        drop(self.arrive(worker, done, false, agree));
    }

    fn arrive(
        &self,
        worker: usize,
        done: u64,
        stopped: bool,
        agree: Option<Agree>,
    ) -> std::sync::MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap();
        state.arrived += 1;
        state.most = state.most.max(done);
        if stopped {
            state.at_wall[worker] = Some(done);
        }
        if state.arrived == self.workers {
            match agree {
                Some(agree) => Self::settle(&mut state, agree),
                None => self.cond.notify_all(),
            }
        }
        state
    }

    /// On the coordinating thread: waits until every worker has arrived, agrees the most
    /// across ranks and releases the workers waiting at the wall.
    pub fn resolve(&self, agree: Agree) {
        let mut state = self.state.lock().unwrap();
        while state.arrived < self.workers {
            state = self.cond.wait(state).unwrap();
        }
        Self::settle(&mut state, agree);
        self.cond.notify_all();
    }

    fn settle(state: &mut State, agree: Agree) {
        state.target = Some(agree(state.most));
    }

    /// What the wall did, once the workers are done.
    pub fn outcome(&self) -> Stonewall {
        let state = self.state.lock().unwrap();
        Stonewall {
            at_wall: state.at_wall.clone(),
            wear_out: state.target,
        }
    }
}
