//! `iobm limits [DIR]`: what this machine can do at most (memory copy with one thread and all,
//! by the fastest way this CPU has; loopback TCP over one connection and over several; MD5 by
//! the fastest implementation iobm has and multi-buffer MD5, SHA-256 and CRC32C per core; and
//! with DIR its device's O_DIRECT write and read at several block sizes and queue depths; with
//! `--gpu N` that GPU's copies to and from host memory), so a result above one of them is seen to be impossible without a cache (`iobm report --limits
//! FILE`).

use crate::cli::LimitsArgs;
use iobm_engine::data::fill_random;
use iobm_results::env;
use iobm_results::limits::{self, Limits, FORMAT};
use iobm_results::RunResult;
use iobm_run::exit::{Exit, Failure};
use iobm_run::session::{self, describe_io, say};
use iobm_stats::{format_bytes, time};
use iobm_target::memory::{AlignedHostMemory, HostBuf};
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

mod device;
mod gpu;
use device::device;

const MIB: usize = 1 << 20;
/// Buffers of the memory copy: well above the CPU caches.
const COPY_BYTES: usize = 64 * MIB;

/// This thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Runs `step` (which moves `bytes` each time) until this thread has run it for `time` of CPU
/// time (or ten times `time` has passed): bytes over the thread's CPU seconds, what one core
/// does while it runs, however many other processes share it (as `openssl speed` counts).
fn rate(time: Duration, bytes: usize, mut step: impl FnMut()) -> f64 {
    step(); // warm-up: pages touched, code paged in
    let (wall, cpu) = (Instant::now(), thread_cpu());
    let mut moved = 0u64;
    while thread_cpu() - cpu < time && wall.elapsed() < 10 * time {
        step();
        moved += bytes as u64;
    }
    moved as f64 / (thread_cpu() - cpu).as_secs_f64().max(1e-9)
}

/// A way of copying one buffer into another of the same length (both aligned to 4 KiB).
type Copy = fn(&mut [u8], &[u8]);

fn copy_memcpy(to: &mut [u8], from: &[u8]) {
    to.copy_from_slice(from);
}

/// `rep movsb`, which CPUs with fast strings (ERMS) run at their widest.
#[cfg(target_arch = "x86_64")]
fn copy_rep_movsb(to: &mut [u8], from: &[u8]) {
    let n = to.len().min(from.len());
    // SAFETY: copies n bytes between two live buffers of at least n bytes that do not overlap.
    unsafe {
        std::arch::asm!(
            "rep movsb",
            inout("rcx") n => _,
            inout("rdi") to.as_mut_ptr() => _,
            inout("rsi") from.as_ptr() => _,
            options(nostack, preserves_flags)
        );
    }
}

/// 32-byte non-temporal stores, which write past the caches (for buffers far larger than them).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stream_avx2(to: &mut [u8], from: &[u8]) {
    use std::arch::x86_64::{__m256i, _mm256_load_si256, _mm256_stream_si256, _mm_sfence};
    let n = to.len().min(from.len()) / 32;
    let (d, s) = (
        to.as_mut_ptr() as *mut __m256i,
        from.as_ptr() as *const __m256i,
    );
    for i in 0..n {
        // SAFETY: both buffers are 4 KiB aligned and hold n 32-byte words.
        unsafe { _mm256_stream_si256(d.add(i), _mm256_load_si256(s.add(i))) };
    }
    _mm_sfence();
}

#[cfg(target_arch = "x86_64")]
fn copy_stream_avx2(to: &mut [u8], from: &[u8]) {
    // SAFETY: only offered where the CPU has AVX2 (copy_methods).
    unsafe { stream_avx2(to, from) }
}

