//! An aws-chunked body (`x-amz-content-sha256: STREAMING-...`) must end with its final, empty
//! chunk: s3s takes an end of the body before it as the end of the object, so a body cut
//! between chunks would be stored short with every signature it carried checked. The body is
//! passed through [`FinalChunk`], which follows the chunk framing (sizes only, the data is
//! skipped, not copied) and fails the body at its end if no empty chunk came.

use crate::body_rate::Metered;
use bytes::Bytes;
use futures::Stream;
use hyper::body::Body as _;
use hyper::HeaderMap;
use s3s::stream::{ByteStream, RemainingLength};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Longest chunk header line taken (`SIZE;chunk-signature=` and 64 hex digits fit easily).
const MAX_HEADER_LINE: usize = 4096;

/// Whether a request's body is aws-chunked.
pub fn wanted(headers: &HeaderMap) -> bool {
    headers
        .get("x-amz-content-sha256")
        .is_some_and(|v| v.as_bytes().starts_with(b"STREAMING-"))
}

/// Where the framing is.
#[derive(Debug, Clone, PartialEq, Eq)]
enum State {
    /// Reading a chunk's header line (what is read of it so far).
    Header(Vec<u8>),
    /// Skipping a chunk's data and the CRLF after it: bytes left.
    Data(u64),
    /// The final chunk was seen: trailers, if any, follow.
    Done,
    /// The framing is broken: s3s refuses such a body itself.
    Broken,
}

/// Follows the framing of an aws-chunked body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framing(State);

impl Default for Framing {
    fn default() -> Self {
        Framing(State::Header(Vec::new()))
    }
}

impl Framing {
    /// Takes the next bytes of the body.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match &mut self.0 {
                State::Done | State::Broken => return,
                State::Data(left) => {
                    let n = (*left).min(bytes.len() as u64);
                    *left -= n;
                    bytes = &bytes[n as usize..];
                    if *left == 0 {
                        self.0 = State::Header(Vec::new());
                    }
                }
                State::Header(line) => {
                    let end = bytes.iter().position(|&b| b == b'\n');
                    let take = end.map_or(bytes.len(), |i| i + 1);
                    line.extend_from_slice(&bytes[..take]);
                    bytes = &bytes[take..];
                    if line.len() > MAX_HEADER_LINE {
                        self.0 = State::Broken;
                    } else if end.is_some() {
                        self.0 = Self::after_header(line);
                    }
                }
            }
        }
    }

    /// What follows a whole header line: its chunk's data (and CRLF), or the end.
    fn after_header(line: &[u8]) -> State {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            // The CRLF that ends a chunk's data was split from it: nothing to skip.
            return State::Header(Vec::new());
        }
        let size = text.split(';').next().unwrap_or_default().trim();
        match u64::from_str_radix(size, 16) {
            Ok(0) => State::Done,
            Ok(n) => State::Data(n.saturating_add(2)),
            Err(_) => State::Broken,
        }
    }

    /// Whether the body may end here: after its final chunk (or broken, for s3s to refuse).
    pub fn complete(&self) -> bool {
        matches!(self.0, State::Done | State::Broken)
    }
}

/// The request body, failed at its end when the final chunk never came.
pub struct FinalChunk {
    body: Metered,
    framing: Framing,
    length: Option<u64>,
    ended: bool,
}

impl FinalChunk {
    pub fn new(body: Metered, length: Option<u64>) -> FinalChunk {
        FinalChunk {
            body,
            framing: Framing::default(),
            length,
            ended: false,
        }
    }
}

impl Stream for FinalChunk {
    type Item = Result<Bytes, s3s::StdError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(e))) => {
                    this.ended = true;
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    this.framing.feed(&data);
                    if let Some(n) = this.length.as_mut() {
                        *n = n.saturating_sub(data.len() as u64);
                    }
                    return Poll::Ready(Some(Ok(data)));
                }
                Poll::Ready(None) => {
                    this.ended = true;
                    if this.framing.complete() {
                        return Poll::Ready(None);
                    }
                    return Poll::Ready(Some(Err(
                        "the aws-chunked body ended before its final chunk".into(),
                    )));
                }
            }
        }
    }
}

impl ByteStream for FinalChunk {
    fn remaining_length(&self) -> RemainingLength {
        match self.length {
            Some(n) => RemainingLength::new_exact(n as usize),
            None => RemainingLength::unknown(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing_of(parts: &[&[u8]]) -> Framing {
        let mut f = Framing::default();
        for p in parts {
            f.feed(p);
        }
        f
    }

    #[test]
    fn a_body_is_complete_only_after_its_empty_chunk_however_it_is_split() {
        let sig = format!(";chunk-signature={}", "a".repeat(64));
        let body = format!("5{sig}\r\nhello\r\nA{sig}\r\n0123456789\r\n0{sig}\r\n\r\n");
        let bytes = body.as_bytes();
        assert!(framing_of(&[bytes]).complete());
        // Split at every place: the same answer.
        for at in 0..bytes.len() {
            assert!(framing_of(&[&bytes[..at], &bytes[at..]]).complete(), "{at}");
        }
        // Cut anywhere before the final chunk's header: incomplete.
        let last = body.rfind("0;").unwrap();
        for at in 0..last {
            assert!(!framing_of(&[&bytes[..at]]).complete(), "{at}");
        }
        // Data that holds "0;" is skipped, not read as a final chunk.
        let tricky = format!("5{sig}\r\n0;abc\r\n");
        assert!(!framing_of(&[tricky.as_bytes()]).complete());
        // Unsigned chunks with a trailer.
        assert!(framing_of(&[b"3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAA\r\n\r\n"]).complete());
        // Garbage is left to s3s, which refuses it.
        assert!(framing_of(&[b"zz\r\n"]).complete());
    }
}
