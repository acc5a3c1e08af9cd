//! `iobm limits [DIR]`: what this machine can do at most (memory copy with one thread and all,
//! one loopback TCP connection, MD5, SHA-256 and CRC32C per core, and with DIR its device's
//! sequential O_DIRECT write and read), so a result above one of them is seen to be impossible
//! without a cache (`iobm report --limits FILE`).

use crate::cli::LimitsArgs;
use iobm_engine::data::{fill_random, AlignedBuf};
use iobm_results::env;
use iobm_results::limits::{DeviceLimits, Limits, FORMAT};
use iobm_run::exit::{Exit, Failure};
use iobm_run::session::{self, describe_io, say};
use iobm_stats::{format_bytes, time};
use iobm_target::posix::PosixTarget;
use iobm_target::{Access, OpenOptions, Target};
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;
/// Buffers of the memory copy: well above the CPU caches.
const COPY_BYTES: usize = 64 * MIB;

/// Runs `step` (which moves `bytes` each time) for at least `time`; bytes per second.
fn rate(time: Duration, bytes: usize, mut step: impl FnMut()) -> f64 {
    step(); // warm-up: pages touched, code paged in
    let start = Instant::now();
    let mut moved = 0u64;
    while start.elapsed() < time {
        step();
        moved += bytes as u64;
    }
    moved as f64 / start.elapsed().as_secs_f64()
}

/// One thread copying between two buffers of its own.
fn copy_rate(time: Duration) -> f64 {
    let mut from = vec![0u8; COPY_BYTES];
    fill_random(&mut from, 1);
    let mut to = vec![0u8; COPY_BYTES];
    rate(time, COPY_BYTES, || {
        to.copy_from_slice(black_box(&from));
        black_box(&mut to);
    })
}

fn memcpy_all(threads: usize, time: Duration) -> f64 {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads).map(|_| s.spawn(|| copy_rate(time))).collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0.0)).sum()
    })
}

/// One TCP connection over 127.0.0.1, 1 MiB writes, read by another thread.
fn loopback_tcp(time: Duration) -> std::io::Result<f64> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let reader = std::thread::spawn(move || -> std::io::Result<u64> {
        let (mut conn, _) = listener.accept()?;
        let mut buf = vec![0u8; MIB];
        let mut total = 0u64;
        loop {
            match conn.read(&mut buf)? {
                0 => return Ok(total),
                n => total += n as u64,
            }
        }
    });
    let mut conn = TcpStream::connect(addr)?;
    let mut chunk = vec![0u8; MIB];
    fill_random(&mut chunk, 2);
    let start = Instant::now();
    while start.elapsed() < time {
        conn.write_all(&chunk)?;
    }
    drop(conn);
    let received = reader
        .join()
        .map_err(|_| std::io::Error::other("reader panicked"))??;
    Ok(received as f64 / start.elapsed().as_secs_f64())
}

fn hash_rates(time: Duration) -> (f64, f64, f64) {
    let mut data = vec![0u8; MIB];
    fill_random(&mut data, 3);
    let md5 = rate(time, MIB, || {
        black_box(<md5::Md5 as md5::Digest>::digest(black_box(&data)));
    });
    let sha256 = rate(time, MIB, || {
        black_box(<sha2::Sha256 as sha2::Digest>::digest(black_box(&data)));
    });
    let crc32c = rate(time, MIB, || {
        black_box(crc_fast::checksum(
            crc_fast::CrcAlgorithm::Crc32Iscsi,
            black_box(&data),
        ));
    });
    (md5, sha256, crc32c)
}

