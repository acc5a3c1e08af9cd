//! The text report's header: the run, where its data is, the storage, host and network, the
//! ranks, and the workload in one line (file, S3 or metadata).

use iobm_results::RunResult;
use iobm_stats::{format_bytes, format_duration};
use std::fmt::Write;
use std::time::Duration;

/// What ran where: printed before the first phase.
pub fn render_header(run: &RunResult) -> String {
    let mut out = String::new();
    let c = &run.config;
    let e = &run.environment;
    let label = run
        .label
        .as_deref()
        .map_or(String::new(), |l| format!("  \"{l}\""));
    let _ = writeln!(out, "iobm {}  run {}{label}", run.kind, run.run_id);
    if let Some(s3) = &c.s3 {
        let gateway = s3.gateway_dir.as_ref().map_or(String::new(), |d| {
            format!(" (iobm's built-in gateway over {d})")
        });
        let _ = writeln!(
            out,
            "  target   {} at {}{gateway}",
            c.run_dir,
            s3.endpoints.join(", ")
        );
    } else {
        let _ = writeln!(out, "  data     {}", c.run_dir);
    }
    if let Some(s) = &e.storage {
        let device = s.block_device.as_ref().map_or(String::new(), |d| {
            let mut about = vec![d.name.clone()];
            about.extend(d.model.clone());
            about.extend(
                d.rotational
                    .map(|r| if r { "rotational" } else { "non-rotational" }.to_string()),
            );
            about.extend(d.scheduler.as_ref().map(|s| format!("scheduler {s}")));
            format!("; device {}", about.join(", "))
        });
        let _ = writeln!(
            out,
            "  storage  {} on {} ({} at {}, {}){device}",
            s.path, s.fs_type, s.mount_source, s.mount_point, s.mount_options
        );
    }
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
    let _ = writeln!(
        out,
        "  host     {}, {} {}, {cpus}{numa}, {} RAM",
        e.hostname,
        e.os,
        e.kernel,
        format_bytes(e.ram_bytes)
    );
    if !e.nics.is_empty() {
        let nics: Vec<String> = e
            .nics
            .iter()
            .map(|n| {
                let mut about = vec![n.state.clone()];
                about.extend(
                    n.speed_mbit
                        .map(|s| format!("{} Gbit/s", s as f64 / 1000.0)),
                );
                about.extend(n.mtu.map(|m| format!("MTU {m}")));
                format!("{} ({})", n.name, about.join(", "))
            })
            .collect();
        let _ = writeln!(out, "  network  {}", nics.join(", "));
    }
    let ramp = c.ramp_s.map_or(String::new(), |r| {
        format!(" after a {r}s warm-up not counted (--ramp)")
    });
    let stop = c.duration_s.map_or("one pass".to_string(), |d| {
        format!("for {d}s per phase{ramp}")
    });
    let ranks = if !run.merged_from.is_empty() {
        let _ = writeln!(
            out,
            "  merged   {} runs started by hand ({}), on the first one's clock by their wall clocks",
            run.merged_from.len(),
            run.merged_from.join(", ")
        );
        format!("{} runs x ", run.merged_from.len())
    } else if run.ranks.len() > 1 {
        let hosts: std::collections::BTreeSet<&str> =
            run.ranks.iter().map(|r| r.host.as_str()).collect();
        let _ = writeln!(
            out,
            "  ranks    {} MPI ranks on {} host(s): {}{}; clock offsets within {}",
            run.ranks.len(),
            hosts.len(),
            hosts.into_iter().collect::<Vec<_>>().join(", "),
            e.mpi.as_ref().map_or(String::new(), |m| format!("; {m}")),
            format_duration(Duration::from_nanos(
                run.ranks
                    .iter()
                    .map(|r| r.clock_uncertainty_ns)
                    .max()
                    .unwrap_or(0)
            ))
        );
        format!("{} ranks x ", run.ranks.len())
    } else {
        String::new()
    };
    if let Some(m) = &c.meta {
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
        let _ = writeln!(
            out,
            "  workload {ranks}{} jobs, {} items per worker{per_dir} in {trees} of {} directories (depth {}, branch {}{}), {} per file{stride}{wall}",
            c.jobs,
            m.items_per_worker,
            m.tree_dirs,
            m.depth,
            m.branch,
            if m.leaves_only { ", leaves only" } else { "" },
            format_bytes(m.write_bytes),
        );
        let _ = writeln!(out, "  phases   {}", m.phases.join(", "));
        return out;
    }
    if let Some(s3) = &c.s3 {
        let size = if s3.obj_size_min == s3.obj_size_max {
            format_bytes(s3.obj_size_max)
        } else {
            format!(
                "{}..{}",
                format_bytes(s3.obj_size_min),
                format_bytes(s3.obj_size_max)
            )
        };
        let data_set = if s3.objects > 0 {
            format!(", data set {} objects", s3.objects)
        } else {
            String::new()
        };
        let stop = match (c.duration_s, c.ops) {
            (Some(d), _) => format!("for {d}s{ramp}"),
            (None, Some(n)) => format!("for {n} operations"),
            (None, None) => "until done or --ops".to_string(),
        };
        let mix = if run.kind == "s3 mixed" {
            format!(", {}", mix_shares(&s3.mix))
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "  workload {ranks}{} concurrent, objects of {size}{data_set}{mix}, payload signing {}, data {}, {stop}",
            s3.concurrent, s3.payload_signing, c.data
        );
        return out;
    }
    let _ = writeln!(
        out,
        "  workload {ranks}{} jobs x {} = {}, block {}, {}, {}, fsync {}, {}{}data {}, {}",
        c.jobs,
        format_bytes(c.size_per_job_bytes),
        format_bytes(c.total_bytes),
        format_bytes(c.block_bytes),
        c.pattern,
        match c.segments {
            Some(n) => format!("strided in {n} segments (IOR -s)"),
            None => c.layout.replace('_', " "),
        },
        c.fsync,
        if c.direct { "O_DIRECT, " } else { "" },
        if c.engine == "io_uring" {
            format!("io_uring with {} in flight per job, ", c.iodepth)
        } else {
            String::new()
        },
        c.data,
        stop
    );
    out
}

/// A mixed run's weights (get, head, put, delete) as shares of their sum, those drawn at all:
/// "mix: get 36%, put 47%, delete 17%".
fn mix_shares(weights: &[u32]) -> String {
    let sum: u32 = weights.iter().sum();
    let shares: Vec<String> = ["get", "head", "put", "delete"]
        .iter()
        .zip(weights)
        .filter(|(_, &w)| w > 0)
        .map(|(op, &w)| format!("{op} {:.0}%", 100.0 * f64::from(w) / f64::from(sum)))
        .collect();
    format!("mix: {}", shares.join(", "))
}
