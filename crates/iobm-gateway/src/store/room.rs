//! Whether the gateway's file system has room: what an unsigned client writes and the bodies
//! kept for their length ([`crate::spool`]) may not take it below a tenth free.

/// Whether `n` more bytes leave a file system at least a tenth free.
fn leaves_a_tenth(st: rustix::fs::StatVfs, n: u64) -> bool {
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    let total = st.f_blocks.saturating_mul(st.f_frsize);
    free.checked_sub(n).is_some_and(|left| left >= total / 10)
}

/// Whether `n` more bytes leave the file system of `file` at least a tenth free.
pub fn room_for(file: &std::fs::File, n: u64) -> bool {
    rustix::fs::fstatvfs(file).map_or(true, |st| leaves_a_tenth(st, n))
}

/// Whether `n` more bytes leave the file system at `path` at least a tenth free.
pub fn room_at(path: &std::path::Path, n: u64) -> bool {
    rustix::fs::statvfs(path).map_or(true, |st| leaves_a_tenth(st, n))
}
