//! The command line: subcommands, flags, their defaults and help text. Values with units are
//! parsed here so a bad one is reported with the flag that carries it.

use clap::builder::TypedValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use iobm_engine::{DataKind, ObjectOp};
use iobm_run::exit::EXIT_CODES_HELP;
use std::path::PathBuf;
use std::time::Duration;

const EXAMPLES: &str = "\
Examples:
  iobm quick                                  a 40-second tour in the system temp directory
  iobm stream --jobs 4 --size 32G /mnt/nfs    write 32 GiB with 4 workers, then read it back
  iobm write -j 8 --size-per-job 4G --block 4MiB --direct /mnt/lustre
  iobm write --keep --json w.json /data && iobm read /data/iobm-<run id>
  iobm read --random --block 4k --duration 30s /data/iobm-<run id>
  iobm stream --duration 1m --interval 100ms --html r.html /mnt/x   charts to open offline
  iobm report w.json                          print a saved result again
  mpirun -np 4 iobm write -j 8 --size-per-job 4G /mnt/nfs   as MPI ranks (build with --features mpi)

Sizes take K, M, G, T (powers of 1024, also KiB, MiB, ...) or KB, MB, GB, TB (powers of 1000);
durations take ms, s, m, h (a plain number is seconds).";

const BONNIE_EXAMPLES: &str = "\
Examples:
  iobm bonnie /mnt/nfs                         file of twice the RAM, 8 KiB chunks, 16384 files
  iobm bonnie --size 8G --fsync each /mnt/lustre --json lustre.json --bonnie-csv lustre.csv
  iobm bonnie --per-char syscall --files 4:4096:0:16 /mnt/gluster
  bon_csv2txt < lustre.csv                     bonnie++'s own tools read the CSV line";

const COMPARE_EXAMPLES: &str = "\
Examples:
  iobm compare nfs=nfs.json lustre=lustre.json gluster=gluster.json
  iobm compare --transpose --format markdown a.json b.json
  iobm compare --format csv *.json > all.csv
  iobm compare --html fs.html nfs.json lustre.json gluster.json   the table and a chart per test";

const SERVE_EXAMPLES: &str = "\
Examples:
  iobm serve /mnt/beegfs --listen 0.0.0.0:9000          prints generated credentials
  iobm serve /data --access-key AK --secret-key SK --fsync
  aws --endpoint-url http://127.0.0.1:9000 s3 cp big.bin s3://bucket/big.bin";

const S3_EXAMPLES: &str = "\
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

Credentials come from --access-key/--secret-key or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY;
--endpoint from AWS_ENDPOINT_URL, --region from AWS_REGION. Every object is written under a
prefix made for the run (PREFIX/iobm-<run id>/), and removed afterwards unless --keep; a bucket
is deleted only if the run created it.";

#[derive(Debug, Parser)]
#[command(
    name = "iobm",
    version,
    about = "A storage benchmark whose numbers can be trusted",
    long_about = "iobm measures storage: parallel streaming file I/O with every aggregate \
                  definition printed and explained, per-operation latency, iobm's own CPU cost, \
                  and evidence for or against a cache effect.",
    after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"),
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write files in parallel and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Write(WriteArgs),
    /// Read a data set left by `iobm write --keep` and measure the bandwidth
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Read(ReadArgs),
    /// Write, then read back the same data, in one run
    #[command(after_help = format!("{EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Stream(WriteArgs),
    /// bonnie++-style characterisation: per-char, block, rewrite, seeks, metadata
    #[command(after_help = format!("{BONNIE_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    Bonnie(BonnieArgs),
    /// Side-by-side table of saved results of one kind, with ratios to the first
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// An S3 gateway over a directory: buckets are its top-level directories
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// S3 load: put, get, head, delete, list, multipart or mixed, at high concurrency
    #[command(after_help = format!("{S3_EXAMPLES}\n\n{EXIT_CODES_HELP}"))]
    S3(Box<S3Args>),
    /// A tour of about 40 seconds on a built-in default directory, with a summary table
    Quick(QuickArgs),
    /// Print a saved result (--json FILE) again, recomputing its aggregates
    Report(ReportArgs),
    /// Measure this machine's limits (memory copy, loopback TCP, MD5/SHA-256/CRC32C per core,
    /// a directory's O_DIRECT rates), which no storage rate can exceed without a cache
    #[command(after_help = LIMITS_EXAMPLES)]
    Limits(LimitsArgs),
    /// Combine results of one workload started by hand on several clients (without MPI) into
    /// one run, by their wall clocks, keeping the window in which all were active
    #[command(after_help = MERGE_EXAMPLES)]
    Merge(MergeArgs),
}

