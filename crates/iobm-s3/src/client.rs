//! One signed HTTP/1.1 connection to an endpoint, with its signer and reused buffers: a
//! request is written in one `writev` (head, then the body's pieces), its answer parsed, and an
//! error answer turned into an error that names the S3 code.

use crate::http::{Connection, Head};
use crate::sigv4::{self, uri_encode, Signer, EMPTY_SHA256, UNSIGNED_PAYLOAD};
use crate::{xml, PayloadSigning, S3Config};
use iobm_target::{Body, HttpError};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io::{self, IoSlice};

/// What a request sends.
pub(crate) enum Payload<'a, 'b> {
    Body(&'a Body<'b>, u64, u64),
    Bytes(&'a [u8]),
}

/// One connection with its signer and reused buffers.
pub(crate) struct Client {
    pub(crate) endpoint: usize,
    pub(crate) conn: Connection,
    signer: Option<Signer>,
    head: Vec<u8>,
    path: String,
    query: String,
    /// The payload hash of the request being built.
    hash: String,
    /// The `x-amz-date` of the current second, and that second.
    date: (u64, String),
    authorization: String,
}

impl Client {
    /// The connection of this process's worker `worker`, to its endpoint.
    pub(crate) fn new(config: &S3Config, worker: usize) -> Client {
        Client::on(config, config.endpoint_of(worker))
    }

    /// A connection to endpoint `endpoint`.
    pub(crate) fn on(config: &S3Config, endpoint: usize) -> Client {
        Client {
            endpoint,
            conn: config.connection(endpoint),
            signer: config
                .credentials
                .clone()
                .map(|c| Signer::new(c, &config.region, "s3")),
            head: Vec::with_capacity(1024),
            path: String::with_capacity(256),
            query: String::with_capacity(256),
            hash: String::with_capacity(64),
            date: (0, String::new()),
            authorization: String::with_capacity(256),
        }
    }

    /// Sends one request and reads the response head. `query` pairs are sorted by name and
    /// not yet encoded; `headers` are extra lower-case headers, signed too.
    pub(crate) fn request(
        &mut self,
        config: &S3Config,
        method: &str,
        key: Option<&str>,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        payload: Option<Payload<'_, '_>>,
    ) -> io::Result<Head> {
        self.path.clear();
        self.path.push('/');
        uri_encode(&mut self.path, &config.bucket, false);
        if let Some(key) = key {
            self.path.push('/');
            uri_encode(&mut self.path, key, true);
        }
        self.send(config, method, query, headers, payload)
    }

    /// The counters of an iobm gateway (`GET /metrics`, signed, asking for text), or None when
    /// the endpoint does not answer them.
    pub(crate) fn gateway_counters(&mut self, config: &S3Config) -> io::Result<Option<String>> {
        self.path.clear();
        self.path.push_str("/metrics");
        let head = self.send(config, "GET", &[], &[("accept", "text/plain")], None)?;
        if head.status != 200 {
            self.conn.skip_body(&head)?;
            return Ok(None);
        }
        let body = self.conn.body_bytes(&head)?;
        Ok(String::from_utf8(body).ok())
    }

    /// Sends one request to `self.path` and reads the response head.
    fn send(
        &mut self,
        config: &S3Config,
        method: &str,
        query: &[(&str, &str)],
        headers: &[(&str, &str)],
        payload: Option<Payload<'_, '_>>,
    ) -> io::Result<Head> {
        self.encode_query(query);
        let len = self.hash_payload(config, payload.as_ref())?;
        // The date changes once a second: formatted then, not per request.
        let now = iobm_stats::time::unix_ns_now();
        if now / 1_000_000_000 != self.date.0 {
            self.date = (now / 1_000_000_000, iobm_stats::time::iso8601_basic(now));
        }
        self.write_head(config, method, headers, len);
        let is_head = method == "HEAD";
        match payload {
            None => self.conn.send(&self.head, &mut |_| Ok(()), is_head),
            Some(Payload::Bytes(b)) => {
                self.conn
                    .send(&self.head, &mut |f| f(&mut [IoSlice::new(b)]), is_head)
            }
            Some(Payload::Body(body, from, to)) => self.conn.send(
                &self.head,
                &mut |f| body.for_each_batch(from, to, f),
                is_head,
            ),
        }
    }

    /// `query` URI-encoded into `self.query`.
    fn encode_query(&mut self, query: &[(&str, &str)]) {
        self.query.clear();
        for (i, (k, v)) in query.iter().enumerate() {
            if i > 0 {
                self.query.push('&');
            }
            uri_encode(&mut self.query, k, false);
            self.query.push('=');
            uri_encode(&mut self.query, v, false);
        }
    }

