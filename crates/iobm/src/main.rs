//! The `iobm` binary: a thin shell over [`iobm::run`].

fn main() -> std::process::ExitCode {
    iobm::run(std::env::args_os())
}
