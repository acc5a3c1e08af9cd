//! Evidence from outside the process, taken around every phase: the storage servers'
//! Prometheus endpoints (`--server-metrics`, read at rank 0), the command that drops their
//! caches (`--server-drop-cmd`, run at rank 0 before a reading phase) and this client's
//! network interfaces (every rank its own); the endpoints also once per interval through the
//! phase, by a thread of their own (`Sampler`).

use iobm_engine::{ObjectOp, Op, Phase};
use iobm_results::server::{self, Reading};
use iobm_results::server_series::{self, SeriesBuilder, Totals};
use iobm_results::{wire, RunResult, ServerEvidence};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long a metrics endpoint may take to connect and to answer.
pub const METRICS_TIMEOUT: Duration = Duration::from_secs(10);

/// What a run reads around its phases, from its configuration and where it runs.
pub struct Around {
    endpoints: Vec<String>,
    devices: Vec<String>,
    drop_cmd: Option<String>,
    bucket: String,
    /// The storage is across a network: the client's interfaces are read.
    wire: bool,
    /// The interfaces towards the storage (None: every one but loopback).
    towards: Option<Vec<String>>,
    host: String,
}

/// One reading of every `--server-metrics` endpoint.
pub type Readings = Vec<Result<Reading, String>>;

impl Around {
    /// From the run's configuration and environment.
    pub fn of(run: &RunResult) -> Around {
        let s3 = run.config.s3.as_ref();
        let storage = run.environment.storage.as_ref();
        let network_fs = storage
            .is_some_and(|s| iobm_results::checks::NETWORK_FS_TYPES.contains(&s.fs_type.as_str()));
        let hosts: Vec<String> = match s3 {
            Some(s3) => s3
                .endpoints
                .iter()
                .filter_map(|e| wire::url_host(e))
                .collect(),
            None if network_fs => storage
                .and_then(|s| wire::mount_server(&s.mount_source))
                .into_iter()
                .collect(),
            None => Vec::new(),
        };
        Around {
            endpoints: run.config.server_metrics.clone(),
            devices: run.config.server_devices.clone(),
            drop_cmd: run.config.server_drop_cmd.clone(),
            bucket: s3.map_or(String::new(), |s| s.bucket.clone()),
            wire: s3.is_some() || network_fs,
            towards: wire::towards(&hosts),
            host: run.environment.hostname.clone(),
        }
    }

    /// Whether the servers' caches are dropped before `phase`: a phase that reads data.
    pub fn drops_before(&self, phase: &Phase) -> bool {
        self.drop_cmd.is_some()
            && matches!(
                phase.op,
                Op::Read
                    | Op::Rewrite
                    | Op::ReadWrite { .. }
                    | Op::GetChar(_)
                    | Op::Seek { .. }
                    | Op::Object(ObjectOp::Get | ObjectOp::Mixed)
            )
    }

    /// Runs `--server-drop-cmd` through `sh -c`; Err names the flag, the command, its exit
    /// status and the end of what it wrote to stderr.
    pub fn drop_servers(&self, phase: &str) -> Result<Duration, String> {
        let cmd = self.drop_cmd.as_deref().unwrap_or("true");
        run_drop_cmd(cmd).map_err(|why| {
            format!("--server-drop-cmd '{cmd}' before phase '{phase}': {why}; the run ends here")
        })
    }

    /// Every `--server-metrics` endpoint read now.
    pub fn servers(&self) -> Readings {
        self.endpoints
            .iter()
            .map(|url| fetch(url, METRICS_TIMEOUT).and_then(|t| server::read(&t, &self.bucket)))
            .collect()
    }

    /// Whether there is anything to add to a phase.
    pub fn active(&self) -> bool {
        self.wire || !self.endpoints.is_empty() || self.drop_cmd.is_some()
    }

    /// This client's interface counters now, where the storage is across a network.
    pub fn nics(&self) -> Vec<(String, u64, u64)> {
        if self.wire {
            wire::counters()
        } else {
            Vec::new()
        }
    }

    /// What this client's interfaces moved between two readings.
    pub fn wire(
        &self,
        before: &[(String, u64, u64)],
        after: &[(String, u64, u64)],
    ) -> Vec<iobm_results::NicIo> {
        wire::io(&self.host, before, after, self.towards.as_deref())
    }

