//! `iobm report --limits`: a phase's rate against each limit that bounds it, by an ordered list
//! of rules, one per kind of limit; a rate is impossible only above a limit measured at the
//! phase's own shape (its block size and requests in flight, its connections), and a shape not
//! measured is said, never judged.

use super::{in_flight, CopyDirection, DeviceLimits, HostMemoryKind, Limits, Place};
use crate::PhaseResult;
use iobm_stats::format_bytes;
use iobm_stats::names::FsyncPolicy;
use iobm_stats::names::OpName;
use std::fmt;

/// One figure of `iobm limits`, named for what was measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A memory copy by this many threads together.
    MemoryCopy { threads: u32 },
    /// This many TCP connections together over loopback.
    LoopbackTcp { connections: u32 },
    /// The device's O_DIRECT reads (`read`) or writes of `block` bytes, `in_flight` at a time.
    Device {
        read: bool,
        block: u64,
        in_flight: u32,
    },
    /// A GPU's copies one way from or into pinned host memory (a bounce buffer), on this many
    /// GPUs together.
    GpuCopy { direction: CopyDirection, gpus: u32 },
}

impl Bound {
    /// The kind of limit, without its shape.
    fn kind(&self) -> &'static str {
        match self {
            Bound::MemoryCopy { .. } => "memory copy",
            Bound::LoopbackTcp { .. } => "loopback TCP",
            Bound::Device { read: true, .. } => "the device's O_DIRECT read",
            Bound::Device { read: false, .. } => "the device's O_DIRECT write",
            Bound::GpuCopy {
                direction: CopyDirection::HostToDevice,
                ..
            } => "the GPU's pinned host-to-device copy",
            Bound::GpuCopy {
                direction: CopyDirection::DeviceToHost,
                ..
            } => "the GPU's pinned device-to-host copy",
        }
    }

    /// Whether a cache lets bytes around this path: a device's, yes; but every byte a phase
    /// moves is copied in memory, and every byte of an S3 phase on loopback crosses TCP,
    /// whatever the server cached.
    fn cache_goes_around(&self) -> bool {
        matches!(self, Bound::Device { .. })
    }

    /// The shape it was (or was to be) measured at.
    fn shape(&self) -> String {
        match *self {
            Bound::MemoryCopy { threads: 1 } => "one thread".into(),
            Bound::MemoryCopy { threads } => format!("all {threads} threads"),
            Bound::LoopbackTcp { connections: 1 } => "one connection".into(),
            Bound::LoopbackTcp { connections } => format!("{connections} connections"),
            Bound::Device {
                block, in_flight, ..
            } => format!("{} blocks, {in_flight} in flight", format_bytes(block)),
            Bound::GpuCopy { gpus: 1, .. } => "one GPU".into(),
            Bound::GpuCopy { gpus, .. } => format!("{gpus} GPUs together"),
        }
    }
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (kind, shape) = (self.kind(), self.shape());
        match self {
            Bound::MemoryCopy { .. } => write!(f, "{kind} with {shape}"),
            Bound::LoopbackTcp { .. } => write!(f, "{kind} over {shape}"),
            Bound::Device { .. } => write!(f, "{kind} ({shape})"),
            Bound::GpuCopy { .. } => write!(f, "{kind} on {shape}"),
        }
    }
}

/// What one rule says of a phase's rate.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// The limit measured at the phase's shape (the most of those measured up to it), in bytes
    /// per second: the rate is impossible without a cache above it.
    Measured { bound: Bound, limit: f64 },
    /// The phase's shape (`wanted`) was not measured: no judgement; `closest` is the nearest
    /// shape below it that was, if any.
    NotMeasured {
        wanted: Bound,
        closest: Option<Bound>,
    },
}

/// A rule: the judgement of one kind of limit, or `None` where it does not bound the phase.
type Rule = fn(&PhaseResult, &Limits, Place) -> Option<Judgement>;

/// The rules, in the order their figures are printed.
pub const RULES: &[Rule] = &[
    memory_copy,
    loopback_tcp,
    device_read,
    device_write,
    gpu_copy,
];

