//! What a phase needs of its target, as [`Capabilities`]: the one mapping from a phase's
//! operations, flags and buffers to the flags its target must declare. A run is checked with it
//! before anything is created ([`refusal`]), so a target never fails a phase half-way for
//! lack of a capability.

use crate::workload::{Engine, MetaOp, ObjectOp, Op, Phase};
use iobm_target::{Capabilities, Capability, Target};

/// Whether the phase's requests go through io_uring (block reads and writes only).
pub(crate) fn queued(phase: &Phase) -> bool {
    phase.engine == Engine::IoUring
        && matches!(phase.op, Op::Read | Op::Write | Op::ReadWrite { .. })
}

/// Whether the phase's reads and writes go through its files' mappings (block reads and
/// writes only).
pub(crate) fn mapped(phase: &Phase) -> bool {
    phase.engine == Engine::Mmap && matches!(phase.op, Op::Read | Op::Write | Op::ReadWrite { .. })
}

/// The flags of the target a phase needs.
pub fn needs(phase: &Phase) -> Capabilities {
    let mut needs = Capabilities::of(op_needs(phase.op, phase));
    let mut add = |flag: Capability, when: bool| {
        if when {
            needs = needs.with(flag);
        }
    };
    add(Capability::DirectIo, phase.direct);
    add(Capability::RawFd, queued(phase) || mapped(phase));
    let blocks = !phase.op.is_metadata() && !matches!(phase.op, Op::Object(_));
    add(Capability::RawFd, phase.fadvise.is_some() && blocks);
    add(Capability::Directories, phase.find.is_some());
    if let Some(flag) = phase.memory.needs() {
        add(flag, true);
    }
    needs
}

/// The flags operation `op` of `phase` needs.
fn op_needs(op: Op, phase: &Phase) -> &'static [Capability] {
    let ranged = phase.objects.as_ref().is_some_and(|o| o.range.is_some());
    match op {
        Op::Object(ObjectOp::Get | ObjectOp::Mixed) if ranged => &[Capability::RangedReads],
        Op::Object(ObjectOp::List) => &[Capability::Listing],
        Op::Object(ObjectOp::Multipart) => &[Capability::Multipart],
        Op::Object(ObjectOp::Versioned) => &[Capability::Versions],
        Op::Object(_) => &[],
        Op::Meta(MetaOp::FileCreate | MetaOp::FileRead) => &[Capability::Files],
        Op::Meta(MetaOp::FileRename) => &[Capability::Rename],
        Op::Meta(MetaOp::Find) => &[Capability::Directories],
        Op::Meta(_) => &[],
        _ if phase.find.is_some() => &[],
        _ => &[Capability::Files],
    }
}

/// Why `target` cannot run one of `phases`, in one line naming the phase and the flag; None
/// when it can run them all.
pub fn refusal<'a>(
    target: &dyn Target,
    phases: impl IntoIterator<Item = &'a Phase>,
) -> Option<String> {
    let has = target.capabilities();
    phases.into_iter().find_map(|phase| {
        has.check(needs(phase))
            .err()
            .map(|e| format!("phase {}: {e}", phase.name))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{FileSpec, Layout, Region};
    use iobm_target::mem::MemTarget;
    use iobm_target::memory::{DeviceKind, DevicePath, Devices, FakeGpu, Placement};
    use iobm_target::null::NullTarget;

    /// Buffers on a fake GPU, moved by `path`.
    fn on_device(path: DevicePath) -> Placement {
        Placement::Device(Devices {
            kind: DeviceKind::Fake(FakeGpu::default()),
            ids: vec![0],
            path,
        })
    }

    fn nothing() -> Layout {
        Layout {
            files: vec![],
            regions: vec![],
            shared: false,
        }
    }

    fn one_file() -> Layout {
        Layout {
            files: vec![FileSpec {
                name: "f".into(),
                size: 4096,
            }],
            regions: vec![Region {
                file: 0,
                offset: 0,
                len: 4096,
                visit: None,
            }],
            shared: false,
        }
    }

    #[test]
    fn a_phase_needs_what_its_flags_and_operations_use() {
        let plain = Phase::new("write", Op::Write, 4096, one_file());
        assert_eq!(needs(&plain), Capabilities::of(&[Capability::Files]));
        let direct_uring = Phase {
            direct: true,
            engine: Engine::IoUring,
            ..plain.clone()
        };
        assert_eq!(
            needs(&direct_uring).iter().collect::<Vec<_>>(),
            [Capability::Files, Capability::DirectIo, Capability::RawFd]
        );
        let rename = Phase::new("rename", Op::Meta(MetaOp::FileRename), 0, nothing());
        assert_eq!(needs(&rename), Capabilities::of(&[Capability::Rename]));
        let list = Phase::new("list", Op::Object(ObjectOp::List), 0, nothing());
        assert_eq!(needs(&list), Capabilities::of(&[Capability::Listing]));
        let bounced = Phase {
            memory: on_device(DevicePath::Bounce),
            ..plain.clone()
        };
        assert_eq!(needs(&bounced), needs(&plain));
        let device = Phase {
            memory: on_device(DevicePath::Direct),
            ..plain
        };
        // cuFile registers the files' descriptors.
        assert!(needs(&device).has(Capability::RawFd));
    }

    #[test]
    fn a_target_lacking_a_flag_is_refused_naming_phase_and_flag() {
        let write = Phase::new("write", Op::Write, 4096, one_file());
        let direct = Phase {
            name: "direct".into(),
            direct: true,
            ..write.clone()
        };
        assert_eq!(refusal(&NullTarget, [&write, &direct]), None);
        assert_eq!(
            refusal(&MemTarget::new(), [&write, &direct]).as_deref(),
            Some("phase direct: bypassing the page cache (O_DIRECT) needs DIRECT_IO, which this target lacks")
        );
        let device = Phase {
            memory: on_device(DevicePath::Direct),
            ..write
        };
        assert!(refusal(&MemTarget::new(), [&device])
            .unwrap()
            .contains("RAW_FD"));
    }
}
