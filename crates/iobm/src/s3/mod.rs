//! `iobm s3 OP`: S3 load generation against endpoints, or against iobm's own gateway started
//! in-process when none is given ([`crate::gateway`]); the flags checked and handed to the run
//! layer as a plan whose set-up starts the gateway and makes the bucket. The data set of
//! reading operations is uploaded first (not counted); everything the run wrote is under a
//! prefix made for it and is removed afterwards unless `--keep`. The flags' checks in `flags`, the objects and the
//! data-set upload in `objects`, the clean-up in `cleanup`, `iobm quick`'s S3 steps in `quick`.

mod cleanup;
mod drop;
mod flags;
mod objects;
mod quick;
mod trial;

pub use quick::{QuickS3, QUICK_CONCURRENT};

use crate::cli::S3Args;
use crate::gateway::{BuiltinGateway, GatewayCpu};
use crate::targets::{self, Storage};
use cleanup::clean_up;
use flags::{check_args, client_config, credentials, drop_caches_reach, endpoints};
use iobm_engine::{ObjectOp, ObjectSpec, Phase, StopRule};
use iobm_results::{Config, RunResult, RunStatus};
use iobm_run::exit::{Exit, Failure};
use iobm_run::lifecycle::{run_command, Context, Hooks, RunPlan, Stage};
use iobm_run::plan::{self, Placement};
use iobm_run::probe::gateway::GatewayCounters;
use iobm_run::probe::Probe;
use iobm_run::ranks::Ranks;
use iobm_run::session::{describe_io, RunId};
use iobm_s3::sigv4::Credentials;
use iobm_s3::{Endpoint, S3Config};
use iobm_stats::names::{Picks, RunKind};
use iobm_target::Target;
use objects::{object_spec, s3_settings, upload_data_set};
use std::ffi::OsString;
use std::sync::Arc;

/// `iobm s3 OP`: flags checked, the built-in gateway started when no endpoint is named, the
/// target set up, the load run, the run's objects removed.
pub fn s3(args: S3Args, argv: &[OsString]) -> Result<Exit, Failure> {
    let common = args.output.common(&args.measure);
    run_command(argv, &common, |ranks| checked(&args, ranks))
}

/// Every check before anything starts: the flags, the endpoints and where they run, the
/// servers' flags, the key pair.
fn checked<'a>(args: &'a S3Args, ranks: &Ranks) -> Result<S3Plan<'a>, Failure> {
    check_args(args)?;
    let external = endpoints(args)?;
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
    if args.server.server_drop_cmd.is_some()
        && !matches!(
            args.op,
            ObjectOp::Get | ObjectOp::Mixed | ObjectOp::Versioned
        )
    {
        return Err(Failure::input(
            "--server-drop-cmd runs before GETs: use it with get or mixed",
        ));
    }
    let urls: Vec<String> = external.iter().map(|e| e.url.clone()).collect();
    let servers = ranks.agreed(args.server.check(if external.is_empty() {
        crate::servers::Storage::Builtin
    } else {
        crate::servers::Storage::Endpoints(&urls)
    }))?;
    // Checked before anything starts; the built-in gateway brings its own.
    let credentials = if external.is_empty() {
        None
    } else {
        credentials(args)?
    };
    let region = args
        .region
        .clone()
        .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "us-east-1".to_string());
    Ok(S3Plan {
        args,
        external,
        credentials,
        region,
        servers,
    })
}

/// A checked `s3 OP`: the endpoints named (none: the built-in gateway) and their credentials.
struct S3Plan<'a> {
    args: &'a S3Args,
    external: Vec<Endpoint>,
    credentials: Option<Credentials>,
    region: String,
    servers: crate::servers::Servers,
}

/// What one repetition of an S3 run works on, made by its set-up.
struct S3Run<'a> {
    plan: &'a S3Plan<'a>,
    gateway: Option<BuiltinGateway>,
    client: S3Config,
    target: Arc<dyn Target>,
    spec: ObjectSpec,
    /// The data set kept by an earlier run that `--reuse` reads.
    kept: Option<crate::kept::KeptSet>,
    bucket_created: bool,
    run_id: RunId,
    /// `--drop-caches` before the phase, and what it could not drop.
    drop: Option<Arc<drop::ObjectsCacheDrop>>,
}

