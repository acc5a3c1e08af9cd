//! Names for I/O errors, so failures are counted by kind (`ENOSPC`, `EIO`, `HTTP 503 SlowDown`,
//! `timeout`, ...) in reports.

use std::fmt;
use std::io;

/// An S3 or HTTP error answer, carried inside an `io::Error` so every target fails the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpError {
    pub status: u16,
    /// The S3 error code from the body (`SlowDown`, `NoSuchKey`), when there was one.
    pub code: Option<String>,
    pub message: Option<String>,
    /// The server's id of the request (`RequestId` in the body), for its operator's logs.
    pub request_id: Option<String>,
}

impl fmt::Display for HttpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(code) = &self.code {
            write!(f, " {code}")?;
        }
        if let Some(message) = &self.message {
            write!(f, ": {message}")?;
        }
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        Ok(())
    }
}

impl std::error::Error for HttpError {}

/// A TLS failure (handshake, certificate), carried inside an `io::Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsError(pub String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TLS: {}", self.0)
    }
}

impl std::error::Error for TlsError {}

impl HttpError {
    pub fn into_io(self) -> io::Error {
        let kind = match self.status {
            404 => io::ErrorKind::NotFound,
            403 => io::ErrorKind::PermissionDenied,
            _ => io::ErrorKind::Other,
        };
        io::Error::new(kind, self)
    }
}

/// A stable short name for an error: the errno name for OS errors, otherwise the I/O kind.
pub fn error_kind(error: &io::Error) -> String {
    if let Some(code) = error.raw_os_error() {
        let name = match code {
            libc::ENOSPC => "ENOSPC",
            libc::EIO => "EIO",
            libc::EDQUOT => "EDQUOT",
            libc::EFBIG => "EFBIG",
            libc::EINVAL => "EINVAL",
            libc::EACCES => "EACCES",
            libc::EPERM => "EPERM",
            libc::EROFS => "EROFS",
            libc::ENOENT => "ENOENT",
            libc::EEXIST => "EEXIST",
            libc::ETIMEDOUT => "ETIMEDOUT",
            libc::ESTALE => "ESTALE",
            libc::EINTR => "EINTR",
            libc::EAGAIN => "EAGAIN",
            libc::ENOMEM => "ENOMEM",
            libc::EBADF => "EBADF",
            libc::ECONNREFUSED => "connection refused",
            libc::ECONNRESET | libc::EPIPE => "connection reset",
            libc::EHOSTUNREACH | libc::ENETUNREACH => "unreachable",
            _ => return format!("errno {code}"),
        };
        return name.to_string();
    }
    if error
        .get_ref()
        .is_some_and(|e| e.downcast_ref::<TlsError>().is_some())
    {
        return "TLS".to_string();
    }
    if let Some(http) = error.get_ref().and_then(|e| e.downcast_ref::<HttpError>()) {
        return match &http.code {
            Some(code) => format!("HTTP {} {code}", http.status),
            None => format!("HTTP {}", http.status),
        };
    }
    match error.kind() {
        io::ErrorKind::UnexpectedEof => "short read".to_string(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "timeout".to_string(),
        io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe => {
            "connection reset".to_string()
        }
        io::ErrorKind::ConnectionAborted => "connection closed".to_string(),
        io::ErrorKind::InvalidData => BAD_DATA.to_string(),
        kind => format!("{kind:?}"),
    }
}

/// The error kind of data that is not what was written (`io::ErrorKind::InvalidData`): a run
/// with one exits 3 (`--verify`).
pub const BAD_DATA: &str = "bad data";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(
            error_kind(&io::Error::from_raw_os_error(libc::ENOSPC)),
            "ENOSPC"
        );
        assert_eq!(error_kind(&io::Error::from_raw_os_error(libc::EIO)), "EIO");
        assert_eq!(
            error_kind(&io::Error::from_raw_os_error(9999)),
            "errno 9999"
        );
        assert_eq!(
            error_kind(&io::Error::from(io::ErrorKind::UnexpectedEof)),
            "short read"
        );
        let slow = HttpError {
            status: 503,
            code: Some("SlowDown".into()),
            message: Some("Please reduce your request rate.".into()),
            request_id: Some("17A2".into()),
        };
        assert_eq!(
            slow.to_string(),
            "HTTP 503 SlowDown: Please reduce your request rate. (request id 17A2)"
        );
        assert_eq!(error_kind(&slow.into_io()), "HTTP 503 SlowDown");
        assert_eq!(
            error_kind(&io::Error::from(io::ErrorKind::ConnectionRefused)),
            "connection refused"
        );
    }
}
