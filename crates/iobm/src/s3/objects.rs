//! The run's objects: which and how large (`ObjectSpec`), the S3 settings the result records,
//! and the upload of the data set that reading operations work on (not counted).

use crate::cli::S3Args;
use crate::gateway::BuiltinGateway;
use iobm_engine::{run_phase, ObjectOp, ObjectSpec, Phase, PhaseEnd, Ranked, StopRule};
use iobm_results::{env, RunStatus, S3Config as S3Settings};
use iobm_run::exit::Failure;
use iobm_run::session::say;
use iobm_s3::{Endpoint, S3Config};
use iobm_stats::names::Picks;
use iobm_target::Target;

/// The objects of the run: the data set for get, head, delete, list and mixed; through the
/// built-in gateway, a data set that fits in half its free space and a cap on new objects.
pub(super) fn object_spec(
    args: &S3Args,
    op: ObjectOp,
    gateway: Option<&BuiltinGateway>,
) -> Result<ObjectSpec, Failure> {
    let mix = args.mix();
    let needs_data_set = !matches!(op, ObjectOp::Put | ObjectOp::Multipart);
    let spec = ObjectSpec {
        count: if needs_data_set { args.objects } else { 0 },
        size: args.sizes(),
        range: args.range_size,
        part_size: args.part_size,
        part_concurrency: args.part_concurrency as usize,
        mix,
        page_keys: args.page_keys,
        delete_batch: args.batch,
        retries: args.retries,
        max_new: None,
        picks: if args.once {
            Picks::Once
        } else {
            Picks::Random
        },
        access: args.load.access(),
    };
    let mut spec = spec;
    if let Some(g) = gateway.filter(|_| args.reuse.is_none()) {
        // iobm's own gateway writes to a local file system: the data set must fit in half its
        // free space, and new objects stop at that half, so a long run cannot fill it.
        if let Some((_, free)) = env::space(&g.dir) {
            let data_set = spec.total_bytes();
            if data_set > free / 2 {
                return Err(Failure::input(format!(
                    "--objects {} of {}: {} would take more than half of the {} free in {}",
                    spec.count,
                    spec.size.describe(),
                    iobm_stats::format_bytes(data_set),
                    iobm_stats::format_bytes(free),
                    g.dir.display()
                )));
            }
            let stores = [
                ObjectOp::Put,
                ObjectOp::Multipart,
                ObjectOp::Mixed,
                ObjectOp::Versioned,
            ];
            if stores.contains(&op) {
                spec.max_new = Some((free / 2 - data_set) / spec.size.bounds().1.max(1));
            }
        }
    }
    Ok(spec)
}

/// The S3 settings of the result.
pub(super) fn s3_settings(
    args: &S3Args,
    config: &S3Config,
    gateway_dir: Option<&std::path::Path>,
    bucket_created: bool,
    spec: &ObjectSpec,
) -> S3Settings {
    // The objects' own sizes: a kept data set's, not the flags' (--reuse reads it as it is).
    let ((min, max), mix) = (spec.size.bounds(), args.mix());
    S3Settings {
        endpoints: config.endpoints.iter().map(|e| e.url.clone()).collect(),
        builtin_gateway: gateway_dir.is_some(),
        gateway_dir: gateway_dir.map(|d| d.display().to_string()),
        bucket: config.bucket.clone(),
        bucket_created,
        prefix: config.prefix.clone(),
        region: config.region.clone(),
        payload_signing: if config.credentials.is_some() {
            config.payload.name().to_string()
        } else {
            "none".to_string()
        },
        checksum: config.checksum.map(|c| c.name().to_string()),
        concurrent: args.concurrent,
        objects: spec.count,
        obj_size_min: min,
        obj_size_max: max,
        obj_sizes: (!spec.size.is_range()).then(|| spec.size.clone()),
        range_bytes: args.range_size,
        part_size: args.part_size,
        part_concurrency: args.part_concurrency,
        // A list weight only where given: a mix without one hashes as before.
        mix: [mix.get, mix.head, mix.put, mix.delete, mix.list]
            .into_iter()
            .take(if mix.list > 0 { 5 } else { 4 })
            .collect(),
        retries: args.retries,
        max_errors: args.max_errors,
        timeout_s: args.timeout.as_secs_f64(),
        new_connection: args.new_connection,
        max_new_objects: spec.max_new,
        tls: config.endpoints.iter().any(Endpoint::is_tls),
        insecure: args.insecure,
        // In the run's configuration (documents from before kept it here).
        line_rate_bytes_per_s: None,
        upload_bytes_per_s: None,
        delete_batch: args.batch,
        reused: None,
        page_keys: (args.op == ObjectOp::List).then_some(args.page_keys),
        picks: matches!(args.op, ObjectOp::Get | ObjectOp::Head).then_some(spec.picks),
    }
}

/// Uploads the data set that get, head, delete, list and mixed work on (not counted); a failed
/// upload ends the run.
pub(super) fn upload_data_set(
    target: &dyn Target,
    args: &S3Args,
    spec: &ObjectSpec,
    control: &iobm_engine::Control,
    run: &mut iobm_results::RunResult,
) {
    let workers = args.workers();
    let mut upload = Phase::objects(ObjectOp::Put, workers, spec.clone(), StopRule::Once);
    upload.data = args.data;
    let outcome = run_phase(target, &upload, control, &Ranked::ALONE);
    let seconds = outcome.end_ns.saturating_sub(outcome.start_ns) as f64 / 1e9;
    match outcome.end {
        PhaseEnd::Completed => {
            say(&format!(
                "data set: {} objects, {} uploaded in {seconds:.1}s (not counted)\n",
                spec.count,
                iobm_stats::format_bytes(outcome.bytes()),
            ));
            if let Some(s3) = run.config.s3.as_mut().filter(|_| seconds > 0.0) {
                s3.upload_bytes_per_s = Some(outcome.bytes() as f64 / seconds);
            }
        }
        end => {
            run.status = if end == PhaseEnd::Interrupted {
                RunStatus::Interrupted
            } else {
                RunStatus::Failed
            };
            let why = outcome
                .errors
                .first()
                .map_or("interrupted".to_string(), |e| {
                    format!("{} ({})", e.first, e.kind)
                });
            run.warnings
                .push(format!("uploading the data set failed: {why}"));
        }
    }
}
