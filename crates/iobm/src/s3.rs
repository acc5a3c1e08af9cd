//! `iobm s3 OP`: S3 load generation against endpoints, or against iobm's own gateway started
//! in-process when none is given ([`crate::gateway`]). The data set of reading operations is
//! uploaded first (not counted); everything the run wrote is under a prefix made for it and is
//! removed afterwards unless `--keep`. Also `iobm quick`'s S3 steps.

use crate::cli::{PayloadArg, S3Args};
use crate::gateway::BuiltinGateway;
use crate::repeat::repeated;
use crate::targets::{self, Storage};
use iobm_engine::{run_phase, Mix, ObjectOp, ObjectSpec, Phase, PhaseEnd, StopRule};
use iobm_report::text::{render_footer, render_header, render_phase};
use iobm_results::checks::{check, Machine, JUST_WRITTEN};
use iobm_results::server;
use iobm_results::{env, Config, RunResult, RunStatus, S3Config as S3Settings};
use iobm_run::execute::execute;
use iobm_run::exit::{Exit, Failure};
use iobm_run::observe::ResultFile;
use iobm_run::plan::{self, Placement};
use iobm_run::ranks::Ranks;
use iobm_run::session::{self, describe_io, say, RunId};
use iobm_s3::sigv4::Credentials;
use iobm_s3::{Endpoint, PayloadSigning, S3Config};
use iobm_target::Target;
use std::ffi::OsString;
use std::path::Path;

/// The endpoints given (flag, then `AWS_ENDPOINT_URL`), parsed; empty: use the built-in gateway.
fn endpoints(args: &S3Args) -> Result<Vec<Endpoint>, Failure> {
    let given: Vec<String> = if args.endpoint.is_empty() {
        std::env::var("AWS_ENDPOINT_URL")
            .ok()
            .filter(|v| !v.trim().is_empty() && args.dir.is_none())
            .into_iter()
            .collect()
    } else {
        args.endpoint.clone()
    };
    let scheme = if args.tls { "https" } else { "http" };
    given
        .iter()
        .map(|e| e.trim())
        .filter(|e| !e.is_empty())
        .map(|e| {
            let url = if e.contains("://") {
                e.to_string()
            } else {
                format!("{scheme}://{e}")
            };
            Endpoint::parse(&url).map_err(|m| Failure::input(format!("--endpoint {m}")))
        })
        .collect()
}

impl S3Args {
    /// Smallest and largest object size.
    fn sizes(&self) -> (u64, u64) {
        self.obj_size_range
            .unwrap_or((self.obj_size, self.obj_size))
    }

    /// The weights of a mixed run.
    fn mix(&self) -> Mix {
        Mix {
            get: self.mix_get,
            head: self.mix_head,
            put: self.mix_put,
            delete: self.mix_delete,
        }
    }
}

