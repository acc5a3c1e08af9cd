//! A blocking HTTP/1.1 client connection, one per worker: requests are written with `writev`
//! straight from the caller's slices, responses are parsed with `httparse`, and bodies are read
//! into one reused buffer and handed on without being kept. Keep-alive, `Content-Length`,
//! chunked and close-delimited bodies. A kept-alive connection the server closed while it sat
//! idle is replaced, as every HTTP client does: found closed before a request is sent, or
//! (idempotent requests only) failing before any byte of the answer arrived, the request goes
//! once more on a new connection, and [`Connection::reconnects`] counts it. Nothing else is
//! retried here.

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};
use std::io::{self, IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// TLS settings of a connection: the shared configuration and the server's name.
pub type Tls = (Arc<ClientConfig>, ServerName<'static>);

/// A plain or a TLS connection.
enum Stream {
    Plain(TcpStream),
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

/// rustls reports its own failures as `InvalidData` with a rustls error inside: name them TLS.
fn tls_error(e: io::Error) -> io::Error {
    let is_tls = e
        .get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
    if is_tls {
        io::Error::other(iobm_target::TlsError(e.to_string()))
    } else {
        e
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf).map_err(tls_error),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf).map_err(tls_error),
        }
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write_vectored(bufs),
            Stream::Tls(s) => s.write_vectored(bufs).map_err(tls_error),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush().map_err(tls_error),
        }
    }
}

/// Takes the request body, batch by batch, to a writer of slices.
pub type SendBody<'a> =
    dyn FnMut(&mut dyn FnMut(&mut [IoSlice<'_>]) -> io::Result<()>) -> io::Result<()> + 'a;

/// Size of a connection's receive buffer, and of the reads into it.
const BUF: usize = 256 << 10;
/// Largest response head accepted.
const MAX_HEAD: usize = 64 << 10;

/// The parts of a response head iobm uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Head {
    pub status: u16,
    pub content_length: Option<u64>,
    pub chunked: bool,
    /// The server closes the connection after this response.
    pub close: bool,
    /// The answer has no body whatever its headers say (HEAD, 204, 304).
    pub no_body: bool,
    /// The server says it is an iobm gateway (`x-iobm-gateway`), which counts where the bytes
    /// it served came from.
    pub iobm_gateway: bool,
}

/// How long a body is.
enum Framing {
    Length(u64),
    Chunked,
    UntilClose,
}

pub struct Connection {
    addr: SocketAddr,
    timeout: Duration,
    tls: Option<Tls>,
    stream: Option<Stream>,
    buf: Box<[u8]>,
    /// The `ETag` of the last answer (empty when it had none), in a reused buffer.
    etag: String,
    /// The `x-amz-version-id` of the last answer (empty when it had none), in a reused buffer.
    version: String,
    /// Received bytes not yet consumed: buf[start..end].
    start: usize,
    end: usize,
    /// When the last answer was read whole on a connection kept alive: the connection has sat
    /// idle since (None: no connection, or one in use).
    idle_since: Option<Instant>,
    /// Bytes of the current answer received so far.
    received: u64,
    /// Connections the server had closed while idle, replaced by new ones.
    reconnects: u64,
}

/// A connection idle for less than this is used without first checking that the server kept
/// it: a worker's back-to-back requests pay nothing for the check.
const IDLE_CHECK: Duration = Duration::from_millis(50);

/// Whether `e`, on a request that got no byte of its answer, says the server had closed the
/// connection (rather than refusing or failing the request).
fn closed_by_server(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::NotConnected
            | io::ErrorKind::UnexpectedEof
    )
}

/// Whether the request in `head` may be sent twice: every method but POST (S3's multipart
/// start and completion, batch deletes).
fn idempotent(head: &[u8]) -> bool {
    [&b"GET "[..], b"HEAD ", b"PUT ", b"DELETE "]
        .iter()
        .any(|m| head.starts_with(m))
}

fn timed_out(e: io::Error, timeout: Duration) -> io::Error {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => io::Error::new(
            io::ErrorKind::TimedOut,
            format!("no progress within {timeout:?}"),
        ),
        _ => e,
    }
}