/// Sequential O_DIRECT write (then fsync) and read of one file of the run's own in `dir`,
/// removed afterwards.
fn device(dir: &Path, bytes: u64, block: usize) -> Result<DeviceLimits, Failure> {
    let target = PosixTarget::new(dir);
    let name = format!("iobm-limits-{}", session::RunId::generate().text);
    let fail = |what: &str, e: std::io::Error| {
        Failure::run(format!("{}: {what}: {}", dir.display(), describe_io(&e)))
    };
    let open = |access| {
        target.open(
            &name,
            OpenOptions {
                access,
                direct: true,
            },
        )
    };
    let mut buf = AlignedBuf::zeroed(block);
    fill_random(&mut buf, 4);
    let measured = (|| -> Result<(f64, f64), Failure> {
        let mut file = open(Access::Create).map_err(|e| fail("O_DIRECT open", e))?;
        let start = Instant::now();
        let mut offset = 0;
        while offset < bytes {
            file.write_at(&buf, offset)
                .map_err(|e| fail("O_DIRECT write", e))?;
            offset += block as u64;
        }
        file.sync().map_err(|e| fail("fsync", e))?;
        let write = bytes as f64 / start.elapsed().as_secs_f64();
        file.close().map_err(|e| fail("close", e))?;
        let mut file = open(Access::Read).map_err(|e| fail("O_DIRECT open", e))?;
        let start = Instant::now();
        let mut offset = 0;
        while offset < bytes {
            file.read_at(&mut buf, offset)
                .map_err(|e| fail("O_DIRECT read", e))?;
            offset += block as u64;
        }
        let read = bytes as f64 / start.elapsed().as_secs_f64();
        Ok((write, read))
    })();
    let _ = target.remove(&name);
    let (write, read) = measured?;
    let storage = env::storage_info(dir);
    Ok(DeviceLimits {
        dir: dir.display().to_string(),
        fs_type: storage
            .as_ref()
            .map_or(String::new(), |s| s.fs_type.clone()),
        device: storage.map_or(String::new(), |s| s.device),
        bytes,
        block_bytes: block as u64,
        write_bytes_per_s: write,
        read_bytes_per_s: read,
    })
}

/// Measures the limits, `time` per figure (and the device's write of `size` with DIR).
pub fn measure(dir: Option<&Path>, size: u64, time: Duration) -> Result<Limits, Failure> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let device = dir.map(|d| device(d, size, 4 * MIB)).transpose()?;
    let (md5, sha256, crc32c) = hash_rates(time);
    Ok(Limits {
        format: FORMAT.to_string(),
        hostname: env::hostname(),
        measured_at: time::rfc3339(time::unix_ns_now()),
        threads: threads as u32,
        memcpy_one_thread_bytes_per_s: copy_rate(time),
        memcpy_all_threads_bytes_per_s: memcpy_all(threads, time),
        loopback_tcp_bytes_per_s: loopback_tcp(time)
            .map_err(|e| Failure::run(format!("loopback TCP: {}", describe_io(&e))))?,
        md5_bytes_per_s_per_core: md5,
        sha256_bytes_per_s_per_core: sha256,
        crc32c_bytes_per_s_per_core: crc32c,
        device,
    })
}

/// The limits as a table.
pub fn render(l: &Limits) -> String {
    let r = |v: f64| format!("{}/s", format_bytes(v as u64));
    let mut out = format!(
        "limits of {} ({} threads), measured {}\n  memory copy      {} one thread, {} all threads\n  loopback TCP     {} one connection\n  per core         MD5 {}, SHA-256 {}, CRC32C {}\n",
        l.hostname,
        l.threads,
        l.measured_at,
        r(l.memcpy_one_thread_bytes_per_s),
        r(l.memcpy_all_threads_bytes_per_s),
        r(l.loopback_tcp_bytes_per_s),
        r(l.md5_bytes_per_s_per_core),
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
    }
    out
}

pub fn limits(args: LimitsArgs) -> Result<Exit, Failure> {
    session::json_path_ok(args.json.as_deref())?;
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
    let limits = measure(args.dir.as_deref(), args.size, args.time)?;
    say(&render(&limits));
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&limits).expect("limits serialise");
        iobm_run::atomic::write_atomic(path, text.as_bytes())
            .map_err(|e| Failure::run(format!("--json {}: {}", path.display(), describe_io(&e))))?;
    }
    Ok(Exit::Ok)
}
