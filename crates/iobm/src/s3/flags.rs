//! The flags of `iobm s3` checked before anything starts, and turned into the client's
//! configuration: endpoints, key pair, the run's own key prefix.

use crate::cli::S3Args;
use iobm_engine::{Mix, ObjectOp};
use iobm_results::server;
use iobm_run::exit::Failure;
use iobm_run::ranks::Ranks;
use iobm_run::session::RunId;
use iobm_s3::sigv4::Credentials;
use iobm_s3::{Endpoint, S3Config};
use iobm_stats::sizes::SizeDist;

/// The endpoints given (flag, then `AWS_ENDPOINT_URL`), parsed; empty: use the built-in gateway.
pub(super) fn endpoints(args: &S3Args) -> Result<Vec<Endpoint>, Failure> {
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
    /// The workers of this process (`--concurrent`), each with its own connection.
    pub(super) fn workers(&self) -> usize {
        self.concurrent as usize
    }

    /// How object sizes are drawn: `--obj-size-range` (uniform), else `--obj-size`.
    pub(super) fn sizes(&self) -> SizeDist {
        match self.obj_size_range {
            Some((min, max)) => SizeDist::Uniform { min, max },
            None => self.obj_size.clone(),
        }
    }

    /// The weights of a mixed run: those given, the others 0; none given, the engine's
    /// default mix.
    pub(super) fn mix(&self) -> Mix {
        let given = [
            self.mix_get,
            self.mix_head,
            self.mix_put,
            self.mix_delete,
            self.mix_list,
        ];
        if given.iter().all(Option::is_none) {
            return Mix::default();
        }
        let [get, head, put, delete, list] = given.map(|w| w.unwrap_or(0));
        Mix {
            get,
            head,
            put,
            delete,
            list,
        }
    }
}

pub(super) fn check_bucket(name: &str) -> Result<(), Failure> {
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

/// A skewed `--access` only where objects of the data set are picked at random.
fn check_access(args: &S3Args) -> Result<(), Failure> {
    let access = args.load.access();
    let picks = matches!(args.op, ObjectOp::Get | ObjectOp::Head | ObjectOp::Mixed);
    if access.is_uniform() {
        Ok(())
    } else if !picks {
        Err(Failure::input(format!(
            "--access {}: applies to s3 get, head and mixed, which pick objects of the data set",
            access.describe()
        )))
    } else if args.once {
        Err(Failure::input(format!(
            "--access {}: --once reads every object once, in a shuffled order",
            access.describe()
        )))
    } else {
        Ok(())
    }
}

/// Every check of the flags, before anything is started or created.
pub(super) fn check_args(args: &S3Args) -> Result<(), Failure> {
    if args.rate.rate_sweep.is_some() {
        return Err(Failure::input(
            "--rate-sweep applies to iobm read; run iobm s3 once per --rate (a plan file's matrix does it)",
        ));
    }
    check_rate(args)?;
    check_access(args)?;
    args.output.check()?;
    let timed = args.ops.is_none() && args.op != ObjectOp::Delete;
    args.measure
        .check_steady(timed.then_some(args.duration), "--duration")?;
    check_bucket(&args.bucket)?;
    let (_, max) = args.sizes().bounds();
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
    let mixes = matches!(args.op, ObjectOp::Mixed | ObjectOp::Versioned);
    if args.checksum.is_some() && !(mixes || args.op == ObjectOp::Put) {
        return Err(Failure::input(
            "--checksum works with put, mixed and versioned (the checksum of each whole-object PUT)",
        ));
    }
    let mix = args.mix();
    if args.once && !matches!(args.op, ObjectOp::Get | ObjectOp::Head) {
        return Err(Failure::input("--once works with get and head"));
    }
    if args.batch > 1 && args.op != ObjectOp::Delete {
        return Err(Failure::input("--batch works with delete"));
    }
    match args.range_size {
        Some(_) if !matches!(args.op, ObjectOp::Get | ObjectOp::Mixed) => {
            return Err(Failure::input("--range-size works with get and mixed"));
        }
        Some(range) if range >= max => {
            return Err(Failure::input(format!(
                "--range-size {} is not smaller than the objects ({}): every GET would read whole objects (omit it, or give larger --obj-size)",
                iobm_stats::format_bytes(range),
                iobm_stats::format_bytes(max)
            )));
        }
        _ => {}
    }
    if args.verify && args.data == iobm_engine::DataKind::Zero {
        return Err(Failure::input(
            "--verify needs stamped data: --data random or compressible:PCT",
        ));
    }
    if args.verify && !(mixes || matches!(args.op, ObjectOp::Get | ObjectOp::Put)) {
        return Err(Failure::input(
            "--verify checks what GETs return and the ETags PUTs get: use it with get, put, mixed or versioned",
        ));
    }
    if mixes && mix.get + mix.head + mix.put + mix.delete == 0 {
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

/// `--rate` in bytes per second: only where every operation moves one transfer size.
fn check_rate(args: &S3Args) -> Result<(), Failure> {
    if let Some(crate::cli::Rate::Bytes(bytes)) = args.rate.rate {
        let why = if matches!(args.op, ObjectOp::Mixed | ObjectOp::Versioned) {
            Some("a mix's operations move different sizes (HEAD and DELETE none)")
        } else if args.obj_size_range.is_some() {
            Some("objects of a range of sizes have no one transfer size")
        } else if args.range_size.is_some() {
            Some("with --range-size the transfer is the range, not the object")
        } else if matches!(args.op, ObjectOp::Head | ObjectOp::Delete | ObjectOp::List) {
            Some("its operations move no object bytes")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(Failure::input(format!(
                "--rate {}/s: {why}; give operations per second (N/s)",
                iobm_stats::format_bytes(bytes).replace(' ', "")
            )));
        }
    }
    Ok(())
}

/// `--reuse` reads a kept data set and changes nothing in it: only operations that read.
pub(super) fn check_reuse(args: &S3Args, reuse: &str) -> Result<(), Failure> {
    crate::kept::Reuse::parse(reuse, &args.bucket)?;
    match args.op {
        ObjectOp::Get | ObjectOp::Head => Ok(()),
        ObjectOp::Mixed if args.mix().put == 0 && args.mix().delete == 0 => Ok(()),
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
pub(super) fn credentials(args: &S3Args) -> Result<Option<Credentials>, Failure> {
    match (&args.access_key, &args.secret_key) {
        (Some(a), Some(s)) => Ok(Some(Credentials {
            access_key: a.clone(),
            secret_key: s.clone(),
            session_token: args.session_token.clone().filter(|t| !t.is_empty()),
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
pub(super) fn client_config(
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
        payload: args.payload_signing,
        checksum: args.checksum,
        timeout: args.timeout,
        new_connection_per_request: args.new_connection,
        versions: args.op == ObjectOp::Versioned,
        first_worker: ranks.rank() as usize * args.workers(),
    })
}

/// `--drop-caches` with named endpoints: this machine's page cache is theirs only when every
/// one is on this host, and dropping it needs root.
pub(super) fn drop_caches_reach(external: &[Endpoint]) -> Result<(), Failure> {
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