    /// The payload's hash as the request carries it into `self.hash` (a body's, inside the
    /// operation's time, only where payloads are signed), and the payload's length.
    fn hash_payload(&mut self, config: &S3Config, payload: Option<&Payload>) -> io::Result<u64> {
        self.hash.clear();
        Ok(match payload {
            None => {
                self.hash.push_str(EMPTY_SHA256);
                0
            }
            Some(Payload::Bytes(b)) => {
                sigv4::push_hex(&mut self.hash, &Sha256::digest(b));
                b.len() as u64
            }
            Some(Payload::Body(body, from, to)) => {
                match config.payload {
                    PayloadSigning::Unsigned => self.hash.push_str(UNSIGNED_PAYLOAD),
                    PayloadSigning::Sha256 => {
                        let mut hasher = Sha256::new();
                        body.for_each_batch(*from, *to, &mut |slices| {
                            slices.iter().for_each(|s| hasher.update(&s[..]));
                            Ok(())
                        })?;
                        sigv4::push_hex(&mut self.hash, &hasher.finalize());
                    }
                }
                to - from
            }
        })
    }

    /// The request's head into `self.head`: its line, its headers and, where requests are
    /// signed, its authorization.
    fn write_head(&mut self, config: &S3Config, method: &str, headers: &[(&str, &str)], len: u64) {
        let host = config.endpoints[self.endpoint].host.as_str();
        let (hash, amz_date) = (self.hash.as_str(), self.date.1.as_str());
        let h = &mut self.head;
        h.clear();
        let _ = write!(
            StrWriter(h),
            "{method} {}{}{} HTTP/1.1\r\nhost: {host}\r\ncontent-length: {len}\r\n\
             x-amz-content-sha256: {hash}\r\nx-amz-date: {amz_date}\r\n",
            self.path,
            if self.query.is_empty() { "" } else { "?" },
            self.query,
        );
        for (name, value) in headers {
            let _ = write!(StrWriter(h), "{name}: {value}\r\n");
        }
        let token = (config.credentials.as_ref()).and_then(|c| c.session_token.as_deref());
        if let Some(token) = token {
            let _ = write!(StrWriter(h), "x-amz-security-token: {token}\r\n");
        }
        if config.new_connection_per_request {
            h.extend_from_slice(b"connection: close\r\n");
        }
        if self.sign(host, method, headers, token) {
            let _ = write!(
                StrWriter(&mut self.head),
                "authorization: {}\r\n",
                self.authorization
            );
        }
        self.head.extend_from_slice(b"\r\n");
    }

    /// The request's signature into `self.authorization`, the session `token` among the signed
    /// headers; false where requests are not signed.
    fn sign(
        &mut self,
        host: &str,
        method: &str,
        headers: &[(&str, &str)],
        token: Option<&str>,
    ) -> bool {
        let Some(signer) = &mut self.signer else {
            return false;
        };
        let (hash, amz_date) = (self.hash.as_str(), self.date.1.as_str());
        // At most one extra header is signed (range), and the session token; a fixed array,
        // sorted in place.
        let mut signed = [("", ""); 5];
        signed[..3].copy_from_slice(&[
            ("host", host),
            ("x-amz-content-sha256", hash),
            ("x-amz-date", amz_date),
        ]);
        let mut n = 3 + headers.len();
        assert!(n < signed.len(), "one extra signed header at most");
        signed[3..n].copy_from_slice(headers);
        if let Some(token) = token {
            signed[n] = ("x-amz-security-token", token);
            n += 1;
        }
        signed[..n].sort_unstable();
        self.authorization.clear();
        signer.sign(
            &mut self.authorization,
            method,
            &self.path,
            &self.query,
            &signed[..n],
            hash,
            amz_date,
        );
        true
    }

    /// The error an unexpected answer stands for, with the S3 code from its body.
    pub(crate) fn error(&mut self, head: &Head) -> io::Error {
        let body = self.conn.body_bytes(head).unwrap_or_default();
        let body = String::from_utf8_lossy(&body);
        HttpError {
            status: head.status,
            code: xml::text(&body, "Code"),
            message: xml::text(&body, "Message"),
            request_id: xml::text(&body, "RequestId"),
        }
        .into_io()
    }

    pub(crate) fn expect_ok(&mut self, head: &Head) -> io::Result<()> {
        if (200..300).contains(&head.status) {
            self.conn.skip_body(head).map(|_| ())
        } else {
            Err(self.error(head))
        }
    }

