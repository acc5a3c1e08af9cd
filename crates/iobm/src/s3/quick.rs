//! `iobm quick`'s S3 steps through the built-in gateway: the gateway started over a directory
//! of quick's own, a PUT step, then a GET step of what was stored, each for `--step-time`, the
//! gateway's CPU and counters read around each (probes of the steps), everything removed
//! afterwards.

use crate::cli::QuickArgs;
use crate::gateway::{BuiltinGateway, GatewayCpu};
use crate::targets::{self, Storage};
use iobm_engine::{Mix, ObjectOp, ObjectSpec, Phase, StopRule};
use iobm_results::checks::JUST_WRITTEN;
use iobm_results::{env, RunResult};
use iobm_run::lifecycle::Step;
use iobm_run::probe::gateway::GatewayCounters;
use iobm_run::session::{describe_io, RunId};
use iobm_s3::{PayloadSigning, S3Config};
use iobm_stats::sizes::SizeDist;
use iobm_target::Target;
use std::path::Path;
use std::sync::Arc;

/// Workers of quick's S3 steps, and their object size.
pub const QUICK_CONCURRENT: usize = 8;
const QUICK_OBJECT: u64 = 1 << 20;

/// The bucket of `iobm quick`'s S3 steps, in the built-in gateway's own directory.
const QUICK_BUCKET: &str = "iobm";

/// quick's S3 steps under way: the gateway, its target, the objects, what was read before the
/// step now running, and the first error.
pub struct QuickS3<'a> {
    args: &'a QuickArgs,
    gateway: BuiltinGateway,
    target: Arc<dyn Target>,
    spec: ObjectSpec,
    /// The index of the first S3 phase in the run.
    first: usize,
    error: Option<String>,
}

impl<'a> QuickS3<'a> {
    /// Starts the built-in gateway over `dir` (made for it, inside quick's own run directory).
    pub fn start(
        dir: &Path,
        run_id: &RunId,
        args: &'a QuickArgs,
        run: &RunResult,
    ) -> Result<QuickS3<'a>, String> {
        std::fs::create_dir(dir).map_err(|e| format!("{}: {}", dir.display(), describe_io(&e)))?;
        let region = "us-east-1";
        let gateway = BuiltinGateway::start(Some(dir), run_id, region).map_err(|f| f.message)?;
        let target = Arc::from(targets::open(Storage::S3(S3Config {
            endpoints: vec![gateway.endpoint.clone()],
            bucket: QUICK_BUCKET.to_string(),
            prefix: format!("iobm-{}/", run_id.text),
            credentials: Some(gateway.credentials.clone()),
            region: region.to_string(),
            payload: PayloadSigning::Unsigned,
            checksum: None,
            timeout: std::time::Duration::from_secs(60),
            new_connection_per_request: false,
            versions: false,
            first_worker: 0,
            tls: None,
        })));
        let spec = ObjectSpec {
            count: 0,
            size: SizeDist::Fixed {
                bytes: QUICK_OBJECT,
            },
            range: None,
            part_size: QUICK_OBJECT,
            part_concurrency: 1,
            mix: Mix::default(),
            page_keys: 1000,
            delete_batch: 1,
            retries: 0,
            max_new: env::space(dir).map(|(_, free)| free / 2 / QUICK_OBJECT),
            picks: iobm_stats::names::Picks::Random,
            access: iobm_stats::access::AccessDist::Uniform,
        };
        Ok(QuickS3 {
            args,
            gateway,
            target,
            spec,
            first: run.phases.len(),
            error: None,
        })
    }

    /// The PUT step, once the bucket is made; None when it cannot be.
    pub fn put(&mut self) -> Option<Step> {
        if let Err(e) = self.target.prepare() {
            self.error = Some(format!("built-in gateway: {}", describe_io(&e)));
            return None;
        }
        Some(self.step(ObjectOp::Put, "s3 put 1MiB"))
    }

    /// The GET step, of the objects the PUT step stored; None when it stored none or it ran.
    pub fn get(&mut self, run: &RunResult) -> Option<Step> {
        if run.phases.len() != self.first + 1 {
            return None;
        }
        // Every worker stored objects 0, 1, ... of its own: the first `stored` are complete.
        let stored = run.phases.last().map_or(0, |p| {
            p.workers.iter().map(|w| w.span.ops).min().unwrap_or(0) * p.workers.len() as u64
        });
        if stored == 0 {
            return None;
        }
        self.spec.count = stored;
        Some(self.step(ObjectOp::Get, "s3 get 1MiB"))
    }

    /// A step of one phase of `op`, named `name`, with the gateway's CPU and counters read
    /// around it.
    fn step(&mut self, op: ObjectOp, name: &str) -> Step {
        let stop = StopRule::Duration(self.args.step_time);
        let mut phase = Phase::objects(op, QUICK_CONCURRENT, self.spec.clone(), stop);
        phase.name = name.to_string();
        phase.interval = self.args.measure.interval_for(stop);
        phase.steady = self.args.measure.steady_for(phase.stop);
        let mut step = Step::new(self.target.clone(), vec![phase]);
        step.probes
            .push(Arc::new(GatewayCounters::new(QUICK_BUCKET)));
        step.probes.push(Arc::new(GatewayCpu::default()));
        step
    }

    /// Removes the run's objects and the bucket and stops the gateway; the first error.
    pub fn finish(self, run: &mut RunResult) -> Result<(), String> {
        for p in run.phases[self.first..].iter_mut() {
            if p.name.starts_with("s3 get") {
                p.note(JUST_WRITTEN);
            }
        }
        let target = self.target.as_ref();
        let cleaned = target
            .remove_run_objects(QUICK_CONCURRENT)
            .map_err(|left| left.error)
            .and_then(|_| target.remove_place())
            .map_err(|e| format!("built-in gateway cleanup: {}", describe_io(&e)));
        if let Some(w) = self.gateway.stop(false) {
            run.warnings.push(w);
        }
        self.error.map_or(cleaned, Err)
    }
}
