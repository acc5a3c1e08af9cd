//! Exit codes, and the one kind of error the commands return: a message and the code it means.

use std::fmt;

/// What the process exit code says. Documented in `iobm --help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every phase completed.
    Ok = 0,
    /// An operation failed during the run (ENOSPC, EIO, ...); partial results were reported.
    RunFailed = 1,
    /// Bad input: unknown flag, bad value, missing or unwritable path. Nothing was written.
    BadInput = 2,
    /// `--verify` found data that is not what was written (corrupt, misplaced or stale).
    VerifyFailed = 3,
    /// The run's clean-up could not remove everything it created (objects, multipart uploads,
    /// a bucket, files): the report and the result's `left_behind` say what remains where.
    /// Said before 1 and 130, whatever else happened.
    LeftBehind = 4,
    /// Interrupted by Ctrl-C or SIGTERM; partial results were reported.
    Interrupted = 130,
}

pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    every phase completed
  1    an operation failed during the run (ENOSPC, EIO, ...); partial results were printed and saved
  2    bad input (unknown flag, bad value, missing or unwritable path); nothing was written
  3    --verify found data that is not what was written (corrupt, misplaced or stale, or
       a PUT's ETag that is not the MD5 of what was sent), however few
  4    the clean-up could not remove all the run created: the report and the result's
       left_behind name what remains where (before 1 and 130, whatever else happened)
  130  interrupted by Ctrl-C or SIGTERM; partial results were printed and saved, data cleaned up";

impl Exit {
    /// The exit code `code` stands for (another rank's, sent as a number).
    pub fn from_code(code: u8) -> Exit {
        match code {
            0 => Exit::Ok,
            2 => Exit::BadInput,
            3 => Exit::VerifyFailed,
            4 => Exit::LeftBehind,
            130 => Exit::Interrupted,
            _ => Exit::RunFailed,
        }
    }
}

/// A command's failure: one line for the user and the exit code.
#[derive(Debug, Clone)]
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl Failure {
    /// Bad input, reported before anything was written.
    pub fn input(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::BadInput,
            message: message.into(),
        }
    }

    /// A failure while running.
    pub fn run(message: impl Into<String>) -> Failure {
        Failure {
            exit: Exit::RunFailed,
            message: message.into(),
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
