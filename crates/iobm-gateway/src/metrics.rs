//! The gateway's own evidence of where the bytes it served came from: per bucket, the bytes
//! of object bodies served and received and how many of the served ones were in its page cache
//! before it read them; for all, the block device's bytes under its directory, its threads'
//! CPU and the directory entries its listings read. Exposed in the Prometheus text format at `/metrics`: signed on the S3 port, unsigned on
//! `--metrics-listen`.

use hyper::header::{HeaderValue, ACCEPT, CONTENT_TYPE};
use hyper::{HeaderMap, Method, Uri};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The name of every thread that serves requests (the runtime's workers and blocking pool):
/// their CPU is the gateway's, and that of its helper threads, named `gateway-*` (the MD5
/// hashers: [`helper_thread`]).
pub const THREAD: &str = "gateway";

/// The name of the gateway's helper thread `what`, counted as the gateway's by
/// [`threads_cpu`] (at most 15 bytes in all, as Linux keeps thread names).
pub fn helper_thread(what: &str) -> String {
    format!("{THREAD}-{what}")
}
/// The header every answer carries, with iobm's version: clients can tell an iobm gateway.
pub const HEADER: &str = "x-iobm-gateway";
/// The path of the counters.
pub const PATH: &str = "/metrics";
/// The content type of the Prometheus text format.
pub const CONTENT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Directory entries the listings of this process read from disk, all buckets: a page that
/// reads its whole directory again (a large one, or one not cached) shows here.
static DIRECTORY_ENTRIES_READ: AtomicU64 = AtomicU64::new(0);

/// Counts `n` directory entries read for a listing.
pub fn directory_entries_read(n: u64) {
    DIRECTORY_ENTRIES_READ.fetch_add(n, Ordering::Relaxed);
}

/// One bucket's counters.
#[derive(Debug, Default)]
pub struct BucketCounters {
    pub gets: AtomicU64,
    pub served_bytes: AtomicU64,
    /// Of the bytes GETs asked for, those in the page cache when the GET opened the object.
    pub resident_bytes: AtomicU64,
    pub puts: AtomicU64,
    pub received_bytes: AtomicU64,
}

impl BucketCounters {
    fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// A GET of `len` bytes of `file` from `offset` begins: counts it and its resident bytes.
    pub fn get_started(&self, file: &File, offset: u64, len: u64) {
        Self::add(&self.gets, 1);
        if let Ok(resident) = iobm_target::posix::resident_range(file, offset, len) {
            Self::add(&self.resident_bytes, resident);
        }
    }

    pub fn served(&self, n: u64) {
        Self::add(&self.served_bytes, n);
    }

    /// A PUT or part body of `n` bytes was stored.
    pub fn received(&self, n: u64) {
        Self::add(&self.puts, 1);
        Self::add(&self.received_bytes, n);
    }
}

/// Every bucket's counters since the gateway started (or since the bucket was made again).
#[derive(Debug)]
pub struct Metrics {
    root: PathBuf,
    buckets: RwLock<BTreeMap<String, Arc<BucketCounters>>>,
}

impl Metrics {
    pub fn new(root: PathBuf) -> Metrics {
        Metrics {
            root,
            buckets: RwLock::new(BTreeMap::new()),
        }
    }

    /// The counters of `bucket`, made on its first use.
    pub fn bucket(&self, bucket: &str) -> Arc<BucketCounters> {
        if let Some(c) = self.buckets.read().unwrap().get(bucket) {
            return c.clone();
        }
        self.buckets
            .write()
            .unwrap()
            .entry(bucket.to_string())
            .or_default()
            .clone()
    }

    /// Drops the counters of a deleted bucket: a bucket made later under its name, by
    /// anyone, starts from zero.
    pub fn forget(&self, bucket: &str) {
        self.buckets.write().unwrap().remove(bucket);
    }

    /// The counters in the Prometheus text format, of the buckets `shown` lets through.
    pub fn render(&self, shown: &dyn Fn(&str) -> bool) -> String {
        let mut out = String::new();
        let buckets = self.buckets.read().unwrap();
        type Get = fn(&BucketCounters) -> &AtomicU64;
        let per_bucket: [(&str, &str, Get); 5] = [
            ("iobm_gateway_get_requests_total", "GET requests of objects that were answered with a body.", |c| &c.gets),
            ("iobm_gateway_served_bytes_total", "Bytes of object bodies sent.", |c| &c.served_bytes),
            ("iobm_gateway_served_resident_bytes_total", "Of the bytes GETs asked for, those in the gateway's page cache when it opened the object (cachestat or mincore).", |c| &c.resident_bytes),
            ("iobm_gateway_put_requests_total", "PUT and UploadPart requests whose body was received.", |c| &c.puts),
            ("iobm_gateway_received_bytes_total", "Bytes of object and part bodies received.", |c| &c.received_bytes),
        ];
        for (name, help, get) in per_bucket {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
            for (bucket, c) in buckets.iter().filter(|(b, _)| shown(b)) {
                let _ = writeln!(
                    out,
                    "{name}{{bucket=\"{}\"}} {}",
                    escape_label(bucket),
                    get(c).load(Ordering::Relaxed)
                );
            }
        }
        if let Some(d) = iobm_target::posix::device_counters(&self.root) {
            for (name, what, value) in [
                (
                    "iobm_gateway_device_read_bytes_total",
                    "read from",
                    d.read_bytes,
                ),
                (
                    "iobm_gateway_device_written_bytes_total",
                    "written to",
                    d.written_bytes,
                ),
            ] {
                let _ = writeln!(
                    out,
                    "# HELP {name} Bytes {what} the block device under the gateway's directory (all processes).\n# TYPE {name} counter\n{name}{{device=\"{}\"}} {value}",
                    d.device
                );
            }
        }
        let name = "iobm_gateway_directory_entries_read_total";
        let _ = writeln!(
            out,
            "# HELP {name} Directory entries the listings read from disk (all buckets).\n# TYPE {name} counter\n{name} {}",
            DIRECTORY_ENTRIES_READ.load(Ordering::Relaxed)
        );
        let (user, system) = threads_cpu(THREAD);
        let name = "iobm_gateway_cpu_seconds_total";
        let _ = writeln!(
            out,
            "# HELP {name} CPU time of the gateway's threads.\n# TYPE {name} counter\n{name}{{mode=\"user\"}} {user:.3}\n{name}{{mode=\"system\"}} {system:.3}"
        );
        out
    }
}

fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A scrape of the counters on the S3 port: `GET /metrics` without a query, asking for text
/// as Prometheus does. Any other `GET /metrics` stays a listing of a bucket named `metrics`.
pub fn is_scrape(method: &Method, uri: &Uri, headers: &HeaderMap) -> bool {
    method == Method::GET
        && uri.path() == PATH
        && uri.query().is_none_or(|q| q.is_empty())
        && headers
            .get(ACCEPT)
            .and_then(|a| a.to_str().ok())
            .is_some_and(|a| a.contains("text/plain") || a.contains("openmetrics"))
}

/// The counters of the buckets `shown` lets through, as an HTTP answer.
pub fn response(metrics: &Metrics, shown: &dyn Fn(&str) -> bool) -> hyper::Response<String> {
    let mut response = hyper::Response::new(metrics.render(shown));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(CONTENT));
    response
}

