//! The text report's header: the run, where its data is, the storage, host and network, the
//! ranks, and the workload in one line (file, S3, metadata or a replayed trace).

use iobm_results::device::{DeviceMemory, TransferPath};
use iobm_results::{Config, MetaConfig, ReplayConfig, RunResult, S3Config};
use iobm_stats::names::{Engine, OpName, Picks, ReplayTiming};
use iobm_stats::sizes::{log2_histogram, SizeDist};
use iobm_stats::{format_bytes, format_duration};
use std::time::Duration;

/// What ran where: printed before the first phase, a section a line.
pub fn render_header(run: &RunResult) -> String {
    let label = run
        .label
        .as_deref()
        .map_or(String::new(), |l| format!("  \"{l}\""));
    let mut out = format!("iobm {}  run {}{label}\n", run.kind, run.run_id);
    out.push_str(&place(run));
    out.push_str(&storage(run));
    out.push_str(&host(run));
    out.push_str(&network(run));
    out.push_str(&gpus(run));
    let (ranks_line, ranks) = ranks(run);
    out.push_str(&ranks_line);
    let c = &run.config;
    if let Some(m) = &c.meta {
        out.push_str(&meta_workload(run, m, &ranks));
    } else if let Some(s3) = &c.s3 {
        out.push_str(&s3_workload(run, s3, &ranks));
    } else if let Some(r) = &c.replay {
        out.push_str(&replay_workload(run, r));
    } else {
        out.push_str(&file_workload(run, &ranks));
    }
    out
}

/// Where the data is: the run directory, or the S3 endpoints and the bucket.
fn place(run: &RunResult) -> String {
    let c = &run.config;
    match &c.s3 {
        Some(s3) => {
            let gateway = s3.gateway_dir.as_ref().map_or(String::new(), |d| {
                format!(" (iobm's built-in gateway over {d})")
            });
            format!(
                "  target   {} at {}{gateway}\n",
                c.run_dir,
                s3.endpoints.join(", ")
            )
        }
        None => format!("  data     {}\n", c.run_dir),
    }
}

/// The file system measured and the block device under it, where recorded.
fn storage(run: &RunResult) -> String {
    let Some(s) = &run.environment.storage else {
        return String::new();
    };
    let device = s.block_device.as_ref().map_or(String::new(), |d| {
        let mut about = vec![d.name.clone()];
        about.extend(d.model.clone());
        about.extend(
            d.rotational
                .map(|r| if r { "rotational" } else { "non-rotational" }.to_string()),
        );
        about.extend(d.scheduler.as_ref().map(|s| format!("scheduler {s}")));
        about.extend(d.numa_node.map(numa));
        format!("; device {}", about.join(", "))
    });
    format!(
        "  storage  {} on {} ({} at {}, {}){device}\n",
        s.path, s.fs_type, s.mount_source, s.mount_point, s.mount_options
    )
}

/// A device's NUMA node as recorded: "NUMA node 1", or "no NUMA node" where sysfs gave none.
fn numa(node: i32) -> String {
    match node {
        n if n < 0 => "no NUMA node".to_string(),
        n => format!("NUMA node {n}"),
    }
}

/// The host: its name, system, CPUs, NUMA nodes and RAM.
fn host(run: &RunResult) -> String {
    let e = &run.environment;
    // Older documents did not record the CPUs online.
    let cpus = if e.cpus_online > e.cpus {
        format!("{} of {} CPUs (affinity)", e.cpus, e.cpus_online)
    } else {
        format!("{} CPUs", e.cpus)
    };
    let numa = if e.numa_nodes > 1 {
        format!(", {} NUMA nodes", e.numa_nodes)
    } else {
        String::new()
    };
    format!(
        "  host     {}, {} {}, {cpus}{numa}, {} RAM\n",
        e.hostname,
        e.os,
        e.kernel,
        format_bytes(e.ram_bytes)
    )
}

/// The network interfaces, where recorded.
fn network(run: &RunResult) -> String {
    let nics = &run.environment.nics;
    if nics.is_empty() {
        return String::new();
    }
    let nics: Vec<String> = nics
        .iter()
        .map(|n| {
            let mut about = vec![n.state.clone()];
            about.extend(
                n.speed_mbit
                    .map(|s| format!("{} Gbit/s", s as f64 / 1000.0)),
            );
            about.extend(n.mtu.map(|m| format!("MTU {m}")));
            about.extend(n.numa_node.map(numa));
            format!("{} ({})", n.name, about.join(", "))
        })
        .collect();
    format!("  network  {}\n", nics.join(", "))
}