const MERGE_EXAMPLES: &str = "\
Examples:
  iobm merge client1.json client2.json --json all.json   the window in which both ran
  iobm merge --whole a.json b.json c.json                 every run's whole phases";

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Saved results (--json) of the same workload, each optionally labelled: LABEL=RESULT.json
    #[arg(value_name = "[LABEL=]RESULT.json", required = true, num_args = 2..)]
    pub results: Vec<String>,
    /// Keep every run's whole phases instead of only the window in which all were active
    #[arg(long)]
    pub whole: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

const LIMITS_EXAMPLES: &str = "\
Examples:
  iobm limits                                  memory, loopback TCP and checksums
  iobm limits /mnt/nvme --json limits.json     and the directory's O_DIRECT write and read
  iobm report run.json --limits limits.json    each rate as a share of the matching limit";

#[derive(Debug, Args)]
pub struct LimitsArgs {
    /// Also measure this directory's sequential O_DIRECT write and read (a file of its own,
    /// removed afterwards)
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Bytes the directory's measurement writes and reads
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = parse_positive_size)]
    pub size: u64,
    /// How long each of the other measurements runs
    #[arg(long, value_name = "DURATION", default_value = "500ms", value_parser = parse_positive_duration)]
    pub time: Duration,
    /// Save the limits as JSON, for `iobm report --limits`
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// Options shared by every file workload.
#[derive(Debug, Args)]
pub struct IoArgs {
    /// Bytes per operation [default: 1MiB; for read: the block the data was written with]
    #[arg(short, long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub block: Option<u64>,
    /// Visit blocks in random order (every block once per pass)
    #[arg(long)]
    pub random: bool,
    /// Bypass the page cache with O_DIRECT (aligned buffers; block must be a multiple of 4 KiB)
    #[arg(long)]
    pub direct: bool,
    /// Reads or writes each worker keeps in flight, through io_uring (fio's iodepth); 1 is one
    /// synchronous pread/pwrite at a time
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub iodepth: u32,
    /// How requests are submitted: sync (pread/pwrite) or io_uring [default: io_uring when
    /// --iodepth is over 1, else sync]
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// stream: instead of reading the data set back, read and write it together, this percent
    /// of the operations reads (fio's rwmixread); each kind is reported apart
    #[arg(long, value_name = "READ_PCT", value_parser = clap::value_parser!(u8).range(0..=100))]
    pub rwmix: Option<u8>,
    /// Read what the page cache already holds, instead of flushing the data set and dropping
    /// its cached pages before each read phase (posix_fadvise DONTNEED, as fio's invalidate=1)
    #[arg(long, conflicts_with = "drop_caches")]
    pub keep_cache: bool,
    /// Before each read phase drop the whole system's page cache (as root: sync, then
    /// /proc/sys/vm/drop_caches), else the data set's pages only; the result says which
    #[arg(long)]
    pub drop_caches: bool,
    /// Check every byte read back against what was written, outside the timing; a block that
    /// is corrupt, misplaced or stale fails the run and is named
    #[arg(long)]
    pub verify: bool,
    /// Under MPI, read the data the next rank wrote (IOR -C), so no rank reads from its own cache
    #[arg(long)]
    pub reorder: bool,
    /// Stop each phase after this long instead of after one pass (wraps around the data)
    #[arg(short, long, value_name = "DURATION", value_parser = parse_positive_duration)]
    pub duration: Option<Duration>,
    /// Run this long before each phase's --duration without counting it (fio's ramp_time):
    /// operations that end in the warm-up are in no rate, latency or series
    #[arg(long, value_name = "DURATION", requires = "duration", value_parser = parse_positive_duration)]
    pub ramp: Option<Duration>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// What the user knows of the server behind the storage, which no client can see.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data
    /// set smaller than this is flagged as possibly served from its cache [default for network
    /// file systems: twice this machine's RAM]
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub server_ram: Option<u64>,
    /// The storage servers' Prometheus text endpoints (node_exporter's http://HOST:9100/metrics,
    /// or the gateway's of `iobm serve --metrics-listen`), read before and after every phase:
    /// what their devices, page cache, network and CPUs did goes into the cache verdict, and
    /// their memory replaces --server-ram. Each must answer before the run starts
    #[arg(long, value_name = "URL", value_delimiter = ',')]
    pub server_metrics: Vec<String>,
    /// The servers' data devices, as node_exporter names them (sdb,nvme0n1) [default: every
    /// disk but device-mapper, md, loop, ram and partitions]
    #[arg(
        long,
        value_name = "DEV",
        value_delimiter = ',',
        requires = "server_metrics"
    )]
    pub server_devices: Vec<String>,
    /// A command that drops the storage servers' caches ("ssh nfs1 sudo sysctl
    /// vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time;
    /// if it fails the run ends there with what it measured
    #[arg(long, value_name = "CMD")]
    pub server_drop_cmd: Option<String>,
    /// The network's speed between this client and the storage: auto (the link speed of the
    /// interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A
    /// phase faster than this, one client's bytes over the phase's whole time, is flagged as
    /// served by a cache on this side of the network (not with the built-in gateway, whose
    /// bytes cross no network)
    #[arg(long, value_name = "auto|RATE", value_parser = parse_line_rate)]
    pub line_rate: Option<LineRate>,
}