    /// Each endpoint's evidence over the phase, "unavailable" where a reading failed, with its
    /// series when it was `sampled` through the phase (`after` closes that series).
    pub fn evidence(
        &self,
        before: &Readings,
        after: &Readings,
        sampled: Option<Sampler>,
    ) -> Vec<ServerEvidence> {
        let mut series = sampled
            .map_or(Vec::new(), |s| s.finish(self, after))
            .into_iter();
        self.endpoints
            .iter()
            .zip(before.iter().zip(after))
            .map(|(url, pair)| {
                let mut e = match pair {
                    (Ok(b), Ok(a)) => server::reading_evidence(url, b, a, &self.devices),
                    (Err(why), _) => {
                        server::unavailable(url, "", &format!("before the phase: {why}"))
                    }
                    (_, Err(why)) => {
                        server::unavailable(url, "", &format!("after the phase: {why}"))
                    }
                };
                e.series = series.next().map(SeriesBuilder::finish);
                e
            })
            .collect()
    }

    /// What a series keeps of each reading (None where it failed).
    fn totals(&self, readings: &Readings) -> Vec<Option<Totals>> {
        readings
            .iter()
            .map(|r| r.as_ref().ok().map(|r| Totals::of(r, &self.devices)))
            .collect()
    }

    /// Starts reading every `--server-metrics` endpoint once per period of a phase whose series
    /// has intervals of `interval` ([`server_series::period_ns`]), on a thread of its own beside
    /// the workers, its stamps on the clock of `origin`; the first differences are from
    /// `before`, just read. None without endpoints: no thread is started (a second thread costs
    /// every system call of a one-worker phase a shared file table).
    pub fn sample(
        &self,
        before: &Readings,
        interval: Duration,
        origin: Instant,
    ) -> Option<Sampler> {
        if self.endpoints.is_empty() {
            return None;
        }
        let period = Duration::from_nanos(server_series::period_ns(interval.as_nanos() as u64));
        let before_ns = origin.elapsed().as_nanos() as u64;
        let builders: Vec<SeriesBuilder> = self
            .totals(before)
            .into_iter()
            .map(|t| SeriesBuilder::new(period.as_nanos() as u64, before_ns, t))
            .collect();
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (endpoints, devices, bucket) = (
            self.endpoints.clone(),
            self.devices.clone(),
            self.bucket.clone(),
        );
        // A reading later than a period is a gap anyway: it may not hold the phase's end up long.
        let timeout = period.clamp(Duration::from_secs(1), METRICS_TIMEOUT);
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("iobm-servers".into())
            .spawn(move || {
                let mut builders = builders;
                let mut next = Instant::now() + period;
                loop {
                    let (lock, wake) = &*stopped;
                    let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
                    while !*done && Instant::now() < next {
                        let wait = next.saturating_duration_since(Instant::now());
                        done = wake
                            .wait_timeout(done, wait)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                    }
                    if *done {
                        return builders;
                    }
                    drop(done);
                    for (b, url) in builders.iter_mut().zip(&endpoints) {
                        let reading = fetch(url, timeout).and_then(|t| server::read(&t, &bucket));
                        let at = origin.elapsed().as_nanos() as u64;
                        b.push(at, reading.ok().map(|r| Totals::of(&r, &devices)));
                    }
                    // The next edge still ahead: a late reading skips those it missed.
                    while next <= Instant::now() {
                        next += period;
                    }
                }
            })
            .ok()?;
        Some(Sampler {
            stop,
            thread: Some(thread),
            origin,
        })
    }
}

/// The thread reading the servers through a phase ([`Around::sample`]); stopped when it is
/// finished or dropped.
pub struct Sampler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<Vec<SeriesBuilder>>>,
    origin: Instant,
}

impl Sampler {
    fn stop(&mut self) -> Vec<SeriesBuilder> {
        *self.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.1.notify_all();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }

    /// Stops the thread (after the reading it may be taking) and closes each endpoint's series
    /// with the reading `after` the phase, stamped now.
    fn finish(mut self, around: &Around, after: &Readings) -> Vec<SeriesBuilder> {
        let at = self.origin.elapsed().as_nanos() as u64;
        let mut builders = self.stop();
        for (b, t) in builders.iter_mut().zip(around.totals(after)) {
            b.push(at, t);
        }
        builders
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What `cache_dropped` says when the servers' caches were dropped too.
pub fn with_servers(client: &str) -> String {
    match client {
        "" | "nothing" => "servers".to_string(),
        c if c.ends_with("servers") => c.to_string(),
        c => format!("{c}+servers"),
    }
}

/// Runs `cmd` through `sh -c`, stdin closed and stdout discarded, and says how it failed.
pub fn run_drop_cmd(cmd: &str) -> Result<Duration, String> {
    let started = std::time::Instant::now();
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    if out.status.success() {
        return Ok(started.elapsed());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
    let status = match out.status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".to_string(),
    };
    Err(match last {
        Some(line) => format!("{status} ({})", iobm_results::env::printable(line.trim())),
        None => status,
    })
}

/// The `http://host:port/path` of a `--server-metrics` URL: the scheme http:// if none,
/// /metrics if no path. Err for https:// and what is not a URL.
pub fn metrics_url(url: &str) -> Result<(String, String), String> {
    let rest = match url.split_once("://") {
        Some(("http", rest)) => rest,
        Some((scheme, _)) => {
            return Err(format!(
                "{scheme}:// is not read: only http:// (node_exporter's default)"
            ))
        }
        None => url,
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/metrics"),
    };
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return Err("not a URL (http://HOST:PORT/metrics)".into());
    }
    let has_port = if authority.starts_with('[') {
        authority.contains("]:")
    } else {
        authority.contains(':')
    };
    let authority = if has_port {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, path.to_string()))
}