impl S3Plan<'_> {
    /// The phase of a run through `client` on the objects of `spec` (this rank's share), and the
    /// result's config.
    fn planned(
        &self,
        client: &S3Config,
        (spec, kept): (&ObjectSpec, Option<&crate::kept::KeptSet>),
        (gateway_dir, bucket_created): (Option<&std::path::Path>, bool),
        seed: u64,
        ranks: &Ranks,
    ) -> Result<(Phase, Config), Failure> {
        let args = self.args;
        let op = args.op;
        let workers = args.workers();
        let stop = match (op, args.ops) {
            (_, Some(n)) => StopRule::Ops(share(n, ranks)),
            (ObjectOp::Delete, None) => StopRule::Once,
            (_, None) => StopRule::Duration(args.duration),
        };
        let mut phase = Phase::objects(op, workers, spec.clone(), stop);
        phase.ramp = args.ramp.unwrap_or_default();
        phase.interval = args.measure.interval_for(stop);
        phase.steady = args.measure.steady_for(stop);
        phase.data = args.data;
        phase.max_errors = args.max_errors;
        phase.verify = args.verify.then_some(seed);
        args.load.apply(std::slice::from_mut(&mut phase));
        let (rank, size) = (ranks.rank() as usize, ranks.size() as usize);
        args.rate
            .apply(std::slice::from_mut(&mut phase), rank, size, seed);
        // The client's own cost per request at this shape, measured against a null server.
        let against = crate::cli::Against::NullS3Server;
        let measure = |phase: &Phase| trial::cost(client, phase);
        if let Some(w) = (args.rate).check(std::slice::from_ref(&phase), against, measure) {
            if rank == 0 {
                eprintln!("iobm: warning: {w}");
            }
        }
        if let Some(k) = kept {
            // Read as the run that stored it wrote it.
            phase.data = crate::cli::parse_data(&k.data).map_err(|e| {
                Failure::input(format!("--reuse: the data set's content '{}': {e}", k.data))
            })?;
            phase.verify = args.verify.then_some(k.seed);
        }
        let mut settings = s3_settings(args, client, gateway_dir, bucket_created, spec);
        if ranks.size() > 1 {
            // The run's, not this rank's: every rank's objects are under the run's prefix.
            settings.objects = if needs_data_set(op) { args.objects } else { 0 };
            let run_prefix = client.prefix.trim_end_matches('/').rsplit_once('/');
            settings.prefix = run_prefix.map_or(String::new(), |(p, _)| format!("{p}/"));
        }
        settings.reused =
            kept.map(|k| format!("{} (run {})", crate::kept::run_dir_of(client), k.run_id));
        let run_dir = format!("s3://{}/{}", client.bucket, settings.prefix);
        let mut config = Config {
            s3: Some(settings),
            // A GET's objects were uploaded with this data before the phase (or kept with it).
            data: phase.data.name(),
            ops: args.ops,
            ..plan::config(
                std::slice::from_ref(&phase),
                Placement {
                    dir: gateway_dir.map_or(endpoints_text(client), |d| d.display().to_string()),
                    run_dir,
                    keep: args.keep,
                    ranks: ranks.size(),
                },
            )
        };
        self.servers.apply(&mut config);
        Ok((phase, config))
    }

    /// Makes the run's objects ready through `gateway` (or the endpoints): the client, the
    /// kept data set read back or the bucket made, the phase planned.
    fn prepare<'a>(
        &'a self,
        gateway: Option<&BuiltinGateway>,
        run_id: &RunId,
        ranks: &Ranks,
    ) -> Result<(S3Run<'a>, Phase, Config), Failure> {
        let args = self.args;
        let (endpoints, credentials) = match gateway {
            Some(g) => (vec![g.endpoint.clone()], Some(g.credentials.clone())),
            None => (self.external.clone(), self.credentials.clone()),
        };
        let client = client_config(
            args,
            endpoints,
            credentials,
            self.region.clone(),
            (run_id, ranks),
        )?;
        let target: Arc<dyn Target> = Arc::from(targets::open(Storage::S3(client.clone())));
        let mut spec = object_spec(args, args.op, gateway)?;
        // Under MPI the data set and the operations are divided among the ranks.
        spec.count = share(spec.count, ranks);
        // A kept data set is read as it is: its bucket is not made, its objects are its own.
        let kept = match &args.reuse {
            Some(_) => Some(crate::kept::load(
                target.as_ref(),
                &crate::kept::Reuse {
                    bucket: client.bucket.clone(),
                    prefix: client.prefix.clone(),
                },
            )?),
            None => None,
        };
        if let Some(k) = &kept {
            spec.count = k.objects;
            spec.size = k.sizes();
            // Counted reads of a kept set read each object at most once unless told otherwise:
            // a read again would be served by whatever cache the first one filled.
            if args.ops.is_some_and(|n| n <= k.objects) {
                spec.picks = Picks::Once;
            }
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
        let bucket_created = ranks.agreed(prepared.map_err(|e| bucket_failure(&client, &e)))?;
        versioning_ready(args.op, &*target, (&client, bucket_created), ranks)?;
        let gateway_dir = gateway.map(|g| g.dir.as_path());
        let (phase, config) = self.planned(
            &client,
            (&spec, kept.as_ref()),
            (gateway_dir, bucket_created),
            run_id.seed,
            ranks,
        )?;
        let run = S3Run {
            plan: self,
            gateway: None,
            client,
            target,
            spec,
            kept,
            bucket_created,
            run_id: run_id.clone(),
            drop: None,
        };
        Ok((run, phase, config))
    }
}

