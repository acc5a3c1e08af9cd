//! `iobm quick`'s S3 steps through the built-in gateway.

use super::{add_server_evidence, server_counters};
use crate::gateway::BuiltinGateway;
use crate::targets::{self, Storage};
use iobm_engine::{Mix, ObjectOp, ObjectSpec, Phase, StopRule};
use iobm_results::checks::JUST_WRITTEN;
use iobm_results::{env, RunStatus};
use iobm_run::execute::execute;
use iobm_run::observe::ResultFile;
use iobm_run::ranks::Ranks;
use iobm_run::session::{describe_io, RunId};
use iobm_s3::{PayloadSigning, S3Config};
use std::path::Path;

/// Workers of quick's S3 steps, and their object size.
pub const QUICK_CONCURRENT: usize = 8;
const QUICK_OBJECT: u64 = 1 << 20;

/// The bucket of `iobm quick`'s S3 steps, in the built-in gateway's own directory.
const QUICK_BUCKET: &str = "iobm";

/// `iobm quick`'s S3 steps: PUT, then GET of what was stored, each for `--step-time`, through the
/// built-in gateway over `dir` (inside quick's own run directory), cleaned up afterwards.
pub fn quick_steps(
    run: &mut iobm_results::RunResult,
    (control, ranks): (&std::sync::Arc<iobm_engine::Control>, &Ranks),
    dir: &Path,
    run_id: &RunId,
    args: &crate::cli::QuickArgs,
    saved: &mut ResultFile<'_>,
) -> Result<(), String> {
    let step = args.step_time;
    let interval = args.measure.interval_for(StopRule::Duration(step));
    std::fs::create_dir(dir).map_err(|e| format!("{}: {}", dir.display(), describe_io(&e)))?;
    let region = "us-east-1";
    let gateway = BuiltinGateway::start(Some(dir), run_id, region).map_err(|f| f.message)?;
    let storage = targets::open(Storage::S3(S3Config {
        endpoints: vec![gateway.endpoint.clone()],
        bucket: QUICK_BUCKET.to_string(),
        prefix: format!("iobm-{}/", run_id.text),
        credentials: Some(gateway.credentials.clone()),
        region: region.to_string(),
        payload: PayloadSigning::Unsigned,
        timeout: std::time::Duration::from_secs(60),
        new_connection_per_request: false,
        first_worker: 0,
        tls: None,
    }));
    let target = storage.as_ref();
    let mut spec = ObjectSpec {
        count: 0,
        size: (QUICK_OBJECT, QUICK_OBJECT),
        range: None,
        part_size: QUICK_OBJECT,
        part_concurrency: 1,
        mix: Mix::default(),
        page_keys: 1000,
        delete_batch: 1,
        retries: 0,
        max_new: env::space(dir).map(|(_, free)| free / 2 / QUICK_OBJECT),
    };
    let result = target
        .prepare()
        .map_err(|e| format!("built-in gateway: {}", describe_io(&e)))
        .map(|_| {
            let first = run.phases.len();
            let mut put = Phase::objects(
                ObjectOp::Put,
                QUICK_CONCURRENT,
                spec.clone(),
                StopRule::Duration(step),
            );
            put.name = "s3 put 1MiB".to_string();
            put.interval = interval;
            put.steady = args.measure.steady_for(put.stop);
            let before = gateway.cpu();
            let counted = server_counters(target, QUICK_BUCKET);
            execute(target, vec![put], run, control, ranks, &mut [saved]);
            gateway.separate_cpu(before, &mut run.phases[first..]);
            add_server_evidence(target, QUICK_BUCKET, &counted, run, first);
            // Every worker stored objects 0, 1, ... of its own: the first `stored` are complete.
            let stored = run.phases.last().map_or(0, |p| {
                p.workers.iter().map(|w| w.span.ops).min().unwrap_or(0) * p.workers.len() as u64
            });
            if stored > 0 && run.status == RunStatus::Complete {
                spec.count = stored;
                let mut get = Phase::objects(
                    ObjectOp::Get,
                    QUICK_CONCURRENT,
                    spec,
                    StopRule::Duration(step),
                );
                get.name = "s3 get 1MiB".to_string();
                get.interval = interval;
                get.steady = args.measure.steady_for(get.stop);
                let before = gateway.cpu();
                let counted = server_counters(target, QUICK_BUCKET);
                execute(target, vec![get], run, control, ranks, &mut [saved]);
                gateway.separate_cpu(before, &mut run.phases[first + 1..]);
                add_server_evidence(target, QUICK_BUCKET, &counted, run, first + 1);
            }
            for p in run.phases[first..].iter_mut() {
                if p.name.starts_with("s3 get") {
                    p.note(JUST_WRITTEN);
                }
            }
        });
    let cleaned = target
        .remove_run_objects(QUICK_CONCURRENT)
        .map_err(|left| left.error)
        .and_then(|_| target.remove_place())
        .map_err(|e| format!("built-in gateway cleanup: {}", describe_io(&e)));
    if let Some(w) = gateway.stop(false) {
        run.warnings.push(w);
    }
    result.and(cleaned)
}
