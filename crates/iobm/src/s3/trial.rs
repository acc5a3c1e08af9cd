//! The S3 client's own cost per request at a paced run's shape, measured before it: the phase
//! run closed loop for a moment through iobm's S3 client, with the run's workers and object
//! size, against a null S3 server on loopback that stores nothing and answers at once, so that
//! a `--rate` no worker could start is told from this machine's figure.

use iobm_engine::trial::{ClientCost, TRIAL};
use iobm_engine::{run_phase, Control, Engine, Phase, PhaseEnd, Ranked, StopRule};
use iobm_s3::{Endpoint, S3Config, S3Target};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

/// `phase`'s workers through `client`'s settings (its signing, checksums, connections), closed
/// loop for [`TRIAL`] against a null server. A trial that fails costs nothing: no warning.
pub fn cost(client: &S3Config, phase: &Phase) -> ClientCost {
    let nothing = ClientCost {
        per_op: std::time::Duration::ZERO,
        trial: TRIAL,
    };
    let size = phase
        .objects
        .as_ref()
        .map_or(0, |o| o.range.unwrap_or(o.size.bounds().1));
    let Ok((url, _server)) = NullServer::start(size) else {
        return nothing;
    };
    let Ok(endpoint) = Endpoint::parse(&url) else {
        return nothing;
    };
    let config = S3Config {
        endpoints: vec![endpoint],
        tls: None,
        first_worker: 0,
        ..client.clone()
    };
    let target = S3Target::new(config);
    let trial = Phase {
        stop: StopRule::Duration(TRIAL),
        pace: None,
        ramp: std::time::Duration::ZERO,
        engine: Engine::Sync,
        steady: None,
        verify: None,
        ..phase.clone()
    };
    let out = run_phase(
        &target,
        &trial,
        &Control::new(0, phase.workers),
        &Ranked::ALONE,
    );
    let ops: u64 = out.workers.iter().map(|w| w.span.ops).sum();
    if out.end != PhaseEnd::Completed || ops == 0 {
        return nothing;
    }
    let busy_ns: u64 = (out.workers.iter())
        .map(|w| w.span.end_ns.saturating_sub(w.span.start_ns))
        .sum();
    ClientCost {
        per_op: std::time::Duration::from_nanos(busy_ns / ops),
        trial: TRIAL,
    }
}

/// An HTTP/1.1 server on loopback that takes any request, drops its body and answers 200 at
/// once: a GET or HEAD with `size` bytes (zeros), anything else with none. It stops accepting
/// when dropped.
struct NullServer {
    listener: TcpListener,
}

impl NullServer {
    /// Its URL, and the server (accepting until dropped).
    fn start(size: u64) -> io::Result<(String, NullServerGuard)> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let server = NullServer { listener };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            for conn in server.listener.incoming() {
                if stopped.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                if let Ok(conn) = conn {
                    std::thread::spawn(move || serve(conn, size));
                }
            }
        });
        Ok((format!("http://{addr}"), NullServerGuard { stop, addr }))
    }
}

/// Stops the null server's accepting thread when dropped.
struct NullServerGuard {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Drop for NullServerGuard {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accepting thread, which then ends.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Answers one connection's requests until the client closes it.
fn serve(conn: TcpStream, size: u64) {
    let _ = conn.set_nodelay(true);
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    let zeros = vec![0u8; 1 << 16];
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let method = line.split(' ').next().unwrap_or_default().to_string();
        let (mut body, mut close) = (0u64, false);
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let header = line.trim_end().to_ascii_lowercase();
            if header.is_empty() {
                break;
            }
            if let Some(n) = header.strip_prefix("content-length:") {
                body = n.trim().parse().unwrap_or(0);
            }
            close |= header == "connection: close";
        }
        if io::copy(&mut (&mut reader).take(body), &mut io::sink()).is_err() {
            return;
        }
        let len = if method == "GET" || method == "HEAD" {
            size
        } else {
            0
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {len}\r\nETag: \"0\"\r\n{}\r\n",
            if close { "Connection: close\r\n" } else { "" }
        );
        if out.write_all(head.as_bytes()).is_err() {
            return;
        }
        let mut left = if method == "GET" { len } else { 0 };
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            if out.write_all(&zeros[..n]).is_err() {
                return;
            }
            left -= n as u64;
        }
        if close {
            return;
        }
    }
}