/// The GPUs the run's buffers were on (`--mem gpu`), where recorded.
fn gpus(run: &RunResult) -> String {
    let gpus = &run.environment.gpus;
    if gpus.is_empty() {
        return String::new();
    }
    let gpus: Vec<String> = gpus
        .iter()
        .map(|g| {
            let numa = g
                .numa_node
                .map_or(String::new(), |n| format!(", NUMA node {n}"));
            format!(
                "{}: {}, {}, {}, PCI {}{numa}",
                g.id,
                g.name,
                format_bytes(g.memory_bytes),
                g.driver,
                g.pci_bus
            )
        })
        .collect();
    format!(
        "  gpu      {}
",
        gpus.join("; ")
    )
}

/// Where a file run's buffers were, where not in host memory.
fn memory(c: &Config) -> String {
    let Some(m) = &c.memory else {
        return String::new();
    };
    let how = match m.path {
        TransferPath::Bounce => "through a host bounce buffer",
        // Asked for, not shown: each phase says which path its bytes took.
        TransferPath::Direct => "through cuFile (--gds)",
    };
    let fake = match m.memory {
        DeviceMemory::Gpu => "",
        DeviceMemory::FakeGpu => " (fake)",
    };
    format!("buffers on {}{fake} {how}, ", m.flag())
}

/// The runs merged or the MPI ranks, as a line of their own and as the prefix of the workload
/// line ("2 ranks x "); both empty for one process.
fn ranks(run: &RunResult) -> (String, String) {
    if !run.merged_from.is_empty() {
        let line = format!(
            "  merged   {} runs started by hand ({}), on the first one's clock by their wall clocks\n",
            run.merged_from.len(),
            run.merged_from.join(", ")
        );
        return (line, format!("{} runs x ", run.merged_from.len()));
    }
    if run.ranks.len() <= 1 {
        return (String::new(), String::new());
    }
    let hosts: std::collections::BTreeSet<&str> =
        run.ranks.iter().map(|r| r.host.as_str()).collect();
    let uncertainty = run.ranks.iter().map(|r| r.clock_uncertainty_ns).max();
    let line = format!(
        "  ranks    {} MPI ranks on {} host(s): {}{}; clock offsets within {}\n",
        run.ranks.len(),
        hosts.len(),
        hosts.into_iter().collect::<Vec<_>>().join(", "),
        run.environment
            .mpi
            .as_ref()
            .map_or(String::new(), |m| format!("; {m}")),
        format_duration(Duration::from_nanos(uncertainty.unwrap_or(0)))
    );
    (line, format!("{} ranks x ", run.ranks.len()))
}

/// " after a 5s warm-up not counted (--ramp)", or nothing.
fn ramp(c: &Config) -> String {
    c.ramp_s.map_or(String::new(), |r| {
        format!(" after a {r}s warm-up not counted (--ramp)")
    })
}

/// A metadata run's workload and phases.
fn meta_workload(run: &RunResult, m: &MetaConfig, ranks: &str) -> String {
    let trees = match m.tree.as_str() {
        "unique" => "a tree per worker",
        _ => "one shared tree",
    };
    let per_dir = match m.items_per.as_str() {
        "directory" => format!(" ({} per directory)", m.items),
        _ => String::new(),
    };
    let stride = match m.stride {
        0 => String::new(),
        n => format!(", looking up what the worker {n} rank(s) on made"),
    };
    let wall = m
        .stonewall_s
        .map_or(String::new(), |s| format!(", stonewall {s}s"));
    format!(
        "  workload {ranks}{} jobs, {} items per worker{per_dir} in {trees} of {} directories (depth {}, branch {}{}), {} per file{stride}{wall}\n  phases   {}\n",
        run.config.jobs,
        m.items_per_worker,
        m.tree_dirs,
        m.depth,
        m.branch,
        if m.leaves_only { ", leaves only" } else { "" },
        format_bytes(m.write_bytes),
        m.phases.join(", ")
    )
}

