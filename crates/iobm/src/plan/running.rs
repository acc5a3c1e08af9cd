//! One run of a plan started as an iobm process, its output on the plan's (stderr when stdout
//! carries the comparison's CSV), and Ctrl-C and SIGTERM sent to the plan passed on to it.

use iobm_run::exit::Failure;
use iobm_run::session::describe_io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CHILD: AtomicI32 = AtomicI32::new(0);

/// Whether the plan was sent SIGINT or SIGTERM.
pub(super) fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

extern "C" fn on_signal(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    INTERRUPTED.store(true, Ordering::SeqCst);
    // A terminal's Ctrl-C comes from the kernel to the whole foreground process group, the run
    // included: passed on, it would be the run's second, which exits at once. A signal sent with
    // kill (to the plan alone, or to its group, which the run counts as one with the one passed
    // on as it arrives at once) is passed on.
    // SAFETY: the kernel hands the handler a valid siginfo (SA_SIGINFO).
    let from_terminal = !info.is_null() && unsafe { (*info).si_code } == libc::SI_KERNEL;
    let child = CHILD.load(Ordering::SeqCst);
    if child > 0 && !from_terminal {
        // SAFETY: kill is async-signal-safe.
        unsafe { libc::kill(child, signal) };
    }
}

/// Installs the handler for SIGINT and SIGTERM.
pub(super) fn catch_signals() {
    // SAFETY: the handler only touches atomics and calls kill, both async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [libc::SIGINT, libc::SIGTERM] {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Runs one command to its end, its output on ours (its stdout on our stderr when
/// `quiet_stdout`); its exit code, None if a signal ended it.
pub(super) fn start(words: &[String], quiet_stdout: bool) -> Result<Option<i32>, Failure> {
    let mut command = std::process::Command::new(&words[0]);
    command.args(&words[1..]);
    if quiet_stdout {
        command.stdout(std::io::stderr());
    }
    let mut child = command
        .spawn()
        .map_err(|e| Failure::run(format!("{}: cannot start: {}", words[0], describe_io(&e))))?;
    let pid = child.id() as i32;
    CHILD.store(pid, Ordering::SeqCst);
    if INTERRUPTED.load(Ordering::SeqCst) {
        // Interrupted as it started, before the handler knew it: it stops too.
        // SAFETY: kill has no memory preconditions; the child is not yet waited for.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    let status = child.wait();
    CHILD.store(0, Ordering::SeqCst);
    let status = status.map_err(|e| Failure::run(format!("{}: {}", words[0], describe_io(&e))))?;
    Ok(status.code())
}