/// `--line-rate`: read from the link, or stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineRate {
    Auto,
    Rate(u64),
}

fn parse_line_rate(s: &str) -> Result<LineRate, String> {
    if s == "auto" {
        return Ok(LineRate::Auto);
    }
    parse_positive_rate(s).map(LineRate::Rate)
}

/// The output flags, shared by every command that runs a workload.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Save the full result document (versioned JSON, see schema/) to FILE, rewritten after
    /// every phase so a killed run keeps what it measured; - prints it to stdout at the end
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per
    /// kind of S3 operation over all workers), with bytes, operations and rates
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Save a report to look at as one self-contained HTML file (no network needed): throughput
    /// and latency over time, per-worker and per-rank bars, aggregates, cache verdict
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// How a workload is measured: how finely its time series is recorded, how many times it runs.
#[derive(Debug, Args)]
pub struct MeasureArgs {
    /// Length of one interval of the time series (bytes, operations, errors and a latency
    /// histogram per interval, per worker) [default: for a phase of known length (--duration)
    /// the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Option<Duration>,
    /// Run the whole workload N times, each on fresh data, and report each aggregate's median,
    /// range and 95% confidence interval over the N
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
}

impl MeasureArgs {
    /// Every phase's series at the chosen interval.
    pub fn apply(&self, phases: &mut [iobm_engine::Phase]) {
        phases
            .iter_mut()
            .for_each(|p| p.interval = self.interval_for(p.stop));
    }

    /// The series interval of a phase that stops by `stop`: --interval, else one giving a
    /// phase of known length enough points.
    pub fn interval_for(&self, stop: iobm_engine::StopRule) -> Duration {
        self.interval.unwrap_or_else(|| stop.default_interval())
    }
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_positive_duration(s)?;
    if d < Duration::from_millis(10) {
        return Err("must be at least 10ms".to_string());
    }
    Ok(d)
}

impl OutputArgs {
    pub fn json(&self) -> Option<&std::path::Path> {
        self.json.as_deref()
    }