/// The ways of copying this CPU has.
fn copy_methods() -> Vec<(&'static str, Copy)> {
    let mut ways: Vec<(&'static str, Copy)> = vec![("memcpy", copy_memcpy)];
    #[cfg(target_arch = "x86_64")]
    {
        ways.push(("rep movsb", copy_rep_movsb));
        if std::arch::is_x86_feature_detected!("avx2") {
            ways.push(("AVX2 non-temporal stores", copy_stream_avx2));
        }
    }
    ways
}

/// Two buffers of [`COPY_BYTES`] to copy between, the source random.
fn copy_buffers() -> (HostBuf, HostBuf) {
    let mut from = AlignedHostMemory.host(COPY_BYTES);
    fill_random(&mut from, 1);
    (from, AlignedHostMemory.host(COPY_BYTES))
}

/// One thread copying between two buffers of its own with `copy`, per CPU second.
fn copy_rate(time: Duration, copy: Copy) -> f64 {
    let (from, mut to) = copy_buffers();
    rate(time, COPY_BYTES, || {
        copy(&mut to, black_box(&from));
        black_box(&mut to);
    })
}

/// The fastest way of copying on one thread: its name and rate.
fn fastest_copy(time: Duration) -> (&'static str, Copy, f64) {
    copy_methods()
        .into_iter()
        .map(|(name, copy)| (name, copy, copy_rate(time, copy)))
        .max_by(|a, b| a.2.total_cmp(&b.2))
        .expect("memcpy is always there")
}

/// `threads` threads copying together with `copy` (each between buffers of its own, started
/// together once all are made) for `time` of CPU time each: the sum of each one's bytes per CPU
/// second, so that other processes sharing the cores do not lower it (as the one-thread figure).
fn memcpy_all(threads: usize, time: Duration, copy: Copy) -> f64 {
    let ready = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let (from, mut to) = copy_buffers();
                    ready.wait();
                    rate(time, COPY_BYTES, || {
                        copy(&mut to, black_box(&from));
                        black_box(&mut to);
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    })
}

/// `connections` TCP connections over 127.0.0.1 together, 1 MiB writes each, each read by a
/// thread of its own: bytes received per second, all together.
fn loopback_tcp(time: Duration, connections: usize) -> std::io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let readers = std::thread::spawn(move || -> std::io::Result<u64> {
        let mut threads = Vec::new();
        for _ in 0..connections {
            let (mut conn, _) = listener.accept()?;
            threads.push(std::thread::spawn(move || -> std::io::Result<u64> {
                let mut buf = vec![0u8; MIB];
                let mut total = 0u64;
                loop {
                    match conn.read(&mut buf)? {
                        0 => return Ok(total),
                        n => total += n as u64,
                    }
                }
            }));
        }
        threads.into_iter().try_fold(0, |sum, t| {
            Ok(sum
                + t.join()
                    .map_err(|_| std::io::Error::other("reader panicked"))??)
        })
    });
    let conns = (0..connections)
        .map(|_| TcpStream::connect(addr))
        .collect::<std::io::Result<Vec<_>>>()?;
    let start = Instant::now();
    std::thread::scope(|s| -> std::io::Result<()> {
        let writers: Vec<_> = conns
            .into_iter()
            .map(|mut conn| {
                s.spawn(move || -> std::io::Result<()> {
                    let mut chunk = vec![0u8; MIB];
                    fill_random(&mut chunk, 2);
                    while start.elapsed() < time {
                        conn.write_all(&chunk)?;
                    }
                    Ok(())
                })
            })
            .collect();
        writers.into_iter().try_for_each(|w| {
            w.join()
                .map_err(|_| std::io::Error::other("writer panicked"))?
        })
    })?;
    let received = readers
        .join()
        .map_err(|_| std::io::Error::other("reader panicked"))??;
    Ok(received as f64 / start.elapsed().as_secs_f64())
}

/// Several connections together: the most of 2, 4 and one per thread (twice), with how many.
fn loopback_tcp_many(time: Duration, threads: usize) -> std::io::Result<(u32, f64)> {
    let mut counts = vec![2, 4, threads, 2 * threads];
    counts.sort_unstable();
    counts.dedup();
    let mut best = (0, 0.0);
    for n in counts.into_iter().filter(|&n| n >= 2) {
        let rate = loopback_tcp(time, n)?;
        if rate > best.1 {
            best = (n as u32, rate);
        }
    }
    Ok(best)
}

