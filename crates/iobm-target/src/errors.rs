//! Names for I/O errors, so failures are counted by kind (`ENOSPC`, `EIO`, ...) in reports.

use std::io;

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
            _ => return format!("errno {code}"),
        };
        return name.to_string();
    }
    match error.kind() {
        io::ErrorKind::UnexpectedEof => "short read".to_string(),
        io::ErrorKind::InvalidData => "bad data".to_string(),
        kind => format!("{kind:?}"),
    }
}

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
    }
}
