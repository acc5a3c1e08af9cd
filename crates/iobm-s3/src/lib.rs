//! iobm-s3: the S3 target. Each worker owns a blocking HTTP/1.1 connection (several for
//! multipart uploads) to one of the endpoints; requests are signed with SigV4 in headers, with
//! `UNSIGNED-PAYLOAD` or the body's SHA-256; bodies go out from the shared data pool with
//! `writev` and come back into one reused buffer. Nothing is retried here: the engine counts
//! every failure.

mod checksum;
mod client;
pub mod http;
mod session;
pub mod sigv4;
pub mod tls;
mod versions;
pub mod xml;

pub use checksum::Checksum;
pub use versions::Versioning;

use client::Client;
use http::Connection;
use iobm_target::{
    Capabilities, Capability, Handle, HttpError, Leftover, Objects, OpenOptions, Target,
};
use session::S3Session;
use sigv4::Credentials;
use std::io;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One S3 endpoint (`http://host:port`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// As given, without a trailing slash.
    pub url: String,
    /// The `Host` header: `host:port`.
    host: String,
    addr: SocketAddr,
    /// The server name to check its certificate against, for `https://`.
    tls_name: Option<rustls::pki_types::ServerName<'static>>,
}

impl Endpoint {
    /// Parses and resolves `http://host[:port]` or `https://host[:port]`; the error says what
    /// is wrong.
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let url = url.trim().trim_end_matches('/');
        let (rest, tls, default_port) = if let Some(rest) = url.strip_prefix("http://") {
            (rest, false, 80)
        } else if let Some(rest) = url.strip_prefix("https://") {
            (rest, true, 443)
        } else {
            return Err(format!("'{url}' is not an http:// or https:// URL"));
        };
        if rest.is_empty() || rest.contains('/') {
            return Err(format!(
                "'{url}': give only scheme, host and port (path-style buckets are used)"
            ));
        }
        let (name, with_port) = match rest.rsplit_once(':') {
            Some((h, p)) if p.parse::<u16>().is_ok() && !rest.ends_with(']') => {
                (h.to_string(), rest.to_string())
            }
            _ => (rest.to_string(), format!("{rest}:{default_port}")),
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|e| format!("'{url}': cannot resolve: {e}"))?
            .next()
            .ok_or_else(|| format!("'{url}': no address"))?;
        let tls_name = if tls {
            Some(tls::server_name(&name).map_err(|e| format!("'{url}': {e}"))?)
        } else {
            None
        };
        Ok(Endpoint {
            url: url.to_string(),
            host: rest.to_string(),
            addr,
            tls_name,
        })
    }

    pub fn is_tls(&self) -> bool {
        self.tls_name.is_some()
    }
}

/// Whether request bodies are hashed for the signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadSigning {
    /// `x-amz-content-sha256: UNSIGNED-PAYLOAD` (the headers are still signed).
    Unsigned,
    /// The SHA-256 of every body, computed inside the operation's time, as clients that hash
    /// every payload do.
    Sha256,
}

impl PayloadSigning {
    pub fn name(self) -> &'static str {
        match self {
            PayloadSigning::Unsigned => "unsigned",
            PayloadSigning::Sha256 => "sha256",
        }
    }
}

/// Where and how to reach the store.
#[derive(Debug, Clone)]
pub struct S3Config {
    pub endpoints: Vec<Endpoint>,
    pub bucket: String,
    /// Every object of the run is named `prefix + name`; ends with `/`.
    pub prefix: String,
    /// None: requests are sent unsigned (anonymous).
    pub credentials: Option<Credentials>,
    pub region: String,
    pub payload: PayloadSigning,
    /// `--checksum`: the additional checksum each whole-object PUT carries, if any.
    pub checksum: Option<Checksum>,
    /// The run works on versions of objects (`s3 versioned`), in a bucket that keeps them:
    /// the target then declares [`Capability::Versions`].
    pub versions: bool,
    /// Longest wait for a connection, or for progress of a request or response.
    pub timeout: Duration,
    /// Open a new connection for every request (`Connection: close`); its setup is then
    /// inside the operation's time.
    pub new_connection_per_request: bool,
    /// This process's first worker among all workers of the job (MPI: rank x concurrency):
    /// worker w of the job talks to endpoint w mod N.
    pub first_worker: usize,
    /// For `https://` endpoints.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl S3Config {
    /// The index of the endpoint this process's worker `worker` talks to.
    pub fn endpoint_of(&self, worker: usize) -> usize {
        self.job_endpoint(self.first_worker + worker)
    }