fn check_bucket(name: &str) -> Result<(), Failure> {
    let ok = (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !name.starts_with(['-', '.'])
        && !name.ends_with(['-', '.']);
    if ok {
        Ok(())
    } else {
        Err(Failure::input(format!(
            "--bucket '{name}': bucket names are 3 to 63 lower-case letters, digits, '-' and '.'"
        )))
    }
}

/// Every check of the flags, before anything is started or created.
fn check_args(args: &S3Args) -> Result<(), Failure> {
    args.output.check()?;
    check_bucket(&args.bucket)?;
    let (_, max) = args.sizes();
    if max == 0 {
        return Err(Failure::input("--obj-size must be greater than 0"));
    }
    if args.op == ObjectOp::Multipart && args.part_size > max {
        eprintln!("iobm: note: --part-size is larger than the objects: one part each");
    } else if args.op == ObjectOp::Multipart && args.part_size < 5 << 20 {
        return Err(Failure::input(format!(
            "--part-size {}: S3 refuses parts under 5 MiB but the last (EntityTooSmall)",
            iobm_stats::format_bytes(args.part_size)
        )));
    }
    let mix = args.mix();
    if args.batch > 1 && args.op != ObjectOp::Delete {
        return Err(Failure::input("--batch works with delete"));
    }
    if args.verify && args.data == iobm_engine::DataKind::Zero {
        return Err(Failure::input(
            "--verify needs stamped data: --data random or compressible:PCT",
        ));
    }
    if args.verify && !matches!(args.op, ObjectOp::Get | ObjectOp::Put | ObjectOp::Mixed) {
        return Err(Failure::input(
            "--verify checks what GETs return and the ETags PUTs get: use it with get, put or mixed",
        ));
    }
    if args.op == ObjectOp::Mixed && mix.get + mix.head + mix.put + mix.delete == 0 {
        return Err(Failure::input(
            "--get, --head, --put and --delete are all 0",
        ));
    }
    if let Some(reuse) = &args.reuse {
        check_reuse(args, reuse)?;
    }
    let prefix = args.prefix.trim_matches('/');
    if prefix.contains("//") || prefix.split('/').any(|p| p == "..") {
        return Err(Failure::input(format!(
            "--prefix '{}': empty or '..' parts",
            args.prefix
        )));
    }
    Ok(())
}

/// `--reuse` reads a kept data set and changes nothing in it: only operations that read.
fn check_reuse(args: &S3Args, reuse: &str) -> Result<(), Failure> {
    crate::kept::Reuse::parse(reuse, &args.bucket)?;
    match args.op {
        ObjectOp::Get | ObjectOp::Head => Ok(()),
        ObjectOp::Mixed if args.mix_put == 0 && args.mix_delete == 0 => Ok(()),
        ObjectOp::Mixed => Err(Failure::input(
            "--reuse only reads the kept data set: mixed with --reuse takes --put 0 --delete 0",
        )),
        op => Err(Failure::input(format!(
            "--reuse works with get, head and mixed, not {} (it only reads the kept data set)",
            op.name()
        ))),
    }
}

/// The key pair requests are signed with, from the flags or `AWS_*`; none: unsigned.
fn credentials(args: &S3Args) -> Result<Option<Credentials>, Failure> {
    match (&args.access_key, &args.secret_key) {
        (Some(a), Some(s)) => Ok(Some(Credentials {
            access_key: a.clone(),
            secret_key: s.clone(),
        })),
        (None, None) => {
            eprintln!("iobm: note: no credentials (--access-key/--secret-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY): requests are not signed");
            Ok(None)
        }
        _ => Err(Failure::input(
            "--access-key and --secret-key go together (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)",
        )),
    }
}

/// How the client talks to the endpoints: the run's own key prefix, signing, TLS.
fn client_config(
    args: &S3Args,
    endpoints: Vec<Endpoint>,
    credentials: Option<Credentials>,
    region: String,
    (run_id, ranks): (&RunId, &Ranks),
) -> Result<S3Config, Failure> {
    let prefix = args.prefix.trim_matches('/');
    let reuse = match &args.reuse {
        Some(r) => Some(crate::kept::Reuse::parse(r, &args.bucket)?),
        None => None,
    };
    let mut key_prefix = match &reuse {
        // The kept data set's own prefix: the run only reads it.
        Some(r) => r.prefix.clone(),
        None if prefix.is_empty() => format!("iobm-{}/", run_id.text),
        None => format!("{prefix}/iobm-{}/", run_id.text),
    };
    // Under MPI each rank's objects are under a prefix of its own: no key is written twice.
    if ranks.size() > 1 {
        key_prefix.push_str(&format!("r{}/", ranks.rank()));
    }
    let tls = if endpoints.iter().any(Endpoint::is_tls) {
        Some(iobm_s3::tls::client_config(args.insecure).map_err(Failure::input)?)
    } else {
        None
    };
    Ok(S3Config {
        tls,
        endpoints,
        bucket: reuse.map_or(args.bucket.clone(), |r| r.bucket),
        prefix: key_prefix,
        credentials,
        region,
        payload: match args.payload_signing {
            PayloadArg::Unsigned => PayloadSigning::Unsigned,
            PayloadArg::Sha256 => PayloadSigning::Sha256,
        },
        timeout: args.timeout,
        new_connection_per_request: args.new_connection,
        first_worker: ranks.rank() as usize * args.concurrent as usize,
    })
}

/// `--drop-caches` with named endpoints: this machine's page cache is theirs only when every
/// one is on this host, and dropping it needs root.
fn drop_caches_reach(external: &[Endpoint]) -> Result<(), Failure> {
    let instead = "drop the server's page cache by hand (sync; echo 3 > /proc/sys/vm/drop_caches there) between `iobm s3 put --keep` and `iobm s3 get --reuse PREFIX`, or give --server-drop-cmd CMD";
    if let Some(e) = external.iter().find(|e| !server::on_this_host(&e.url)) {
        return Err(Failure::input(format!(
            "--drop-caches drops this machine's page cache, not that of the server at {}: {instead}",
            e.url
        )));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(Failure::input(format!(
            "--drop-caches with a server on this host drops the whole page cache, which needs root: run as root, or {instead}"
        )));
    }
    Ok(())
}

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
    run.label = args.label.clone();
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

/// The objects of the run: the data set for get, head, delete, list and mixed; through the
/// built-in gateway, a data set that fits in half its free space and a cap on new objects.
fn object_spec(
    args: &S3Args,
    op: ObjectOp,
    gateway: Option<&BuiltinGateway>,
) -> Result<ObjectSpec, Failure> {
    let ((min, max), mix) = (args.sizes(), args.mix());
    let needs_data_set = !matches!(op, ObjectOp::Put | ObjectOp::Multipart);
    let spec = ObjectSpec {
        count: if needs_data_set { args.objects } else { 0 },
        size: (min, max),
        range: args.range_size,
        part_size: args.part_size,
        part_concurrency: args.part_concurrency as usize,
        mix,
        page_keys: args.page_keys,
        delete_batch: args.batch,
        retries: args.retries,
        max_new: None,
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
                    iobm_stats::format_bytes(max),
                    iobm_stats::format_bytes(data_set),
                    iobm_stats::format_bytes(free),
                    g.dir.display()
                )));
            }
            if matches!(op, ObjectOp::Put | ObjectOp::Multipart | ObjectOp::Mixed) {
                spec.max_new = Some((free / 2 - data_set) / max.max(1));
            }
        }
    }
    Ok(spec)
}