impl RunPlan for S3Plan<'_> {
    fn kind(&self) -> RunKind {
        RunKind::S3(self.args.op.name())
    }

    fn checked_config(&self, ranks: &Ranks) -> Option<Config> {
        // A kept data set's objects are known only once it is read.
        if self.args.reuse.is_some() {
            return None;
        }
        let builtin = self.external.is_empty();
        // The built-in gateway always signs; where it runs is not part of the workload.
        let credentials = match builtin {
            true => Some(Credentials {
                access_key: String::new(),
                secret_key: String::new(),
                session_token: None,
            }),
            false => self.credentials.clone(),
        };
        let id = RunId {
            text: String::new(),
            seed: 0,
        };
        let endpoints = self.external.clone();
        let client = client_config(
            self.args,
            endpoints,
            credentials,
            self.region.clone(),
            (&id, ranks),
        )
        .ok()?;
        let mut spec = object_spec(self.args, self.args.op, None).ok()?;
        spec.count = share(spec.count, ranks);
        let gateway_dir = builtin.then(|| std::path::Path::new(""));
        let at = (gateway_dir, false);
        let planned = self.planned(&client, (&spec, None), at, 0, ranks).ok()?;
        Some(planned.1)
    }

    fn set_up<'a>(&'a self, run_id: &RunId, ranks: &'a Ranks) -> Result<Stage<'a>, Failure> {
        // Each repetition on fresh objects: a prefix (and a built-in gateway) of its own.
        let gateway = match self.external.is_empty() {
            true => Some(BuiltinGateway::start(
                self.args.dir.as_deref(),
                run_id,
                &self.region,
            )?),
            false => None,
        };
        match self.prepare(gateway.as_ref(), run_id, ranks) {
            Ok((mut run, phase, config)) => {
                let at = gateway.as_ref().map(|g| g.dir.as_path());
                let (target, workers) = (run.target.clone(), self.args.workers());
                let mut stage = Stage::new(target, vec![phase], workers, config, at);
                stage.steps[0].probes = run.probes(gateway.as_ref());
                run.gateway = gateway;
                Ok(stage.with(run))
            }
            Err(f) => {
                if let Some(g) = gateway {
                    g.stop(false);
                }
                Err(f)
            }
        }
    }
}

impl S3Run<'_> {
    /// What is read around the phase beside the run's own probes: the drop of `--drop-caches`,
    /// the counters of iobm gateways, the built-in `gateway`'s CPU time.
    fn probes(&mut self, gateway: Option<&BuiltinGateway>) -> Vec<Arc<dyn Probe>> {
        let mut probes: Vec<Arc<dyn Probe>> = Vec::new();
        if self.plan.args.drop_caches {
            let objects = gateway.map(|g| {
                let prefix = self.client.prefix.trim_end_matches('/');
                g.dir.join(&self.client.bucket).join(prefix)
            });
            let drop = Arc::new(drop::ObjectsCacheDrop::new(objects));
            self.drop = Some(drop.clone());
            probes.push(drop);
        }
        probes.push(Arc::new(GatewayCounters::new(&self.client.bucket)));
        if gateway.is_some() {
            probes.push(Arc::new(GatewayCpu::default()));
        }
        probes
    }
}