    /// The index of the endpoint worker `job_worker` of the whole job (over every rank) talks
    /// to: workers are spread round-robin.
    pub fn job_endpoint(&self, job_worker: usize) -> usize {
        job_worker % self.endpoints.len()
    }

    /// A connection to endpoint `endpoint`.
    fn connection(&self, endpoint: usize) -> Connection {
        let e = &self.endpoints[endpoint];
        let tls = match (&e.tls_name, &self.tls) {
            (Some(name), Some(config)) => Some((config.clone(), name.clone())),
            _ => None,
        };
        Connection::new(e.addr, self.timeout, tls)
    }
}

/// An S3 bucket and run prefix as a target.
pub struct S3Target {
    config: S3Config,
    /// For the untimed work around phases (bucket, cleanup, `len`, `remove`).
    control: Mutex<Client>,
}

impl S3Target {
    pub fn new(config: S3Config) -> S3Target {
        assert!(!config.endpoints.is_empty(), "at least one endpoint");
        let control = Mutex::new(Client::new(&config, 0));
        S3Target { config, control }
    }

    /// The endpoint worker `worker` talks to: workers are spread round-robin.
    fn endpoint(&self, worker: usize) -> &str {
        &self.config.endpoints[self.config.endpoint_of(worker)].url
    }

    /// Creates the bucket unless it exists; true when this call created it.
    fn ensure_bucket(&self) -> io::Result<bool> {
        let mut c = self.control.lock().unwrap();
        let head = c.request(&self.config, "HEAD", None, &[], &[], None)?;
        match head.status {
            200 => return c.conn.skip_body(&head).map(|_| false),
            404 => c.conn.skip_body(&head).map(|_| ())?,
            _ => {
                // A HEAD answer has no body to say why: ask again with a GET that has one.
                c.conn.skip_body(&head)?;
                let why = c.request(&self.config, "GET", None, &[("location", "")], &[], None)?;
                let mut error = c.error(&why);
                if (200..300).contains(&why.status) {
                    error = HttpError {
                        status: head.status,
                        code: None,
                        message: None,
                        request_id: None,
                    }
                    .into_io();
                }
                return Err(error);
            }
        }
        let head = c.request(&self.config, "PUT", None, &[], &[], None)?;
        if head.status == 200 {
            c.conn.skip_body(&head)?;
            return Ok(true);
        }
        // Made meanwhile by another client of the same account (iobm runs started together):
        // there to use, and not this run's to delete. S3 outside us-east-1 says so with a 409.
        match c.error(&head) {
            e if bucket_is_callers(&e) => Ok(false),
            e => Err(e),
        }
    }

    /// Deletes the bucket (only ever one this run created, once empty).
    /// Tried again like the clean-up when the server cannot be reached; its answer (such as
    /// `BucketNotEmpty`: another run's objects are in it) is final.
    fn delete_bucket(&self) -> io::Result<()> {
        let mut waits = CLEANUP_WAITS.iter();
        let mut try_ = 0;
        loop {
            let mut c = Client::on(&self.config, self.config.job_endpoint(try_));
            let answered = c.request(&self.config, "DELETE", None, &[], &[], None);
            match (answered, waits.next()) {
                (Ok(head), _) => return c.expect_ok(&head),
                (Err(_), Some(wait)) => std::thread::sleep(*wait),
                (Err(e), None) => return Err(e),
            }
            try_ += 1;
        }
    }