/// An S3 run's workload: concurrency, objects, mix, signing, data and when it stops.
fn s3_workload(run: &RunResult, s3: &S3Config, ranks: &str) -> String {
    let c = &run.config;
    let size = match &s3.obj_sizes {
        Some(dist) => format!("{} ({})", dist.describe(), drawn(dist, s3.objects)),
        None if s3.obj_size_min == s3.obj_size_max => format_bytes(s3.obj_size_max),
        None => format!(
            "{}..{}",
            format_bytes(s3.obj_size_min),
            format_bytes(s3.obj_size_max)
        ),
    };
    let data_set = if s3.objects > 0 {
        format!(", data set {} objects", s3.objects)
    } else {
        String::new()
    };
    // How timed or counted reads chose their objects (a read of the data set once reads each).
    let picks = match (s3.picks, c.duration_s.is_some() || c.ops.is_some()) {
        (Some(Picks::Once), true) => ", each object read once per pass in a shuffled order",
        (Some(Picks::Random), true) => ", objects picked at random (with replacement)",
        _ => "",
    };
    let stop = match (c.duration_s, c.ops) {
        (Some(d), _) => format!("for {d}s{}", ramp(c)),
        (None, Some(n)) => format!("for {n} operations"),
        (None, None) => "until done or --ops".to_string(),
    };
    let mix = if run.kind.draws_operations() {
        format!(", {}", mix_shares(&s3.mix))
    } else {
        String::new()
    };
    let checksum = (s3.checksum.as_ref()).map_or(String::new(), |c| format!(", checksum {c}"));
    format!(
        "  workload {ranks}{} concurrent, objects of {size}{data_set}{picks}{mix}, payload signing {}{checksum}, data {}, {stop}{}\n",
        s3.concurrent, s3.payload_signing, c.data, load_shape(c)
    )
}

/// The sizes `dist` draws for the data set's objects (the first 1,000 object numbers where
/// the run had no data set, as a PUT's new objects), by power of two: "drawn for objects
/// 0..99: 4 KiB+ 12%, 8 KiB+ 7%, ...".
fn drawn(dist: &SizeDist, objects: u64) -> String {
    let n = if objects > 0 { objects } else { 1000 };
    let histogram = log2_histogram((0..n).map(|k| dist.of_object(k)));
    let shares: Vec<String> = (histogram.iter())
        .map(|(low, share)| format!("{}+ {:.0}%", format_bytes(*low), 100.0 * share))
        .collect();
    format!("drawn for objects 0..{}: {}", n - 1, shares.join(", "))
}

/// A replay's workload: the trace, its format and what it held, the files it became, the
/// workers and the timing.
fn replay_workload(run: &RunResult, r: &ReplayConfig) -> String {
    let c = &run.config;
    let timing = match r.timing {
        ReplayTiming::Recorded if r.speed != 1.0 => format!("at the recorded times / {}", r.speed),
        ReplayTiming::Recorded => "at the recorded times".to_string(),
        ReplayTiming::Fast => "as fast as possible".to_string(),
    };
    format!(
        "  workload replay of {} ({}, sha256 {}): {} reads, {} writes, {} syncs, {} trims (not replayed); {} files of {} in all, {} streams over {} jobs, {timing}, data {}\n",
        r.trace,
        r.format.title(),
        &r.sha256[..r.sha256.len().min(12)],
        r.reads,
        r.writes,
        r.syncs,
        r.trims,
        r.files,
        format_bytes(c.total_bytes),
        r.streams,
        c.jobs,
        c.data,
    )
}

/// A file run's workload: jobs and sizes, block, pattern, layout, fsync, engine, data and when
/// it stops.
fn file_workload(run: &RunResult, ranks: &str) -> String {
    let c = &run.config;
    let stop = c.duration_s.map_or("one pass".to_string(), |d| {
        format!("for {d}s per phase{}", ramp(c))
    });
    format!(
        "  workload {ranks}{} jobs x {} = {}, block {}, {}, {}, fsync {}, {}{}{}data {}, {}{}\n",
        c.jobs,
        format_bytes(c.size_per_job_bytes),
        format_bytes(c.total_bytes),
        format_bytes(c.block_bytes),
        c.pattern,
        match c.segments {
            Some(n) => format!("strided in {n} segments (IOR -s)"),
            None => c.layout.as_str().replace('_', " "),
        },
        c.fsync,
        if c.direct { "O_DIRECT, " } else { "" },
        engine(c),
        memory(c),
        c.data,
        stop,
        load_shape(c)
    )
}

