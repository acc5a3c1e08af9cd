//! The run layer's order of a stage's hooks around its steps: the stage's own steps, then the
//! steps `next_step` decides while the run is complete, each followed by `after_step`, then
//! `after_phases` and the tear-down, once per repetition.

use iobm_engine::{Layout, Op, Phase};
use iobm_results::{Config, RunResult};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_plan, Common, Context, Hooks, RunPlan, Stage, Step};
use iobm_run::outputs::Outputs;
use iobm_run::ranks::Ranks;
use iobm_run::session::RunId;
use iobm_stats::names::RunKind;
use iobm_target::null::NullTarget;
use iobm_target::Target;
use std::cell::RefCell;
use std::sync::Arc;

/// A plan whose stage logs every hook it is called in.
struct Logged {
    log: RefCell<Vec<String>>,
    /// How many steps `next_step` adds.
    more: usize,
}

struct Hooked<'a> {
    plan: &'a Logged,
    more: usize,
}

fn step(name: &str) -> Step {
    let target: Arc<dyn Target> = Arc::new(NullTarget);
    let layout = Layout::file_per_worker(1, 4 * 4096);
    Step::new(target, vec![Phase::new(name, Op::Write, 4096, layout)])
}

impl Hooked<'_> {
    fn note(&self, what: String) {
        self.plan.log.borrow_mut().push(what);
    }
}

impl Hooks for Hooked<'_> {
    fn opening(&mut self, _run: &mut RunResult) -> String {
        self.note("opening".into());
        String::new()
    }
    fn before_phases(&mut self, _run: &mut RunResult, _context: &Context) {
        self.note("before".into());
    }
    fn phase_done(&self, run: &RunResult) -> Option<String> {
        self.note(format!("done {}", run.phases.last()?.name));
        None
    }
    fn after_step(&mut self, run: &mut RunResult, _context: &Context) {
        self.note(format!("after step of {}", run.phases.len()));
    }
    fn next_step(&mut self, _run: &mut RunResult, _context: &Context) -> Option<Step> {
        self.note("next".into());
        (self.more > 0).then(|| {
            self.more -= 1;
            step(&format!("more {}", self.more))
        })
    }
    fn after_phases(&mut self, _run: &mut RunResult, _context: &Context) -> String {
        self.note("after".into());
        String::new()
    }
    fn tear_down(self: Box<Self>, _run: &mut RunResult, _ranks: &Ranks) {
        self.note("tear down".into());
    }
}

impl RunPlan for Logged {
    fn kind(&self) -> RunKind {
        RunKind::Write
    }
    fn checked_config(&self, _ranks: &Ranks) -> Option<Config> {
        None
    }
    fn set_up<'a>(&'a self, _run_id: &RunId, _ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        self.log.borrow_mut().push("set up".into());
        let first = step("first");
        let config = iobm_run::plan::config(
            &first.phases,
            iobm_run::plan::Placement {
                dir: String::new(),
                run_dir: String::new(),
                keep: false,
                ranks: 1,
            },
        );
        let stage = Stage::new(first.target, first.phases, 1, config, None);
        Ok(stage.with(Hooked {
            plan: self,
            more: self.more,
        }))
    }
}

fn run(more: usize) -> Vec<String> {
    let plan = Logged {
        log: RefCell::new(Vec::new()),
        more,
    };
    let common = Common {
        outputs: Outputs::default(),
        repetitions: 1,
    };
    let ranks = Ranks::connect().expect("one process");
    let exit = run_plan(&plan, &common, &ranks, &[]).expect("the run");
    assert_eq!(exit, Exit::Ok);
    plan.log.into_inner()
}

#[test]
fn hooks_run_in_order_around_the_steps_and_those_next_step_adds() {
    assert_eq!(
        run(2),
        [
            "set up",
            "opening",
            "before",
            "done first",
            "after step of 1",
            "next",
            "done more 1",
            "after step of 2",
            "next",
            "done more 0",
            "after step of 3",
            "next",
            "after",
            "tear down",
        ]
    );
    assert_eq!(
        run(0),
        [
            "set up",
            "opening",
            "before",
            "done first",
            "after step of 1",
            "next",
            "after",
            "tear down",
        ]
    );
}