    /// Every key under the run's prefix, listed on `c`; in a bucket that keeps versions,
    /// every version and delete marker, each with its version id.
    fn list_all(&self, c: &mut Client) -> io::Result<Vec<(String, Option<String>)>> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        let versioned = c.versioning(&self.config)?.keeps_versions();
        loop {
            let next = if versioned {
                let page = c.versions_page(&self.config, token.as_deref(), 1000)?;
                keys.extend(page.entries.into_iter().map(|(k, v)| (k, Some(v))));
                page.next
            } else {
                let (page, next) = c.list_page(&self.config, token.as_deref(), 1000)?;
                keys.extend(page.into_iter().map(|k| (k, None)));
                next
            };
            match next {
                Some(t) => token = Some(t),
                None => return Ok(keys),
            }
        }
    }

    /// The bucket's versioning state.
    pub fn versioning(&self) -> io::Result<Versioning> {
        self.control.lock().unwrap().versioning(&self.config)
    }

    /// Turns versioning on in the bucket (only ever one this run created).
    pub fn enable_versioning(&self) -> io::Result<()> {
        self.control.lock().unwrap().enable_versioning(&self.config)
    }

    /// One try of the clean-up on fresh connections to endpoint `endpoint` and the workers'
    /// endpoints: list, delete the keys and abort the uploads with `threads` connections, list
    /// again. Returns how many objects it removed, and what was still there (or the error).
    fn remove_once(&self, threads: usize, endpoint: usize) -> (u64, Result<(), Leftover>) {
        let config = &self.config;
        // Never the control connection: it sat idle through the phase.
        let mut c = Client::on(config, endpoint);
        let failed = |objects, uploads, error| Leftover {
            objects,
            uploads,
            error,
        };
        let keys = match self.list_all(&mut c) {
            Ok(k) => k,
            // The bucket is gone (another run that made it removed it once empty): so is
            // everything of this run's that was in it.
            Err(e) if no_such_bucket(&e) => return (0, Ok(())),
            Err(e) => return (0, Err(failed(None, None, e))),
        };
        let uploads = match c.list_uploads(config) {
            Ok(u) => u,
            Err(e) => return (0, Err(failed(Some(keys.len() as u64), None, e))),
        };
        if keys.is_empty() && uploads.is_empty() {
            return (0, Ok(()));
        }
        // Each key with what it deletes: the object, a version of it, or an upload.
        let jobs: Vec<(&str, Option<(&str, &str)>)> = keys
            .iter()
            .map(|(k, version)| (k.as_str(), version.as_deref().map(|v| ("versionId", v))))
            .chain(
                uploads
                    .iter()
                    .map(|(k, id)| (k.as_str(), Some(("uploadId", id.as_str())))),
            )
            .collect();
        let threads = threads.clamp(1, 32).min(jobs.len());
        let chunk = jobs.len().div_ceil(threads);
        let done: Vec<(u64, Option<io::Error>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .chunks(chunk)
                .enumerate()
                .map(|(i, jobs)| {
                    scope.spawn(move || {
                        let mut c = Client::on(config, config.job_endpoint(endpoint + i));
                        let mut removed = 0;
                        for &(key, what) in jobs {
                            // The first failure ends this share: a dead server fails them all,
                            // each after the timeout.
                            if let Err(e) = c.delete(config, key, what) {
                                return (removed, Some(e));
                            }
                            removed += u64::from(what.is_none_or(|(q, _)| q != "uploadId"));
                        }
                        (removed, None)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("cleanup thread"))
                .collect()
        });
        let removed = done.iter().map(|(n, _)| n).sum();
        match done.into_iter().find_map(|(_, e)| e) {
            None => (removed, Ok(())),
            Some(e) => {
                // What is left, as far as one more listing can tell.
                let objects = self.list_all(&mut c).ok().map(|k| k.len() as u64);
                let uploads = c.list_uploads(config).ok().map(|u| u.len() as u64);
                (removed, Err(failed(objects, uploads, e)))
            }
        }
    }

    /// Deletes every object under the run's prefix and aborts the run's unfinished multipart
    /// uploads, with `threads` connections; tried again, on fresh connections and each time
    /// through the next endpoint, until a listing finds nothing left or [`CLEANUP_TRIES`] have
    /// failed. Returns how many objects it removed.
    fn remove_all(&self, threads: usize) -> Result<u64, Leftover> {
        let mut removed = 0;
        let mut waits = CLEANUP_WAITS.iter();
        let mut try_ = 0;
        loop {
            let (n, result) = self.remove_once(threads, self.config.job_endpoint(try_));
            removed += n;
            match result {
                // Removed all there was: list again, to be sure nothing is left.
                Ok(()) if n > 0 && try_ < 2 * CLEANUP_TRIES => {}
                Ok(()) => return Ok(removed),
                Err(left) => match waits.next() {
                    Some(wait) => std::thread::sleep(*wait),
                    None => return Err(left),
                },
            }
            try_ += 1;
        }
    }
}

/// Whether `e` is S3's answer about a bucket that does not exist.
fn no_such_bucket(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<HttpError>())
        .is_some_and(|h| h.status == 404 && h.code.as_deref() == Some("NoSuchBucket"))
}

