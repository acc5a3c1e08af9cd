//! Plans interrupted: SIGINT sent to the plan alone, to its process group, and a terminal's
//! Ctrl-C each stop the run in progress once, as it would stop alone, and the plan exits 130.

use super::{pairs, statuses, write};
use crate::common::{entries, load};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How the interrupt reaches the plan.
#[derive(Debug, Clone, Copy)]
enum Interrupt {
    /// `kill -INT PID`: the plan alone.
    Plan,
    /// `kill -INT -PGID`: the plan and its run.
    Group,
    /// Ctrl-C typed on the plan's terminal (the kernel signals the foreground group).
    Terminal,
}

/// A terminal for the plan: the master side, and the slave's path.
fn pty() -> (std::fs::File, std::ffi::CString) {
    use std::os::fd::FromRawFd;
    // SAFETY: plain libc calls on a descriptor this function owns; ptsname_r fills the buffer.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let path = std::ffi::CStr::from_ptr(name.as_ptr()).to_owned();
        (std::fs::File::from_raw_fd(master), path)
    }
}

/// A plan of one long write, interrupted while it writes: the plan's output, and its `--out`.
fn interrupted(how: Interrupt) -> (std::process::Output, tempfile::TempDir, String) {
    let target = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let plan = work.path().join("p.toml");
    let out = work.path().join("out");
    write(
        &plan,
        &format!(
            "[[run]]\ncommand = \"write\"\nlabel = \"long\"\ndir = {:?}\nsize = \"4MiB\"\n\
             duration = \"20s\"\n",
            target.path().display().to_string()
        ),
    );
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("iobm"));
    command
        .args(["run", "--out"])
        .arg(&out)
        .arg(&plan)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Kept open until the plan ends: a terminal whose master closes hangs its session up.
    let mut terminal = match how {
        Interrupt::Terminal => {
            let (master, slave) = pty();
            // SAFETY: setsid, open and ioctl are async-signal-safe; `slave` outlives the spawn.
            unsafe {
                command.pre_exec(move || {
                    if libc::setsid() < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    let fd = libc::open(slave.as_ptr(), libc::O_RDWR);
                    if fd < 0 || libc::ioctl(fd, libc::TIOCSCTTY, 0) < 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
            Some(master)
        }
        // Its own group, so that a signal to the group reaches none of the tests.
        _ => {
            command.process_group(0);
            None
        }
    };
    let mut child = command.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !writing(target.path()) {
        assert!(Instant::now() < deadline, "the run did not start");
        assert!(child.try_wait().unwrap().is_none(), "the plan ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id() as i32;
    match (how, terminal.as_mut()) {
        (Interrupt::Terminal, Some(master)) => {
            use std::io::Write;
            master.write_all(b"\x03").unwrap();
        }
        // SAFETY: kill has no memory preconditions.
        (Interrupt::Plan, _) => assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0),
        (_, _) => assert_eq!(unsafe { libc::kill(-pid, libc::SIGINT) }, 0),
    }
    let output = child.wait_with_output().unwrap();
    drop(terminal);
    let left = entries(target.path()).join(" ");
    (output, work, left)
}

/// Whether a write's data file holds bytes in `dir`.
fn writing(dir: &Path) -> bool {
    entries(dir).iter().any(|run_dir| {
        std::fs::read_dir(dir.join(run_dir)).is_ok_and(|files| {
            files.flatten().any(|f| {
                f.file_name().to_string_lossy().starts_with("data.")
                    && f.metadata().is_ok_and(|m| m.len() > 0)
            })
        })
    })
}

fn assert_stopped_once(how: Interrupt) {
    let (output, work, left) = interrupted(how);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(130), "{how:?}: {stdout}{stderr}");
    let out = work.path().join("out");
    assert_eq!(statuses(&out), pairs(&[("long", "interrupted")]), "{how:?}");
    let result = load(&out.join("long.json"));
    assert_eq!(result["status"], "interrupted", "{how:?}");
    // Stopped once, as it would stop alone: cleaned up, not exited at once.
    assert!(!stderr.contains("exiting at once"), "{how:?}: {stderr}");
    assert_eq!(left, "", "{how:?}: the run left its data");
    assert!(
        stderr.contains("iobm: run 'long' interrupted: the plan stops here"),
        "{how:?}: {stderr}"
    );
    assert!(
        stdout.contains("long  interrupted (exit 130)  long.json"),
        "{how:?}: {stdout}"
    );
}

#[test]
fn sigint_to_the_plan_alone_stops_its_run() {
    assert_stopped_once(Interrupt::Plan);
}

#[test]
fn sigint_to_the_plan_s_group_stops_its_run_once() {
    assert_stopped_once(Interrupt::Group);
}

#[test]
fn ctrl_c_on_the_plan_s_terminal_stops_its_run_once() {
    assert_stopped_once(Interrupt::Terminal);
}
