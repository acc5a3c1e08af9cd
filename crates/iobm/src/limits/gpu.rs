//! The GPU's copy rates of `iobm limits --gpu N`: host to device and device to host, from and
//! into pinned host memory (what the GPU's `Memory` gives as bounce buffers) and pageable host
//! memory, through the same `Memory` seam as `--mem gpu` (so the fake GPU of the tests stands
//! for a GPU here too). Unverified on a real GPU.

use iobm_engine::data::fill_random;
use iobm_results::limits::{CopyDirection, GpuCopyRate, GpuLimits, HostMemoryKind};
use iobm_run::exit::Failure;
use iobm_run::session::describe_io;
use iobm_target::memory::{AlignedHostMemory, Buffer, DeviceBuf, HostBuf};
use std::time::{Duration, Instant};

/// Bytes of each copy: well above any cache between host and GPU.
pub(super) const COPY_BYTES: usize = 64 << 20;

/// `--gpu id` checked before anything is measured: the driver loads and the GPU is here, else
/// one line naming what is missing.
pub(super) fn check(id: u32) -> Result<(), Failure> {
    crate::gpu::one(id)
        .check()
        .map(|_| ())
        .map_err(|missing| Failure::input(format!("--gpu {id}: {missing}")))
}

/// Copies of `bytes` one after another, after one untimed, until `time` has passed: bytes per
/// second of wall-clock time (a copy to or from a GPU waits on the bus, not the CPU).
fn copy_rate(
    time: Duration,
    bytes: usize,
    mut copy: impl FnMut() -> std::io::Result<()>,
) -> std::io::Result<f64> {
    copy()?;
    let start = Instant::now();
    let mut moved = 0u64;
    while moved == 0 || start.elapsed() < time {
        copy()?;
        moved += bytes as u64;
    }
    Ok(moved as f64 / start.elapsed().as_secs_f64().max(1e-9))
}

/// One direction from or into `host`.
fn rate_of(
    device: &mut dyn DeviceBuf,
    host: &mut HostBuf,
    direction: CopyDirection,
    time: Duration,
) -> std::io::Result<f64> {
    let bytes = host.len();
    match direction {
        CopyDirection::HostToDevice => copy_rate(time, bytes, || device.copy_in(0, host)),
        CopyDirection::DeviceToHost => copy_rate(time, bytes, || device.copy_out(0, host)),
    }
}

/// GPU `id`'s copy rates, `time` each, copies of `bytes`.
pub(super) fn gpu(id: u32, bytes: usize, time: Duration) -> Result<GpuLimits, Failure> {
    let devices = crate::gpu::one(id);
    let info = devices
        .check()
        .map_err(|missing| Failure::input(format!("--gpu {id}: {missing}")))?;
    let fail = |e: std::io::Error| Failure::run(format!("--gpu {id}: {}", describe_io(&e)));
    let memory = devices.memory(0).map_err(fail)?;
    let Buffer::Device(mut device) = memory.alloc(bytes).map_err(fail)? else {
        return Err(Failure::run(format!(
            "--gpu {id}: its memory is host memory"
        )));
    };
    let mut pinned = memory.bounce(bytes).map_err(fail)?;
    let mut pageable = AlignedHostMemory.host(bytes);
    fill_random(&mut pinned, 5);
    fill_random(&mut pageable, 5);
    let mut rates = Vec::new();
    for direction in CopyDirection::ALL {
        for host in HostMemoryKind::ALL {
            let buf = match host {
                HostMemoryKind::Pinned => &mut pinned,
                HostMemoryKind::Pageable => &mut pageable,
            };
            let bytes_per_s = rate_of(device.as_mut(), buf, direction, time).map_err(fail)?;
            rates.push(GpuCopyRate {
                direction,
                host,
                bytes_per_s,
            });
        }
    }
    Ok(GpuLimits {
        id,
        name: info.first().map_or(String::new(), |i| i.name.clone()),
        memory: iobm_run::plan::device_memory(devices.kind),
        copy_bytes: bytes as u64,
        rates,
    })
}

/// The GPU's rates as lines of the limits' table.
pub(super) fn render(g: &GpuLimits) -> String {
    let r = |v: f64| format!("{}/s", iobm_stats::format_bytes(v as u64));
    let mut out = format!(
        "  gpu {} ({})  copies of {}\n",
        g.id,
        g.name,
        iobm_stats::format_bytes(g.copy_bytes)
    );
    for direction in CopyDirection::ALL {
        let rates: Vec<String> = HostMemoryKind::ALL
            .iter()
            .filter_map(|&host| Some(format!("{host} {}", r(g.rate(direction, host)?))))
            .collect();
        out.push_str(&format!("    {direction}: {}\n", rates.join(", ")));
    }
    out
}