/// Whether `e` is S3's answer to creating a bucket the caller already owns.
fn bucket_is_callers(e: &io::Error) -> bool {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<HttpError>())
        .is_some_and(|h| h.status == 409 && h.code.as_deref() == Some("BucketAlreadyOwnedByYou"))
}

/// How long the clean-up waits before each try after a failed one: [`CLEANUP_TRIES`] tries in
/// about 6 s, for a server that restarts or sheds load.
const CLEANUP_WAITS: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_millis(1500),
    Duration::from_secs(4),
];

/// Tries of the clean-up before it gives up and says what remains.
pub const CLEANUP_TRIES: usize = CLEANUP_WAITS.len() + 1;

impl Target for S3Target {
    fn capabilities(&self) -> Capabilities {
        let caps = Capabilities::of(&[
            Capability::RangedReads,
            Capability::Listing,
            Capability::Multipart,
        ]);
        match self.config.versions {
            true => caps.with(Capability::Versions),
            false => caps,
        }
    }

    fn prepare(&self) -> io::Result<bool> {
        self.ensure_bucket()
    }

    fn remove_run_objects(&self, threads: usize) -> Result<u64, Leftover> {
        self.remove_all(threads)
    }

    fn remove_place(&self) -> io::Result<()> {
        self.delete_bucket()
    }

    fn endpoint_of(&self, worker: usize) -> Option<&str> {
        Some(self.endpoint(worker))
    }

    /// Each endpoint's counters when it is an iobm gateway (its answer to a HEAD of the bucket
    /// says so); None for other servers and when it cannot tell.
    fn server_counters(&self) -> Vec<Option<String>> {
        (0..self.config.endpoints.len())
            .map(|endpoint| {
                let mut c = Client::on(&self.config, endpoint);
                let head = c.request(&self.config, "HEAD", None, &[], &[], None).ok()?;
                c.conn.skip_body(&head).ok()?;
                if !head.iobm_gateway {
                    return None;
                }
                c.gateway_counters(&self.config).ok().flatten()
            })
            .collect()
    }

    /// S3 objects are written and read whole, by the object operations.
    fn open(&self, _name: &str, _options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        Err(iobm_target::Unsupported(Capability::Files).into())
    }

    fn len(&self, name: &str) -> io::Result<u64> {
        let key = format!("{}{name}", self.config.prefix);
        self.control.lock().unwrap().head(&self.config, &key, &[])
    }

    fn objects(&self, worker: usize) -> io::Result<Box<dyn Objects + '_>> {
        Ok(Box::new(S3Session {
            config: &self.config,
            client: Client::new(&self.config, worker),
            helpers: Vec::new(),
            worker,
            key: String::new(),
            range: String::new(),
            batch: String::new(),
            checksum: String::new(),
        }))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let key = format!("{}{name}", self.config.prefix);
        let mut c = self.control.lock().unwrap();
        let head = c.request(&self.config, "DELETE", Some(&key), &[], &[], None)?;
        c.expect_ok(&head)
    }
}

#[cfg(test)]
mod tests;
