//! What every command shares: the run id, the result skeleton, Ctrl-C handling, checks on the
//! paths given, and finishing a run (save the JSON, choose the exit code).

use crate::atomic::write_atomic;
use crate::exit::{Exit, Failure};
use iobm_engine::{Control, DataKind};
use iobm_results::{
    time, ClockInfo, Config, Environment, RunResult, RunStatus, FORMAT, SCHEMA_VERSION,
};
use iobm_stats::names::RunKind;
use iobm_target::Target;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A run's identity: a readable id (also its directory name) and a numeric seed for data stamps.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RunId {
    pub text: String,
    pub seed: u64,
}

/// Fills `buf` from the kernel's random source; false if it could not.
pub fn random_bytes(buf: &mut [u8]) -> bool {
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(buf))
        .is_ok()
}

impl RunId {
    pub fn generate() -> RunId {
        let mut bytes = [0u8; 8];
        let seed = if random_bytes(&mut bytes) {
            u64::from_le_bytes(bytes)
        } else {
            iobm_engine::permute::mix(time::unix_ns_now() ^ u64::from(std::process::id()))
        };
        let stamp = time::rfc3339(time::unix_ns_now());
        let compact: String = stamp[..19]
            .chars()
            .filter(|c| *c != '-' && *c != ':')
            .collect();
        RunId {
            text: format!("{compact}-{:04x}", seed & 0xffff),
            seed,
        }
    }
}

/// The run's control, stopped by Ctrl-C or SIGTERM (see [`crate::signals`]), its phases
/// watched by `observer`, every operation handed to `requests` (`--requests`).
pub fn control(
    run_id: &RunId,
    max_workers: usize,
    observer: Option<Arc<dyn iobm_engine::IntervalObserver>>,
    requests: Option<Arc<dyn iobm_engine::RequestSink>>,
) -> Arc<Control> {
    crate::signals::install();
    let control = Control::with_stop_flag(run_id.seed, max_workers, &crate::signals::STOP);
    Arc::new(control.watched_by(observer).recorded_by(requests))
}

/// Said of every run that writes zeros.
pub const ZERO_DATA: &str = "data zero: storage that compresses, deduplicates or thin-provisions stores next to nothing of it, so these rates can exceed what its devices can do";

/// Set (by the hidden `--check-only` flag `iobm run` gives the processes that check a plan's
/// runs before any starts, also through a launcher): each command returns once its flags and
/// target are checked, before it creates anything.
static CHECK_ONLY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on this process only checks its command.
pub fn check_only() {
    CHECK_ONLY.store(true, Ordering::Relaxed);
}

/// Whether this process only checks its command (see [`check_only`]).
pub fn checking_only() -> bool {
    CHECK_ONLY.load(Ordering::Relaxed)
}

/// How the line [`checked`] prints begins, before the hash.
pub const CHECKED_HASH: &str = "config_hash ";

/// What a process that only checks its command prints for `iobm run --dry-run`: the config
/// hash its run would record.
pub fn checked(kind: &RunKind, config: &iobm_results::Config) {
    println!("{CHECKED_HASH}{}", iobm_results::config_hash(kind, config));
}

/// The spec of the command this process runs, recorded in every result it makes.
static SPEC: std::sync::Mutex<Option<iobm_results::spec::RunSpec>> = std::sync::Mutex::new(None);

/// Records the spec of the command being run (the command line's, once it is parsed); the
/// results made from now on carry it.
pub fn record_spec(spec: Option<iobm_results::spec::RunSpec>) {
    *SPEC.lock().unwrap_or_else(|e| e.into_inner()) = spec;
}

