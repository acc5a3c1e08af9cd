//! The flags of the S3 commands: `iobm s3 OP` (the load) and `iobm serve` (the gateway).

use super::units::{
    named, parse_data, parse_positive_duration, parse_positive_size, parse_rate, parse_size_range,
};
use super::{MeasureArgs, OutputArgs, ServerArgs};
use clap::builder::TypedValueParser;
use clap::Args;
use iobm_engine::{DataKind, Mix, ObjectOp};
use iobm_s3::{Checksum, PayloadSigning};
use iobm_stats::sizes::SizeDist;
use std::path::PathBuf;
use std::time::Duration;

pub(super) const SERVE_EXAMPLES: &str = "\
Examples:
  iobm serve /mnt/beegfs --listen 0.0.0.0:9000          prints generated credentials
  iobm serve /data --access-key AK --secret-key SK --fsync
  aws --endpoint-url http://127.0.0.1:9000 s3 cp big.bin s3://bucket/big.bin";

pub(super) const S3_EXAMPLES: &str = "\
Examples:
  iobm s3 put                                   8 MiB PUTs for 1 minute through the built-in gateway
  iobm s3 get --dir /mnt/beegfs                 the built-in gateway over a directory of your choice
  iobm s3 put --endpoint http://10.0.0.5:7070 --concurrent 20 --obj-size 8MiB --duration 3m
  iobm s3 get --endpoint http://gw1:7070,http://gw2:7070 --objects 500 --bucket bench
  iobm s3 mixed --get 60 --head 20 --put 15 --delete 5 --obj-size-range 4KiB..1MiB
  iobm s3 multipart --obj-size 256MiB --part-size 16MiB --part-concurrency 8 --ops 20
  iobm s3 put --keep --endpoint http://gw:7070 --objects 2000 --ops 2000
      then drop the server's page cache, and read what it kept, uncached:
  iobm s3 get --endpoint http://gw:7070 --reuse s3://iobm/iobm-<run id>/

Credentials come from --access-key/--secret-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (and
a temporary one's AWS_SESSION_TOKEN); --endpoint from AWS_ENDPOINT_URL, --region from AWS_REGION. Every object is written under a
prefix made for the run (PREFIX/iobm-<run id>/), and removed afterwards unless --keep; a bucket
is deleted only if the run created it.";

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Directory to serve; its top-level directories are the buckets
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Address and port to listen on (port 0 picks a free one)
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:9000")]
    pub listen: std::net::SocketAddr,
    /// Also serve the gateway's counters (bytes served, how many from its page cache, device
    /// bytes, CPU) in the Prometheus text format at an unsigned /metrics on this address; on
    /// the S3 port /metrics answers only signed requests
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Access key clients sign with [default: generated and printed]
    #[arg(
        long,
        value_name = "KEY",
        requires = "secret_key",
        conflicts_with = "anonymous"
    )]
    pub access_key: Option<String>,
    /// Secret key clients sign with [default: generated and printed]
    #[arg(long, value_name = "KEY", requires = "access_key")]
    pub secret_key: Option<String>,
    /// Accept requests without a signature
    #[arg(long)]
    pub anonymous: bool,
    /// Accounts, one `ACCESS_KEY SECRET_KEY NAME` a line (`#` starts a comment): each bucket
    /// belongs to the account that made it, others get AccessDenied unless its canned ACL
    /// grants them; read again on SIGHUP
    #[arg(long, value_name = "FILE", conflicts_with_all = ["access_key", "anonymous"])]
    pub users: Option<PathBuf>,
    /// fsync every object before it becomes visible
    #[arg(long)]
    pub fsync: bool,
    /// The region signatures must name (AWS_REGION, else us-east-1)
    #[arg(
        long,
        value_name = "REGION",
        env = "AWS_REGION",
        default_value = "us-east-1"
    )]
    pub region: String,
    /// Close a connection whose request headers have not all arrived this long after it became
    /// ready for a request (also closes idle keep-alive connections)
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_positive_duration)]
    pub header_timeout: Duration,
    /// Fail a request whose body stops arriving, or whose response stops being read, this long
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration)]
    pub body_timeout: Duration,
    /// Fail a request whose body brings less than this a second over a 10 s window of waiting
    /// for it (RequestTimeout); 0: no minimum
    #[arg(long, value_name = "RATE", default_value = "16KiB/s", value_parser = parse_rate)]
    pub min_body_rate: u64,
    /// Connections served at once (lowered to what the descriptor limit allows); at the cap a
    /// new one closes the connection idle longest, with none idle the one whose request body
    /// arrives slowest if under 4 times --min-body-rate, else more wait in the listen backlog
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Remove multipart uploads started longer ago than this [default: kept until completed or
    /// aborted]
    #[arg(long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub abort_incomplete_after: Option<Duration>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key)
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
}

