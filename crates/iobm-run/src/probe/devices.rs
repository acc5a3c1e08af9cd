//! The block device behind the target's directory and the layers below it (partitions, loop
//! devices and their backing files, device-mapper, md, btrfs members), read before and after a
//! phase: what each moved over it; for a raw device target, that device's own counters.

use super::{Probe, Refusal, Scene};
use iobm_engine::PhaseOutcome;
use iobm_results::storage::{BackingFile, Below, BottomIo};
use iobm_results::{DeviceIo, PhaseResult};
use iobm_target::layers::{self, Stack};
use iobm_target::{posix, DeviceCounters, Place};
use std::sync::Mutex;

/// The readings before the phase, of this host.
pub struct Devices {
    host: String,
    before: Mutex<(Option<DeviceCounters>, Option<Stack>)>,
}

impl Devices {
    pub fn new(host: &str) -> Devices {
        Devices {
            host: host.to_string(),
            before: Mutex::new((None, None)),
        }
    }
}

impl Probe for Devices {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        *self.before.lock().unwrap() = match scene.target.place() {
            Place::Dir(root) => (
                posix::device_counters(root),
                layers::below(root).filter(|s| s.has_layers()),
            ),
            Place::Device(device) => (posix::device_counters(device), None),
            Place::Elsewhere => (None, None),
        };
        Ok(())
    }

    fn after(&self, scene: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
        let (device_before, below_before) = std::mem::take(&mut *self.before.lock().unwrap());
        let (Place::Dir(root) | Place::Device(root)) = scene.target.place() else {
            return;
        };
        let device_after = posix::device_counters(root);
        let below_after = below_before.as_ref().and_then(|_| layers::below(root));
        result.cache.device = device_before
            .zip(device_after)
            .map(|(before, after)| DeviceIo {
                device: after.device.clone(),
                read_bytes: after.read_bytes.saturating_sub(before.read_bytes),
                written_bytes: after.written_bytes.saturating_sub(before.written_bytes),
            });
        result.cache.below = below_before
            .zip(below_after)
            .map(|(before, after)| below(&self.host, &before, &after))
            .into_iter()
            .collect();
    }
}

/// The layers below a phase's device on `host`: what the bottom devices moved between `before`
/// and `after`, and the backing files' residency at both.
pub fn below(host: &str, before: &Stack, after: &Stack) -> Below {
    let devices = after
        .bottom
        .iter()
        .map(|a| {
            let b = before.bottom.iter().find(|b| b.device == a.device);
            BottomIo {
                device: a.device.clone(),
                name: a.name.clone(),
                read_bytes: b.map_or(0, |b| a.read_bytes.saturating_sub(b.read_bytes)),
                written_bytes: b.map_or(0, |b| a.written_bytes.saturating_sub(b.written_bytes)),
                virtual_disk: a.virtual_disk.clone(),
                ram: a.ram.map(|r| r.describe().to_string()),
            }
        })
        .collect();
    let backing_files = before
        .backing_files
        .iter()
        .map(|b| {
            let later = after.backing_files.iter().find(|a| a.path == b.path);
            BackingFile {
                loop_device: b.loop_device.clone(),
                path: b.path.clone(),
                direct_io: b.direct_io,
                size_bytes: b.size_bytes,
                resident_before_bytes: b.resident_bytes,
                resident_after_bytes: later.and_then(|a| a.resident_bytes),
                dirty_before_bytes: b.dirty_bytes,
                dirty_after_bytes: later.and_then(|a| a.dirty_bytes),
            }
        })
        .collect();
    Below {
        host: host.to_string(),
        top: before.top.clone(),
        steps: before.steps.clone(),
        devices,
        backing_files,
        unfollowed: before.unfollowed.clone(),
    }
}