pub(crate) fn recorded_spec() -> Option<iobm_results::spec::RunSpec> {
    SPEC.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The command line as a result records it: a secret given on it (--secret-key) is replaced by
/// "(hidden)", so no document carries it.
pub fn without_secrets(argv: &[OsString]) -> Vec<String> {
    const SECRET: &str = "--secret-key";
    let mut words: Vec<String> = argv
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    for i in 0..words.len() {
        if words[i] == "--" {
            break;
        }
        if words[i].starts_with(&format!("{SECRET}=")) {
            words[i] = format!("{SECRET}=(hidden)");
        } else if words[i] == SECRET && i + 1 < words.len() {
            words[i + 1] = "(hidden)".to_string();
        }
    }
    words
}

/// The result document before any phase ran.
pub fn skeleton(
    kind: &RunKind,
    run_id: &RunId,
    argv: &[OsString],
    config: Config,
    environment: Environment,
    control: &Control,
) -> RunResult {
    let now_unix = time::unix_ns_now();
    let since_origin = Instant::now().duration_since(control.origin).as_nanos() as u64;
    let origin_unix_ns = now_unix.saturating_sub(since_origin);
    let mut warnings = Vec::new();
    if config.data == DataKind::Zero.name() {
        warnings.push(ZERO_DATA.to_string());
    }
    RunResult {
        config_hash: iobm_results::config_hash(kind, &config),
        merged_from: Vec::new(),
        repeats: None,
        worker_series_file: None,
        left_behind: Vec::new(),
        format: FORMAT.to_string(),
        schema_version: SCHEMA_VERSION,
        kind: kind.clone(),
        run_id: run_id.text.clone(),
        label: None,
        spec: recorded_spec(),
        status: RunStatus::Complete,
        started_at: time::rfc3339(now_unix),
        command_line: without_secrets(argv),
        config,
        environment,
        clock: ClockInfo {
            source: "CLOCK_MONOTONIC (Rust std::time::Instant); origin_unix_ns from CLOCK_REALTIME"
                .to_string(),
            origin_unix_ns,
            wall_clock: iobm_results::env::wall_clock_sync(),
        },
        phases: Vec::new(),
        ranks: Vec::new(),
        bonnie: None,
        io500: None,
        warnings,
    }
}

/// Checks that `dir` is a directory iobm may write in.
pub fn writable_dir(dir: &Path) -> Result<(), Failure> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| Failure::input(format!("{}: {}", dir.display(), describe_io(&e))))?;
    if !meta.is_dir() {
        return Err(Failure::input(format!(
            "{}: not a directory",
            dir.display()
        )));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes())
        .map_err(|_| Failure::input(format!("{}: path contains a NUL byte", dir.display())))?;
    // SAFETY: access reads a valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Failure::input(format!(
            "{}: not writable ({})",
            dir.display(),
            describe_io(&e)
        )));
    }
    Ok(())
}

/// Set when the JSON result goes to stdout (`--json -`): the text report then goes to stderr.
static TEXT_TO_STDERR: AtomicBool = AtomicBool::new(false);

fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Set on MPI ranks other than 0, which print nothing (rank 0 reports for all).
static SILENT: AtomicBool = AtomicBool::new(false);

/// Makes [`say`] print nothing from now on.
pub fn silence() {
    SILENT.store(true, Ordering::Relaxed);
}

/// Prints report text: to stdout, or to stderr when stdout carries the JSON result.
pub fn say(text: &str) {
    if SILENT.load(Ordering::Relaxed) {
        return;
    }
    crate::progress::clear_line();
    let _ = if TEXT_TO_STDERR.load(Ordering::Relaxed) {
        std::io::stderr().lock().write_all(text.as_bytes())
    } else {
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|_| out.flush())
    };
}

/// Checks that `--json FILE` can be written, before anything runs; `-` means stdout.
pub fn json_path_ok(path: Option<&Path>) -> Result<(), Failure> {
    let Some(path) = path else { return Ok(()) };
    if is_stdout(path) {
        TEXT_TO_STDERR.store(true, Ordering::Relaxed);
        return Ok(());
    }
    output_path_ok("--json", path)
}

