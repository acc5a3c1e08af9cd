//! Ctrl-C and SIGTERM, handled without a thread of their own: the handler only sets the flag the
//! workers poll between operations. Signals within [`SAME_INTERRUPT`] of the first are that
//! interrupt (`timeout -s INT` and a terminal's Ctrl-C reach the process and its group, so two
//! arrive together); a later one exits at once, without the clean-up, leaving the result
//! document prepared by [`set_last_words`] in place of the one saved so far. No extra thread
//! means a one-worker phase runs in a single-threaded process, as single-threaded tools do.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

/// Set by the first SIGINT or SIGTERM.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Signals this soon after the first count as the same interrupt.
pub const SAME_INTERRUPT: Duration = Duration::from_secs(1);

/// CLOCK_MONOTONIC of the first signal, in nanoseconds (0: none yet).
static FIRST_NS: AtomicU64 = AtomicU64::new(0);

/// Whether stderr is a terminal (asked once, outside the handler): only then does the handler
/// clear the progress line.
static STDERR_TTY: AtomicBool = AtomicBool::new(false);

/// The result document to leave when exiting at once, and where (null: none).
static LAST_WORDS: AtomicPtr<LastWords> = AtomicPtr::new(null_mut());

/// Set by the handler before it reads [`LAST_WORDS`]: the process is exiting.
static EXITING: AtomicBool = AtomicBool::new(false);

struct LastWords {
    path: CString,
    temporary: CString,
    text: Vec<u8>,
}

fn say(msg: &[u8]) {
    // SAFETY: write(2) is async-signal-safe; msg is valid for its length.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime is async-signal-safe and fills the zeroed struct.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    (t.tv_sec as u64) * 1_000_000_000 + t.tv_nsec as u64
}

/// Writes `words` to their temporary file and renames it over the document, with
/// async-signal-safe calls only; false if any failed.
fn leave(words: &LastWords) -> bool {
    // SAFETY: open, write, close and rename are async-signal-safe; the paths are
    // NUL-terminated and the text valid for its length.
    unsafe {
        let fd = libc::open(
            words.temporary.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return false;
        }
        let mut rest = &words.text[..];
        while !rest.is_empty() {
            let n = libc::write(fd, rest.as_ptr().cast(), rest.len());
            if n <= 0 {
                libc::close(fd);
                libc::unlink(words.temporary.as_ptr());
                return false;
            }
            rest = &rest[n as usize..];
        }
        libc::close(fd);
        libc::rename(words.temporary.as_ptr(), words.path.as_ptr()) == 0
    }
}

extern "C" fn on_signal(_signal: libc::c_int) {
    let now = monotonic_ns().max(1);
    let Err(first) = FIRST_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) else {
        STOP.store(true, Ordering::SeqCst);
        if STDERR_TTY.load(Ordering::Relaxed) {
            say(b"\r\x1b[K");
        }
        say(b"iobm: stopping (Ctrl-C again to exit at once)...\n");
        return;
    };
    if now.saturating_sub(first) < SAME_INTERRUPT.as_nanos() as u64 {
        return;
    }
    EXITING.store(true, Ordering::SeqCst);
    let words = LAST_WORDS.load(Ordering::SeqCst);
    // SAFETY: a non-null pointer is a live `LastWords`: replacing one never frees it once
    // EXITING is set.
    if !words.is_null() && leave(unsafe { &*words }) {
        say(b"\niobm: interrupted again, exiting at once without cleanup: the result so far is saved, and what the run wrote may remain (its left_behind says where)\n");
    } else {
        say(b"\niobm: interrupted again, exiting at once without cleanup\n");
    }
    // SAFETY: _exit is async-signal-safe.
    unsafe { libc::_exit(crate::exit::Exit::Interrupted as i32) };
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() {
    use std::io::IsTerminal;
    STDERR_TTY.store(std::io::stderr().is_terminal(), Ordering::Relaxed);
    // SAFETY: a zeroed sigaction with a handler that only touches atomics and calls
    // async-signal-safe functions.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [libc::SIGINT, libc::SIGTERM] {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Makes `text` the document a second interrupt leaves at `path` when it exits at once.
pub fn set_last_words(path: &Path, text: Vec<u8>) {
    let bytes = path.as_os_str().as_bytes();
    let mut temporary = bytes.to_vec();
    temporary.extend_from_slice(format!(".{}.last", std::process::id()).as_bytes());
    let (Ok(path), Ok(temporary)) = (CString::new(bytes), CString::new(temporary)) else {
        return;
    };
    replace(Box::into_raw(Box::new(LastWords {
        path,
        temporary,
        text,
    })));
}

/// No document to leave from now on (the run writes its final one).
pub fn clear_last_words() {
    replace(null_mut());
}

fn replace(new: *mut LastWords) {
    let old = LAST_WORDS.swap(new, Ordering::SeqCst);
    if EXITING.load(Ordering::SeqCst) {
        // The handler may be writing the old one on another thread: the process is about to
        // end, and this thread waits for it.
        loop {
            std::thread::park();
        }
    }
    if !old.is_null() {
        // SAFETY: made by Box::into_raw in set_last_words, and no longer reachable: the
        // handler, not yet started (EXITING was clear after the swap), can only see `new`.
        drop(unsafe { Box::from_raw(old) });
    }
}
