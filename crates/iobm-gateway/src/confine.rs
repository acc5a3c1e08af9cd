//! Opening paths beneath a directory descriptor without ever following a symbolic link: the
//! kernel's `openat2` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`, or,
//! where the kernel has no `openat2`, a walk of one `O_NOFOLLOW` open per component. Either way a
//! symbolic link anywhere on the path fails with `ELOOP`, so nothing a request names resolves
//! outside the served directory, whatever anyone planted in it.

use rustix::fs::{openat, openat2, statat, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicU8, Ordering};

/// How paths are resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolver {
    /// `openat2` with the kernel's own confinement.
    Openat2,
    /// One `openat(O_NOFOLLOW)` per component.
    Components,
}

/// 0: not yet known, 1: openat2 works, 2: the kernel has none (ENOSYS).
static OPENAT2: AtomicU8 = AtomicU8::new(0);

/// The resolver this kernel allows.
pub fn resolver() -> Resolver {
    match OPENAT2.load(Ordering::Relaxed) {
        2 => Resolver::Components,
        _ => Resolver::Openat2,
    }
}

/// Whether `e` says the path crossed a symbolic link (or tried to leave the directory).
pub fn crossed_link(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ELOOP) | Some(libc::EXDEV))
}

/// Opens `path` (plain names joined by `/`, no `.`, `..` or empty parts) beneath `dir` with
/// `flags` (`O_NOFOLLOW` and `O_CLOEXEC` are added), never following a symbolic link.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let resolver = resolver();
    match open_with(resolver, dir, path, flags, mode) {
        Err(e) if resolver == Resolver::Openat2 && openat2_missing(&e) => {
            OPENAT2.store(2, Ordering::Relaxed);
            open_with(Resolver::Components, dir, path, flags, mode)
        }
        result => {
            if resolver == Resolver::Openat2 {
                OPENAT2.store(1, Ordering::Relaxed);
            }
            result
        }
    }
}

fn openat2_missing(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ENOSYS)
}

/// [`open_beneath`] with a chosen resolver (the tests use both).
pub fn open_with(
    resolver: Resolver,
    dir: BorrowedFd<'_>,
    path: &str,
    flags: OFlags,
    mode: Mode,
) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if path.is_empty()
        || path
            .split('/')
            .any(|c| c.is_empty() || c == "." || c == "..")
    {
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    let opened = match resolver {
        Resolver::Openat2 => {
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            loop {
                match openat2(dir, path, flags, mode, resolve) {
                    // The kernel asks for a retry when a rename raced the lookup.
                    Err(Errno::AGAIN) => continue,
                    other => break other.map_err(io::Error::from),
                }
            }
        }
        Resolver::Components => walk(dir, path, flags, mode),
    };
    match opened {
        // O_DIRECTORY on a link says "not a directory": tell a link apart from a file.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) && has_link(dir, path) => {
            Err(io::Error::from_raw_os_error(libc::ELOOP))
        }
        result => result,
    }
}

/// One `O_NOFOLLOW` open per component of `path`, each relative to the one before.
fn walk(dir: BorrowedFd<'_>, path: &str, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
    let (parents, last) = path.rsplit_once('/').unwrap_or(("", path));
    let mut held: Option<OwnedFd> = None;
    for name in parents.split('/').filter(|n| !n.is_empty()) {
        let at = held.as_ref().map_or(dir, |fd| fd.as_fd());
        let next = openat(
            at,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        held = Some(next);
    }
    let at = held.as_ref().map_or(dir, |fd| fd.as_fd());
    Ok(openat(at, last, flags, mode)?)
}

/// Whether a component of `path` (looked at in order, up to the first that is not a
/// directory) is a symbolic link.
fn has_link(dir: BorrowedFd<'_>, path: &str) -> bool {
    let mut end = 0;
    for name in path.split('/') {
        end += name.len();
        match statat(dir, &path[..end], AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::Symlink => return true,
                FileType::Directory => {}
                _ => return false,
            },
            Err(_) => return false,
        }
        end += 1;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn dir_fd(path: &std::path::Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn both_resolvers_refuse_every_symlink_and_open_plain_paths() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"x").unwrap();
        std::fs::create_dir_all(root.path().join("b/d")).unwrap();
        std::fs::write(root.path().join("b/d/f"), b"ok").unwrap();
        symlink(outside.path(), root.path().join("b/out")).unwrap();
        symlink(
            outside.path().join("secret"),
            root.path().join("b/file-link"),
        )
        .unwrap();
        symlink("d", root.path().join("b/inner")).unwrap();
        let fd = dir_fd(root.path());
        for resolver in [Resolver::Openat2, Resolver::Components] {
            let open = |p: &str| open_with(resolver, fd.as_fd(), p, OFlags::RDONLY, Mode::empty());
            assert!(open("b/d/f").is_ok(), "{resolver:?}");
            for crossing in ["b/out/secret", "b/file-link", "b/inner/f"] {
                let e = open(crossing).unwrap_err();
                assert!(crossed_link(&e), "{resolver:?} {crossing}: {e}");
            }
            for bad in ["../x", "b/../../x", "b//d", "b/./d", ""] {
                assert!(crossed_link(&open(bad).unwrap_err()), "{resolver:?} {bad}");
            }
            let e = open("b/d/missing").unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::NotFound);
        }
    }
}