/// CPU seconds (user, system) used so far by this process's threads named `name` or
/// `name-*` (from /proc/self/task; a thread that has exited is no longer counted).
pub fn threads_cpu(name: &str) -> (f64, f64) {
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut total = (0.0, 0.0);
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return total;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let comm = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        let comm = comm.trim_end();
        let helper = comm
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('-'));
        if comm != name && !helper {
            continue;
        }
        let stat = std::fs::read_to_string(path.join("stat")).unwrap_or_default();
        // Fields after the ")" that ends the name: state is field 3, utime 14, stime 15.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
        let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<f64>().ok());
        if let (Some(user), Some(system)) = (field(14), field(15)) {
            total.0 += user / tick;
            total.1 += system / tick;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spends `ms` of this thread's own CPU time (whatever the machine's load).
    fn spend_cpu(ms: i64) {
        let used = || {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: t is a valid timespec to write to.
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
            t.tv_sec * 1000 + t.tv_nsec / 1_000_000
        };
        while used() < ms {
            std::hint::black_box(used());
        }
    }

    #[test]
    fn the_cpu_of_helper_threads_is_the_gateways() {
        // Threads that spend 200 ms of CPU, then live on until told; names of their own, so
        // that other tests' gateways are not counted.
        let busy = |name: &str| {
            let (spent, done) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    spend_cpu(200);
                    spent.0.send(()).unwrap();
                    done.1.recv().ok();
                });
            spent.1.recv().unwrap();
            (thread.unwrap(), done.0)
        };
        let (helper, done) = busy("cputest-md5-9");
        let (other, done_other) = busy("cputestx");
        let (user, system) = threads_cpu("cputest");
        assert!(user + system >= 0.19, "the helper's CPU: {user} + {system}");
        assert!(
            user + system < 0.39,
            "not the other thread's: {user} + {system}"
        );
        let (user, system) = threads_cpu("cputes");
        assert_eq!(
            user + system,
            0.0,
            "a name that only begins the same is not counted"
        );
        drop((done, done_other));
        helper.join().unwrap();
        other.join().unwrap();
        assert_eq!(helper_thread("md5-0"), "gateway-md5-0");
    }

    #[test]
    fn counters_render_per_bucket_in_the_prometheus_text_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 8192]).unwrap();
        let metrics = Metrics::new(dir.path().to_path_buf());
        let b = metrics.bucket("b\"1");
        b.get_started(&File::open(&path).unwrap(), 0, 8192);
        b.served(8192);
        metrics.bucket("b\"1").received(100);
        let text = metrics.render(&|_| true);
        assert!(text.contains("# TYPE iobm_gateway_served_bytes_total counter\n"));
        assert!(text.contains("iobm_gateway_served_bytes_total{bucket=\"b\\\"1\"} 8192\n"));
        // Just written: resident.
        assert!(text.contains("iobm_gateway_served_resident_bytes_total{bucket=\"b\\\"1\"} 8192\n"));
        assert!(text.contains("iobm_gateway_received_bytes_total{bucket=\"b\\\"1\"} 100\n"));
        assert!(text.contains("iobm_gateway_put_requests_total{bucket=\"b\\\"1\"} 1\n"));
        assert!(text.contains("iobm_gateway_cpu_seconds_total{mode=\"user\"} "));
        // What a scrape is shown is filtered by bucket.
        metrics.bucket("other").served(1);
        assert!(metrics.render(&|_| true).contains("{bucket=\"other\"}"));
        let filtered = metrics.render(&|b| b != "other");
        assert!(!filtered.contains("other") && filtered.contains("{bucket=\"b\\\"1\"} 8192"));
        // A deleted bucket's counters go with it.
        metrics.forget("other");
        assert!(!metrics.render(&|_| true).contains("other"));
        metrics.bucket("other").received(5);
        let text = metrics.render(&|_| true);
        assert!(text.contains("iobm_gateway_served_bytes_total{bucket=\"other\"} 0\n"));
        assert!(text.contains("iobm_gateway_received_bytes_total{bucket=\"other\"} 5\n"));
    }

    #[test]
    fn only_a_get_of_metrics_asking_for_text_is_a_scrape() {
        let text = |accept: &str| {
            let mut h = HeaderMap::new();
            h.insert(ACCEPT, HeaderValue::from_str(accept).unwrap());
            h
        };
        let uri = |u: &str| u.parse::<Uri>().unwrap();
        let prometheus =
            text("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5");
        assert!(is_scrape(&Method::GET, &uri("/metrics"), &prometheus));
        assert!(is_scrape(
            &Method::GET,
            &uri("/metrics"),
            &text("text/plain")
        ));
        // A listing of a bucket named metrics.
        assert!(!is_scrape(
            &Method::GET,
            &uri("/metrics"),
            &HeaderMap::new()
        ));
        assert!(!is_scrape(
            &Method::GET,
            &uri("/metrics?list-type=2"),
            &prometheus
        ));
        assert!(!is_scrape(&Method::PUT, &uri("/metrics"), &prometheus));
        assert!(!is_scrape(&Method::GET, &uri("/metrics/x"), &prometheus));
    }
}