/// The most of measured `(shape, figure)` pairs up to the least shape at least `wanted`: a
/// limit is a maximum, and one measured below the wanted shape is none. `Err` with the largest
/// shape measured when none reaches `wanted`.
fn most_up_to(figures: &[(u32, f64)], wanted: u32) -> Result<(u32, f64), Option<u32>> {
    let figures: Vec<(u32, f64)> = figures.iter().copied().filter(|f| f.1 > 0.0).collect();
    let Some(reach) = figures.iter().map(|f| f.0).filter(|&s| s >= wanted).min() else {
        return Err(figures.iter().map(|f| f.0).max());
    };
    Ok(figures
        .into_iter()
        .filter(|f| f.0 <= reach)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("the one that reaches"))
}

/// Any phase moves its bytes through memory: the most of one thread's copy and all threads'.
fn memory_copy(_: &PhaseResult, limits: &Limits, _: Place) -> Option<Judgement> {
    let figures = [
        (1, limits.memcpy_one_thread_bytes_per_s),
        (limits.threads, limits.memcpy_all_threads_bytes_per_s),
    ];
    let (threads, limit) = most_up_to(&figures, limits.threads).ok()?;
    Some(Judgement::Measured {
        bound: Bound::MemoryCopy { threads },
        limit,
    })
}

/// An S3 phase on loopback: one connection per worker, so the figure of at least as many
/// connections together.
fn loopback_tcp(phase: &PhaseResult, limits: &Limits, place: Place) -> Option<Judgement> {
    if !place.loopback || phase.operations.is_empty() {
        return None;
    }
    let workers = (phase.workers.len() as u32).max(1);
    let figures = [
        (1, limits.loopback_tcp_bytes_per_s),
        (
            limits.loopback_tcp_connections,
            limits.loopback_tcp_many_bytes_per_s,
        ),
    ];
    let tcp = |connections| Bound::LoopbackTcp { connections };
    Some(match most_up_to(&figures, workers) {
        Ok((connections, limit)) => Judgement::Measured {
            bound: tcp(connections),
            limit,
        },
        Err(most) => Judgement::NotMeasured {
            wanted: tcp(workers),
            closest: most.map(tcp),
        },
    })
}

/// The device at the phase's block size and requests in flight (or deeper): its points of that
/// block size, with the sequential figure as the point of its block size at depth 1.
fn device(phase: &PhaseResult, d: &DeviceLimits, read: bool) -> Judgement {
    let block = phase.settings.block_bytes;
    let rate = |r: f64, w: f64| if read { r } else { w };
    let mut figures: Vec<(u32, f64)> = d
        .points
        .iter()
        .filter(|p| p.block_bytes == block)
        .map(|p| (p.iodepth, rate(p.read_bytes_per_s, p.write_bytes_per_s)))
        .collect();
    if d.block_bytes == block {
        figures.push((1, rate(d.read_bytes_per_s, d.write_bytes_per_s)));
    }
    let at = |in_flight| Bound::Device {
        read,
        block,
        in_flight,
    };
    match most_up_to(&figures, in_flight(phase)) {
        Ok((depth, limit)) => Judgement::Measured {
            bound: at(depth),
            limit,
        },
        Err(deepest) => Judgement::NotMeasured {
            wanted: at(in_flight(phase)),
            closest: deepest.map(at),
        },
    }
}

/// A read of a file on the measured device.
fn device_read(phase: &PhaseResult, limits: &Limits, place: Place) -> Option<Judgement> {
    let d = limits.device.as_ref().filter(|_| place.same_device)?;
    matches!(phase.op, OpName::Read | OpName::Getc).then(|| device(phase, d, true))
}

/// A write of a file on the measured device that reaches it within the phase (O_DIRECT or
/// synced): one left in the page cache is bound by memory only.
fn device_write(phase: &PhaseResult, limits: &Limits, place: Place) -> Option<Judgement> {
    let d = limits.device.as_ref().filter(|_| place.same_device)?;
    let reaches = phase.settings.direct || phase.settings.fsync != FsyncPolicy::Never;
    (phase.op.writes_blocks() && reaches).then(|| device(phase, d, false))
}