/// The S3 settings of the result.
fn s3_settings(
    args: &S3Args,
    config: &S3Config,
    gateway: Option<&BuiltinGateway>,
    bucket_created: bool,
    spec: &ObjectSpec,
) -> S3Settings {
    let ((min, max), mix) = (args.sizes(), args.mix());
    S3Settings {
        endpoints: config.endpoints.iter().map(|e| e.url.clone()).collect(),
        builtin_gateway: gateway.is_some(),
        gateway_dir: gateway.map(|g| g.dir.display().to_string()),
        bucket: config.bucket.clone(),
        bucket_created,
        prefix: config.prefix.clone(),
        region: config.region.clone(),
        payload_signing: if config.credentials.is_some() {
            config.payload.name().to_string()
        } else {
            "none".to_string()
        },
        concurrent: args.concurrent,
        objects: spec.count,
        obj_size_min: min,
        obj_size_max: max,
        range_bytes: args.range_size,
        part_size: args.part_size,
        part_concurrency: args.part_concurrency,
        mix: vec![mix.get, mix.head, mix.put, mix.delete],
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
    }
}

/// Uploads the data set that get, head, delete, list and mixed work on (not counted); a failed
/// upload ends the run.
fn upload_data_set(
    target: &dyn Target,
    args: &S3Args,
    spec: &ObjectSpec,
    control: &iobm_engine::Control,
    run: &mut iobm_results::RunResult,
) {
    let workers = args.concurrent as usize;
    let mut upload = Phase::objects(ObjectOp::Put, workers, spec.clone(), StopRule::Once);
    upload.data = args.data;
    let outcome = run_phase(target, &upload, control);
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

/// Removes the run's objects and unfinished uploads (and the bucket, if the run created it)
/// unless `--keep`; what could not be removed is recorded in the run's `left_behind`.
fn clean_up(
    target: &dyn Target,
    (args, config, ranks): (&S3Args, &S3Config, &Ranks),
    gateway: Option<&BuiltinGateway>,
    bucket_created: bool,
    run: &mut iobm_results::RunResult,
) {
    let workers = args.concurrent as usize;
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
        let error = describe_io(&left.error);
        // Rank 0's phases hold every rank's operations: an upper bound for its own prefix.
        let at_most = left
            .objects
            .is_none()
            .then(|| stored_at_most(run, ranks))
            .flatten();
        let mut lost = vec![iobm_results::LeftBehind {
            location: objects.clone(),
            what: "objects".into(),
            count: left.objects,
            at_most,
            error: error.clone(),
        }];
        if left.uploads.is_some_and(|n| n > 0) {
            lost.push(iobm_results::LeftBehind {
                location: objects.clone(),
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
    if !bucket_created || !ranks.is_root() {
        return;
    }
    let bucket = format!("s3://{}", config.bucket);
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
                location: bucket,
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
fn stored_at_most(run: &iobm_results::RunResult, ranks: &Ranks) -> Option<u64> {
    let s3 = run.config.s3.as_ref().filter(|_| ranks.is_root())?;
    let operations = run.phases.iter().flat_map(|p| &p.operations);
    let (mut stored, mut deleted) = (s3.objects, 0);
    for o in operations {
        match o.op.as_str() {
            "put" | "multipart" => stored += o.ops + o.errors,
            "delete" => deleted += o.keys.max(o.ops),
            _ => {}
        }
    }
    Some(stored.saturating_sub(deleted))
}

/// Workers of quick's S3 steps, and their object size.
pub const QUICK_CONCURRENT: usize = 8;
const QUICK_OBJECT: u64 = 1 << 20;

/// The bucket of `iobm quick`'s S3 steps, in the built-in gateway's own directory.
const QUICK_BUCKET: &str = "iobm";

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

/// `iobm quick`'s S3 steps: PUT, then GET of what was stored, each for `--step-time`, through the
/// built-in gateway over `dir` (inside quick's own run directory), cleaned up afterwards.
pub fn quick_steps(
    run: &mut iobm_results::RunResult,
    control: &std::sync::Arc<iobm_engine::Control>,
    ranks: &Ranks,
    dir: &Path,
    run_id: &RunId,
    args: &crate::cli::QuickArgs,
    saved: &mut ResultFile,
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