/// How a file run did its I/O where not one pread/pwrite at a time, with its hints and its
/// CPUs: "io_uring with 8 in flight per job, ", "mmap, madvise random, pinned to CPUs 0-3, ".
fn engine(c: &Config) -> String {
    let mut text = match c.engine {
        Some(Engine::IoUring) => format!("io_uring with {} in flight per job, ", c.iodepth),
        Some(Engine::Mmap) => "mmap, ".to_string(),
        Some(Engine::Sync) | None => String::new(),
    };
    if let Some(advice) = c.madvise {
        text += &format!("madvise {}, ", advice.name());
    }
    if let Some(advice) = c.fadvise {
        text += &format!("fadvise {}, ", advice.name());
    }
    match (c.numa, &c.cpus) {
        (Some(node), Some(cpus)) => text += &format!("pinned to NUMA node {node} (CPUs {cpus}), "),
        (None, Some(cpus)) => text += &format!("pinned to CPUs {cpus}, "),
        _ => {}
    }
    text
}

/// `--access`, `--think` and `--burst`, as they shaped the load: ", access zipf 1.2, think
/// 1ms after each operation, load 2s on / 8s off", or nothing.
fn load_shape(c: &Config) -> String {
    let mut out = String::new();
    if let Some(access) = c.access {
        out.push_str(&format!(", access {}", access.describe()));
    }
    let secs = |s: f64| format_duration(Duration::from_secs_f64(s));
    if let Some(think) = c.think_s {
        out.push_str(&format!(", think {} after each operation", secs(think)));
    }
    if let Some([on, off]) = c.burst_s {
        out.push_str(&format!(", load {} on / {} off", secs(on), secs(off)));
    }
    out
}

/// A mixed run's weights (get, head, put, delete, and list where it had one) as shares of their sum, those drawn at all:
/// "mix: get 36%, put 47%, delete 17%".
fn mix_shares(weights: &[u32]) -> String {
    let sum: u32 = weights.iter().sum();
    let shares: Vec<String> = [
        OpName::Get,
        OpName::Head,
        OpName::Put,
        OpName::Delete,
        OpName::List,
    ]
    .iter()
    .zip(weights)
    .filter(|(_, &w)| w > 0)
    .map(|(op, &w)| format!("{op} {:.0}%", 100.0 * f64::from(w) / f64::from(sum)))
    .collect();
    format!("mix: {}", shares.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_line_says_how_timed_reads_chose_their_objects() {
        let json = include_str!("../../../iobm/tests/fixtures/s3-mixed.json");
        let mut run = RunResult::from_json(json).unwrap();
        let line = |run: &RunResult| {
            let s3 = run.config.s3.clone().unwrap();
            s3_workload(run, &s3, "")
        };
        assert!(!line(&run).contains("picked") && !line(&run).contains("once per pass"));
        let s3 = run.config.s3.as_mut().unwrap();
        s3.picks = Some(Picks::Once);
        assert!(line(&run).contains(", each object read once per pass in a shuffled order,"));
        run.config.s3.as_mut().unwrap().picks = Some(Picks::Random);
        assert!(line(&run).contains(", objects picked at random (with replacement),"));
        // Sizes from a distribution: named, and the histogram of those drawn.
        let s3 = run.config.s3.as_mut().unwrap();
        s3.obj_sizes = Some(SizeDist::Buckets {
            sizes: vec![4096, 1 << 20],
            weights: vec![1, 1],
        });
        s3.objects = 4;
        let sizes = (0..4).map(|k| SizeDist::parse("4KiB:1,1MiB:1").unwrap().of_object(k));
        let small = sizes.filter(|&s| s == 4096).count() * 25;
        assert!(
            line(&run).contains(&format!(
                "objects of 4.00 KiB 50%, 1.00 MiB 50% (drawn for objects 0..3: 4.00 KiB+ {small}%, 1.00 MiB+ {}%)",
                100 - small
            )),
            "{}",
            line(&run)
        );
        // A read of the data set once, by neither time nor count: each object once.
        run.config.duration_s = None;
        assert!(!line(&run).contains("picked"), "{}", line(&run));
    }
}