/// A phase whose buffers were on GPUs through a bounce buffer (`--mem gpu`): each byte read
/// crossed the measured GPU's pinned host-to-device copy, each byte written its device-to-host
/// copy. Measured on one GPU only: a phase spread over more is not judged.
fn gpu_copy(phase: &PhaseResult, limits: &Limits, place: Place) -> Option<Judgement> {
    let gpu = limits.gpu.as_ref().filter(|_| place.gpus > 0)?;
    phase.device_copy.as_ref()?;
    let direction = match phase.op {
        OpName::Read | OpName::Getc => CopyDirection::HostToDevice,
        op if op.writes_blocks() => CopyDirection::DeviceToHost,
        _ => return None,
    };
    let figures = [(1, gpu.rate(direction, HostMemoryKind::Pinned)?)];
    let on = |gpus| Bound::GpuCopy { direction, gpus };
    Some(match most_up_to(&figures, place.gpus) {
        Ok((gpus, limit)) => Judgement::Measured {
            bound: on(gpus),
            limit,
        },
        Err(most) => Judgement::NotMeasured {
            wanted: on(place.gpus),
            closest: most.map(on),
        },
    })
}

/// A phase's makespan rate and what each rule says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    /// Bytes per second over the phase's makespan.
    pub rate: f64,
    /// One per rule that bounds the phase, in [`RULES`]' order.
    pub judgements: Vec<Judgement>,
}

/// A phase's rate judged by every rule; `None` for a phase that moved no data.
pub fn judge(phase: &PhaseResult, limits: &Limits, place: Place) -> Option<Judged> {
    let rate = phase
        .aggregate(iobm_stats::AggregateKind::Makespan)
        .map(|a| a.bytes_per_s)
        .filter(|&r| r > 0.0 && phase.moves_data())?;
    Some(Judged {
        rate,
        judgements: RULES
            .iter()
            .filter_map(|r| r(phase, limits, place))
            .collect(),
    })
}

fn per_s(v: f64) -> String {
    format!("{}/s", format_bytes(v as u64))
}

impl Judged {
    /// The limits above the rate: each names the figure, measured at the phase's shape.
    pub fn impossible(&self) -> Vec<(Bound, f64)> {
        self.judgements
            .iter()
            .filter_map(|j| match *j {
                Judgement::Measured { bound, limit } if self.rate > limit => Some((bound, limit)),
                _ => None,
            })
            .collect()
    }

    /// The rate as a share of each limit measured at its shape, for one line.
    pub fn shares(&self) -> String {
        let shares: Vec<String> = self
            .judgements
            .iter()
            .filter_map(|j| match j {
                Judgement::Measured { bound, limit } => Some(format!(
                    "{:.0}% of {bound} ({})",
                    100.0 * self.rate / limit,
                    per_s(*limit)
                )),
                Judgement::NotMeasured { .. } => None,
            })
            .collect();
        shares.join(", ")
    }

    /// One warning per limit the rate is above: impossible without a cache where a cache goes
    /// around that path; where every byte crossed it anyway, the limit was measured low.
    pub fn warnings(&self) -> Vec<String> {
        self.impossible()
            .into_iter()
            .map(|(bound, limit)| {
                let (rate, limit) = (per_s(self.rate), per_s(limit));
                if bound.cache_goes_around() {
                    format!("impossible without a cache: {rate} is above {bound} measured by iobm limits ({limit})")
                } else {
                    format!("above {bound} measured by iobm limits ({limit}): every byte crossed that path whatever was cached, so {rate} shows the figure measured was not its most (run iobm limits again, on an idle machine)")
                }
            })
            .collect()
    }

    /// One note per limit not measured at the phase's shape, and so not judged.
    pub fn not_measured(&self) -> Vec<String> {
        self.judgements
            .iter()
            .filter_map(|j| match j {
                Judgement::NotMeasured { wanted, closest } => Some(format!(
                    "not judged against {}: not measured at {}{}",
                    wanted.kind(),
                    wanted.shape(),
                    closest.map_or(String::new(), |c| format!(
                        " (measured up to {})",
                        c.shape()
                    ))
                )),
                Judgement::Measured { .. } => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
