//! Replacing a file whole: the result document and the bonnie++ CSV line are written through a
//! temporary file of iobm's own and a rename, so readers and crashes see the old or the new.

use std::fs;
use std::io;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file of its own, fsynced, and a rename: readers
/// never see half, and a crash leaves the old document or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |f| io::Write::write_all(f, bytes))
}

/// As [`write_atomic`], the content written by `fill` (in pieces, without holding it whole).
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    replace(path, fill, true)
}

/// Replaces `path` with `bytes` through a temporary file and a rename, so readers see the old
/// file or the new one whole, but without fsync: for what is rewritten every interval while a
/// run goes (the live page), which need not survive a crash and must not add syncs to the
/// storage under test.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> io::Result<()> {
    replace(path, |f| io::Write::write_all(f, bytes), false)
}

fn replace(
    path: &Path,
    fill: impl FnOnce(&mut fs::File) -> io::Result<()>,
    durable: bool,
) -> io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    // A name of iobm's own, created new: an existing file is never overwritten by the temporary.
    let tmp = dir.join(format!(".{name}.iobm-{}.tmp", std::process::id()));
    let written = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            fill(&mut f)?;
            if durable {
                f.sync_all()?;
            }
            Ok(())
        })
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    if !durable {
        return Ok(());
    }
    // The rename itself survives a power loss once the directory is synced.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