impl Hooks for S3Run<'_> {
    fn before_phases(&mut self, run: &mut RunResult, context: &Context) {
        let (args, ranks) = (self.plan.args, context.ranks);
        let target = self.target.as_ref();
        if needs_data_set(args.op) && self.kept.is_none() {
            upload_data_set(target, args, &self.spec, context.control, run);
        }
        if !ranks.all(run.status == RunStatus::Complete) && run.status == RunStatus::Complete {
            run.status = RunStatus::Failed;
            run.warnings
                .push("another rank could not upload its share of the data set".into());
        }
    }

    fn after_phases(&mut self, run: &mut RunResult, _context: &Context) -> String {
        if let Some(drop) = &self.drop {
            run.warnings.append(&mut drop.warnings.lock().unwrap());
        }
        String::new()
    }

    fn tear_down(self: Box<Self>, run: &mut RunResult, ranks: &Ranks) {
        let args = self.plan.args;
        let target = self.target.as_ref();
        if self.kept.is_some() {
            // Nothing of it is the run's: it stays as it was, whatever happened.
            run.warnings.push(format!(
                "the kept data set {} was only read, and is left as it was",
                crate::kept::run_dir_of(&self.client)
            ));
        } else {
            if args.keep && ranks.size() == 1 && run.status == RunStatus::Complete {
                let id = (&self.client, &self.run_id);
                crate::kept::describe_kept(target, args, id, &self.spec, run);
            }
            // Clean up even after Ctrl-C: only what is under the run's own prefix.
            let gateway = self.gateway.as_ref();
            let context = (args, &self.client, ranks);
            clean_up(target, context, gateway, self.bucket_created, run);
        }
        if let Some(g) = self.gateway {
            let dir = g.dir.display().to_string();
            if let Some(w) = g.stop(args.keep) {
                eprintln!("iobm: warning: {w}");
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
}

/// Whether `op` works on a data set uploaded before it (get, head, delete, list, mixed).
fn needs_data_set(op: ObjectOp) -> bool {
    !matches!(
        op,
        ObjectOp::Put | ObjectOp::Multipart | ObjectOp::Versioned
    )
}

/// `s3 versioned` needs a bucket that keeps versions: iobm turns versioning on only in a
/// bucket it made for the run (and removes that bucket again if it cannot); another bucket
/// must have it on already. Rank 0 asks; every rank gets its answer.
fn versioning_ready(
    op: ObjectOp,
    target: &dyn Target,
    (client, created): (&S3Config, bool),
    ranks: &Ranks,
) -> Result<(), Failure> {
    if op != ObjectOp::Versioned {
        return Ok(());
    }
    let ready = ranks
        .is_root()
        .then(|| versioning_on(target, client, created));
    ranks.agreed(ready.unwrap_or(Ok(())))
}

/// Versioning turned on in the bucket the run `created`, or found on in another.
fn versioning_on(target: &dyn Target, client: &S3Config, created: bool) -> Result<(), Failure> {
    let s3 = iobm_s3::S3Target::new(client.clone());
    if created {
        let enabled = s3.enable_versioning();
        if enabled.is_err() {
            let _ = target.remove_place();
        }
        return enabled.map_err(|e| bucket_failure(client, &e));
    }
    match s3.versioning().map_err(|e| bucket_failure(client, &e))? {
        iobm_s3::Versioning::Enabled => Ok(()),
        state => Err(Failure::input(format!(
            "--bucket {}: versioning is {} there, and s3 versioned needs a bucket that keeps versions: turn it on (aws s3api put-bucket-versioning --bucket {} --versioning-configuration Status=Enabled) or name a bucket iobm creates",
            client.bucket,
            match state {
                iobm_s3::Versioning::Suspended => "suspended",
                _ => "off",
            },
            client.bucket
        ))),
    }
}

/// This rank's share of `n` (operations or objects), the first ranks taking one more.
fn share(n: u64, ranks: &Ranks) -> u64 {
    let (rank, size) = (ranks.rank() as u64, ranks.size() as u64);
    n / size + u64::from(rank < n % size)
}

/// The endpoints, as the result's `dir` names them.
fn endpoints_text(client: &S3Config) -> String {
    let urls: Vec<&str> = client.endpoints.iter().map(|e| e.url.as_str()).collect();
    urls.join(", ")
}

/// Why the bucket cannot be used: the S3 answer's status and code, or the error's kind.
fn bucket_failure(client: &S3Config, e: &std::io::Error) -> Failure {
    let described = describe_io(e);
    let what = iobm_target::error_kind(e);
    let kind = if described.to_lowercase().starts_with(&what.to_lowercase()) {
        String::new()
    } else {
        format!(" ({what})")
    };
    Failure::run(format!(
        "{}: cannot use bucket '{}': {described}{kind}{}",
        endpoints_text(client),
        client.bucket,
        key_pair_hint(&what)
    ))
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