fn closed() -> io::Error {
    io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the server closed the connection",
    )
}

fn bad(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("bad HTTP response: {what}"),
    )
}

impl Connection {
    pub fn new(addr: SocketAddr, timeout: Duration, tls: Option<Tls>) -> Connection {
        Connection {
            addr,
            timeout,
            tls,
            stream: None,
            etag: String::new(),
            version: String::new(),
            buf: vec![0; BUF].into_boxed_slice(),
            start: 0,
            end: 0,
            idle_since: None,
            received: 0,
            reconnects: 0,
        }
    }

    /// Connections found closed by the server while idle and replaced so far.
    pub fn reconnects(&self) -> u64 {
        self.reconnects
    }

    /// Drops a kept-alive connection that sat idle and that the server has closed meanwhile
    /// (an idle or header timeout): end of stream, an error, or (without TLS) an answer nobody
    /// asked for, such as a 408, waiting on the socket. A non-blocking peek, only after
    /// [`IDLE_CHECK`] of idleness.
    fn drop_if_closed(&mut self) {
        let idle = self.idle_since.is_some_and(|t| t.elapsed() >= IDLE_CHECK);
        let (socket, tls) = match &self.stream {
            Some(Stream::Plain(s)) if idle => (s, false),
            Some(Stream::Tls(s)) if idle => (&s.sock, true),
            _ => return,
        };
        let mut byte = [0u8; 1];
        let peeked = socket
            .set_nonblocking(true)
            .and_then(|_| socket.peek(&mut byte));
        let alive = match peeked {
            // TLS records may arrive unasked (session tickets): rustls reads them with the
            // next answer; a close alert among them is caught by the retry.
            Ok(1..) => tls,
            Ok(0) => false,
            Err(e) => e.kind() == io::ErrorKind::WouldBlock,
        } && socket.set_nonblocking(false).is_ok();
        if !alive {
            self.reset();
            self.reconnects += 1;
        }
    }

