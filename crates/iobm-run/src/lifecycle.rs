//! The life of a run, the same for every command and on every rank: the ranks connected and
//! the command's checks agreed ([`run_command`]), a check answered (`--check-only`), then each
//! repetition's storage set up, its steps run and printed, its storage torn down whatever
//! happened (Ctrl-C, a failed phase), and at the end the result and its views saved and rank
//! 0's exit code given to every rank ([`run_plan`]).
//!
//! A command checks its arguments and hands over a [`RunPlan`]: what it runs and how to set up
//! one repetition, as a [`Stage`]: data (its steps, workers, config, environment) and the
//! [`Hooks`] where it differs from every other command.

use crate::execute::execute;
use crate::exit::{Exit, Failure};
use crate::live::{self, Watchers};
use crate::metrics;
use crate::observe::{Observer, ResultFile};
use crate::outputs::Outputs;
use crate::probe::Probe;
use crate::ranks::Ranks;
use crate::requests::RequestsFile;
use crate::session::{self, say, RunId};
use iobm_engine::{Control, Phase};
use iobm_report::{render_footer, render_header, render_phase, render_repeats};
use iobm_results::repeats::Repeats;
use iobm_results::{env, Config, Environment, LeftBehind, RunResult, RunStatus};
use iobm_stats::names::RunKind;
use iobm_target::Target;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

/// What every workload command is given, whatever it runs: where its result goes and how many
/// times it runs, each on fresh data (`--repeat`).
pub struct Common {
    pub outputs: Outputs,
    pub repetitions: u32,
}

/// A command's run, checked: what the run layer needs to set it up, run and report it.
pub trait RunPlan {
    /// The result's `kind` (`write`, `s3 get`, ...).
    fn kind(&self) -> RunKind;
    /// The config a run would record, for the hash `--check-only` prints (`session::checked`);
    /// None where it depends on what only the set-up knows.
    fn checked_config(&self, ranks: &Ranks) -> Option<Config>;
    /// Sets up one repetition on every rank (the ranks agreeing on failure, after which what
    /// it made is removed): the run's directory, bucket or gateway, and its data set.
    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure>;
}

/// Phases run against one target.
pub struct Step {
    pub target: Arc<dyn Target>,
    /// In order.
    pub phases: Vec<Phase>,
    /// Evidence only this step's target gives (an iobm gateway's counters), read around each
    /// of its phases before the run's own probes ([`crate::probe::Probes::of`]).
    pub probes: Vec<Arc<dyn Probe>>,
}

impl Step {
    /// `phases` against `target`, with the run's probes alone.
    pub fn new(target: Arc<dyn Target>, phases: Vec<Phase>) -> Step {
        Step {
            target,
            phases,
            probes: Vec::new(),
        }
    }
}

/// What a repetition runs between its set-up and its tear-down.
pub struct Stage<'a> {
    /// Run in order, each only when the run is still complete.
    pub steps: Vec<Step>,
    /// The most workers a phase runs on this rank.
    pub workers: usize,
    /// The result's config of this repetition.
    pub config: Config,
    /// The machine's description, with the file system the run is on.
    pub environment: Environment,
    /// What the command does around the steps.
    pub hooks: Box<dyn Hooks + 'a>,
}

impl<'a> Stage<'a> {
    /// A stage of one step on the file system at `dir` (none: the machine alone), without
    /// hooks.
    pub fn new(
        target: Arc<dyn Target>,
        phases: Vec<Phase>,
        workers: usize,
        config: Config,
        dir: Option<&Path>,
    ) -> Stage<'a> {
        Stage {
            steps: vec![Step::new(target, phases)],
            workers,
            config,
            environment: env::capture(dir),
            hooks: Box::new(NoHooks),
        }
    }

    /// This stage, with `hooks` around its steps.
    pub fn with(self, hooks: impl Hooks + 'a) -> Stage<'a> {
        Stage {
            hooks: Box::new(hooks),
            ..self
        }
    }
}

/// The latest phase's report, as [`Hooks::phase_done`] prints it by default.
pub fn phase_text(run: &RunResult) -> Option<String> {
    let latest = run.phases.last()?;
    Some(format!("\n{}", render_phase(latest, &run.environment)))
}