/// `iobm s3 OP`: the engine's object operations, each with its help line.
fn object_op() -> impl TypedValueParser<Value = ObjectOp> {
    let help = |op: ObjectOp| {
        match op {
        ObjectOp::Put => "Store new objects",
        ObjectOp::Get => {
            "Read objects of the data set (uploaded first, not counted), whole or --range-size of each"
        }
        ObjectOp::Head => "HEAD objects of the data set",
        ObjectOp::Delete => "Delete every object of the data set once",
        ObjectOp::List => "List the data set, one page of --page-keys per request",
        ObjectOp::Multipart => "Store new objects by multipart upload",
        ObjectOp::Mixed => {
            "get, head, put, delete and list drawn by the --get/--head/--put/--delete/--list weights"
        }
        ObjectOp::Versioned => {
            "mixed on versions (warp versioned): PUT stores a new version, GET/HEAD/DELETE one stored version, LIST a page of versions; needs a bucket with versioning on (turned on only in a bucket iobm creates)"
        }
    }
    };
    named(&ObjectOp::ALL, |op| op.name().as_str(), Some(help))
}

/// `--payload-signing`: the client's ways to sign a body, each with its help line.
fn payload_signing() -> impl TypedValueParser<Value = PayloadSigning> {
    let help = |signing: PayloadSigning| match signing {
        PayloadSigning::Unsigned => "x-amz-content-sha256: UNSIGNED-PAYLOAD (headers still signed)",
        PayloadSigning::Sha256 => {
            "Hash every body with SHA-256 for its signature, inside the operation's time"
        }
    };
    use PayloadSigning::{Sha256, Unsigned};
    named(&[Unsigned, Sha256], PayloadSigning::name, Some(help))
}

/// `--checksum`: S3's additional checksum algorithms.
fn checksum() -> impl TypedValueParser<Value = Checksum> {
    named(&Checksum::ALL, Checksum::name, None)
}

/// The help of a mixed run's weight: the engine's default, which applies when none is given.
fn weight_help(op: &str, default: u32) -> String {
    format!("Mixed: weight of {op} [default: {default} when no weight is given, else 0]")
}