    /// Checks the output paths before a run starts.
    pub fn check(&self) -> Result<(), iobm_run::exit::Failure> {
        iobm_run::session::json_path_ok(self.json())?;
        for (flag, path) in [("--csv", &self.csv), ("--html", &self.html)] {
            if let Some(path) = path {
                iobm_run::session::output_path_ok(flag, path)?;
            }
        }
        Ok(())
    }

    /// Writes the run's time series to `--csv FILE` and its report to `--html FILE`, those
    /// given (at rank 0, after the run).
    pub fn save_views(&self, run: &iobm_results::RunResult) -> Result<(), iobm_run::exit::Failure> {
        if self.csv.is_none() && self.html.is_none() {
            return Ok(());
        }
        // The per-worker series of large phases, kept compressed until now, put back.
        let restored = iobm_results::detail::side_file_bytes(run).map(|side| {
            let mut whole = run.clone();
            iobm_results::detail::attach(&mut whole, &side).expect("rows iobm wrote");
            whole
        });
        let run = restored.as_ref().unwrap_or(run);
        if let Some(path) = &self.csv {
            save("--csv", path, &iobm_report::series::csv(run))?;
        }
        if let Some(path) = &self.html {
            save("--html", path, &iobm_report::html::run_page(run))?;
        }
        Ok(())
    }
}

/// Writes `text` to `path` whole or not at all; the error names `flag`.
pub fn save(flag: &str, path: &std::path::Path, text: &str) -> Result<(), iobm_run::exit::Failure> {
    iobm_run::atomic::write_atomic(path, text.as_bytes()).map_err(|e| {
        iobm_run::exit::Failure::run(format!(
            "{flag} {}: cannot write: {}",
            path.display(),
            iobm_run::session::describe_io(&e)
        ))
    })
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and writes only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Worker threads
    #[arg(short, long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub jobs: u32,
    /// Total bytes, split evenly over the jobs (of all MPI ranks) [default: 1GiB]
    #[arg(short, long, value_name = "SIZE", value_parser = parse_positive_size, conflicts_with = "size_per_job")]
    pub size: Option<u64>,
    /// Bytes per job, on every rank (instead of --size)
    #[arg(long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size_per_job: Option<u64>,
    /// One file per job (the default)
    #[arg(long, conflicts_with = "shared_file")]
    pub file_per_job: bool,
    /// One file shared by all jobs, each owning a disjoint region
    #[arg(long)]
    pub shared_file: bool,
    /// When to force written data to storage: never, end (once per job, timed) or each (after every write, like bonnie++ -b)
    #[arg(long, value_enum, default_value_t = FsyncArg::End)]
    pub fsync: FsyncArg,
    /// Content to write: random (every 512 bytes unique, stamped per 4 KiB), zero,
    /// compressible:PCT (the last PCT% of every 4 KiB zero) or dedupe:PCT (PCT% of the 4 KiB
    /// blocks repeat earlier ones)
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = parse_data)]
    pub data: DataKind,
    /// Keep the data after the run (read it later with `iobm read DIR/iobm-<run id>`)
    #[arg(long)]
    pub keep: bool,
    /// Run even when the data set is larger than the free space reported for DIR
    #[arg(long)]
    pub ignore_free_space: bool,
    #[command(flatten)]
    pub io: IoArgs,
}

#[derive(Debug, Args)]
pub struct ReadArgs {
    /// A data set kept by `iobm write --keep` (its iobm-<run id> directory, or the directory holding exactly one)
    #[arg(value_name = "PATH")]
    pub path: PathBuf,
    #[command(flatten)]
    pub io: IoArgs,
}

