//! Where `iobm limits DIR` measures its device (`DeviceLimits::points`): each block size at
//! depths 1, 4, 16, ... up to every depth a judged run used and on while a deeper queue still
//! helps (one noisy point does not end it), each figure the most of repeats until two agree.

/// Block sizes always measured.
pub const POINT_BLOCKS: [u64; 4] = [4 << 10, 64 << 10, 1 << 20, 4 << 20];
/// Each depth of the ladder is this many times the one before, from 1.
pub const DEPTH_STEP: u32 = 4;
/// The deepest queue of the ladder.
pub const MAX_DEPTH: u32 = 256;
/// The most bytes the ladder keeps in flight (depth x block size); a judged run's own depth is
/// measured however many it keeps, within the file.
pub const MAX_IN_FLIGHT: u64 = 64 << 20;
/// A deeper queue helps when it reads or writes at least this much faster than the best
/// shallower one of its block size.
pub const HELPS: f64 = 1.05;
/// Deeper queues in a row that do not help before the ladder ends.
pub const PATIENCE: usize = 2;
/// Two figures of one point agree when the larger is at most this much the smaller.
pub const AGREE: f64 = 1.05;
/// The most times one figure is taken.
pub const MOST_TRIES: usize = 4;

/// One block size's sweep: the depths still to measure follow from the figures recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    /// Bytes per request.
    pub block: u64,
    /// The deepest depth of the ladder (within MAX_DEPTH, MAX_IN_FLIGHT and the file).
    ladder_cap: u32,
    /// The judged run's requests in flight at this block size, each within the file.
    judged: Vec<u32>,
    /// Depth, read and write of each point measured, in order.
    tried: Vec<(u32, f64, f64)>,
}

impl Sweep {
    /// A sweep of `block` over a file of `bytes`, with the requests in flight `judged` runs
    /// keep at this block size.
    pub fn new(block: u64, bytes: u64, judged: &[u32]) -> Sweep {
        let fits = |limit: u64| (limit / block.max(1)).min(u32::MAX as u64) as u32;
        let in_file = fits(bytes).max(1);
        let mut judged: Vec<u32> = judged.iter().map(|&d| d.clamp(1, in_file)).collect();
        judged.sort_unstable();
        judged.dedup();
        Sweep {
            block,
            ladder_cap: MAX_DEPTH.min(fits(MAX_IN_FLIGHT.min(bytes))).max(1),
            judged,
            tried: Vec::new(),
        }
    }

    /// The depths of the ladder, shallowest first.
    fn ladder(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(1u32), |d| d.checked_mul(DEPTH_STEP))
            .take_while(|&d| d <= self.ladder_cap)
    }

    /// Whether the point tried `i`th read or wrote HELPS times the best before it.
    fn helped(&self, i: usize) -> bool {
        let (_, read, write) = self.tried[i];
        let best = self.tried[..i]
            .iter()
            .fold((0.0f64, 0.0f64), |b, p| (b.0.max(p.1), b.1.max(p.2)));
        read >= HELPS * best.0 || write >= HELPS * best.1
    }

    /// The last PATIENCE points did not help: deeper queues no longer do.
    fn levelled(&self) -> bool {
        let n = self.tried.len();
        n >= PATIENCE && (n - PATIENCE..n).all(|i| !self.helped(i))
    }

    /// The next depth to measure, or `None` when the sweep is done: the ladder's next depth
    /// while a judged run used one at least as deep or deeper queues still help, then each
    /// judged depth not measured yet.
    pub fn next(&self) -> Option<u32> {
        let done = |d: u32| self.tried.iter().any(|p| p.0 == d);
        let deepest_judged = self.judged.last().copied().unwrap_or(0);
        if let Some(d) = self.ladder().find(|&d| !done(d)) {
            if d <= deepest_judged || !self.levelled() {
                return Some(d);
            }
        }
        self.judged.iter().copied().find(|&d| !done(d))
    }

    /// Records the figures measured at `depth`.
    pub fn record(&mut self, depth: u32, read: f64, write: f64) {
        self.tried.push((depth, read, write));
    }
}

/// The sweeps of a file of `bytes`: each of [`POINT_BLOCKS`], then each other block size of
/// the judged run's `shapes` (block size, requests in flight), each with its judged depths.
pub fn sweeps(bytes: u64, shapes: &[(u64, u32)]) -> Vec<Sweep> {
    let mut blocks: Vec<u64> = Vec::new();
    for b in POINT_BLOCKS.into_iter().chain(shapes.iter().map(|s| s.0)) {
        if b <= bytes && !blocks.contains(&b) {
            blocks.push(b);
        }
    }
    blocks
        .into_iter()
        .map(|b| {
            let judged: Vec<u32> = shapes.iter().filter(|s| s.0 == b).map(|s| s.1).collect();
            Sweep::new(b, bytes, &judged)
        })
        .collect()
}

/// One figure taken until two of its takes agree within [`AGREE`] (at most [`MOST_TRIES`]):
/// the most of them, a limit being a maximum.
pub fn until_stable<E>(mut take: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    let mut figures: Vec<f64> = Vec::new();
    while figures.len() < MOST_TRIES {
        figures.push(take()?);
        figures.sort_by(|a, b| b.total_cmp(a));
        if figures.len() >= 2 && figures[0] <= AGREE * figures[1] {
            break;
        }
    }
    Ok(figures[0])
}

#[cfg(test)]
mod tests;
