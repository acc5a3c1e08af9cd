//! iobm-s3: the S3 target. Each worker owns a blocking HTTP/1.1 connection (several for
//! multipart uploads) to one of the endpoints; requests are signed with SigV4 in headers, with
//! `UNSIGNED-PAYLOAD` or the body's SHA-256; bodies go out from the shared data pool with
//! `writev` and come back into one reused buffer. Nothing is retried here: the engine counts
//! every failure.

mod client;
pub mod http;
pub mod sigv4;
pub mod tls;
pub mod xml;

use client::{Client, Payload};
use http::Connection;
use iobm_target::{
    Body, Capabilities, Handle, HttpError, Leftover, ListPage, Objects, OpenOptions, Target,
};
use sigv4::Credentials;
use std::fmt::Write as _;
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

    /// Every key under the run's prefix, listed on `c`.
    fn list_all(&self, c: &mut Client) -> io::Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let (page, next) = c.list_page(&self.config, token.as_deref(), 1000)?;
            keys.extend(page);
            match next {
                Some(t) => token = Some(t),
                None => return Ok(keys),
            }
        }
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
        let jobs: Vec<(&str, Option<&str>)> = keys
            .iter()
            .map(|k| (k.as_str(), None))
            .chain(
                uploads
                    .iter()
                    .map(|(k, id)| (k.as_str(), Some(id.as_str()))),
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
                        for &(key, upload) in jobs {
                            // The first failure ends this share: a dead server fails them all,
                            // each after the timeout.
                            if let Err(e) = c.delete(config, key, upload) {
                                return (removed, Some(e));
                            }
                            removed += u64::from(upload.is_none());
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
        Capabilities::default()
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

    fn open(&self, name: &str, _options: OpenOptions) -> io::Result<Box<dyn Handle>> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("{name}: S3 objects are written and read whole (use the object operations)"),
        ))
    }

    fn len(&self, name: &str) -> io::Result<u64> {
        let key = format!("{}{name}", self.config.prefix);
        self.control.lock().unwrap().head(&self.config, &key)
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
        }))
    }

    fn remove(&self, name: &str) -> io::Result<()> {
        let key = format!("{}{name}", self.config.prefix);
        let mut c = self.control.lock().unwrap();
        let head = c.request(&self.config, "DELETE", Some(&key), &[], &[], None)?;
        c.expect_ok(&head)
    }
}

/// A worker's object session: its connection, and helpers for multipart uploads.
struct S3Session<'a> {
    config: &'a S3Config,
    client: Client,
    helpers: Vec<Client>,
    worker: usize,
    /// The full key of the current operation (reused).
    key: String,
    /// The `Range` header value of the current GET (reused).
    range: String,
    /// The DeleteObjects document of the current batch (reused).
    batch: String,
}

impl S3Session<'_> {
    /// Runs `f` with the client and the full key of object `name`, built in a reused buffer.
    fn keyed<R>(&mut self, name: &str, f: impl FnOnce(&mut Client, &S3Config, &str) -> R) -> R {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push_str(&self.config.prefix);
        key.push_str(name);
        let result = f(&mut self.client, self.config, &key);
        self.key = key;
        result
    }
}

