//! The probes' hooks called in order around a phase, and their evidence in its result.

use super::*;
use iobm_engine::{run_phase, Control, Layout, Op, Ranked};
use iobm_results::checks::Machine;
use iobm_results::PhaseResult;
use iobm_target::mem::MemTarget;

fn recorded(phase: &Phase, outcome: &PhaseOutcome) -> PhaseResult {
    crate::record::phase_result(phase, outcome, 0, "host", &Machine::with_ram(1 << 30))
}

/// Logs each hook it sees, and puts how many times it ticked in the phase's result.
struct Logging {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    ticks: Mutex<u64>,
}

impl Logging {
    fn note(&self, hook: &str) {
        self.log
            .lock()
            .unwrap()
            .push(format!("{} {hook}", self.name));
    }
}

impl Probe for Logging {
    fn before(&self, _: &Scene) -> Result<(), Refusal> {
        self.note("before");
        Ok(())
    }
    fn period(&self, _: &Scene) -> Option<Duration> {
        (self.name == "ticking").then_some(Duration::from_millis(5))
    }
    fn tick(&self) {
        *self.ticks.lock().unwrap() += 1;
    }
    fn after(&self, _: &Scene, outcome: &PhaseOutcome, result: &mut PhaseResult) {
        self.note(&format!("after {}", outcome.name));
        result.cache.resident_before_bytes = Some(*self.ticks.lock().unwrap());
    }
    fn merged(&self, _: &Scene, result: &mut PhaseResult) {
        self.note("merged");
        result.warnings.push(format!("{} saw it", self.name));
    }
}

#[test]
fn probes_look_before_through_and_after_a_phase_and_their_evidence_is_in_its_result() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let probe = |name| {
        Arc::new(Logging {
            name,
            log: log.clone(),
            ticks: Mutex::new(0),
        }) as Arc<dyn Probe>
    };
    let mut probes = Probes::new(vec![probe("first"), probe("ticking")]);
    let target = MemTarget::new();
    let mut phase = Phase::new("p", Op::Write, 4096, Layout::file_per_worker(1, 1 << 20));
    phase.interval = Duration::from_millis(5);
    let ranks = Ranks::connect().unwrap();
    let scene = Scene {
        phase: &phase,
        target: &target,
        ranks: &ranks,
    };
    iobm_engine::prepare_objects(&target, &phase.layout).unwrap();
    probes.before(&scene).unwrap();
    let ticking = probes.ticking(&scene);
    let outcome = run_phase(&target, &phase, &Control::new(1, 1), &Ranked::ALONE);
    std::thread::sleep(Duration::from_millis(50));
    let mut result = recorded(&phase, &outcome);
    probes.after(&scene, &outcome, &mut result);
    probes.merged(&scene, Some(ticking), &mut result);
    assert_eq!(
        *log.lock().unwrap(),
        [
            "first before",
            "ticking before",
            "ticking after p",
            "first after p",
            "ticking merged",
            "first merged"
        ]
    );
    // The last to look after the phase was "first", which never ticked.
    assert_eq!(result.cache.resident_before_bytes, Some(0));
    let seen: Vec<&String> = result
        .warnings
        .iter()
        .filter(|w| w.ends_with("saw it"))
        .collect();
    assert_eq!(seen, ["ticking saw it", "first saw it"]);
}

#[test]
fn a_probe_that_refuses_the_phase_leaves_those_after_it_out() {
    struct Refusing;
    impl Probe for Refusing {
        fn before(&self, _: &Scene) -> Result<(), Refusal> {
            Err(Refusal::Run("no".into()))
        }
        fn after(&self, _: &Scene, _: &PhaseOutcome, result: &mut PhaseResult) {
            result.warnings.push("refusing looked after".into());
        }
    }
    let log = Arc::new(Mutex::new(Vec::new()));
    let logging = |name| {
        Arc::new(Logging {
            name,
            log: log.clone(),
            ticks: Mutex::new(0),
        }) as Arc<dyn Probe>
    };
    let mut probes = Probes::new(vec![logging("first"), Arc::new(Refusing), logging("last")]);
    let target = MemTarget::new();
    let phase = Phase::new("p", Op::Write, 4096, Layout::file_per_worker(1, 1 << 20));
    let ranks = Ranks::connect().unwrap();
    let scene = Scene {
        phase: &phase,
        target: &target,
        ranks: &ranks,
    };
    assert!(matches!(probes.before(&scene), Err(Refusal::Run(why)) if why == "no"));
    let outcome = run_phase(&target, &phase, &Control::new(1, 1), &Ranked::ALONE);
    let mut result = recorded(&phase, &outcome);
    probes.after(&scene, &outcome, &mut result);
    assert_eq!(*log.lock().unwrap(), ["first before", "first after p"]);
    assert!(!result.warnings.iter().any(|w| w.contains("refusing")));
}