/// Checks that the file `flag` names can be written: not a directory, in one that exists.
pub fn output_path_ok(flag: &str, path: &Path) -> Result<(), Failure> {
    if path.is_dir() {
        return Err(Failure::input(format!(
            "{flag} {}: is a directory; give a file name",
            path.display()
        )));
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(Failure::input(format!(
            "{flag} {}: directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    // The file is replaced through a temporary file in the same directory: it must be writable.
    writable_dir(parent)
        .map_err(|f| Failure::input(format!("{flag} {}: {}", path.display(), f.message)))
}

/// "No such file or directory" without Rust's "(os error 2)".
pub fn describe_io(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Saves the result (if asked) and maps its status to the exit code.
/// The document of `run` to save at `path`, after writing the per-worker series of its large
/// phases into the side file beside it (for stdout: `iobm-<run id>.workers.csv.zst` in the
/// current directory), which the document names.
pub fn document(run: &RunResult, path: &Path) -> std::io::Result<serde_json::Value> {
    let mut doc = serde_json::to_value(run).expect("result serialises");
    if iobm_results::detail::has_side_file(run) {
        let side_path = if is_stdout(path) {
            std::path::PathBuf::from(format!("iobm-{}.workers.csv.zst", run.run_id))
        } else {
            iobm_results::detail::side_file(path)
        };
        crate::atomic::write_atomic_with(&side_path, |f| {
            let mut out = std::io::BufWriter::new(f);
            iobm_results::detail::write_side_file(run, &mut out)?;
            std::io::Write::flush(&mut out)
        })?;
        let name = side_path.file_name().unwrap_or_default().to_string_lossy();
        doc["worker_series_file"] = serde_json::Value::from(name.into_owned());
    }
    Ok(doc)
}

/// The document as text: indented for people, but compact for a run with a side file (a large
/// one), where indenting every number of the series would triple its size.
pub fn document_text(doc: &serde_json::Value) -> Vec<u8> {
    let text = if doc["worker_series_file"].is_string() {
        serde_json::to_vec(doc)
    } else {
        serde_json::to_vec_pretty(doc)
    };
    text.expect("result serialises")
}

pub fn finish(run: &RunResult, json: Option<&Path>) -> Result<Exit, Failure> {
    // The clean-up is done: a late second Ctrl-C leaves no document of its own.
    crate::signals::clear_last_words();
    let first_error = run.phases.iter().flat_map(|p| &p.errors).next();
    if let (RunStatus::Failed, Some(e)) = (run.status, first_error) {
        eprintln!(
            "iobm: error: the run stopped: {} ({}); partial results are above{}",
            e.first,
            e.kind,
            json.map_or(String::new(), |p| format!(" and in {}", p.display()))
        );
    }
    for left in &run.left_behind {
        eprintln!("iobm: error: the clean-up failed: {}", left.describe());
    }
    if let Some(path) = json {
        let doc = document(run, path).map_err(|e| {
            Failure::run(format!(
                "--json {}: cannot write the per-worker series beside it: {}",
                path.display(),
                describe_io(&e)
            ))
        })?;
        let mut text = document_text(&doc);
        if is_stdout(path) {
            text.push(b'\n');
            let mut out = std::io::stdout().lock();
            out.write_all(&text)
                .and_then(|_| out.flush())
                .map_err(|e| Failure::run(format!("--json -: cannot write to stdout: {e}")))?;
            return Ok(exit_code(run));
        }
        write_atomic(path, &text).map_err(|e| {
            Failure::run(format!(
                "--json {}: cannot write: {}",
                path.display(),
                describe_io(&e)
            ))
        })?;
        eprintln!("iobm: result saved to {}", path.display());
    }
    Ok(exit_code(run))
}

fn exit_code(run: &RunResult) -> Exit {
    let bad_data = run
        .phases
        .iter()
        .flat_map(|p| &p.errors)
        .any(|e| e.kind == iobm_target::BAD_DATA);
    // Data that is not what was written fails the run, however many such errors
    // --max-errors let the phase go on through (a PUT's wrong ETag, a GET's corrupt bytes).
    let ended = match run.status {
        _ if bad_data => Exit::VerifyFailed,
        RunStatus::Complete => Exit::Ok,
        RunStatus::Interrupted => Exit::Interrupted,
        RunStatus::Failed | RunStatus::Running => Exit::RunFailed,
    };
    // Data left on someone's storage is what the user must act on, unless data was corrupt.
    if ended != Exit::VerifyFailed && !run.left_behind.is_empty() {
        Exit::LeftBehind
    } else {
        ended
    }
}

/// Refuses `--direct` early, with a clear message, where the storage does not support it.
pub fn probe_direct(target: &dyn Target, dir: &Path, rank: u32) -> Result<(), Failure> {
    target
        .probe_direct(&format!("direct-io-probe.{rank}"))
        .map_err(|e| {
            let fs = iobm_results::env::storage_info(dir)
                .map_or("this file system".into(), |s| s.fs_type);
            Failure::input(format!(
                "--direct: {} ({fs}) refuses O_DIRECT: {}",
                dir.display(),
                describe_io(&e)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_on_the_command_line_is_not_recorded() {
        let argv: Vec<OsString> = [
            "iobm",
            "s3",
            "put",
            "--secret-key",
            "S1",
            "--secret-key=S2",
            "--ops",
            "3",
            "--",
            "--secret-key",
            "kept",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        assert_eq!(
            without_secrets(&argv),
            [
                "iobm",
                "s3",
                "put",
                "--secret-key",
                "(hidden)",
                "--secret-key=(hidden)",
                "--ops",
                "3",
                "--",
                "--secret-key",
                "kept"
            ]
        );
    }
}