impl Objects for S3Session<'_> {
    fn put(&mut self, name: &str, body: &Body<'_>) -> io::Result<()> {
        self.keyed(name, |c, config, key| {
            let payload = Payload::Body(body, 0, body.len());
            let head = c.request(config, "PUT", Some(key), &[], &[], Some(payload))?;
            c.expect_ok(&head)
        })
    }

    fn last_etag(&self) -> Option<&str> {
        Some(self.client.conn.etag().trim_matches('"')).filter(|e| !e.is_empty())
    }

    fn get(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        let mut range_value = std::mem::take(&mut self.range);
        range_value.clear();
        if let Some((first, last)) = range {
            let _ = write!(range_value, "bytes={first}-{last}");
        }
        let range_header = [("range", range_value.as_str())];
        let headers: &[(&str, &str)] = if range.is_some() { &range_header } else { &[] };
        let result = self.keyed(name, |c, config, key| {
            let head = c.request(config, "GET", Some(key), &[], headers, None)?;
            if head.status != 200 && head.status != 206 {
                return Err(c.error(&head));
            }
            sink(&[]);
            c.conn.read_body(&head, sink)
        });
        self.range = range_value;
        result
    }

    fn head(&mut self, name: &str) -> io::Result<u64> {
        self.keyed(name, |c, config, key| c.head(config, key))
    }

    fn delete(&mut self, name: &str) -> io::Result<()> {
        self.keyed(name, |c, config, key| {
            let head = c.request(config, "DELETE", Some(key), &[], &[], None)?;
            c.expect_ok(&head)
        })
    }

    fn delete_batch(&mut self, names: &[String]) -> io::Result<u64> {
        self.batch.clear();
        self.batch.push_str("<Delete><Quiet>true</Quiet>");
        for name in names {
            let key = xml::escape(&format!("{}{name}", self.config.prefix));
            let _ = write!(self.batch, "<Object><Key>{key}</Key></Object>");
        }
        self.batch.push_str("</Delete>");
        // S3 requires the document's MD5.
        let md5 = <md5::Md5 as md5::Digest>::digest(self.batch.as_bytes());
        let md5 = sigv4::base64(&md5);
        let c = &mut self.client;
        let head = c.request(
            self.config,
            "POST",
            None,
            &[("delete", "")],
            &[("content-md5", md5.as_str())],
            Some(Payload::Bytes(self.batch.as_bytes())),
        )?;
        if head.status != 200 {
            return Err(c.error(&head));
        }
        // Quiet: the answer lists only the keys that were not deleted.
        let answer = c.conn.body_bytes(&head)?;
        let answer = String::from_utf8_lossy(&answer);
        let failed = xml::texts(&answer, "Error").count() as u64;
        if failed > 0 {
            return Err(HttpError {
                status: 200,
                code: xml::text(&answer, "Code"),
                message: Some(format!(
                    "{failed} of {} keys not deleted; first: {}",
                    names.len(),
                    xml::text(&answer, "Message").unwrap_or_default()
                )),
                request_id: None,
            }
            .into_io());
        }
        Ok(names.len() as u64)
    }

    fn list(&mut self, after: Option<&str>, max: u32) -> io::Result<ListPage> {
        let (keys, next) = self.client.list_page(self.config, after, max)?;
        Ok(ListPage {
            keys: keys.len() as u64,
            next,
        })
    }

    fn multipart(
        &mut self,
        name: &str,
        body: &Body<'_>,
        part_size: u64,
        concurrency: usize,
    ) -> io::Result<()> {
        let key = format!("{}{name}", self.config.prefix);
        let config = self.config;
        let head =
            self.client
                .request(config, "POST", Some(&key), &[("uploads", "")], &[], None)?;
        if head.status != 200 {
            return Err(self.client.error(&head));
        }
        let answer = String::from_utf8_lossy(&self.client.conn.body_bytes(&head)?).into_owned();
        let upload_id = xml::text(&answer, "UploadId").ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "no UploadId in the answer")
        })?;
        let parts = body.len().div_ceil(part_size).max(1);
        let lanes = concurrency.clamp(1, parts as usize);
        while self.helpers.len() < lanes - 1 {
            let index = self.worker + self.helpers.len() + 1;
            let mut helper = Client::new(config, index);
            // Helpers talk to the worker's own endpoint.
            helper.endpoint = self.client.endpoint;
            helper.conn = config.connection(helper.endpoint);
            self.helpers.push(helper);
        }
        let part_range = |p: u64| (p * part_size, ((p + 1) * part_size).min(body.len()));
        let lane = |client: &mut Client, first: u64| -> io::Result<Vec<(u64, String)>> {
            let mut etags = Vec::new();
            let mut p = first;
            while p < parts {
                let (from, to) = part_range(p);
                etags.push((
                    p + 1,
                    client.put_part(config, &key, &upload_id, p + 1, body, (from, to))?,
                ));
                p += lanes as u64;
            }
            Ok(etags)
        };
        let (client, helpers) = (&mut self.client, &mut self.helpers[..lanes - 1]);
        let results: Vec<io::Result<Vec<(u64, String)>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, h)| scope.spawn(move || lane(h, i as u64 + 1)))
                .collect();
            let mut results = vec![lane(client, 0)];
            results.extend(handles.into_iter().map(|h| h.join().expect("part thread")));
            results
        });
        let mut etags = Vec::with_capacity(parts as usize);
        let mut failure = None;
        for r in results {
            match r {
                Ok(e) => etags.extend(e),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        let query = [("uploadId", upload_id.as_str())];
        if let Some(e) = failure {
            // Best effort: leave no upload behind.
            if let Ok(head) = self
                .client
                .request(config, "DELETE", Some(&key), &query, &[], None)
            {
                let _ = self.client.conn.skip_body(&head);
            }
            return Err(e);
        }
        etags.sort_unstable();
        let mut complete = String::from("<CompleteMultipartUpload>");
        for (n, etag) in &etags {
            let _ = write!(
                complete,
                "<Part><PartNumber>{n}</PartNumber><ETag>{}</ETag></Part>",
                xml::escape(etag)
            );
        }
        complete.push_str("</CompleteMultipartUpload>");
        let head = self.client.request(
            config,
            "POST",
            Some(&key),
            &query,
            &[],
            Some(Payload::Bytes(complete.as_bytes())),
        )?;
        if head.status != 200 {
            return Err(self.client.error(&head));
        }
        // S3 may answer 200 and put the error in the body.
        let answer = self.client.conn.body_bytes(&head)?;
        let answer = String::from_utf8_lossy(&answer);
        if answer.contains("<Error>") {
            return Err(HttpError {
                status: 200,
                code: xml::text(&answer, "Code"),
                message: xml::text(&answer, "Message"),
                request_id: xml::text(&answer, "RequestId"),
            }
            .into_io());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A server answering each request, on whatever connection, with the next of `answers`
    /// (one request at a time).
    fn answering(answers: Vec<String>) -> S3Config {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let answers = Arc::new(Mutex::new(std::collections::VecDeque::from(answers)));
        std::thread::spawn(move || {
            for s in listener.incoming() {
                let (mut s, answers) = (s.unwrap(), answers.clone());
                std::thread::spawn(move || loop {
                    let mut got = Vec::new();
                    let mut b = [0u8; 4096];
                    while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut b) {
                            Ok(0) | Err(_) => return,
                            Ok(n) => got.extend_from_slice(&b[..n]),
                        }
                    }
                    let Some(answer) = answers.lock().unwrap().pop_front() else {
                        return;
                    };
                    s.write_all(answer.as_bytes()).unwrap();
                });
            }
        });
        S3Config {
            endpoints: vec![Endpoint::parse(&format!("http://{addr}")).unwrap()],
            bucket: "b".into(),
            prefix: "p/".into(),
            credentials: None,
            region: "us-east-1".into(),
            payload: PayloadSigning::Unsigned,
            timeout: Duration::from_secs(5),
            new_connection_per_request: false,
            first_worker: 0,
            tls: None,
        }
    }

    fn error_answer(status: &str, code: &str) -> String {
        let body = format!("<Error><Code>{code}</Code><Message>m</Message></Error>");
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    #[test]
    fn a_bucket_made_meanwhile_by_the_same_account_is_used_and_not_ours() {
        // Another client created it between this one's HEAD and PUT.
        let missing = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_string();
        let config = answering(vec![
            missing.clone(),
            error_answer("409 Conflict", "BucketAlreadyOwnedByYou"),
        ]);
        assert!(
            !S3Target::new(config).prepare().unwrap(),
            "not created here"
        );
        // Someone else's is not to be used.
        let config = answering(vec![
            missing,
            error_answer("409 Conflict", "BucketAlreadyExists"),
        ]);
        let err = S3Target::new(config).prepare().unwrap_err();
        assert_eq!(
            iobm_target::error_kind(&err),
            "HTTP 409 BucketAlreadyExists"
        );
    }

    fn ok(body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    #[test]
    fn the_clean_up_lists_again_and_a_bucket_gone_meanwhile_leaves_nothing() {
        let listing = "<ListBucketResult><Contents><Key>p/a</Key></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
        let config = answering(vec![
            ok(listing),
            error_answer("501 Not Implemented", "NotImplemented"),
            "HTTP/1.1 204 No Content\r\n\r\n".into(),
            // The run that made the bucket removed it once this run's objects were gone.
            error_answer("404 Not Found", "NoSuchBucket"),
        ]);
        assert_eq!(S3Target::new(config).remove_run_objects(1).unwrap(), 1);
    }

    #[test]
    fn a_clean_up_that_keeps_failing_says_what_is_left() {
        let listing = "<ListBucketResult><Contents><Key>p/a</Key></Contents><Contents><Key>p/b</Key></Contents><IsTruncated>false</IsTruncated></ListBucketResult>";
        let uploads = "<ListMultipartUploadsResult><Upload><Key>p/c</Key><UploadId>u1</UploadId></Upload><IsTruncated>false</IsTruncated></ListMultipartUploadsResult>";
        let denied = error_answer("403 Forbidden", "AccessDenied");
        let mut answers = Vec::new();
        for _ in 0..CLEANUP_TRIES {
            // Listed, the first DELETE refused, listed again to count what is left.
            answers.extend([ok(listing), ok(uploads), denied.clone()]);
            answers.extend([ok(listing), ok(uploads)]);
        }
        let left = S3Target::new(answering(answers))
            .remove_run_objects(1)
            .unwrap_err();
        assert_eq!((left.objects, left.uploads), (Some(2), Some(1)));
        assert_eq!(
            iobm_target::error_kind(&left.error),
            "HTTP 403 AccessDenied"
        );
    }

    #[test]
    fn endpoints_parse_or_say_why_not() {
        let e = Endpoint::parse("http://127.0.0.1:9000/").unwrap();
        assert_eq!(
            (e.url.as_str(), e.host.as_str()),
            ("http://127.0.0.1:9000", "127.0.0.1:9000")
        );
        assert_eq!(e.addr.port(), 9000);
        assert_eq!(Endpoint::parse("http://localhost").unwrap().addr.port(), 80);
        assert!(Endpoint::parse("https://x:1")
            .unwrap_err()
            .contains("https"));
        assert!(Endpoint::parse("ftp://x")
            .unwrap_err()
            .contains("not an http"));
        assert!(Endpoint::parse("http://x:1/bucket")
            .unwrap_err()
            .contains("path-style"));
    }
}
