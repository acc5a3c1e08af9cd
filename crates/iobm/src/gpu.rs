//! `--mem host|gpu:N[,M...]` and `--gds`: where the file workloads' buffers live and how bytes
//! reach them. The flags' values, their check before anything is created (cuFile loads and its
//! driver opens for `--gds`, the CUDA driver loads and every GPU named is here, else one line
//! naming what is missing, exit 2), the placement the phases get, the GPUs the environment
//! records, and `--gdsio-line`'s line after each phase.

use iobm_engine::Engine;
use iobm_results::device::Gpu;
use iobm_results::RunResult;
use iobm_run::exit::Failure;
use iobm_target::memory::{
    DeviceKind, DevicePath, Devices, FakeCuFile, FakeGpu, GpuInfo, Placement,
};
use std::time::Duration;

/// The value of `--mem`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Mem {
    /// Host memory (page-aligned), as without the flag.
    #[default]
    Host,
    /// The memory of these GPUs, the workers spread over them in turn.
    Gpu(Vec<u32>),
}

/// Parses `host` or `gpu:N[,M...]` (`gpu` alone is GPU 0).
pub fn parse_mem(s: &str) -> Result<Mem, String> {
    let ids = match s {
        "host" => return Ok(Mem::Host),
        "gpu" => return Ok(Mem::Gpu(vec![0])),
        _ => s
            .strip_prefix("gpu:")
            .ok_or("expected host or gpu:N[,M...] (GPU numbers as the driver counts them)")?,
    };
    let ids: Vec<u32> = ids
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .map_err(|_| format!("'{n}' is not a GPU number"))
        })
        .collect::<Result<_, _>>()?;
    if let Some(n) = ids
        .iter()
        .enumerate()
        .find_map(|(i, n)| ids[..i].contains(n).then_some(n))
    {
        return Err(format!("GPU {n} is listed twice"));
    }
    Ok(Mem::Gpu(ids))
}

/// For tests only: with `IOBM_TEST_FAKE_GPU` set to `COUNT[:COPY_US[:corrupt]]`, `--mem gpu`
/// places buffers on iobm's fake GPUs (COUNT of them, each copy taking COPY_US microseconds,
/// `corrupt`: every copy onto a GPU flips its first byte) instead of CUDA's, so the whole path
/// runs on machines without a GPU (`tests/gpu.rs`); with `IOBM_TEST_FAKE_CUFILE` set to
/// `direct` or `compat`, `--gds` reaches them through the fake cuFile, whose bytes the fake
/// nvidia-fs counters (`IOBM_TEST_NVFS_STATS=PATH`) count or not.
fn fake_gpu() -> Option<FakeGpu> {
    let value = std::env::var("IOBM_TEST_FAKE_GPU").ok()?;
    let mut parts = value.split(':');
    let count = parts.next()?.parse().ok()?;
    let copy_us = parts.next().map_or(Some(0), |us| us.parse().ok())?;
    let cufile = match std::env::var("IOBM_TEST_FAKE_CUFILE").as_deref() {
        Ok("direct") => Some(FakeCuFile::Direct),
        Ok("compat") => Some(FakeCuFile::Compat),
        _ => None,
    };
    Some(FakeGpu {
        count,
        copy_delay: Duration::from_micros(copy_us),
        corrupt: parts.next() == Some("corrupt"),
        cufile,
    })
}

/// The devices `--mem` names, through a bounce buffer or, with `--gds`, cuFile; None for
/// host memory.
fn devices(mem: &Mem, gds: bool) -> Option<Devices> {
    let Mem::Gpu(ids) = mem else {
        return None;
    };
    Some(Devices {
        kind: fake_gpu().map_or(DeviceKind::Cuda, DeviceKind::Fake),
        ids: ids.clone(),
        path: if gds {
            DevicePath::Direct
        } else {
            DevicePath::Bounce
        },
    })
}

/// The one GPU of `iobm limits --gpu N`, as `--mem gpu:N` would place buffers on it.
pub fn one(id: u32) -> Devices {
    devices(&Mem::Gpu(vec![id]), false).expect("a GPU is on a device")
}

/// Where the phases place their buffers.
pub fn placement(mem: &Mem, gds: bool) -> Placement {
    devices(mem, gds).map_or(Placement::AlignedHost, Placement::Device)
}

/// `--mem` and `--gds` checked before anything is created: GPU buffers for `--gds`, one
/// request in flight per worker (the bounce, or cuFile's call, is per operation), cuFile
/// loads and its driver opens (`--gds`), the driver loads and every GPU named is here.
pub fn check(mem: &Mem, gds: bool, engine: Engine) -> Result<(), Failure> {
    let Some(devices) = devices(mem, gds) else {
        return match gds {
            true => Err(Failure::input(
                "--gds moves bytes between storage and GPU memory: add --mem gpu:N (buffers in host memory need no cuFile)",
            )),
            false => Ok(()),
        };
    };
    let flag = match gds {
        true => format!("--mem {} --gds", flag(&devices.ids)),
        false => format!("--mem {}", flag(&devices.ids)),
    };
    if engine != Engine::Sync {
        let how = if gds {
            "through cuFile"
        } else {
            "through its bounce buffer"
        };
        return Err(Failure::input(format!(
            "{flag} moves one request at a time {how}: use --engine sync (--iodepth 1)"
        )));
    }
    devices
        .check()
        .map(|_| ())
        .map_err(|missing| Failure::input(format!("{flag}: {missing}")))
}

/// What a file workload prints after a phase: its report, and with `--gdsio-line` the phase
/// in the form of NVIDIA's gdsio (a phase gdsio has no IoType for gets none).
pub fn phase_done(run: &RunResult, gdsio_line: bool) -> Option<String> {
    let mut text = iobm_run::lifecycle::phase_text(run)?;
    let latest = run.phases.last()?;
    if let Some(line) = gdsio_line
        .then(|| iobm_report::gdsio::line(latest, &run.config))
        .flatten()
    {
        text.push_str(&line);
        text.push('\n');
    }
    Some(text)
}

/// The GPUs `--mem` names, as the environment records them (none for host memory).
pub fn environment(mem: &Mem) -> Vec<Gpu> {
    let infos = devices(mem, false)
        .and_then(|d| d.check().ok())
        .unwrap_or_default();
    infos.into_iter().map(gpu).collect()
}

fn gpu(info: GpuInfo) -> Gpu {
    Gpu {
        id: info.id,
        name: info.name,
        memory_bytes: info.memory_bytes,
        driver: info.driver,
        pci_bus: info.pci_bus,
        numa_node: info.numa_node,
    }
}

fn flag(ids: &[u32]) -> String {
    let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
    format!("gpu:{}", ids.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_takes_host_or_a_list_of_gpus() {
        assert_eq!(parse_mem("host"), Ok(Mem::Host));
        assert_eq!(parse_mem("gpu"), Ok(Mem::Gpu(vec![0])));
        assert_eq!(parse_mem("gpu:2,0"), Ok(Mem::Gpu(vec![2, 0])));
        assert_eq!(parse_mem("gpu:1,x").unwrap_err(), "'x' is not a GPU number");
        assert_eq!(parse_mem("gpu:1,1").unwrap_err(), "GPU 1 is listed twice");
        assert!(parse_mem("cuda")
            .unwrap_err()
            .starts_with("expected host or gpu:N"));
        assert_eq!(placement(&Mem::Host, false), Placement::AlignedHost);
    }
}