#[derive(Debug, Args)]
pub struct BonnieArgs {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and writes only there
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Size of the test file [default: twice the RAM, as bonnie++, so the page cache cannot hold it]
    #[arg(short, long, value_name = "SIZE", value_parser = parse_positive_size)]
    pub size: Option<u64>,
    /// Bytes per block operation (bonnie++ -s SIZE:CHUNK)
    #[arg(long, value_name = "SIZE", default_value = "8KiB", value_parser = parse_positive_size)]
    pub chunk: u64,
    /// Per-char meaning: buffered (putc/getc through a buffer, bonnie++ 1.0x) or syscall (one write(2)/read(2) per byte on 1/64 of the file, bonnie++ 1.92+)
    #[arg(long, value_enum, default_value_t = PerCharArg::Buffered)]
    pub per_char: PerCharArg,
    /// When written data is forced to storage: never, end (at close, as bonnie++ 2.x) or each (after every write, bonnie++ -b)
    #[arg(long, value_enum, default_value_t = FsyncArg::End)]
    pub fsync: FsyncArg,
    /// Bypass the page cache with O_DIRECT (bonnie++ -D); chunk must be a multiple of 4 KiB
    #[arg(long)]
    pub direct: bool,
    /// Metadata tests as bonnie++ -n: NUMBER[:MAX[:MIN[:DIRS]]], NUMBER in units of 1024 files, sizes in bytes; 0 skips them
    #[arg(long, value_name = "N[:MAX[:MIN[:DIRS]]]", default_value = "16", value_parser = parse_files)]
    pub files: FilesArg,
    /// Random seeks in all (bonnie++ 2.x: 8192)
    #[arg(long, value_name = "N", default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub seeks: u64,
    /// Workers doing the seeks (bonnie++ 2.x: 5)
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub seekers: u32,
    /// Read what the page cache holds, instead of dropping the file's pages before each read test
    #[arg(long, conflicts_with = "drop_caches")]
    pub keep_cache: bool,
    /// Before each read test drop the whole system's page cache (as root: sync, then
    /// /proc/sys/vm/drop_caches), else the file's pages only; the result says which
    #[arg(long)]
    pub drop_caches: bool,
    /// Content to write: random, zero, compressible:PCT or dedupe:PCT
    #[arg(long, value_name = "KIND", default_value = "random", value_parser = parse_data)]
    pub data: DataKind,
    /// Name of the run in the CSV line and in comparisons [default: the host name]
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Append bonnie++'s CSV line (format 1.98, for bon_csv2txt and bon_csv2html) to FILE,
    /// which collects one line per run
    #[arg(long, value_name = "FILE")]
    pub bonnie_csv: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Run even when the test file is larger than the free space
    #[arg(long)]
    pub ignore_free_space: bool,
}

