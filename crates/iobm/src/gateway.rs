//! iobm's S3 gateway started in-process for `iobm s3` without an endpoint and for `iobm quick`:
//! on a free loopback port over a directory, with random credentials, its threads' CPU time
//! told apart from the client's.

use crate::serve::random_key;
use iobm_results::checks::BUILTIN_GATEWAY_CPU;
use iobm_results::PhaseResult;
use iobm_run::exit::Failure;
use iobm_run::probe::{Probe, Refusal, Scene};
use iobm_run::session::{self, describe_io, RunId};
use iobm_s3::sigv4::Credentials;
use iobm_s3::Endpoint;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// iobm's gateway, serving a directory on a free loopback port from a thread of this process.
pub struct BuiltinGateway {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: Endpoint,
    pub dir: PathBuf,
    pub credentials: Credentials,
    /// The directory was made for this run (and is removed with the gateway).
    made_dir: bool,
    stop: &'static AtomicBool,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl BuiltinGateway {
    /// Starts a gateway over `dir`, or over a new directory in the system temp directory.
    /// Signatures must name `region`, as the client's do.
    pub fn start(
        dir: Option<&Path>,
        run_id: &RunId,
        region: &str,
    ) -> Result<BuiltinGateway, Failure> {
        let (dir, made_dir) = match dir {
            Some(d) => {
                session::writable_dir(d)
                    .map_err(|f| Failure::input(format!("--dir {}", f.message)))?;
                (d.to_path_buf(), false)
            }
            None => {
                let d = std::env::temp_dir().join(format!("iobm-gateway-{}", run_id.text));
                std::fs::create_dir(&d).map_err(|e| {
                    Failure::run(format!(
                        "{}: cannot create: {}",
                        d.display(),
                        describe_io(&e)
                    ))
                })?;
                (d, true)
            }
        };
        let credentials = Credentials {
            access_key: random_key(20, b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")?,
            secret_key: random_key(40, b"abcdefghijklmnopqrstuvwxyz0123456789")?,
            session_token: None,
        };
        let stop: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
        let (tx, rx) = std::sync::mpsc::channel();
        let options = iobm_gateway::Options {
            region: region.to_string(),
            ..iobm_gateway::Options::new(iobm_gateway::Access::Keys {
                access_key: credentials.access_key.clone(),
                secret_key: credentials.secret_key.clone(),
            })
        };
        let root = dir.clone();
        let thread = std::thread::Builder::new()
            .name(iobm_gateway::metrics::THREAD.into())
            .spawn(move || -> std::io::Result<()> {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .thread_name(iobm_gateway::metrics::THREAD)
                    .build()?;
                runtime.block_on(async {
                    let listener = match iobm_gateway::bind(([127, 0, 0, 1], 0).into()).await {
                        Ok(l) => l,
                        Err(e) => {
                            let _ = tx.send(Err(e.to_string()));
                            return Ok(());
                        }
                    };
                    let _ = tx.send(listener.local_addr().map_err(|e| e.to_string()));
                    iobm_gateway::serve(&root, listener, None, options, stop).await
                })
            })
            .map_err(|e| Failure::run(format!("cannot start the built-in gateway: {e}")))?;
        let addr = rx
            .recv()
            .map_err(|_| Failure::run("the built-in gateway did not start"))?
            .map_err(|e| Failure::run(format!("the built-in gateway did not start: {e}")))?;
        Ok(BuiltinGateway {
            endpoint: Endpoint::parse(&format!("http://{addr}")).map_err(Failure::run)?,
            dir,
            credentials,
            made_dir,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops the gateway; removes its directory if it made it, unless `keep`.
    pub fn stop(mut self, keep: bool) -> Option<String> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if self.made_dir && !keep {
            return std::fs::remove_dir_all(&self.dir).err().map(|e| {
                format!(
                    "could not remove {}: {}",
                    self.dir.display(),
                    describe_io(&e)
                )
            });
        }
        None
    }
}

/// The built-in gateway's CPU time over a phase, moved out of the phase's own (this process's)
/// into `gateway_s`: its threads run in this process.
#[derive(Default)]
pub struct GatewayCpu {
    before: Mutex<(f64, f64)>,
}

/// CPU seconds (user, system) the gateway's threads have used so far (from /proc/self/task; a
/// pool thread that has exited since is no longer counted).
fn gateway_cpu() -> (f64, f64) {
    iobm_gateway::metrics::threads_cpu(iobm_gateway::metrics::THREAD)
}

impl Probe for GatewayCpu {
    fn before(&self, _scene: &Scene) -> Result<(), Refusal> {
        *self.before.lock().unwrap() = gateway_cpu();
        Ok(())
    }

    fn merged(&self, _scene: &Scene, phase: &mut PhaseResult) {
        let (before, after) = (*self.before.lock().unwrap(), gateway_cpu());
        let (user, system) = (after.0 - before.0, after.1 - before.1);
        let cpu = &mut phase.cpu;
        let moved = phase.workers.iter().map(|w| w.span.bytes).sum();
        let mut own = iobm_run::record::cpu_usage(
            (cpu.user_s - user).max(0.0),
            (cpu.system_s - system).max(0.0),
            moved,
        );
        own.gateway_s = Some(user + system);
        *cpu = own;
        phase.note(BUILTIN_GATEWAY_CPU);
    }
}