#[derive(Debug, Args)]
pub struct S3Args {
    /// The operation to load the store with
    #[arg(value_name = "OP", value_parser = object_op())]
    pub op: ObjectOp,
    /// S3 endpoint, http://HOST:PORT or https://HOST:PORT; repeat or separate with commas to
    /// spread the workers over several [default: $AWS_ENDPOINT_URL, else iobm's own gateway
    /// started in-process]
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub endpoint: Vec<String>,
    /// Endpoints given as HOST:PORT (without a scheme) use https:// instead of http://
    #[arg(long)]
    pub tls: bool,
    /// Accept any TLS certificate (self-signed test servers); the connection is still encrypted
    #[arg(long)]
    pub insecure: bool,
    /// Directory the built-in gateway serves (without --endpoint) [default: a new temporary directory]
    #[arg(long, value_name = "DIR", conflicts_with = "endpoint")]
    pub dir: Option<PathBuf>,
    /// Bucket to use; created if missing (and then deleted afterwards, unless --keep)
    #[arg(long, value_name = "NAME", default_value = "iobm")]
    pub bucket: String,
    /// Key prefix under which the run makes its own PREFIX/iobm-<run id>/
    #[arg(long, value_name = "PREFIX", default_value = "")]
    pub prefix: String,
    /// Access key [default: $AWS_ACCESS_KEY_ID]
    #[arg(
        long,
        value_name = "KEY",
        env = "AWS_ACCESS_KEY_ID",
        hide_env_values = true
    )]
    pub access_key: Option<String>,
    /// Secret key [default: $AWS_SECRET_ACCESS_KEY]
    #[arg(
        long,
        value_name = "KEY",
        env = "AWS_SECRET_ACCESS_KEY",
        hide_env_values = true
    )]
    pub secret_key: Option<String>,
    /// Session token of temporary credentials (STS), sent and signed as x-amz-security-token
    /// [default: $AWS_SESSION_TOKEN]
    #[arg(
        long,
        value_name = "TOKEN",
        env = "AWS_SESSION_TOKEN",
        hide_env_values = true
    )]
    pub session_token: Option<String>,
    /// Region to sign for [default: $AWS_REGION, else us-east-1]
    #[arg(long, value_name = "REGION", env = "AWS_REGION")]
    pub region: Option<String>,
    /// Concurrent requests: one worker thread and connection each
    #[arg(short, long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub concurrent: u32,
    /// Object size, or sizes drawn per object: log2:MIN..MAX (as many in each doubling; warp's
    /// --obj.randsize), lognormal:MEDIAN,SIGMA (cut at six deviations), or weighted sizes
    /// SIZE:WEIGHT,... (fio's bssplit), e.g. 4KiB:50,1MiB:40,64MiB:10
    #[arg(long, value_name = "SIZE|DIST", default_value = "8MiB", value_parser = SizeDist::parse, conflicts_with = "obj_size_range")]
    pub obj_size: SizeDist,
    /// Object sizes drawn uniformly from MIN..MAX per object (instead of --obj-size)
    #[arg(long, value_name = "MIN..MAX", value_parser = parse_size_range)]
    pub obj_size_range: Option<(u64, u64)>,
    /// Objects of the data set for get, head, delete, list and mixed (uploaded first, not counted)
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub objects: u64,
    /// Stop after this long
    #[arg(short, long, value_name = "DURATION", default_value = "1m", value_parser = parse_positive_duration, conflicts_with = "ops")]
    pub duration: Duration,
    /// Run this long before the --duration without counting it (fio's ramp_time): operations
    /// that end in the warm-up are in no rate, latency or series
    #[arg(long, value_name = "DURATION", conflicts_with = "ops", value_parser = parse_positive_duration)]
    pub ramp: Option<Duration>,
    /// Stop after this many operations in all (instead of --duration)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub ops: Option<u64>,
    /// get, head: read each object of the data set once per pass, in an order shuffled anew
    /// for each pass, instead of picking each read's object at random with replacement (with
    /// as many reads as objects, about 37% then repeat an object just read, which a cache may
    /// hold) [default with --reuse and --ops no larger than the kept objects]
    #[arg(long)]
    pub once: bool,
    /// Bytes per ranged GET, from a random offset (get and mixed)
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub range_size: Option<u64>,
    /// Part size of multipart uploads (S3 wants at least 5 MiB but for the last)
    #[arg(long, value_name = "SIZE", default_value = "5MiB", value_parser = parse_positive_size)]
    pub part_size: u64,
    /// Parts in flight per multipart upload (each on its own connection)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub part_concurrency: u32,
    /// Keys per list request
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub page_keys: u32,
    /// Delete: keys per DeleteObjects request (warp's --batch), counted as one request and that
    /// many keys; 1 sends one DELETE per object
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub batch: u32,
    #[arg(long = "get", value_name = "W", help = weight_help("GET", Mix::default().get))]
    pub mix_get: Option<u32>,
    #[arg(long = "head", value_name = "W", help = weight_help("HEAD", Mix::default().head))]
    pub mix_head: Option<u32>,
    #[arg(long = "put", value_name = "W", help = weight_help("PUT", Mix::default().put))]
    pub mix_put: Option<u32>,
    #[arg(long = "delete", value_name = "W", help = weight_help("DELETE", Mix::default().delete))]
    pub mix_delete: Option<u32>,
    /// Mixed: weight of LIST, one page of --page-keys of the run's objects each (elbencho's
    /// ask; warp's mixed has none) [default: 0]
    #[arg(long = "list", value_name = "W")]
    pub mix_list: Option<u32>,
    /// Sign payloads: unsigned (UNSIGNED-PAYLOAD) or sha256 (as clients that hash every body)
    #[arg(long, value_parser = payload_signing(), default_value = PayloadSigning::Unsigned.name())]
    pub payload_signing: PayloadSigning,
    /// Send S3's additional checksum of every whole-object PUT's body (x-amz-checksum-*,
    /// computed inside the operation's time, checked by the server): crc32, crc32c, crc64nvme,
    /// sha1 or sha256 (warp's --checksum; the AWS CLI's --checksum-algorithm). PUTs of s3 put
    /// and s3 mixed; not multipart uploads
    #[arg(long, value_name = "ALGORITHM", value_parser = checksum())]
    pub checksum: Option<Checksum>,
    /// Try a failed request again up to N times (counted apart); by default failures are only counted
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub retries: u32,
    /// End the run (failed) once more than N requests failed
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub max_errors: u64,
    /// Longest wait for a connection, or for progress of a request or an answer
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_positive_duration)]
    pub timeout: Duration,
    /// Check every byte a GET returns as it arrives (kept out of its latency), and that the
    /// ETag a PUT gets is the MD5 of what was sent; corrupt, misplaced or stale data fails the
    /// run
    #[arg(long)]
    pub verify: bool,
    #[command(flatten)]
    pub rate: super::RateArgs,
    #[command(flatten)]
    pub load: super::LoadArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    /// With the built-in gateway: after uploading the data set, drop the whole system's page
    /// cache (as root: sync, then /proc/sys/vm/drop_caches), else the data set's files' pages,
    /// outside the timing; the result says which. With --endpoint on this host (an `iobm
    /// serve` here), as root: the whole page cache, the server's too. Another host's is out of
    /// reach
    #[arg(long)]
    pub drop_caches: bool,
    /// Open a new connection for every request (Connection: close), its setup inside the
    /// operation's time; by default each worker keeps its connection alive
    #[arg(long)]
    pub new_connection: bool,
    /// Content of the objects: random (every 512 bytes unique, stamped per 4 KiB), zero,
    /// compressible:PCT or dedupe:PCT
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = parse_data)]
    pub data: DataKind,
    /// Leave the objects (and the built-in gateway's directory) after the run
    #[arg(long)]
    pub keep: bool,
    /// get, head, mixed: read the data set an earlier `--keep` left under PREFIX
    /// (s3://BUCKET/PREFIX/ as that run printed, or PREFIX in --bucket) instead of uploading
    /// one, so the server's caches can be dropped in between; the run only reads it and never
    /// deletes it
    #[arg(long, value_name = "PREFIX")]
    pub reuse: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
