//! `iobm serve DIR`: the S3 gateway over a directory, until Ctrl-C or SIGTERM.

use crate::cli::ServeArgs;
use iobm_gateway::{Access, Options};
use iobm_run::exit::{Exit, Failure};
use iobm_run::session;

/// A random credential of `len` characters from `alphabet`.
pub(crate) fn random_key(len: usize, alphabet: &[u8]) -> Result<String, Failure> {
    let mut bytes = vec![0u8; len];
    if !session::random_bytes(&mut bytes) {
        return Err(Failure::run(
            "cannot read /dev/urandom to make credentials: give --access-key and --secret-key",
        ));
    }
    Ok(bytes
        .iter()
        .map(|b| alphabet[*b as usize % alphabet.len()] as char)
        .collect())
}

/// How clients sign in: anonymously, as the accounts of `--users`, or with a key pair (given,
/// or made here).
fn access(args: &ServeArgs) -> Result<Access, Failure> {
    Ok(match (&args.access_key, &args.secret_key) {
        _ if args.anonymous => Access::Anonymous,
        _ if args.users.is_some() => {
            let users = args.users.as_deref().expect("checked");
            // Read here, once: a bad file is a clear error before anything starts.
            let accounts = iobm_gateway::accounts::Accounts::from_file(users);
            Access::Users(std::sync::Arc::new(accounts.map_err(Failure::input)?))
        }
        (Some(access_key), Some(secret_key)) => Access::Keys {
            access_key: access_key.clone(),
            secret_key: secret_key.clone(),
        },
        _ => Access::Keys {
            access_key: random_key(20, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")?,
            secret_key: random_key(
                40,
                b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            )?,
        },
    })
}

/// What the operator is told once the gateway listens at `url` (`plain`: HTTP off this
/// host): the counters, how to sign in, what to beware of (the secret printed only when it was
/// made here).
fn announce(
    args: &ServeArgs,
    (url, plain): (&str, bool),
    metrics_at: Option<std::net::SocketAddr>,
    access: &Access,
    secret_given: bool,
) {
    println!("iobm serve: S3 on {url} over {}", args.dir.display());
    match metrics_at {
        Some(at) => {
            println!(
                "  counters (Prometheus): http://{at}/metrics, unsigned; on the S3 port, signed"
            );
        }
        None if args.anonymous => {
            println!("  counters (Prometheus): GET /metrics with Accept: text/plain")
        }
        None => println!("  counters (Prometheus): GET /metrics with Accept: text/plain, signed"),
    }
    match access {
        Access::Keys { access_key, .. } if secret_given => println!(
            "  export AWS_ACCESS_KEY_ID={access_key} AWS_SECRET_ACCESS_KEY=<the --secret-key given> AWS_ENDPOINT_URL={url}"
        ),
        Access::Keys {
            access_key,
            secret_key,
        } => println!(
            "  export AWS_ACCESS_KEY_ID={access_key} AWS_SECRET_ACCESS_KEY={secret_key} AWS_ENDPOINT_URL={url}"
        ),
        Access::Users(_) => println!(
            "  accounts from {} (read again on SIGHUP); export AWS_ENDPOINT_URL={url}",
            args.users.as_deref().expect("checked").display()
        ),
        Access::Anonymous => println!("  anonymous access: requests are not signed"),
    }
    if plain {
        println!("  plain HTTP: keys are not sent, but every request and object is readable on the network");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        println!("  running as root: an unprivileged user that owns DIR is enough and safer");
    }
    println!("  buckets are the top-level directories; Ctrl-C stops");
}

/// `iobm serve DIR`: the gateway over DIR until Ctrl-C or SIGTERM.
pub fn serve(args: ServeArgs) -> Result<Exit, Failure> {
    session::writable_dir(&args.dir)?;
    // A secret the operator chose is never printed back; one made here must be, once.
    let secret_given = args.secret_key.is_some();
    let access = access(&args)?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(iobm_gateway::tls::server_config(cert, key).map_err(Failure::input)?)
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name(iobm_gateway::metrics::THREAD)
        .build()
        .map_err(|e| Failure::run(format!("cannot start the server runtime: {e}")))?;
    iobm_run::signals::install();
    let served = runtime.block_on(async {
        let listener = iobm_gateway::bind(args.listen).await.map_err(|e| {
            Failure::input(format!(
                "--listen {}: {}",
                args.listen,
                session::describe_io(&e)
            ))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Failure::run(e.to_string()))?;
        let metrics_listener = match args.metrics_listen {
            None => None,
            Some(at) => Some(iobm_gateway::bind(at).await.map_err(|e| {
                Failure::input(format!(
                    "--metrics-listen {at}: {}",
                    session::describe_io(&e)
                ))
            })?),
        };
        let metrics_at = match &metrics_listener {
            Some(l) => Some(l.local_addr().map_err(|e| Failure::run(e.to_string()))?),
            None => None,
        };
        let url = format!("{scheme}://{addr}");
        let plain = tls.is_none() && !addr.ip().is_loopback();
        announce(&args, (&url, plain), metrics_at, &access, secret_given);
        let options = Options {
            fsync: args.fsync,
            region: args.region.clone(),
            header_timeout: args.header_timeout,
            body_timeout: args.body_timeout,
            min_body_rate: args.min_body_rate,
            max_connections: args.max_connections as usize,
            abort_incomplete_after: args.abort_incomplete_after,
            tls,
            ..Options::new(access)
        };
        iobm_gateway::serve(
            &args.dir,
            listener,
            metrics_listener,
            options,
            &iobm_run::signals::STOP,
        )
        .await
        .map_err(|e| {
            Failure::run(format!(
                "{}: {}",
                args.dir.display(),
                session::describe_io(&e)
            ))
        })
    });
    // Not waiting for deleted buckets' uploads still being removed: the next start finishes.
    runtime.shutdown_background();
    served.map(|()| Exit::Ok)
}
