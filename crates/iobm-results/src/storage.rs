//! What the storage under a file system moved for this run: the layers below its block device
//! (loop devices and their backing files, device-mapper, md, btrfs members, down to the bottom
//! devices), this run's own bytes at the block layer (`/proc/self/io`), and the judgement of
//! which device counters are this run's evidence: other I/O on the device, or a share above
//! 100%, is never turned into an `uncached` verdict, and a layer below that can cache (a loop
//! device over a backing file in the page cache) is judged by what the devices under it moved.

pub use crate::evidence::{BackingFile, Below, BottomIo, OwnIo};
use crate::share::{by_share, pct, Margin, MOST};
use crate::{CacheVerdict, DeviceIo, PhaseResult, Verdict};
use iobm_stats::format_bytes;
use iobm_stats::names::FsyncPolicy;
use iobm_stats::names::OpName;

/// A device moving more than this run by more than [`Margin::CLIENT`] carried other I/O.
fn beyond(part: u64, whole: u64) -> bool {
    Margin::CLIENT.share(part, whole).is_none()
}

/// The share of `part` in `whole` for a line of evidence: a percentage up to 100%, never one
/// above it (more than was moved is not evidence of anything).
pub fn share_text(part: u64, whole: u64) -> String {
    Margin::CLIENT.share_text(part, whole)
}

/// Which device counters are this run's evidence, and what the layers and the other I/O say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judged {
    /// The counters to judge by: the file system's device's, or (with a layer below that can
    /// cache, and for btrfs) what the bottom devices moved where that is less; None when no
    /// counter is this run's evidence.
    pub device: Option<DeviceIo>,
    /// A verdict the layers or this run's own bytes settle by themselves.
    pub verdict: Option<CacheVerdict>,
    /// Said after the verdict's evidence: the layers on the way down, what could not be
    /// followed, the other I/O set aside.
    pub note: String,
    /// The phase's warnings from it (other I/O, more than was moved).
    pub warnings: Vec<StorageWarning>,
}

/// Bytes the phase read and wrote (read-write phases apart, a rewrite both ways).
fn moved(phase: &PhaseResult) -> (u64, u64) {
    let total = phase.bytes();
    match phase.op {
        OpName::Readwrite => (
            phase.bytes_of(&[OpName::Read]),
            phase.bytes_of(&[OpName::Write]),
        ),
        OpName::Rewrite => (total, total),
        op if op.writes_blocks() => (0, total),
        _ => (total, 0),
    }
}

/// What the bottom devices of every host moved: (read, written), None without any.
fn bottom(below: &[Below]) -> Option<(u64, u64)> {
    let devices: Vec<&BottomIo> = below.iter().flat_map(|b| &b.devices).collect();
    (!devices.is_empty()).then(|| {
        devices
            .iter()
            .fold((0, 0), |(r, w), d| (r + d.read_bytes, w + d.written_bytes))
    })
}

/// The RAM the storage is, when every device at the bottom is RAM (zram, brd, pmem, null_blk,
/// found from its driver) and nothing was left unfollowed: "253:1 (zram1) is zram, compressed
/// RAM", each device once; None when any device has storage of its own, or none was followed.
pub fn ram(below: &[Below]) -> Option<String> {
    let devices: Vec<&BottomIo> = below.iter().flat_map(|b| &b.devices).collect();
    let unfollowed = below.iter().any(|b| !b.unfollowed.is_empty());
    if devices.is_empty() || unfollowed {
        return None;
    }
    let mut said: Vec<String> = Vec::new();
    for d in devices {
        let line = format!("{} ({}) is {}", d.device, d.name, d.ram.as_ref()?);
        if !said.contains(&line) {
            said.push(line);
        }
    }
    Some(said.join("; "))
}

fn label(below: &[Below]) -> String {
    let names: Vec<String> = below
        .iter()
        .flat_map(|b| &b.devices)
        .map(|d| format!("{} ({})", d.device, d.name))
        .collect();
    let tops: Vec<&str> = below.iter().map(|b| b.top.as_str()).collect();
    format!("{} below {}", names.join(" + "), tops.join(", "))
}

