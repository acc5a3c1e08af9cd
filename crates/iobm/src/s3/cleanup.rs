//! The clean-up after a run: the run's objects, unfinished uploads and a bucket it created,
//! removed unless `--keep`, what remains recorded in `left_behind`.

use crate::cli::S3Args;
use crate::gateway::BuiltinGateway;
use iobm_run::ranks::Ranks;
use iobm_run::session::describe_io;
use iobm_s3::S3Config;
use iobm_stats::names::OpName;
use iobm_target::Target;

/// Removes the run's objects and unfinished uploads (and the bucket, if the run created it)
/// unless `--keep`; what could not be removed is recorded in the run's `left_behind`.
pub(super) fn clean_up(
    target: &dyn Target,
    (args, config, ranks): (&S3Args, &S3Config, &Ranks),
    gateway: Option<&BuiltinGateway>,
    bucket_created: bool,
    run: &mut iobm_results::RunResult,
) {
    let workers = args.workers();
    let objects = format!("s3://{}/{}", config.bucket, config.prefix);
    if args.keep {
        run.warnings.push(format!(
            "objects kept under {objects}{}",
            gateway.map_or(String::new(), |g| format!(
                " (gateway directory {})",
                g.dir.display()
            ))
        ));
        return;
    }
    iobm_run::progress::note(&format!("deleting the run's objects under {objects} ..."));
    // Every rank its own objects; then rank 0 the bucket, once all are empty.
    let removed = target.remove_run_objects(workers);
    iobm_run::progress::clear_line();
    let all_removed = ranks.all(removed.is_ok());
    if let Err(left) = removed {
        objects_left(left, &objects, run, ranks);
    }
    if bucket_created && ranks.is_root() {
        remove_bucket(target, config, all_removed, run);
    }
}

/// Records the objects and unfinished uploads the clean-up left under `objects`.
fn objects_left(
    left: iobm_target::Leftover,
    objects: &str,
    run: &mut iobm_results::RunResult,
    ranks: &Ranks,
) {
    let error = describe_io(&left.error);
    // Rank 0's phases hold every rank's operations: an upper bound for its own prefix.
    let at_most = left
        .objects
        .is_none()
        .then(|| stored_at_most(run, ranks))
        .flatten();
    let mut lost = vec![iobm_results::LeftBehind {
        location: objects.to_string(),
        what: "objects".into(),
        count: left.objects,
        at_most,
        error: error.clone(),
    }];
    if left.uploads.is_some_and(|n| n > 0) {
        lost.push(iobm_results::LeftBehind {
            location: objects.to_string(),
            what: "unfinished multipart uploads".into(),
            count: left.uploads,
            at_most: None,
            error,
        });
    }
    for l in &lost {
        run.warnings.push(format!(
            "the clean-up failed after {} tries: {} (remove them with: aws s3 rm --recursive {objects})",
            iobm_s3::CLEANUP_TRIES,
            l.describe()
        ));
    }
    run.left_behind.extend(lost);
}

/// Deletes the bucket the run created once every rank's objects are gone (rank 0).
fn remove_bucket(
    target: &dyn Target,
    config: &S3Config,
    all_removed: bool,
    run: &mut iobm_results::RunResult,
) {
    let deleted = if all_removed {
        target.remove_place()
    } else {
        Err(std::io::Error::other("objects remain in it"))
    };
    match deleted {
        Ok(()) => {}
        // Another run's objects (runs started together on one bucket): not this run's to
        // remove, nor a failure.
        Err(e) if iobm_target::error_kind(&e).contains("BucketNotEmpty") => {
            run.warnings.push(format!(
                "bucket '{}' that this run created was kept: it holds objects of another run",
                config.bucket
            ))
        }
        Err(e) => {
            let left = iobm_results::LeftBehind {
                location: format!("s3://{}", config.bucket),
                what: "bucket".into(),
                count: None,
                at_most: None,
                error: describe_io(&e),
            };
            run.warnings.push(format!(
                "could not delete the bucket that this run created: {}",
                left.describe()
            ));
            run.left_behind.push(left);
        }
    }
}

/// The most objects the run can have left: the data set and every object it stored or tried
/// to, less those it deleted, by its phases' books (rank 0's hold every rank's; the other
/// ranks cannot tell).
pub(super) fn stored_at_most(run: &iobm_results::RunResult, ranks: &Ranks) -> Option<u64> {
    let s3 = run.config.s3.as_ref().filter(|_| ranks.is_root())?;
    let operations = run.phases.iter().flat_map(|p| &p.operations);
    let (mut stored, mut deleted) = (s3.objects, 0);
    for o in operations {
        match o.op {
            OpName::Put | OpName::Multipart => stored += o.ops + o.errors,
            OpName::Delete => deleted += o.keys.max(o.ops),
            _ => {}
        }
    }
    Some(stored.saturating_sub(deleted))
}
