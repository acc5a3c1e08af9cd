//! Ctrl-C and SIGTERM, handled without a thread of their own: the handler only sets the flag the
//! workers poll between operations (a second signal exits at once). No extra thread means a
//! one-worker phase runs in a single-threaded process, as single-threaded tools do.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first SIGINT or SIGTERM.
pub static STOP: AtomicBool = AtomicBool::new(false);

fn say(msg: &[u8]) {
    // SAFETY: write(2) is async-signal-safe; msg is valid for its length.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

extern "C" fn on_signal(_signal: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) {
        say(b"\niobm: interrupted again, exiting without cleanup\n");
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(crate::exit::Exit::Interrupted as i32) };
    }
    say(b"\r\x1b[Kiobm: stopping (Ctrl-C again to exit at once)...\n");
}

/// Installs the handler for SIGINT and SIGTERM.
pub fn install() {
    // SAFETY: a zeroed sigaction with a handler that only touches an atomic and calls
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