/// What a command does around its steps, where it differs from the defaults.
pub trait Hooks {
    /// What is printed after the run's header (and warnings about the run as a whole).
    fn opening(&mut self, _run: &mut RunResult) -> String {
        String::new()
    }
    /// Untimed work before the steps (a data set uploaded, caches dropped); a run whose status
    /// is then no longer complete runs no phase.
    fn before_phases(&mut self, _run: &mut RunResult, _context: &Context) {}
    /// What is printed when a phase is done: the phase's report, or nothing where the phases
    /// are printed after all of them.
    fn phase_done(&self, run: &RunResult) -> Option<String> {
        phase_text(run)
    }
    /// Work after each step, whatever its status (evidence read back about its phases).
    fn after_step(&mut self, _run: &mut RunResult, _context: &Context) {}
    /// A step decided by what ran before it, run after the stage's steps while the run is
    /// complete (quick's S3 steps on its own gateway); None: no more.
    fn next_step(&mut self, _run: &mut RunResult, _context: &Context) -> Option<Step> {
        None
    }
    /// Work after the phases (evidence read back, scores); returns what is printed.
    fn after_phases(&mut self, _run: &mut RunResult, _context: &Context) -> String {
        String::new()
    }
    /// Keeps (`--keep`) or removes what the set-up made, also after Ctrl-C or a failure;
    /// records what it could not remove ([`left_behind`]).
    fn tear_down(self: Box<Self>, _run: &mut RunResult, _ranks: &Ranks) {}
}

/// The hooks of a stage that only runs its steps (and leaves nothing to remove).
struct NoHooks;

impl Hooks for NoHooks {}

/// What a stage's work around the phases can use: the run's control and the ranks.
pub struct Context<'a> {
    pub control: &'a Arc<Control>,
    pub ranks: &'a Ranks,
}

/// A workload command on every rank: connects the ranks, has each check the arguments with
/// `check` (a rank's failure is every rank's) and runs the plan it returns ([`run_plan`]).
pub fn run_command<P: RunPlan>(
    argv: &[OsString],
    common: &Common,
    check: impl FnOnce(&Ranks) -> Result<P, Failure>,
) -> Result<Exit, Failure> {
    let ranks = Ranks::connect()?;
    let plan = ranks.agreed(check(&ranks))?;
    run_plan(&plan, common, &ranks, argv)
}

/// Runs `plan` on every rank: answers `--check-only`, or runs its repetitions and saves the
/// result with its views; the exit code is rank 0's.
pub fn run_plan(
    plan: &dyn RunPlan,
    common: &Common,
    ranks: &Ranks,
    argv: &[OsString],
) -> Result<Exit, Failure> {
    if session::checking_only() {
        if let Some(config) = plan.checked_config(ranks) {
            session::checked(&plan.kind(), &config);
        }
        return Ok(Exit::Ok);
    }
    let outputs = &common.outputs;
    let server = listen(outputs, ranks)?;
    let summing = metrics::Summing::start(server.as_ref().map(|s| s.metrics.clone()), ranks)?;
    let metrics = summing.metrics();
    let asked = live::Asked {
        live: outputs.live.as_deref(),
        csv: outputs.view("csv"),
        html: outputs.view("html"),
    };
    let watchers = Watchers::open(asked, metrics, ranks.rank(), ranks.size())?;
    // The live page is ended whatever happens, before the report is written over it.
    let closing = watchers.as_ref().map(|w| ClosePage(w.clone()));
    let requests = (outputs.requests.as_deref())
        .map(|p| RequestsFile::create(p, ranks.rank(), &iobm_results::env::hostname()))
        .transpose()?
        .map(|f| Arc::new(f) as Arc<dyn iobm_engine::RequestSink>);
    let run = repeated(common.repetitions, ranks, |_| {
        let run = once(
            plan,
            outputs,
            ranks,
            argv,
            watchers.as_ref(),
            requests.clone(),
        )?;
        if ranks.is_root() {
            outputs.save_repetition(&run)?;
        }
        Ok(run)
    })?;
    // Every rank's last counts are in before the final document says the run ended.
    drop(summing);
    drop(closing);
    let exit = finish(&run, outputs, ranks);
    if let Some(server) = server {
        server.linger(outputs.metrics_linger);
    }
    exit
}

/// Ends the live page when dropped.
struct ClosePage(Arc<Watchers>);

impl Drop for ClosePage {
    fn drop(&mut self) {
        self.0.close_page();
    }
}

/// `--metrics-listen`'s endpoint, at rank 0, listening before anything is created.
fn listen(outputs: &Outputs, ranks: &Ranks) -> Result<Option<metrics::Server>, Failure> {
    let addr = outputs.metrics_listen.filter(|_| ranks.is_root());
    let server = addr.map(|addr| {
        metrics::Server::start(addr).map_err(|e| {
            let why = session::describe_io(&e);
            Failure::input(format!("--metrics-listen {addr}: cannot listen: {why}"))
        })
    });
    let server = server.transpose();
    ranks.agreed(server)
}

