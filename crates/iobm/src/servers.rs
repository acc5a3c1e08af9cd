//! What the flags say of the storage servers and the network, checked before anything is
//! written: every `--server-metrics` endpoint answers as node_exporter or an iobm gateway,
//! `--server-devices` names devices they report, and `--line-rate auto` finds the link speed
//! of the interface the storage is reached through.

use crate::cli::{LineRate, ServerArgs};
use iobm_results::checks::NETWORK_FS_TYPES;
use iobm_results::{env, server, wire, Config};
use iobm_run::exit::Failure;
use iobm_run::http::{self, METRICS_TIMEOUT};
use std::path::Path;

/// Where the storage is, as far as the network goes.
pub enum Storage<'a> {
    /// A directory (its file system says whether it is across a network).
    Dir(&'a Path),
    /// S3 endpoints.
    Endpoints(&'a [String]),
    /// iobm's own gateway in this process: nothing crosses a network.
    Builtin,
}

/// The servers' flags, checked.
#[derive(Debug, Clone, Default)]
pub struct Servers {
    metrics: Vec<String>,
    devices: Vec<String>,
    drop_cmd: Option<String>,
    line_rate: Option<(u64, String)>,
    /// The server's memory as stated (`--server-ram`).
    ram: Option<u64>,
}

impl Servers {
    /// Records them in the run's configuration.
    pub fn apply(&self, config: &mut Config) {
        config.server_metrics = self.metrics.clone();
        config.server_devices = self.devices.clone();
        config.server_drop_cmd = self.drop_cmd.clone();
        config.line_rate_bytes_per_s = self.line_rate.as_ref().map(|l| l.0);
        config.line_rate_source = self.line_rate.as_ref().map(|l| l.1.clone());
        config.server_ram_bytes = self.ram;
    }
}

impl ServerArgs {
    /// The flags checked against the endpoints and the storage: one line naming the flag
    /// (exit 2) when an endpoint does not answer, a device is reported by none, or the line
    /// rate cannot be told.
    pub fn check(&self, storage: Storage) -> Result<Servers, Failure> {
        let mut metrics: Vec<String> = Vec::new();
        let mut readings = Vec::new();
        for url in self.server_metrics.iter().map(|u| u.trim()) {
            if metrics.iter().any(|m| m == url) {
                return Err(Failure::input(format!(
                    "--server-metrics {url}: given twice (its counters would count twice)"
                )));
            }
            let reading = http::get(url, METRICS_TIMEOUT)
                .and_then(|text| server::read(&text, ""))
                .map_err(|why| Failure::input(format!("--server-metrics {url}: {why}")))?;
            readings.push(reading);
            metrics.push(url.to_string());
        }
        let unknown = server::unknown_devices(&readings, &self.server_devices);
        if let Some(first) = unknown.first() {
            let reported: Vec<&str> = readings
                .iter()
                .flat_map(|r| match r {
                    server::Reading::Node(c) => c.disks.iter().map(|d| d.0.as_str()).collect(),
                    server::Reading::Gateway(_) => Vec::new(),
                })
                .collect();
            return Err(Failure::input(format!(
                "--server-devices {first}: no --server-metrics endpoint reports such a device (they report: {})",
                if reported.is_empty() { "none".to_string() } else { reported.join(", ") }
            )));
        }
        if self
            .server_drop_cmd
            .as_deref()
            .is_some_and(|c| c.trim().is_empty())
        {
            return Err(Failure::input("--server-drop-cmd is empty"));
        }
        Ok(Servers {
            metrics,
            devices: self.server_devices.clone(),
            drop_cmd: self.server_drop_cmd.clone(),
            line_rate: self.line_rate(storage)?,
            ram: self.server_ram,
        })
    }

    /// `--line-rate`: stated, or the link speed towards the storage.
    fn line_rate(&self, storage: Storage) -> Result<Option<(u64, String)>, Failure> {
        let Some(asked) = self.line_rate else {
            return Ok(None);
        };
        let hosts: Vec<String> = match storage {
            // Recorded, never checked: the built-in gateway's bytes cross no network.
            Storage::Builtin => match asked {
                LineRate::Rate(r) => return Ok(Some((r, "stated".into()))),
                LineRate::Auto => {
                    return Err(Failure::input(
                        "--line-rate auto: the built-in gateway's bytes cross no network (give --endpoint)",
                    ))
                }
            },
            Storage::Endpoints(urls) => urls.iter().filter_map(|u| wire::url_host(u)).collect(),
            Storage::Dir(dir) => {
                let info = env::storage_info(dir);
                let fs_type = info.as_ref().map_or("unknown", |i| i.fs_type.as_str());
                if !NETWORK_FS_TYPES.contains(&fs_type) {
                    return Err(Failure::input(format!(
                        "--line-rate: {} is on a local file system ({fs_type}): no network lies between this client and its storage",
                        dir.display()
                    )));
                }
                info.and_then(|i| wire::mount_server(&i.mount_source))
                    .into_iter()
                    .collect()
            }
        };
        match asked {
            LineRate::Rate(r) => Ok(Some((r, "stated".into()))),
            LineRate::Auto => {
                let environment = env::capture(None);
                let nics = wire::towards(&hosts).unwrap_or_else(|| {
                    environment
                        .nics
                        .iter()
                        .filter(|n| n.state == "up")
                        .map(|n| n.name.clone())
                        .collect()
                });
                wire::link_rate(&environment, &nics)
                    .map(Some)
                    .map_err(|why| {
                        Failure::input(format!("--line-rate auto: {why}; state the rate"))
                    })
            }
        }
    }
}