/// Judges the block-device evidence of a file phase.
pub fn judge(phase: &PhaseResult) -> Judged {
    let mut out = Judged {
        device: phase.cache.device.clone(),
        ..Judged::default()
    };
    let (read, written) = moved(phase);
    let below = &phase.cache.below;
    let caching = below
        .iter()
        .flat_map(|b| &b.backing_files)
        .any(|f| !f.direct_io);
    let mut notes = layer_notes(below);
    layers(phase, caching, written, &mut out, &mut notes);
    other_io(phase, caching, (read, written), &mut out);
    // O_DIRECT bypasses this machine's page cache for the file system, not for a loop
    // device's backing file; with no counter left to tell, that is said.
    let flushed =
        written > 0 && matches!(phase.settings.fsync, FsyncPolicy::Each | FsyncPolicy::End);
    if caching && out.device.is_none() && out.verdict.is_none() && phase.settings.direct && !flushed
    {
        out.verdict = Some(CacheVerdict {
            verdict: Verdict::PossiblyCached,
            evidence: "O_DIRECT bypasses the page cache of the file system, not of the loop device's backing file below it, and no counter here is this run's evidence".into(),
        });
    }
    if !notes.is_empty() {
        out.note = format!("; {}", notes.join("; "));
    }
    out
}

/// What is said of the layers below: the way down, the backing files' pages in the page
/// cache, the virtual disks.
fn layer_notes(below: &[Below]) -> Vec<String> {
    let virtual_disks: Vec<String> = below
        .iter()
        .flat_map(|b| &b.devices)
        .filter_map(|d| {
            d.virtual_disk
                .as_ref()
                .map(|k| format!("{} ({}) is a virtual disk ({k})", d.device, d.name))
        })
        .collect();
    let mut notes: Vec<String> = Vec::new();
    for b in below.iter().filter(|b| !b.steps.is_empty()) {
        notes.push(format!("below it: {}", b.steps.join("; ")));
    }
    for f in below.iter().flat_map(|b| &b.backing_files) {
        if let Some(r) = f.resident_before_bytes {
            notes.push(format!(
                "{} ({}) of the backing file {} was in this machine's page cache when the phase began",
                format_bytes(r),
                share_text(r, f.size_bytes),
                f.path
            ));
        }
    }
    if !virtual_disks.is_empty() {
        notes.push(format!(
            "{}: its host may cache, which no counter here shows",
            virtual_disks.join(", ")
        ));
    }
    notes
}

/// The layers below the file system's device: a layer in memory, a caching loop device judged
/// by the devices under it (or said to be unfollowable), btrfs' member devices.
fn layers(
    phase: &PhaseResult,
    caching: bool,
    written: u64,
    out: &mut Judged,
    notes: &mut Vec<String>,
) {
    let below = &phase.cache.below;
    let in_memory = below
        .iter()
        .flat_map(|b| &b.unfollowed)
        .find(|u| u.contains("is in memory"));
    let cannot_follow: Vec<&String> = below
        .iter()
        .flat_map(|b| &b.unfollowed)
        .filter(|u| u.contains("cannot be followed"))
        .collect();
    if let Some(what) = in_memory {
        out.verdict = Some(CacheVerdict {
            verdict: Verdict::Memory,
            evidence: what.to_string(),
        });
    } else if caching {
        match (bottom(below), cannot_follow.is_empty()) {
            (Some(bottom), true) => through_cache(below, bottom, written, out, notes),
            _ => {
                let top = out.device.as_ref().map_or("its".to_string(), |d| {
                    format!("the block device {}", d.device)
                });
                out.verdict = Some(CacheVerdict {
                    verdict: Verdict::PossiblyCached,
                    evidence: format!(
                        "{top} counters cannot tell: {}",
                        cannot_follow
                            .iter()
                            .map(|s| s.as_str())
                            .collect::<Vec<_>>()
                            .join("; ")
                    ),
                });
            }
        }
    } else if out.device.is_none() {
        // btrfs: its member devices are the file system's devices.
        if let Some((r, w)) = bottom(below) {
            out.device = Some(DeviceIo {
                device: label(below),
                read_bytes: r,
                written_bytes: w,
            });
        }
    }
}