/// bonnie++'s `-n` specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilesArg {
    pub count: u64,
    pub max_size: u64,
    pub min_size: u64,
    pub dirs: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PerCharArg {
    Buffered,
    Syscall,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Saved results (--json), each optionally labelled: LABEL=RESULT.json
    #[arg(value_name = "[LABEL=]RESULT.json", required = true, num_args = 1..)]
    pub results: Vec<String>,
    /// Runs as columns and tests as rows
    #[arg(long)]
    pub transpose: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// The aggregate each value is (see "Reading the output" in the README)
    #[arg(long, value_enum, default_value_t = AggregateArg::Makespan)]
    pub aggregate: AggregateArg,
    /// Also save the comparison as one self-contained HTML page: the table (with p99 latency
    /// and iobm's CPU) and one chart per test across the runs
    #[arg(long, value_name = "FILE")]
    pub html: Option<std::path::PathBuf>,
    /// Unit of tests that move data: MiB/s, or bonnie++'s K/sec (KiB/s)
    #[arg(long, value_enum, default_value_t = UnitArg::Mib)]
    pub unit: UnitArg,
    /// One table however wide, instead of tables that fit 100 columns
    #[arg(long)]
    pub wide: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnitArg {
    /// MiB/s
    Mib,
    /// bonnie++'s K/sec (KiB/s)
    K,
}

impl From<UnitArg> for iobm_report::compare::Unit {
    fn from(arg: UnitArg) -> Self {
        match arg {
            UnitArg::Mib => iobm_report::compare::Unit::MiB,
            UnitArg::K => iobm_report::compare::Unit::KiB,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AggregateArg {
    Makespan,
    SumOfRates,
    FirstDone,
    SteadyState,
    WarpWindow,
}

impl From<AggregateArg> for iobm_stats::AggregateKind {
    fn from(arg: AggregateArg) -> Self {
        use iobm_stats::AggregateKind as K;
        match arg {
            AggregateArg::Makespan => K::Makespan,
            AggregateArg::SumOfRates => K::SumOfRates,
            AggregateArg::FirstDone => K::FirstDone,
            AggregateArg::SteadyState => K::SteadyState,
            AggregateArg::WarpWindow => K::WarpWindow,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    Text,
    Markdown,
    Csv,
}

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
    /// Connections served at once; at the cap a new one closes the connection idle longest, and
    /// with none idle more wait in the listen backlog
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
            "get, head, put and delete drawn by the --get/--head/--put/--delete weights"
        }
    }
    };
    clap::builder::PossibleValuesParser::new(
        ObjectOp::ALL.map(|op| clap::builder::PossibleValue::new(op.name()).help(help(op))),
    )
    .map(|name| ObjectOp::from_name(&name).expect("one of the possible values"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PayloadArg {
    /// x-amz-content-sha256: UNSIGNED-PAYLOAD (headers still signed)
    Unsigned,
    /// Hash every body with SHA-256 for its signature, inside the operation's time
    Sha256,
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
    /// Region to sign for [default: $AWS_REGION, else us-east-1]
    #[arg(long, value_name = "REGION", env = "AWS_REGION")]
    pub region: Option<String>,
    /// Concurrent requests: one worker thread and connection each
    #[arg(short, long, value_name = "N", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub concurrent: u32,
    /// Object size
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = parse_size, conflicts_with = "obj_size_range")]
    pub obj_size: u64,
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
    /// Mixed: weight of GET
    #[arg(long = "get", value_name = "W", default_value_t = 45)]
    pub mix_get: u32,
    /// Mixed: weight of HEAD
    #[arg(long = "head", value_name = "W", default_value_t = 30)]
    pub mix_head: u32,
    /// Mixed: weight of PUT
    #[arg(long = "put", value_name = "W", default_value_t = 15)]
    pub mix_put: u32,
    /// Mixed: weight of DELETE
    #[arg(long = "delete", value_name = "W", default_value_t = 10)]
    pub mix_delete: u32,
    /// Sign payloads: unsigned (UNSIGNED-PAYLOAD) or sha256 (as clients that hash every body)
    #[arg(long, value_enum, default_value_t = PayloadArg::Unsigned)]
    pub payload_signing: PayloadArg,
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
    /// Name of the run in comparisons
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Directory to measure [default: the system temp directory]
    #[arg(value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Time per step
    #[arg(long, value_name = "DURATION", default_value = "6s", value_parser = parse_positive_duration)]
    pub step_time: Duration,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result saved with --json
    #[arg(value_name = "RESULT.json")]
    pub file: PathBuf,
    /// Show each rate as a share of this machine's limits and flag those above one: a file
    /// saved by `iobm limits --json`, or `measure` to measure them now (quickly, without a
    /// device)
    #[arg(long, value_name = "FILE|measure")]
    pub limits: Option<String>,
    /// Also save the run's time series as tidy CSV to FILE (as --csv of the run would have)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also save the run's HTML report to FILE (as --html of the run would have)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    Sync,
    #[value(name = "io_uring")]
    IoUring,
}

impl IoArgs {
    /// The engine and queue depth asked for, checked: one line naming the flag when they do
    /// not go together or io_uring is not available here.
    pub fn engine(&self) -> Result<(iobm_engine::Engine, u32), iobm_run::exit::Failure> {
        use iobm_run::exit::Failure;
        let engine = match (self.engine, self.iodepth) {
            (Some(EngineArg::Sync), 1) => iobm_engine::Engine::Sync,
            (Some(EngineArg::Sync), n) => {
                return Err(Failure::input(format!(
                    "--iodepth {n} needs --engine io_uring (sync keeps one request in flight)"
                )))
            }
            (None, 1) => iobm_engine::Engine::Sync,
            (Some(EngineArg::IoUring), _) | (None, _) => iobm_engine::Engine::IoUring,
        };
        if engine == iobm_engine::Engine::IoUring {
            iobm_engine::queued::probe().map_err(|e| {
                Failure::input(format!(
                    "--engine io_uring: io_uring is not available here ({e}; an old kernel, seccomp, or the kernel.io_uring_disabled sysctl): use --engine sync"
                ))
            })?;
        }
        Ok((engine, self.iodepth))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FsyncArg {
    Never,
    End,
    Each,
}

impl From<FsyncArg> for iobm_engine::FsyncPolicy {
    fn from(arg: FsyncArg) -> Self {
        match arg {
            FsyncArg::Never => iobm_engine::FsyncPolicy::Never,
            FsyncArg::End => iobm_engine::FsyncPolicy::End,
            FsyncArg::Each => iobm_engine::FsyncPolicy::Each,
        }
    }
}

fn parse_positive_size(s: &str) -> Result<u64, String> {
    match iobm_stats::parse_bytes(s) {
        Ok(0) => Err("must be greater than 0".to_string()),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    iobm_stats::parse_bytes(s).map_err(|e| e.to_string())
}

fn parse_positive_rate(s: &str) -> Result<u64, String> {
    match iobm_stats::parse_rate(s) {
        Ok(0) => Err("must be more than zero".into()),
        r => r.map_err(|e| e.to_string()),
    }
}

/// `MIN..MAX` with sizes that take units.
fn parse_size_range(s: &str) -> Result<(u64, u64), String> {
    let (min, max) = s
        .split_once("..")
        .ok_or("expected MIN..MAX, e.g. 4KiB..1MiB")?;
    let (min, max) = (parse_size(min)?, parse_positive_size(max)?);
    if min > max {
        return Err(format!("MIN ({min}) is larger than MAX ({max})"));
    }
    Ok((min, max))
}

fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match iobm_stats::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be greater than 0".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// `random`, `zero`, `compressible:PCT` or `dedupe:PCT`.
pub fn parse_data(s: &str) -> Result<DataKind, String> {
    match s {
        "random" => Ok(DataKind::Random),
        "zero" => Ok(DataKind::Zero),
        _ => {
            let (kind, pct): (fn(u8) -> DataKind, &str) =
                match (s.strip_prefix("compressible:"), s.strip_prefix("dedupe:")) {
                    (Some(p), _) => (DataKind::Compressible, p),
                    (_, Some(p)) => (DataKind::Dedupe, p),
                    _ => return Err("expected random, zero, compressible:PCT or dedupe:PCT".into()),
                };
            match pct.trim_end_matches('%').parse::<u8>() {
                Ok(p) if p <= 100 => Ok(kind(p)),
                _ => Err(format!("'{pct}' is not a percentage from 0 to 100")),
            }
        }
    }
}

/// `NUMBER[:MAX[:MIN[:DIRS]]]`, NUMBER in units of 1024 files (bonnie++ -n).
pub fn parse_files(s: &str) -> Result<FilesArg, String> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 4 {
        return Err("expected NUMBER[:MAX[:MIN[:DIRS]]]".into());
    }
    let number = |i: usize, what: &str| -> Result<u64, String> {
        match parts.get(i) {
            None | Some(&"") => Ok(0),
            Some(p) => iobm_stats::parse_bytes(p).map_err(|e| format!("{what}: {e}")),
        }
    };
    let files = FilesArg {
        count: number(0, "NUMBER")?
            .checked_mul(1024)
            .ok_or("NUMBER is too large")?,
        max_size: number(1, "MAX")?,
        min_size: number(2, "MIN")?,
        dirs: number(3, "DIRS")?,
    };
    if files.min_size > files.max_size {
        return Err(format!(
            "MIN ({}) is larger than MAX ({})",
            files.min_size, files.max_size
        ));
    }
    Ok(files)
}

#[cfg(test)]
mod tests;