/// One repetition: set up, steps, tear-down, footer.
fn once(
    plan: &dyn RunPlan,
    outputs: &Outputs,
    ranks: &Ranks,
    argv: &[OsString],
    watchers: Option<&Arc<Watchers>>,
    requests: Option<Arc<dyn iobm_engine::RequestSink>>,
) -> Result<RunResult, Failure> {
    let run_id = ranks.share(&RunId::generate());
    let stage = plan.set_up(&run_id, ranks)?;
    let host = &stage.environment.hostname;
    let kind = plan.kind();
    let observer = watchers.map(|w| w.watch(&kind, &run_id.text, host));
    let control = session::control(&run_id, stage.workers, observer, requests);
    let (config, environment) = (stage.config, stage.environment);
    let mut run = session::skeleton(&kind, &run_id, argv, config, environment, &control);
    run.label = outputs.label.clone();
    ranks.describe(&mut run);
    let mut hooks = stage.hooks;
    // What a target cannot do is refused before the first phase, in one line.
    let refused =
        (stage.steps.iter()).find_map(|s| iobm_engine::refusal(s.target.as_ref(), &s.phases));
    if let Some(why) = refused {
        hooks.tear_down(&mut run, ranks);
        return Err(Failure::input(why));
    }
    let opening = hooks.opening(&mut run);
    say(&render_header(&run));
    say(&opening);
    let mut saved = ResultFile::new(outputs.json.as_deref());
    let context = Context {
        control: &control,
        ranks,
    };
    hooks.before_phases(&mut run, &context);
    let mut steps = stage.steps.into_iter();
    while run.status == RunStatus::Complete {
        let Some(step) = steps.next().or_else(|| hooks.next_step(&mut run, &context)) else {
            break;
        };
        let printer = hooks.as_ref();
        let mut print = |r: &RunResult| {
            if let Some(text) = printer.phase_done(r) {
                say(&text);
            }
        };
        let observers: &mut [&mut dyn Observer] = &mut [&mut print, &mut saved];
        let target = step.target.as_ref();
        let phases = (step.phases, step.probes);
        execute(target, phases, &mut run, &control, ranks, observers);
        hooks.after_step(&mut run, &context);
    }
    let after = hooks.after_phases(&mut run, &context);
    say(&after);
    hooks.tear_down(&mut run, ranks);
    say(&format!("\n{}", render_footer(&run)));
    Ok(run)
}

/// Calls `once` for repetition 0, 1, ... until `n` have run or one did not complete (Ctrl-C, a
/// fault, data left behind): the last run, with the spread over all of them when more than one
/// ran (rank 0).
fn repeated(
    n: u32,
    ranks: &Ranks,
    mut once: impl FnMut(u32) -> Result<RunResult, Failure>,
) -> Result<RunResult, Failure> {
    let mut runs: Vec<RunResult> = Vec::new();
    for index in 0..n {
        if n > 1 && ranks.is_root() {
            say(&format!("\nrepetition {} of {n}\n", index + 1));
        }
        let mut run = once(index)?;
        ranks.collect_left_behind(&mut run);
        // One that left data behind ends the repetitions too: the next would leave more.
        let complete =
            ranks.share(&(run.status == RunStatus::Complete && run.left_behind.is_empty()));
        runs.push(run);
        if !complete {
            break;
        }
    }
    let repeats = (n > 1 && ranks.is_root()).then(|| Repeats::of(&runs));
    let left_behind: Vec<_> = runs.iter().flat_map(|r| r.left_behind.clone()).collect();
    let mut last = runs.pop().expect("at least one repetition ran");
    last.left_behind = left_behind;
    if let Some(repeats) = repeats {
        last.repeats = Some(repeats);
        say(&format!("\n{}", render_repeats(&last)));
    }
    Ok(last)
}

/// Saves the result and its views at rank 0 and gives every rank rank 0's exit code.
fn finish(run: &RunResult, outputs: &Outputs, ranks: &Ranks) -> Result<Exit, Failure> {
    let exit = if ranks.is_root() {
        outputs
            .save_views(run)
            .and_then(|_| session::finish(run, outputs.json.as_deref()))
    } else {
        Ok(Exit::Ok)
    };
    let code = ranks.share(&exit.as_ref().map_or(Exit::RunFailed as u8, |e| *e as u8));
    match exit {
        Err(f) => Err(f),
        Ok(_) => Ok(Exit::from_code(code)),
    }
}

/// Records what a tear-down could not remove: in the result, and as a warning the report shows.
pub fn left_behind(run: &mut RunResult, left: LeftBehind) {
    run.warnings
        .push(format!("the clean-up failed: {}", left.describe()));
    run.left_behind.push(left);
}