/// A loop device over a file read and written through this machine's page cache: judged by
/// what the devices under it moved where that is less.
fn through_cache(
    below: &[Below],
    (r, w): (u64, u64),
    written: u64,
    out: &mut Judged,
    notes: &mut Vec<String>,
) {
    let top = out.device.clone().unwrap_or_else(|| DeviceIo {
        device: "its device".into(),
        read_bytes: 0,
        written_bytes: 0,
    });
    let lesser = |t: u64, b: u64| if out.device.is_some() { t.min(b) } else { b };
    // What the phase left dirty in the backing files never reached their device
    // (other processes' I/O on that device cannot make up for it).
    let dirtied: u64 = below
        .iter()
        .flat_map(|b| &b.backing_files)
        .filter_map(|f| Some(f.dirty_after_bytes?.saturating_sub(f.dirty_before_bytes?)))
        .sum();
    if dirtied > 0 && written > 0 {
        notes.push(format!(
                        "{} more of the backing files was dirty in this machine's page cache when the phase ended than when it began",
                        format_bytes(dirtied)
                    ));
    }
    let reached = top.written_bytes.saturating_sub(dirtied);
    notes.insert(
                    0,
                    format!(
                        "the block device {} is a loop device over a file read and written through this machine's page cache: it delivered {} and took {}, the devices under it delivered {} and took {}",
                        top.device,
                        format_bytes(top.read_bytes),
                        format_bytes(top.written_bytes),
                        format_bytes(r),
                        format_bytes(w)
                    ),
                );
    out.device = Some(DeviceIo {
        device: label(below),
        read_bytes: lesser(top.read_bytes, r),
        written_bytes: lesser(reached, w),
    });
}

/// Other I/O on the device: it moved more than this run did, so its counters are not this
/// run's evidence (this run's own bytes, where measured, judge its reads instead).
fn other_io(phase: &PhaseResult, caching: bool, (read, written): (u64, u64), out: &mut Judged) {
    let own = phase.cache.own_io;
    if let Some(d) = out.device.clone().filter(|_| out.verdict.is_none()) {
        let top_read = phase
            .cache
            .device
            .as_ref()
            .map_or(d.read_bytes, |t| t.read_bytes);
        match own {
            Some(own) if read > 0 && beyond(top_read, own.read_bytes) => {
                out.warnings.push(StorageWarning::OtherReads {
                    device: (phase.cache.device.as_ref())
                        .map_or(&d.device, |t| &t.device)
                        .clone(),
                    delivered: top_read,
                    fetched: own.read_bytes,
                });
                out.device = None;
                let share = pct(own.read_bytes.min(read), read);
                let evidence = format!(
                    "this run's reads had {} fetched from storage for the {} read ({}; /proc/self/io), while other I/O ran on the device ({} delivered {})",
                    format_bytes(own.read_bytes),
                    format_bytes(read),
                    share_text(own.read_bytes, read),
                    d.device,
                    format_bytes(top_read)
                );
                let verdict = if share >= MOST && caching {
                    Verdict::PossiblyCached
                } else {
                    by_share(share)
                };
                if written == 0 {
                    out.verdict = Some(CacheVerdict { verdict, evidence });
                }
            }
            None if read > 0 && beyond(d.read_bytes, read) => {
                out.warnings.push(StorageWarning::MoreRead {
                    device: d.device.clone(),
                    delivered: d.read_bytes,
                    read,
                });
                out.device = None;
            }
            _ => {}
        }
    }
    if let Some(d) = out.device.clone().filter(|_| written > 0) {
        let could = own.map_or(written, |o| o.written_bytes.max(written));
        if beyond(d.written_bytes, could) {
            out.warnings.push(StorageWarning::MoreWritten {
                device: d.device.clone(),
                took: d.written_bytes,
                wrote: could,
            });
            out.device = None;
        }
    }
}

#[cfg(test)]
mod tests;
mod warning;
pub use warning::StorageWarning;