    fn stream(&mut self) -> io::Result<&mut Stream> {
        if self.stream.is_none() {
            let stream = TcpStream::connect_timeout(&self.addr, self.timeout)
                .map_err(|e| timed_out(e, self.timeout))?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(self.timeout))?;
            stream.set_write_timeout(Some(self.timeout))?;
            self.stream = Some(match &self.tls {
                None => Stream::Plain(stream),
                Some((config, name)) => {
                    let conn = ClientConnection::new(config.clone(), name.clone())
                        .map_err(|e| io::Error::other(iobm_target::TlsError(e.to_string())))?;
                    Stream::Tls(Box::new(StreamOwned::new(conn, stream)))
                }
            });
            self.start = 0;
            self.end = 0;
        }
        Ok(self.stream.as_mut().expect("just connected"))
    }

    /// Drops the connection (after an error or a `Connection: close`); the next request
    /// connects anew.
    pub fn reset(&mut self) {
        self.stream = None;
        self.start = 0;
        self.end = 0;
        self.idle_since = None;
    }

    /// Sends a request head, then `body` as batches of slices, and reads the response head.
    /// On any error the connection is dropped. A kept-alive connection the server closed while
    /// idle is replaced first, or, for an idempotent request that got no byte of its answer,
    /// afterwards, and the request sent once more (`body` is asked for its batches again).
    pub fn send(
        &mut self,
        head: &[u8],
        body: &mut SendBody<'_>,
        is_head_request: bool,
    ) -> io::Result<Head> {
        self.drop_if_closed();
        let reused = self.stream.is_some();
        self.idle_since = None;
        let mut result = self.send_inner(head, body, is_head_request);
        let stale = match &result {
            Err(e) => reused && self.received == 0 && closed_by_server(e) && idempotent(head),
            Ok(_) => false,
        };
        if stale {
            self.reset();
            self.reconnects += 1;
            result = self.send_inner(head, body, is_head_request);
        }
        if result.is_err() {
            self.reset();
        }
        result
    }

    fn send_inner(
        &mut self,
        head: &[u8],
        body: &mut SendBody<'_>,
        is_head_request: bool,
    ) -> io::Result<Head> {
        let timeout = self.timeout;
        let closing = head.windows(21).any(|w| w == b"\r\nconnection: close\r\n");
        self.received = 0;
        let stream = self.stream()?;
        // The head goes out with the body's first batch, in one writev.
        let mut head_pending = Some(head);
        let mut head_sent = false;
        {
            let mut write_all = |slices: &mut [IoSlice<'_>]| -> io::Result<()> {
                let mut with_head: [IoSlice<'_>; 1 + 2 * iobm_target::objects::BATCH_CHUNKS] =
                    [IoSlice::new(&[]); 1 + 2 * iobm_target::objects::BATCH_CHUNKS];
                let mut n = 0;
                if let Some(h) = head_pending.take() {
                    with_head[0] = IoSlice::new(h);
                    n = 1;
                    head_sent = true;
                }
                for s in slices.iter() {
                    with_head[n] = *s;
                    n += 1;
                }
                let mut slices = &mut with_head[..n];
                while !slices.is_empty() {
                    let written = stream
                        .write_vectored(slices)
                        .map_err(|e| timed_out(e, timeout))?;
                    if written == 0 {
                        return Err(io::ErrorKind::WriteZero.into());
                    }
                    IoSlice::advance_slices(&mut slices, written);
                }
                Ok(())
            };
            body(&mut write_all)?;
        }
        if !head_sent {
            stream.write_all(head).map_err(|e| timed_out(e, timeout))?;
        }
        stream.flush().map_err(|e| timed_out(e, timeout))?;
        let mut head = self.read_head()?;
        // A request that asked to close the connection gets a closing answer, whatever it says.
        head.close |= closing;
        head.no_body = is_head_request || head.status == 204 || head.status == 304;
        Ok(head)
    }

    /// Reads more bytes into the buffer (compacting it first when full).
    fn fill(&mut self) -> io::Result<usize> {
        if self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let timeout = self.timeout;
        let stream = self.stream.as_mut().ok_or_else(closed)?;
        let n = stream
            .read(&mut self.buf[self.end..])
            .map_err(|e| timed_out(e, timeout))?;
        self.end += n;
        self.received += n as u64;
        Ok(n)
    }

    fn read_head(&mut self) -> io::Result<Head> {
        loop {
            let mut headers = [httparse::EMPTY_HEADER; 48];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&self.buf[self.start..self.end]) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = response.code.unwrap_or(0);
                    if (100..200).contains(&status) {
                        self.start += len;
                        continue;
                    }
                    self.etag.clear();
                    self.version.clear();
                    let mut head = Head {
                        status,
                        close: response.version == Some(0),
                        ..Head::default()
                    };
                    for h in response.headers.iter() {
                        let value = std::str::from_utf8(h.value).map_err(|_| bad("header"))?;
                        let value = value.trim();
                        if h.name.eq_ignore_ascii_case("content-length") {
                            head.content_length =
                                Some(value.parse().map_err(|_| bad("content-length"))?);
                        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                            head.chunked = value.eq_ignore_ascii_case("chunked");
                        } else if h.name.eq_ignore_ascii_case("connection") {
                            head.close = value.eq_ignore_ascii_case("close");
                        } else if h.name.eq_ignore_ascii_case("x-iobm-gateway") {
                            head.iobm_gateway = true;
                        } else if h.name.eq_ignore_ascii_case("etag") {
                            self.etag.clear();
                            self.etag.push_str(value);
                        } else if h.name.eq_ignore_ascii_case("x-amz-version-id") {
                            self.version.push_str(value);
                        }
                    }
                    self.start += len;
                    return Ok(head);
                }
                Ok(httparse::Status::Partial) => {
                    if self.end - self.start >= MAX_HEAD {
                        return Err(bad("head too long"));
                    }
                    if self.fill()? == 0 {
                        return Err(closed());
                    }
                }
                Err(e) => return Err(bad(&e.to_string())),
            }
        }
    }

    /// Reads the body of the response with head `head`, handing it to `sink` piece by piece;
    /// returns its length. The connection is dropped on errors and after `Connection: close`.
    pub fn read_body(&mut self, head: &Head, sink: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let framing = if head.no_body {
            Framing::Length(0)
        } else if head.chunked {
            Framing::Chunked
        } else if let Some(len) = head.content_length {
            Framing::Length(len)
        } else {
            Framing::UntilClose
        };
        let result = match framing {
            Framing::Length(len) => self.read_exact_into(len, sink),
            Framing::Chunked => self.read_chunked(sink),
            Framing::UntilClose => self.read_until_close(sink),
        };
        if result.is_err() || head.close || matches!(framing, Framing::UntilClose) {
            self.reset();
        } else if self.stream.is_some() {
            self.idle_since = Some(Instant::now());
        }
        result
    }

    /// The `ETag` of the last answer; empty when it had none.
    pub fn etag(&self) -> &str {
        &self.etag
    }

    /// The `x-amz-version-id` of the last answer; empty when it had none.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Reads and forgets a body (of an answer whose body iobm does not need).
    pub fn skip_body(&mut self, head: &Head) -> io::Result<u64> {
        self.read_body(head, &mut |_| {})
    }

    /// Reads a small body into a vector (XML answers).
    pub fn body_bytes(&mut self, head: &Head) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_body(head, &mut |b| out.extend_from_slice(b))?;
        Ok(out)
    }

    fn read_exact_into(&mut self, len: u64, sink: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let mut left = len;
        while left > 0 {
            if self.start == self.end {
                self.start = 0;
                self.end = 0;
                if self.fill()? == 0 {
                    return Err(closed());
                }
            }
            let n = ((self.end - self.start) as u64).min(left) as usize;
            sink(&self.buf[self.start..self.start + n]);
            self.start += n;
            left -= n as u64;
        }
        Ok(len)
    }

    fn read_until_close(&mut self, sink: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let mut total = 0;
        loop {
            if self.start < self.end {
                sink(&self.buf[self.start..self.end]);
                total += (self.end - self.start) as u64;
            }
            self.start = 0;
            self.end = 0;
            if self.fill()? == 0 {
                return Ok(total);
            }
        }
    }

    /// One CRLF-terminated line (chunk sizes, trailers), without the CRLF.
    fn line(&mut self) -> io::Result<String> {
        loop {
            let pending = &self.buf[self.start..self.end];
            if let Some(i) = pending.windows(2).position(|w| w == b"\r\n") {
                let line = String::from_utf8_lossy(&pending[..i]).into_owned();
                self.start += i + 2;
                return Ok(line);
            }
            if self.end - self.start >= MAX_HEAD {
                return Err(bad("chunk line too long"));
            }
            if self.fill()? == 0 {
                return Err(closed());
            }
        }
    }

    fn read_chunked(&mut self, sink: &mut dyn FnMut(&[u8])) -> io::Result<u64> {
        let mut total = 0;
        loop {
            let line = self.line()?;
            let size = line.split(';').next().unwrap_or("").trim();
            let size = u64::from_str_radix(size, 16).map_err(|_| bad("chunk size"))?;
            if size == 0 {
                // Trailers, up to an empty line.
                while !self.line()?.is_empty() {}
                return Ok(total);
            }
            total += self.read_exact_into(size, sink)?;
            if !self.line()?.is_empty() {
                return Err(bad("chunk not followed by CRLF"));
            }
        }
    }
}

#[cfg(test)]
mod tests;
