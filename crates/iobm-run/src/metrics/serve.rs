//! The listener of `--metrics-listen`: std only, one thread, one request per connection
//! (HTTP/1.1 answered with `Connection: close`): `GET /metrics` gets the text exposition,
//! anything else 404.

use super::Metrics;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often the listener looks for a connection or its end.
const POLL: Duration = Duration::from_millis(20);

/// The listener, serving until dropped.
pub struct Server {
    pub metrics: Arc<Metrics>,
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    /// Scrapes answered so far.
    served: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `addr`; Err says why in a few words.
    pub fn start(addr: SocketAddr) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let metrics = Arc::new(Metrics::new());
        let stop = Arc::new(AtomicBool::new(false));
        let served = Arc::new(AtomicU64::new(0));
        let thread = {
            let (metrics, stop, served) = (metrics.clone(), stop.clone(), served.clone());
            std::thread::Builder::new()
                .name("iobm-metrics".into())
                .spawn(move || listen(&listener, &metrics, &stop, &served))?
        };
        Ok(Server {
            metrics,
            addr,
            stop,
            served,
            thread: Some(thread),
        })
    }

    /// After the run: serves on until a scrape begun from now has been answered (one that
    /// reads the final counters), for at most `linger`.
    pub fn linger(&self, linger: Duration) {
        let (from, before) = (Instant::now(), self.served.load(Ordering::SeqCst));
        // A scrape answered within one poll of now may have begun before.
        while from.elapsed() < linger && self.served.load(Ordering::SeqCst) < before + 2 {
            std::thread::sleep(POLL);
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn listen(listener: &TcpListener, metrics: &Metrics, stop: &AtomicBool, served: &AtomicU64) {
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((conn, _)) => {
                if answer(conn, metrics).is_ok_and(|scraped| scraped) {
                    served.fetch_add(1, Ordering::SeqCst);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(_) => std::thread::sleep(POLL),
        }
    }
}

/// Reads one request's head and answers it; true when it was a scrape.
fn answer(mut conn: TcpStream, metrics: &Metrics) -> std::io::Result<bool> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(5)))?;
    conn.set_write_timeout(Some(Duration::from_secs(5)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        let n = conn.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = String::from_utf8_lossy(&head);
    let mut words = line.split_whitespace();
    let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let scraped = (method, path) == ("GET", "/metrics");
    let (status, kind, body) = match (method, path) {
        ("GET", "/metrics") => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            metrics.text(),
        ),
        _ => (
            "404 Not Found",
            "text/plain",
            "not found: GET /metrics\n".into(),
        ),
    };
    let reply = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    conn.write_all(reply.as_bytes())?;
    conn.flush()?;
    Ok(scraped)
}