/// MD5 by each implementation iobm has: the fastest, with its name.
fn md5_rate(time: Duration, data: &[u8]) -> (&'static str, f64) {
    let asm = rate(time, MIB, || {
        black_box(<md5::Md5 as md5::Digest>::digest(black_box(data)));
    });
    let soft = rate(time, MIB, || {
        black_box(<md_5_soft::Md5 as md_5_soft::Digest>::digest(black_box(
            data,
        )));
    });
    let single = md5_many::md5(data);
    assert_eq!(
        single[..],
        <md5::Md5 as md5::Digest>::digest(data)[..],
        "md5-many agrees with md-5"
    );
    let many_one = rate(time, MIB, || {
        black_box(md5_many::md5(black_box(data)));
    });
    [
        ("md-5 0.10 (assembly)", asm),
        ("md-5 0.11", soft),
        ("md5-many, one message", many_one),
    ]
    .into_iter()
    .max_by(|a, b| a.1.total_cmp(&b.1))
    .expect("three")
}

/// Multi-buffer MD5 on one core: as many messages as the SIMD lanes hold, hashed together.
fn md5_many_rate(time: Duration, data: &[u8]) -> (u32, f64) {
    let engine = md5_many::Md5Many::new();
    let lanes = engine.lanes();
    let inputs: Vec<&[u8]> = (0..lanes).map(|_| data).collect();
    let mut outputs = vec![[0u8; 16]; lanes];
    let r = rate(time, lanes * data.len(), || {
        engine.hash_many(black_box(&inputs), &mut outputs);
        black_box(&mut outputs);
    });
    (lanes as u32, r)
}

/// The checksums' rates on one core, each by the fastest implementation iobm has.
struct Hashes {
    md5: (&'static str, f64),
    /// Lanes of multi-buffer MD5, and their bytes together per CPU second.
    md5_many: (u32, f64),
    sha256: f64,
    crc32c: f64,
}

fn hash_rates(time: Duration) -> Hashes {
    let mut data = vec![0u8; MIB];
    fill_random(&mut data, 3);
    Hashes {
        md5: md5_rate(time, &data),
        md5_many: md5_many_rate(time, &data),
        sha256: rate(time, MIB, || {
            black_box(<sha2::Sha256 as sha2::Digest>::digest(black_box(&data)));
        }),
        crc32c: rate(time, MIB, || {
            black_box(crc_fast::checksum(
                crc_fast::CrcAlgorithm::Crc32Iscsi,
                black_box(&data),
            ));
        }),
    }
}

/// Measures the limits, `time` per figure (and the device's write of `size` with DIR, also at
/// the block sizes and requests in flight of the phases of `like`, the run to be judged; and
/// GPU `gpu`'s copies).
pub fn measure(
    dir: Option<&Path>,
    size: u64,
    time: Duration,
    like: Option<&RunResult>,
    gpu: Option<u32>,
) -> Result<Limits, Failure> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shapes = like.map_or(Vec::new(), |run| limits::shapes(&run.phases));
    let mut device = dir
        .map(|d| device(d, size, 4 * MIB, time, &shapes))
        .transpose()?;
    if let (Some(d), Some(run)) = (device.as_mut(), like) {
        d.judged_run = Some(run.run_id.clone());
    }
    let gpu = gpu
        .map(|id| gpu::gpu(id, gpu::COPY_BYTES, time))
        .transpose()?;
    let hashes = hash_rates(time);
    let (copy_name, copy, copy_one) = fastest_copy(time);
    let tcp = |e: std::io::Error| Failure::run(format!("loopback TCP: {}", describe_io(&e)));
    let (connections, tcp_many) = loopback_tcp_many(time, threads).map_err(tcp)?;
    Ok(Limits {
        format: FORMAT.to_string(),
        hostname: env::hostname(),
        measured_at: time::rfc3339(time::unix_ns_now()),
        threads: threads as u32,
        memcpy_one_thread_bytes_per_s: copy_one,
        memcpy_all_threads_bytes_per_s: memcpy_all(threads, time, copy),
        loopback_tcp_bytes_per_s: loopback_tcp(time, 1).map_err(tcp)?,
        memcpy_method: copy_name.to_string(),
        loopback_tcp_connections: connections,
        loopback_tcp_many_bytes_per_s: tcp_many,
        md5_implementation: hashes.md5.0.to_string(),
        md5_many_bytes_per_s_per_core: hashes.md5_many.1,
        md5_many_lanes: hashes.md5_many.0,
        md5_bytes_per_s_per_core: hashes.md5.1,
        sha256_bytes_per_s_per_core: hashes.sha256,
        crc32c_bytes_per_s_per_core: hashes.crc32c,
        device,
        gpu,
    })
}

