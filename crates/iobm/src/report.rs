//! `iobm report RESULT.json`: prints a saved run again, recomputing every aggregate and warning
//! from the per-worker records, and says so if the saved values differ.

use crate::cli::ReportArgs;
use iobm_report::render_run;
use iobm_results::limits::{judge, Limits, Place};
use iobm_results::RunResult;
use iobm_run::exit::{Exit, Failure};
use iobm_run::recompute::recompute;

pub fn report(args: ReportArgs) -> Result<Exit, Failure> {
    if !args.requests.is_empty() {
        return report_requests(&args);
    }
    if args.window.is_some() {
        return Err(Failure::input(
            "--window: only with --requests (a window of the requests files)",
        ));
    }
    args.views.check()?;
    let file = args.file.clone().unwrap_or_default();
    let text = std::fs::read_to_string(&file).map_err(|e| {
        Failure::input(format!(
            "{}: {}",
            file.display(),
            iobm_run::session::describe_io(&e)
        ))
    })?;
    let mut run = RunResult::from_json(&text)
        .map_err(|e| Failure::input(format!("{}: {e}", file.display())))?;
    if !args.views.chosen.is_empty() {
        crate::compare::attach_workers(&mut run, &file)?;
    }
    let limits = args.limits.as_deref().map(load_limits).transpose()?;
    let differing = recompute(&mut run);
    print!("{}", render_run(&run));
    if let Some(limits) = &limits {
        print!("{}", against_limits(&run, limits));
    }
    let outputs = iobm_run::outputs::Outputs {
        views: args.views.chosen.clone(),
        ..Default::default()
    };
    outputs.save_views(&run)?;
    for name in differing {
        eprintln!(
            "iobm: warning: the aggregates saved for phase '{name}' differ from those recomputed from its workers; showing the recomputed ones"
        );
    }
    Ok(Exit::Ok)
}

/// `iobm report --requests FILE...`: the requests re-analysed, the rate over time at
/// `--interval`, those of `--window` only.
fn report_requests(args: &ReportArgs) -> Result<Exit, Failure> {
    let mut chunks = Vec::new();
    let mut cut = false;
    for path in with_ranks(&args.requests) {
        let flag = |why: String| Failure::input(format!("--requests {}: {why}", path.display()));
        let bytes = std::fs::read(&path).map_err(|e| flag(iobm_run::session::describe_io(&e)))?;
        let (mine, cut_here) = iobm_run::requests::read(&bytes).map_err(flag)?;
        chunks.extend(mine);
        cut |= cut_here;
    }
    let ns = |d: std::time::Duration| d.as_nanos() as u64;
    let view = iobm_run::requests::report::View {
        interval_ns: ns(args.interval).max(1),
        window: args.window.map(|(from, to)| (ns(from), ns(to))),
    };
    print!("{}", iobm_run::requests::report::render(&chunks, view, cut));
    Ok(Exit::Ok)
}

/// The files to read: those named, and for one FILE of an MPI run (FILE.rank1 beside it) its
/// FILE.rank1, FILE.rank2, ... up to the first missing.
fn with_ranks(paths: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut files = paths.to_vec();
    if let [one] = paths {
        let ranks = (1..).map(|rank| iobm_run::live::live_path(one, rank));
        files.extend(ranks.take_while(|p| p.exists()));
    }
    files
}

/// The limits from a file saved by `iobm limits --json`, or measured now.
fn load_limits(from: &str) -> Result<Limits, Failure> {
    if from == "measure" {
        return crate::limits::measure(None, 0, std::time::Duration::from_millis(200), None, None);
    }
    let text = std::fs::read_to_string(from).map_err(|e| {
        Failure::input(format!(
            "--limits {from}: {}",
            iobm_run::session::describe_io(&e)
        ))
    })?;
    Limits::from_json(&text).map_err(|e| Failure::input(format!("--limits {from}: {e}")))
}

/// The GPUs the run's buffers spread over, where the GPU the limits measured is one of them and
/// of the same kind (a fake GPU's limits judge only runs on fake GPUs); 0 otherwise.
fn on_the_gpu(run: &RunResult, limits: &Limits) -> u32 {
    match (&run.config.memory, &limits.gpu) {
        (Some(m), Some(g)) if m.memory == g.memory && m.devices.contains(&g.id) => {
            m.devices.len() as u32
        }
        _ => 0,
    }
}

/// Each phase's rate as a share of the limits that bound it, and the rates above one.
fn against_limits(run: &RunResult, limits: &Limits) -> String {
    let mut out = format!(
        "\nagainst the limits of {} measured {}:\n",
        limits.hostname, limits.measured_at
    );
    if limits.hostname != run.environment.hostname {
        out.push_str(&format!(
            "  note: the run was on {}, the limits are another machine's\n",
            run.environment.hostname
        ));
    }
    let place = Place {
        loopback: run.config.s3.as_ref().is_some_and(|s| {
            s.endpoints.iter().all(|e| {
                e.contains("://127.") || e.contains("://localhost") || e.contains("://[::1]")
            })
        }),
        same_device: match (&limits.device, &run.environment.storage) {
            (Some(d), Some(s)) => d.device == s.device,
            _ => false,
        },
        gpus: on_the_gpu(run, limits),
    };
    let mut unjudged = false;
    for phase in &run.phases {
        let Some(judged) = judge(phase, limits, place) else {
            continue;
        };
        let shares = judged.shares();
        if !shares.is_empty() {
            out.push_str(&format!("  {}: {shares}\n", phase.name));
        }
        for note in judged.not_measured() {
            unjudged = true;
            out.push_str(&format!("  {}: {note}\n", phase.name));
        }
        for w in judged.warnings() {
            out.push_str(&format!("  {}: warning: {w}\n", phase.name));
        }
    }
    if unjudged {
        out.push_str(
            "  (`iobm limits DIR --like RESULT.json` measures DIR's device at this run's shapes)\n",
        );
    }
    out
}