/// The body of `GET url` (HTTP/1.0, so the answer ends with the connection), within `timeout`
/// for the connection and for each read; Err says why in a few words.
pub fn fetch(url: &str, timeout: Duration) -> Result<String, String> {
    let (authority, path) = metrics_url(url)?;
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} resolves to no address"))?;
    let mut conn = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(timeout)).ok();
    conn.set_write_timeout(Some(timeout)).ok();
    let host = authority.trim_end_matches(":80");
    // One write: a server may answer and close after the first segment it reads.
    let request = format!(
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: text/plain\r\nUser-Agent: iobm\r\n\r\n"
    );
    conn.write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    // node_exporter's answer is some 100 KB; a limit keeps a wrong URL from filling memory.
    conn.take(64 << 20)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP answer")?;
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let status = head.lines().next().unwrap_or("");
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code != "200" {
        let status = iobm_results::env::printable(status.trim());
        return Err(format!("answered '{status}', not 200"));
    }
    let mut body = raw[head_end + 4..].to_vec();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body).ok_or("a malformed chunked answer")?;
    } else if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if body.len() < len {
            return Err(format!(
                "the answer ended after {} of {len} bytes",
                body.len()
            ));
        }
        body.truncate(len);
    }
    String::from_utf8(body).map_err(|_| "the answer is not text".to_string())
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server on loopback that answers one request with `answer`.
    fn answering(answer: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            c.write_all(answer).unwrap();
        });
        format!("http://{at}/metrics")
    }

    #[test]
    fn an_answer_is_read_whole_plain_sized_or_chunked() {
        let plain =
            answering(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nnode_load1 0.5\n");
        assert_eq!(fetch(&plain, METRICS_TIMEOUT).unwrap(), "node_load1 0.5\n");
        let sized = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcdeXX");
        assert_eq!(fetch(&sized, METRICS_TIMEOUT).unwrap(), "abcde");
        let chunked =
            answering(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
        assert_eq!(fetch(&chunked, METRICS_TIMEOUT).unwrap(), "abcde");
        let short = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nabc");
        assert!(fetch(&short, METRICS_TIMEOUT)
            .unwrap_err()
            .contains("3 of 50"));
        let missing = answering(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(
            fetch(&missing, METRICS_TIMEOUT).unwrap_err(),
            "answered 'HTTP/1.1 404 Not Found', not 200"
        );
    }

    #[test]
    fn an_endpoint_that_is_not_there_says_why() {
        // A port just freed: nothing listens there.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = fetch(&format!("http://127.0.0.1:{port}"), METRICS_TIMEOUT).unwrap_err();
        assert!(e.contains("refused"), "{e}");
        assert!(fetch("https://srv:9100/metrics", METRICS_TIMEOUT)
            .unwrap_err()
            .contains("only http://"));
    }

    #[test]
    fn metrics_urls_get_a_scheme_port_and_path() {
        let url = |u| metrics_url(u).unwrap();
        assert_eq!(url("srv:9100"), ("srv:9100".into(), "/metrics".into()));
        assert_eq!(
            url("http://srv:9100/m?x=1"),
            ("srv:9100".into(), "/m?x=1".into())
        );
        assert_eq!(
            url("http://srv/metrics"),
            ("srv:80".into(), "/metrics".into())
        );
        assert_eq!(
            url("http://[::1]:9100"),
            ("[::1]:9100".into(), "/metrics".into())
        );
        assert_eq!(url("http://[::1]"), ("[::1]:80".into(), "/metrics".into()));
        assert!(metrics_url("http:///metrics").is_err());
    }

    #[test]
    fn the_drop_command_is_checked_and_its_failure_told() {
        assert!(run_drop_cmd("true").is_ok());
        assert_eq!(
            run_drop_cmd("echo first >&2; echo 'no such host' >&2; exit 3").unwrap_err(),
            "exit status 3 (no such host)"
        );
        assert_eq!(run_drop_cmd("exit 1").unwrap_err(), "exit status 1");
        assert_eq!(with_servers("nothing"), "servers");
        assert_eq!(with_servers("files"), "files+servers");
        assert_eq!(with_servers("system+servers"), "system+servers");
    }
}
