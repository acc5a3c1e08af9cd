//! The storage servers' `--server-metrics` endpoints (node_exporter, or an iobm gateway's
//! `/metrics`), read at rank 0 before a phase, once per period through it, and after it once
//! every rank is done: each endpoint's evidence over the phase, with its series.

use super::{Probe, Refusal, Scene};
use crate::http::{self, METRICS_TIMEOUT};
use iobm_results::server::{self, Reading};
use iobm_results::server_series::{self, SeriesBuilder, Totals};
use iobm_results::{PhaseResult, RunResult, ServerEvidence};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One reading of every endpoint.
type Readings = Vec<Result<Reading, String>>;

/// The endpoints, and what was read of them through the current phase.
pub struct Servers {
    endpoints: Vec<String>,
    devices: Vec<String>,
    bucket: String,
    /// The run's clock: the series' stamps are since it.
    origin: Instant,
    before: Mutex<Readings>,
    /// Each endpoint's series as it is read through the phase, with its period.
    series: Mutex<(Vec<SeriesBuilder>, Duration)>,
}

impl Servers {
    /// The endpoints `run` names; None without any.
    pub fn of(run: &RunResult, origin: Instant) -> Option<Servers> {
        if run.config.server_metrics.is_empty() {
            return None;
        }
        Some(Servers {
            endpoints: run.config.server_metrics.clone(),
            devices: run.config.server_devices.clone(),
            bucket: run
                .config
                .s3
                .as_ref()
                .map_or(String::new(), |s| s.bucket.clone()),
            origin,
            before: Mutex::new(Vec::new()),
            series: Mutex::new((Vec::new(), Duration::ZERO)),
        })
    }

    /// Every endpoint read now, each within `timeout`.
    fn read(&self, timeout: Duration) -> Readings {
        self.endpoints
            .iter()
            .map(|url| http::get(url, timeout).and_then(|t| server::read(&t, &self.bucket)))
            .collect()
    }

    /// What a series keeps of each reading (None where it failed).
    fn totals(&self, readings: &Readings) -> Vec<Option<Totals>> {
        readings
            .iter()
            .map(|r| r.as_ref().ok().map(|r| Totals::of(r, &self.devices)))
            .collect()
    }

    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    /// Each endpoint's evidence over the phase, "unavailable" where a reading failed.
    fn evidence(&self, before: &Readings, after: &Readings) -> Vec<ServerEvidence> {
        self.endpoints
            .iter()
            .zip(before.iter().zip(after))
            .map(|(url, pair)| match pair {
                (Ok(b), Ok(a)) => server::reading_evidence(url, b, a, &self.devices),
                (Err(why), _) => server::unavailable(url, "", &format!("before the phase: {why}")),
                (_, Err(why)) => server::unavailable(url, "", &format!("after the phase: {why}")),
            })
            .collect()
    }
}

impl Probe for Servers {
    fn before(&self, scene: &Scene) -> Result<(), Refusal> {
        if !scene.ranks.is_root() {
            return Ok(());
        }
        let before = self.read(METRICS_TIMEOUT);
        let period = Duration::from_nanos(server_series::period_ns(
            scene.phase.interval.as_nanos() as u64,
        ));
        let before_ns = self.now_ns();
        let builders = self
            .totals(&before)
            .into_iter()
            .map(|t| SeriesBuilder::new(period.as_nanos() as u64, before_ns, t))
            .collect();
        *self.series.lock().unwrap() = (builders, period);
        *self.before.lock().unwrap() = before;
        Ok(())
    }

    /// Rank 0 reads them through the phase too, until its merge is done.
    fn period(&self, scene: &Scene) -> Option<Duration> {
        let period = self.series.lock().unwrap().1;
        (scene.ranks.is_root() && !period.is_zero()).then_some(period)
    }

    fn tick(&self) {
        let period = self.series.lock().unwrap().1;
        // A reading later than a period is a gap anyway: it may not hold the phase's end up long.
        let reading = self.read(period.clamp(Duration::from_secs(1), METRICS_TIMEOUT));
        let at = self.now_ns();
        let totals = self.totals(&reading);
        for (b, t) in self.series.lock().unwrap().0.iter_mut().zip(totals) {
            b.push(at, t);
        }
    }

    fn merged(&self, _: &Scene, result: &mut PhaseResult) {
        // Every rank is done with the phase once the merge has gathered it.
        let after = self.read(METRICS_TIMEOUT);
        let before = std::mem::take(&mut *self.before.lock().unwrap());
        let at = self.now_ns();
        let (builders, _) = std::mem::take(&mut *self.series.lock().unwrap());
        let mut series = builders.into_iter();
        for (mut e, t) in self
            .evidence(&before, &after)
            .into_iter()
            .zip(self.totals(&after))
        {
            e.series = series.next().map(|mut b| {
                b.push(at, t);
                b.finish()
            });
            result.cache.servers.push(e);
        }
    }
}
