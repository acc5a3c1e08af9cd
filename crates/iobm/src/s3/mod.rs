//! `iobm s3 OP`: S3 load generation against endpoints, or against iobm's own gateway started
//! in-process when none is given ([`crate::gateway`]). The data set of reading operations is
//! uploaded first (not counted); everything the run wrote is under a prefix made for it and is
//! removed afterwards unless `--keep`. The flags' checks in `flags`, the objects and the
//! data-set upload in `objects`, the clean-up in `cleanup`, `iobm quick`'s S3 steps in `quick`.

mod cleanup;
mod flags;
mod objects;
mod quick;

pub use quick::{quick_steps, QUICK_CONCURRENT};

use crate::cli::S3Args;
use crate::gateway::BuiltinGateway;
use crate::repeat::repeated;
use crate::targets::{self, Storage};
use cleanup::clean_up;
use flags::{check_args, client_config, credentials, drop_caches_reach, endpoints};
use iobm_engine::{ObjectOp, Phase, StopRule};
use iobm_report::text::{render_footer, render_header, render_phase};
use iobm_results::checks::{check, Machine};
use iobm_results::server;
use iobm_results::{env, Config, RunResult, RunStatus};
use iobm_run::execute::execute;
use iobm_run::exit::{Exit, Failure};
use iobm_run::observe::ResultFile;
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, say, RunId};
use iobm_s3::S3Config;
use iobm_target::Target;
use objects::{object_spec, s3_settings, upload_data_set};
use std::ffi::OsString;

/// `iobm s3 OP`: flags checked, the built-in gateway started when no endpoint is named, the
/// target set up, the load run, the run's objects removed.
pub fn s3(args: S3Args, argv: &[OsString]) -> Result<Exit, Failure> {
    let ranks = Ranks::connect()?;
    check_args(&args)?;
    let external = endpoints(&args)?;
    if ranks.size() > 1 && external.is_empty() {
        return Err(Failure::input(
            "the built-in gateway serves one process: under MPI start `iobm serve DIR` (one or more) and pass --endpoint",
        ));
    }
    if args.reuse.is_some() && ranks.size() > 1 {
        return Err(Failure::input(
            "--reuse reads a kept data set in one process, not under MPI",
        ));
    }
    if args.drop_caches && !external.is_empty() {
        ranks.agree(drop_caches_reach(&external))?;
    }
    if args.server.server_drop_cmd.is_some() && !matches!(args.op, ObjectOp::Get | ObjectOp::Mixed)
    {
        return Err(Failure::input(
            "--server-drop-cmd runs before GETs: use it with get or mixed",
        ));
    }
    let urls: Vec<String> = external.iter().map(|e| e.url.clone()).collect();
    let servers = args.server.check(if external.is_empty() {
        crate::servers::Storage::Builtin
    } else {
        crate::servers::Storage::Endpoints(&urls)
    });
    ranks.agree(servers.as_ref().map(|_| ()).map_err(Failure::clone))?;
    let servers = servers?;
    // Checked before anything starts; the built-in gateway brings its own.
    let credentials = if external.is_empty() {
        None
    } else {
        credentials(&args)?
    };
    if session::checking_only() {
        return Ok(Exit::Ok);
    }
    let region = args
        .region
        .clone()
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "us-east-1".to_string());
    // Each repetition on fresh objects: a prefix (and a built-in gateway) of its own.
    let run = repeated(args.measure.repeat, &ranks, |_| {
        let run_id = ranks.share(&RunId::generate());
        let gateway = if external.is_empty() {
            Some(BuiltinGateway::start(
                args.dir.as_deref(),
                &run_id,
                &region,
            )?)
        } else {
            None
        };
        let (endpoints, credentials) = match &gateway {
            Some(g) => (vec![g.endpoint.clone()], Some(g.credentials.clone())),
            None => (external.clone(), credentials.clone()),
        };
        let config = client_config(
            &args,
            endpoints,
            credentials,
            region.clone(),
            (&run_id, &ranks),
        );
        let config = match config {
            Ok(c) => c,
            Err(f) => {
                if let Some(g) = gateway {
                    g.stop(false);
                }
                return Err(f);
            }
        };
        let target = targets::open(Storage::S3(config.clone()));
        let result = run(
            &ranks,
            &args,
            argv,
            (target.as_ref(), &config, &servers),
            &run_id,
            gateway.as_ref(),
        );
        let mut result = result;
        if let Some(g) = gateway {
            let dir = g.dir.display().to_string();
            if let Some(w) = g.stop(args.keep) {
                eprintln!("iobm: warning: {w}");
                if let Ok(run) = &mut result {
                    run.left_behind.push(iobm_results::LeftBehind {
                        location: dir,
                        what: "directory".into(),
                        count: None,
                        at_most: None,
                        error: w,
                    });
                }
            }
        }
        result
    })?;
    crate::files::finish_ranks(&run, &args.output, &ranks)
}

