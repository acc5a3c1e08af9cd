//! A phase as one line in the form of NVIDIA's `gdsio` (`IoType: READ XferType: CPU_GPU
//! Threads: 4 DataSetSize: .../...(KiB) IOSize: 1024(KiB) Throughput: ... GiB/sec,
//! Avg_Latency: ... usecs ops: ... total_time ... secs`), so a reader of gdsio's figures can
//! set iobm's beside them (`--gdsio-line`).

use iobm_results::device::TransferPath;
use iobm_results::gds::GdsVerdict;
use iobm_results::{Config, PhaseResult};
use iobm_stats::names::{OpName, PatternName};
use iobm_stats::AggregateKind;
use std::fmt;

/// gdsio's `IoType` (its `-I`: 0 read, 1 write, 2 random read, 3 random write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoType {
    Read,
    Write,
    RandRead,
    RandWrite,
}

/// gdsio's `XferType` (its `-x`), the ones iobm's buffers can stand for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XferType {
    /// `-x 0`: storage straight to GPU memory (GPUDirect Storage).
    Gpud,
    /// `-x 1`: storage to host memory only.
    CpuOnly,
    /// `-x 2`: storage to host memory, then a copy to GPU memory.
    CpuGpu,
    /// `-x 0` asked for, but nothing showed which path the bytes took (no gdsio word: gdsio
    /// itself never knows).
    Unknown,
}

impl fmt::Display for IoType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoType::Read => "READ",
            IoType::Write => "WRITE",
            IoType::RandRead => "RANDREAD",
            IoType::RandWrite => "RANDWRITE",
        })
    }
}

impl fmt::Display for XferType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            XferType::Gpud => "GPUD",
            XferType::CpuOnly => "CPUONLY",
            XferType::CpuGpu => "CPU_GPU",
            XferType::Unknown => "UNKNOWN",
        })
    }
}

/// The phase's gdsio `IoType`; None for what gdsio does not do (a mix, metadata, S3).
pub fn io_type(phase: &PhaseResult) -> Option<IoType> {
    if !phase.operations.is_empty() {
        return None;
    }
    let random = phase.settings.pattern == PatternName::Random;
    match (phase.op, random) {
        (OpName::Read, false) => Some(IoType::Read),
        (OpName::Read, true) => Some(IoType::RandRead),
        (OpName::Write, false) => Some(IoType::Write),
        (OpName::Write, true) => Some(IoType::RandWrite),
        _ => None,
    }
}

/// Where the phase's buffers were and the path its bytes took, as gdsio's `XferType`: GPUD
/// only where the evidence showed GPU-direct (`iobm_results::gds`); cuFile's compatibility
/// mode is what CPU_GPU does, a read into host memory and a copy.
pub fn xfer_type(phase: &PhaseResult, config: &Config) -> XferType {
    match config.memory.as_ref().map(|m| m.path) {
        None => XferType::CpuOnly,
        Some(TransferPath::Bounce) => XferType::CpuGpu,
        Some(TransferPath::Direct) => {
            let path = phase.gds.as_ref().and_then(|g| g.path.as_ref());
            match path.map(|p| p.verdict) {
                Some(GdsVerdict::GpuDirect) => XferType::Gpud,
                Some(GdsVerdict::CompatMode) => XferType::CpuGpu,
                Some(GdsVerdict::Unknown) | None => XferType::Unknown,
            }
        }
    }
}

/// The phase's line in gdsio's form: bytes moved of the data set's bytes in KiB, throughput in
/// GiB/s over the phase's makespan (gdsio's bytes over its total time), the mean latency of
/// the operations in microseconds, their count and the makespan in seconds. None for a phase
/// gdsio has no `IoType` for.
pub fn line(phase: &PhaseResult, config: &Config) -> Option<String> {
    let io = io_type(phase)?;
    let makespan = phase.aggregate(AggregateKind::Makespan)?;
    let seconds = makespan.seconds.unwrap_or(0.0);
    let hist = &phase.latency.histogram;
    let mean_us = if hist.count == 0 {
        0.0
    } else {
        hist.sum_ns as f64 / hist.count as f64 / 1e3
    };
    Some(format!(
        "IoType: {io} XferType: {} Threads: {} DataSetSize: {}/{}(KiB) IOSize: {}(KiB) Throughput: {:.6} GiB/sec, Avg_Latency: {mean_us:.6} usecs ops: {} total_time {seconds:.6} secs",
        xfer_type(phase, config),
        phase.workers.len(),
        phase.bytes() / 1024,
        config.total_bytes / 1024,
        phase.settings.block_bytes / 1024,
        makespan.bytes_per_s / f64::from(1u32 << 30),
        hist.count,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iobm_results::RunResult;

    /// The line with every number (digits and points) as `#`.
    fn numbers_out(line: &str) -> String {
        let mut out = String::new();
        for c in line.chars() {
            match c {
                '0'..='9' | '.' if out.ends_with('#') => {}
                '0'..='9' | '.' => out.push('#'),
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn a_stream_is_two_lines_of_gdsios_form() {
        let run: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        let lines: Vec<String> = run
            .phases
            .iter()
            .filter_map(|p| line(p, &run.config))
            .collect();
        assert_eq!(lines.len(), 2);
        let write = &run.phases[0];
        let kib = |b: u64| b / 1024;
        let expected = format!(
            "IoType: WRITE XferType: CPUONLY Threads: {} DataSetSize: {}/{}(KiB) IOSize: {}(KiB) Throughput: ",
            write.workers.len(),
            kib(write.bytes()),
            kib(run.config.total_bytes),
            kib(write.settings.block_bytes)
        );
        assert!(lines[0].starts_with(&expected), "{}", lines[0]);
        // Word for word gdsio's form, numbers aside: a line of NVIDIA's GDS documentation.
        let gdsio = "IoType: READ XferType: CPUONLY Threads: 4 DataSetSize: 4069376/4194304(KiB) IOSize: 1024(KiB) Throughput: 2.698050 GiB/sec, Avg_Latency: 1443.841342 usecs ops: 3974 total_time 1.438394 secs";
        assert_eq!(numbers_out(&lines[1]), numbers_out(gdsio));
        assert_ne!(numbers_out(&lines[0]), numbers_out(gdsio));
    }

    #[test]
    fn gpud_only_where_the_evidence_showed_gpu_direct() {
        use iobm_results::device::{DeviceMemory, MemoryConfig};
        use iobm_results::gds::{GdsEvidence, GdsPath};
        let mut run: RunResult =
            RunResult::from_json(include_str!("../../iobm/tests/fixtures/stream.json")).unwrap();
        run.config.memory = Some(MemoryConfig {
            memory: DeviceMemory::FakeGpu,
            devices: vec![0],
            path: TransferPath::Direct,
        });
        let mut phase = run.phases[1].clone();
        assert_eq!(xfer_type(&phase, &run.config), XferType::Unknown);
        for (verdict, xfer) in [
            (GdsVerdict::GpuDirect, XferType::Gpud),
            (GdsVerdict::CompatMode, XferType::CpuGpu),
            (GdsVerdict::Unknown, XferType::Unknown),
        ] {
            let path = GdsPath {
                verdict,
                evidence: String::new(),
            };
            phase.gds = Some(GdsEvidence {
                nvfs: None,
                path: Some(path),
            });
            assert_eq!(xfer_type(&phase, &run.config), xfer);
            let line = line(&phase, &run.config).unwrap();
            assert!(
                line.starts_with(&format!("IoType: READ XferType: {xfer} ")),
                "{line}"
            );
        }
    }
}