    /// The size of `key` (with `query`: of a version of it).
    pub(crate) fn head(
        &mut self,
        config: &S3Config,
        key: &str,
        query: &[(&str, &str)],
    ) -> io::Result<u64> {
        let head = self.request(config, "HEAD", Some(key), query, &[], None)?;
        if head.status != 200 {
            return Err(self.error(&head));
        }
        self.conn.skip_body(&head)?;
        head.content_length
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "HEAD without a length"))
    }

    /// One page of keys under the run prefix, and the token of the next page.
    pub(crate) fn list_page(
        &mut self,
        config: &S3Config,
        token: Option<&str>,
        max: u32,
    ) -> io::Result<(Vec<String>, Option<String>)> {
        let max = max.to_string();
        let mut query = vec![
            ("list-type", "2"),
            ("max-keys", max.as_str()),
            ("prefix", config.prefix.as_str()),
        ];
        if let Some(t) = token {
            query.insert(0, ("continuation-token", t));
        }
        let head = self.request(config, "GET", None, &query, &[], None)?;
        if head.status != 200 {
            return Err(self.error(&head));
        }
        let body = self.conn.body_bytes(&head)?;
        let body = String::from_utf8_lossy(&body);
        let keys: Vec<String> = xml::texts(&body, "Key").collect();
        let truncated = xml::text(&body, "IsTruncated").is_some_and(|t| t == "true");
        let next = xml::text(&body, "NextContinuationToken");
        Ok((keys, if truncated { next } else { None }))
    }

    /// Deletes `key`, or with `what` (`versionId` or `uploadId`, and its value) that version
    /// of it, or aborts that multipart upload of it; one already gone (404) is fine.
    pub(crate) fn delete(
        &mut self,
        config: &S3Config,
        key: &str,
        what: Option<(&str, &str)>,
    ) -> io::Result<()> {
        let query = what.map(|pair| [pair]);
        let query: &[(&str, &str)] = query.as_ref().map_or(&[], |q| &q[..]);
        let head = self.request(config, "DELETE", Some(key), query, &[], None)?;
        if head.status == 404 {
            return self.conn.skip_body(&head).map(|_| ());
        }
        self.expect_ok(&head)
    }

    /// The unfinished multipart uploads under the run prefix, as (key, upload id); none from a
    /// server that does not list them (an error answer; a failure to reach it is an error).
    pub(crate) fn list_uploads(&mut self, config: &S3Config) -> io::Result<Vec<(String, String)>> {
        let mut uploads = Vec::new();
        let mut markers: Option<(String, String)> = None;
        loop {
            // Sorted by name, as the signature wants them.
            let query: Vec<(&str, &str)> = match &markers {
                None => vec![("prefix", &config.prefix), ("uploads", "")],
                Some((key, id)) => vec![
                    ("key-marker", key),
                    ("prefix", &config.prefix),
                    ("upload-id-marker", id),
                    ("uploads", ""),
                ],
            };
            let head = self.request(config, "GET", None, &query, &[], None)?;
            if head.status != 200 {
                self.conn.skip_body(&head)?;
                return Ok(uploads);
            }
            let body = self.conn.body_bytes(&head)?;
            let body = String::from_utf8_lossy(&body);
            let each = body.split("<Upload>").skip(1);
            for upload in each.map(|u| u.split("</Upload>").next().unwrap_or_default()) {
                if let (Some(key), Some(id)) =
                    (xml::text(upload, "Key"), xml::text(upload, "UploadId"))
                {
                    uploads.push((key, id));
                }
            }
            let truncated = xml::text(&body, "IsTruncated").is_some_and(|t| t == "true");
            let next =
                xml::text(&body, "NextKeyMarker").zip(xml::text(&body, "NextUploadIdMarker"));
            match next {
                Some(m) if truncated && markers.as_ref() != Some(&m) => markers = Some(m),
                _ => return Ok(uploads),
            }
        }
    }

    pub(crate) fn put_part(
        &mut self,
        config: &S3Config,
        key: &str,
        upload_id: &str,
        number: u64,
        body: &Body<'_>,
        (from, to): (u64, u64),
    ) -> io::Result<String> {
        let n = number.to_string();
        let query = [("partNumber", n.as_str()), ("uploadId", upload_id)];
        let head = self.request(
            config,
            "PUT",
            Some(key),
            &query,
            &[],
            Some(Payload::Body(body, from, to)),
        )?;
        if head.status != 200 {
            return Err(self.error(&head));
        }
        self.conn.skip_body(&head)?;
        match self.conn.etag() {
            "" => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "part answer without ETag",
            )),
            etag => Ok(etag.to_string()),
        }
    }
}

/// `fmt::Write` into a byte vector.
struct StrWriter<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for StrWriter<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}