fn run(
    ranks: &Ranks,
    args: &S3Args,
    argv: &[OsString],
    (target, config, servers): (&dyn Target, &S3Config, &crate::servers::Servers),
    run_id: &RunId,
    gateway: Option<&BuiltinGateway>,
) -> Result<RunResult, Failure> {
    let where_ = config
        .endpoints
        .iter()
        .map(|e| e.url.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let op = args.op;
    let needs_data_set = !matches!(op, ObjectOp::Put | ObjectOp::Multipart);
    let mut spec = object_spec(args, op, gateway)?;
    // Under MPI the data set and the operations are divided among the ranks.
    let share = |n: u64| {
        n / ranks.size() as u64 + u64::from((ranks.rank() as u64) < n % ranks.size() as u64)
    };
    spec.count = share(spec.count);
    // A kept data set is read as it is: its bucket is not made, its objects are its own.
    let kept = match &args.reuse {
        Some(_) => Some(crate::kept::load(
            target,
            &crate::kept::Reuse {
                bucket: config.bucket.clone(),
                prefix: config.prefix.clone(),
            },
        )?),
        None => None,
    };
    if let Some(k) = &kept {
        spec.count = k.objects;
        spec.size = (k.obj_size_min, k.obj_size_max);
        if args.verify && k.generator != crate::rundir::GENERATOR {
            return Err(Failure::input(format!(
                "--verify: the data set under --reuse {} was made by another version of iobm's data generator ({}, this one's is {})",
                args.reuse.as_deref().unwrap_or_default(),
                k.generator,
                crate::rundir::GENERATOR
            )));
        }
    }
    // Rank 0 makes the bucket (or finds it); the others find it made.
    let prepared = if ranks.is_root() && kept.is_none() {
        target.prepare()
    } else {
        Ok(false)
    };
    let prepared = prepared.map_err(|e| {
        // The description names an S3 answer's status and code; other errors get their kind.
        let described = describe_io(&e);
        let what = iobm_target::error_kind(&e);
        let kind = if described.to_lowercase().starts_with(&what.to_lowercase()) {
            String::new()
        } else {
            format!(" ({what})")
        };
        Failure::run(format!(
            "{where_}: cannot use bucket '{}': {described}{kind}{}",
            config.bucket,
            key_pair_hint(&what)
        ))
    });
    ranks.agree(prepared.as_ref().map(|_| ()).map_err(Failure::clone))?;
    let bucket_created = prepared?;
    let workers = args.concurrent as usize;
    let control = session::control(run_id, workers);
    let stop = match (op, args.ops) {
        (_, Some(n)) => StopRule::Ops(share(n)),
        (ObjectOp::Delete, None) => StopRule::Once,
        (_, None) => StopRule::Duration(args.duration),
    };
    let mut phase = Phase::objects(op, workers, spec.clone(), stop);
    phase.ramp = args.ramp.unwrap_or_default();
    phase.interval = args.measure.interval_for(stop);
    phase.data = args.data;
    phase.max_errors = args.max_errors;
    phase.verify = args.verify.then_some(run_id.seed);
    if let Some(k) = &kept {
        // Read as the run that stored it wrote it.
        phase.data = crate::cli::parse_data(&k.data).map_err(|e| {
            Failure::input(format!("--reuse: the data set's content '{}': {e}", k.data))
        })?;
        phase.verify = args.verify.then_some(k.seed);
    }

    let mut settings = s3_settings(args, config, gateway, bucket_created, &spec);
    if ranks.size() > 1 {
        // The run's, not this rank's: every rank's objects are under the run's prefix.
        settings.objects = if needs_data_set { args.objects } else { 0 };
        let run_prefix = config.prefix.trim_end_matches('/').rsplit_once('/');
        settings.prefix = run_prefix.map_or(String::new(), |(p, _)| format!("{p}/"));
    }
    settings.reused = kept
        .as_ref()
        .map(|k| format!("{} (run {})", crate::kept::run_dir_of(config), k.run_id));
    let run_dir = format!("s3://{}/{}", config.bucket, settings.prefix);
    let mut run_config = Config {
        s3: Some(settings),
        // A GET's objects were uploaded with this data before the phase (or kept with it).
        data: phase.data.name(),
        server_ram_bytes: args.server.server_ram,
        ops: args.ops,
        ..plan::config(
            std::slice::from_ref(&phase),
            Placement {
                dir: gateway.map_or(where_.clone(), |g| g.dir.display().to_string()),
                run_dir,
                keep: args.keep,
                ranks: ranks.size(),
            },
        )
    };
    servers.apply(&mut run_config);
    let environment = env::capture(gateway.map(|g| g.dir.as_path()));
    let kind = format!("s3 {}", op.name());
    let mut run = session::skeleton(&kind, run_id, argv, run_config, environment, &control);
    run.label = args.output.label.clone();
    ranks.describe(&mut run);
    say(&render_header(&run));

    if needs_data_set && kept.is_none() {
        upload_data_set(target, args, &spec, &control, &mut run);
    }
    if !ranks.all(run.status == RunStatus::Complete) && run.status == RunStatus::Complete {
        run.status = RunStatus::Failed;
        run.warnings
            .push("another rank could not upload its share of the data set".into());
    }
    let dropped = match gateway {
        Some(g) if args.drop_caches && run.status == RunStatus::Complete => {
            g.drop_caches(&config.bucket, &config.prefix, &mut run.warnings)
        }
        // Servers on this host (checked before the run): their page cache is this machine's.
        None if args.drop_caches && run.status == RunStatus::Complete => {
            if iobm_target::posix::drop_system_cache() {
                "system"
            } else {
                run.warnings.push(
                    "--drop-caches: the page cache could not be dropped (/proc/sys/vm/drop_caches is not writable)".into(),
                );
                "nothing"
            }
        }
        _ => "nothing",
    };
    if run.status == RunStatus::Complete {
        let gateway_before = gateway.map(BuiltinGateway::cpu);
        // Rank 0 reads the gateways' counters; every rank has uploaded its share by now.
        let counted_before = if ranks.is_root() {
            server_counters(target, &config.bucket)
        } else {
            Vec::new()
        };
        let mut saved = ResultFile::new(args.output.json());
        execute(
            target,
            vec![phase],
            &mut run,
            &control,
            ranks,
            &mut [&mut saved],
        );
        if let (Some(g), Some(before)) = (gateway, gateway_before) {
            g.separate_cpu(before, &mut run.phases);
        }
        for phase in run.phases.iter_mut().filter(|_| dropped != "nothing") {
            phase.settings.cache_dropped = match phase.settings.cache_dropped.as_str() {
                "servers" => format!("{dropped}+servers"),
                _ => dropped.to_string(),
            };
            phase.settings.drop_cache = true;
        }
        add_server_evidence(target, &config.bucket, &counted_before, &mut run, 0);
        for phase in &run.phases {
            say(&format!("\n{}", render_phase(phase, &run.environment)));
        }
    }

    if kept.is_some() {
        // Nothing of it is the run's: it stays as it was, whatever happened.
        run.warnings.push(format!(
            "the kept data set {} was only read, and is left as it was",
            crate::kept::run_dir_of(config)
        ));
        say(&format!("\n{}", render_footer(&run)));
        return Ok(run);
    }
    if args.keep && ranks.size() == 1 && run.status == RunStatus::Complete {
        crate::kept::describe_kept(target, args, (config, run_id), &spec, &mut run);
    }
    // Clean up even after Ctrl-C: only what is under the run's own prefix.
    clean_up(
        target,
        (args, config, ranks),
        gateway,
        bucket_created,
        &mut run,
    );
    say(&format!("\n{}", render_footer(&run)));
    Ok(run)
}

/// What to check when the server refuses the request's signature or its access key.
fn key_pair_hint(kind: &str) -> String {
    let why = if kind.ends_with("SignatureDoesNotMatch") {
        "the server holds another secret for this access key"
    } else if kind.ends_with("InvalidAccessKeyId") {
        "the server knows no such access key"
    } else {
        return String::new();
    };
    format!(
        " (check the key pair: {why}; --access-key and --secret-key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"
    )
}

/// The counters for `bucket` of each endpoint that is an iobm gateway (None for the others).
fn server_counters(target: &dyn Target, bucket: &str) -> Vec<Option<server::Counters>> {
    target
        .server_counters()
        .iter()
        .map(|text| text.as_deref().map(|t| server::parse(t, bucket)))
        .collect()
}

/// Adds to the phases from `first` on what each iobm gateway counted since `before`, and
/// checks them again with that evidence.
fn add_server_evidence(
    target: &dyn Target,
    bucket: &str,
    before: &[Option<server::Counters>],
    run: &mut iobm_results::RunResult,
    first: usize,
) {
    let after = server_counters(target, bucket);
    let evidence: Vec<_> = before
        .iter()
        .zip(&after)
        .enumerate()
        .filter_map(|(i, pair)| match pair {
            (Some(b), Some(a)) => Some(server::evidence(target.endpoint_of(i)?, b, a)),
            _ => None,
        })
        .collect();
    if evidence.is_empty() {
        return;
    }
    let machine = Machine::of(run);
    for phase in &mut run.phases[first..] {
        // The gateways' own first, then those of --server-metrics.
        let others = std::mem::take(&mut phase.cache.servers);
        phase.cache.servers = evidence.iter().cloned().chain(others).collect();
        check(phase, &machine);
    }
}