/// The limits as a table.
pub fn render(l: &Limits) -> String {
    let r = |v: f64| format!("{}/s", format_bytes(v as u64));
    let mut out = format!(
        "limits of {} ({} threads), measured {}\n  memory copy      {} one thread, {} all threads ({})\n  loopback TCP     {} one connection, {} over {} connections\n  per core         MD5 {} ({}), multi-buffer MD5 {} ({} lanes), SHA-256 {}, CRC32C {}\n",
        l.hostname,
        l.threads,
        l.measured_at,
        r(l.memcpy_one_thread_bytes_per_s),
        r(l.memcpy_all_threads_bytes_per_s),
        l.memcpy_method,
        r(l.loopback_tcp_bytes_per_s),
        r(l.loopback_tcp_many_bytes_per_s),
        l.loopback_tcp_connections,
        r(l.md5_bytes_per_s_per_core),
        l.md5_implementation,
        r(l.md5_many_bytes_per_s_per_core),
        l.md5_many_lanes,
        r(l.sha256_bytes_per_s_per_core),
        r(l.crc32c_bytes_per_s_per_core),
    );
    if let Some(d) = &l.device {
        out.push_str(&format!(
            "  {} ({}, {})  O_DIRECT sequential write {} then fsync, read {} ({} in {} blocks)\n",
            d.dir,
            d.fs_type,
            d.device,
            r(d.write_bytes_per_s),
            r(d.read_bytes_per_s),
            format_bytes(d.bytes),
            format_bytes(d.block_bytes)
        ));
        for p in &d.points {
            out.push_str(&format!(
                "    {:>9} blocks, {:>3} in flight (io_uring): read {}, write {}\n",
                format_bytes(p.block_bytes),
                p.iodepth,
                r(p.read_bytes_per_s),
                r(p.write_bytes_per_s)
            ));
        }
        if let Some(run) = &d.judged_run {
            out.push_str(&format!(
                "    (with the block sizes and requests in flight of run {run})\n"
            ));
        }
    }
    if let Some(g) = &l.gpu {
        out.push_str(&gpu::render(g));
    }
    out
}

/// The saved run of `--like`.
fn saved_run(path: &Path) -> Result<RunResult, Failure> {
    let bad = |why: String| Failure::input(format!("--like {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| bad(describe_io(&e)))?;
    RunResult::from_json(&text).map_err(bad)
}

pub fn limits(args: LimitsArgs) -> Result<Exit, Failure> {
    session::json_path_ok(args.json.as_deref())?;
    if let Some(id) = args.gpu {
        gpu::check(id)?;
    }
    if let Some(dir) = &args.dir {
        session::writable_dir(dir)?;
        let free = env::space(dir).map_or(u64::MAX, |(_, free)| free);
        if args.size > free / 2 {
            return Err(Failure::input(format!(
                "--size {}: {} has only {} free",
                format_bytes(args.size),
                dir.display(),
                format_bytes(free)
            )));
        }
    }
    let like = match &args.like {
        Some(_) if args.dir.is_none() => {
            return Err(Failure::input(
                "--like: names the run whose device is measured: give its directory (DIR) too",
            ))
        }
        Some(path) => Some(saved_run(path)?),
        None => None,
    };
    let limits = measure(
        args.dir.as_deref(),
        args.size,
        args.time,
        like.as_ref(),
        args.gpu,
    )?;
    say(&render(&limits));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&limits).expect("limits serialise");
        iobm_run::atomic::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::run(format!("--json {}: {}", path.display(), describe_io(&e))))?;
    }
    Ok(Exit::Ok)
}
