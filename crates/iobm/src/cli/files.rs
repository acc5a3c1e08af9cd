//! The flags of the file workloads: write, read and stream (`IoArgs` shared by them), bonnie.

use super::units::{named, parse_data, parse_files, parse_positive_duration, parse_positive_size};
use super::{MeasureArgs, OutputArgs, ServerArgs};
use clap::Args;
use iobm_engine::pin::CpuList;
use iobm_engine::{DataKind, Engine, Fadvise, FsyncPolicy, Madvise, PerChar};
use std::path::PathBuf;
use std::time::Duration;

/// gdsio's and elbencho's GPU flags, as iobm's (the `after_help` of write, read and stream).
pub(super) const GPU_FLAGS_HELP: &str = "\
Their GPU flags as iobm's (the code that runs on a real GPU is unverified):
  gdsio -x 1 (CPUONLY)            --mem host (the default)
  gdsio -x 2 (CPU_GPU)            --mem gpu:N (through a host bounce buffer, the copy timed)
  gdsio -d N / elbencho --gpuids  --mem gpu:N[,M...] (workers spread over the GPUs in turn)
  gdsio -w N                      -j N (--jobs)
  gdsio -s SIZE                   --size-per-job SIZE (gdsio's size is per thread)
  gdsio -i SIZE                   --block SIZE
  gdsio -I 0 / 1 / 2 / 3          iobm read / write / read --random / write --random
  gdsio's output line             --gdsio-line
  gdsio -x 0 (GPUD), elbencho --gds  --mem gpu:N --gds (cuFile; each phase says the path it took)
  iobm limits --gpu N             the GPU's copy rates, host to device and back, pinned and pageable";

pub(super) const BONNIE_EXAMPLES: &str = "\
Examples:
  iobm bonnie /mnt/nfs                         file of twice the RAM, 8 KiB chunks, 16384 files
  iobm bonnie --size 8G --fsync each /mnt/lustre --json lustre.json --bonnie-csv lustre.csv
  iobm bonnie --per-char syscall --files 4:4096:0:16 /mnt/gluster
  bon_csv2txt < lustre.csv                     bonnie++'s own tools read the CSV line";

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
    /// How requests are submitted: sync (pread/pwrite), io_uring, or mmap (the file mapped,
    /// each block copied to or from the mapping with its page faults inside the operation's
    /// time, msync as --fsync's flush: fio's ioengine=mmap, elbencho's --mmap) [default:
    /// io_uring when --iodepth is over 1, else sync]
    #[arg(long, value_parser = named(&Engine::ALL, Engine::name, None))]
    pub engine: Option<Engine>,
    /// posix_fadvise on each file right after it is opened (fio's fadvise_hint, elbencho's
    /// --fadv)
    #[arg(long, value_name = "HINT", value_parser = named(&Fadvise::ALL, Fadvise::name, None))]
    pub fadvise: Option<Fadvise>,
    /// --engine mmap: madvise on each mapping right after it is made (elbencho's --madv)
    #[arg(long, value_name = "HINT", value_parser = named(&Madvise::ALL, Madvise::name, None))]
    pub madvise: Option<Madvise>,
    /// Pin worker w's thread to the list's CPU w mod its length, e.g. 0-3,8 (fio's
    /// cpus_allowed, elbencho's --cores); refused when a CPU is not one this process may use
    #[arg(long, value_name = "LIST", value_parser = parse_cpus)]
    pub cpus: Option<CpuList>,
    /// Pin the workers to the CPUs of NUMA node N in turn, as --cpus would (elbencho's --zones)
    #[arg(long, value_name = "N", conflicts_with = "cpus")]
    pub numa: Option<u32>,
    /// Where each worker's buffers live: host, or gpu:N[,M...], the memory of GPU N (the
    /// workers spread over the GPUs listed in turn, as elbencho's --gpuids). GPU buffers move
    /// to and from storage through a host bounce buffer, the copy timed inside each operation
    /// and its share of the operations' time reported apart (gdsio -x 2, CPU_GPU); needs the
    /// NVIDIA driver (libcuda.so.1, loaded at run time) and --engine sync
    #[arg(long, value_name = "WHERE", default_value = "host", value_parser = crate::gpu::parse_mem)]
    pub mem: crate::gpu::Mem,
    /// With --mem gpu:N: move the bytes between storage and the GPU buffers through NVIDIA
    /// cuFile, GPUDirect Storage (gdsio -x 0, GPUD; elbencho --gds): each worker's buffer and
    /// file registered, one cuFileRead or cuFileWrite per operation; implies --direct (cuFile
    /// reads and writes O_DIRECT files); needs cuFile (libcufile.so.0, loaded at run time).
    /// Each phase says which path its bytes took, from nvidia-fs's counters: GPU-direct,
    /// cuFile's compatibility mode, or unknown
    #[arg(long)]
    pub gds: bool,
    /// After each read or write phase, also print it as one line in the form of NVIDIA's gdsio
    /// (IoType, XferType, Threads, DataSetSize, IOSize, Throughput in GiB/s, Avg_Latency in
    /// microseconds, ops, total_time), to set beside gdsio's figures
    #[arg(long)]
    pub gdsio_line: bool,
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
    pub rate: super::RateArgs,
    #[command(flatten)]
    pub load: super::LoadArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub measure: MeasureArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct WriteArgs {
    /// Directory to measure; the run creates iobm-<run id>/ inside it and writes only there.
    /// Or a raw block device, with --destroy-data-on naming it
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
    /// ior-hard's pattern (IOR -s): one shared file of N segments, each holding one --block
    /// transfer (any size: IO500 uses 47008) of every job of every rank in turn, so each job's
    /// transfers interleave with all the others'; the size is block x segments x jobs
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), conflicts_with_all = ["size", "size_per_job", "file_per_job"])]
    pub segments: Option<u64>,
    /// When to force written data to storage: never, end (once per job, timed) or each (after every write, like bonnie++ -b)
    #[arg(long, value_parser = fsync_policy(), default_value = FsyncPolicy::End.name())]
    pub fsync: FsyncPolicy,
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
    /// DIR is a raw block device, named here again exactly (a symlink to the same device is
    /// fine; a partition of it, or its disk, is not): everything on it is overwritten and
    /// nothing is cleaned up, the data on it is gone. Refused if it or a partition of it is
    /// mounted, swap, held by md/dm/LVM or opened exclusively by another program. Each job
    /// writes its own region of the device, with O_DIRECT (--buffered for the page cache).
    /// Under MPI a device per rank: a comma list (rank i takes entry i) or a pattern with
    /// {rank}, spelled the same in DIR and here. fio: filename=/dev/sdX; elbencho: a device
    /// path as its target
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data_on: Option<String>,
    /// With --destroy-data-on: through the page cache, without O_DIRECT
    #[arg(long, requires = "destroy_data_on", conflicts_with = "direct")]
    pub buffered: bool,
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
    #[arg(long, value_parser = named(&[PerChar::Buffered, PerChar::Syscall], per_char_name, None), default_value = per_char_name(PerChar::Buffered))]
    pub per_char: PerChar,
    /// When written data is forced to storage: never, end (at close, as bonnie++ 2.x) or each (after every write, bonnie++ -b)
    #[arg(long, value_parser = fsync_policy(), default_value = FsyncPolicy::End.name())]
    pub fsync: FsyncPolicy,
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
    // bonnie's own views (`--bonnie-csv`).
    #[command(flatten)]
    pub views: super::ViewArgs<super::Bonnie>,
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

impl IoArgs {
    /// The engine and queue depth asked for, checked: one line naming the flag when they (or
    /// --direct, --madvise) do not go together or io_uring is not available here.
    pub fn engine(&self) -> Result<(Engine, u32), iobm_run::exit::Failure> {
        use iobm_run::exit::Failure;
        let engine = match (self.engine, self.iodepth) {
            (Some(one @ (Engine::Sync | Engine::Mmap)), 1) => one,
            (Some(one @ (Engine::Sync | Engine::Mmap)), n) => {
                return Err(Failure::input(format!(
                    "--iodepth {n} needs --engine io_uring ({} keeps one request in flight)",
                    one.name()
                )))
            }
            (None, 1) => Engine::Sync,
            (Some(Engine::IoUring), _) | (None, _) => Engine::IoUring,
        };
        if engine == Engine::Mmap && self.direct {
            return Err(Failure::input(
                "--direct with --engine mmap: a mapping always goes through the page cache (use --engine sync or io_uring)",
            ));
        }
        if let (Some(advice), false) = (self.madvise, engine == Engine::Mmap) {
            return Err(Failure::input(format!(
                "--madvise {} advises a mapping: it needs --engine mmap (--fadvise advises the files of the other engines)",
                advice.name()
            )));
        }
        if engine == Engine::IoUring {
            iobm_engine::queued::probe().map_err(|e| {
                Failure::input(format!(
                    "--engine io_uring: io_uring is not available here ({e}; an old kernel, seccomp, or the kernel.io_uring_disabled sysctl): use --engine sync"
                ))
            })?;
        }
        Ok((engine, self.iodepth))
    }
}

impl IoArgs {
    /// The CPUs the workers are pinned to (`--cpus`, or `--numa`'s node's), checked against
    /// those this process may use; None: not pinned.
    pub fn placement(&self) -> Result<Option<CpuList>, iobm_run::exit::Failure> {
        use iobm_run::exit::Failure;
        let (flag, list) = match (&self.cpus, self.numa) {
            (Some(list), _) => (format!("--cpus {list}"), list.clone()),
            (None, Some(node)) => (
                format!("--numa {node}"),
                CpuList::of_node(node)
                    .map_err(|e| Failure::input(format!("--numa {node}: {e}")))?,
            ),
            (None, None) => return Ok(None),
        };
        let allowed = CpuList::allowed()
            .map_err(|e| Failure::input(format!("{flag}: cannot read this process's CPUs: {e}")))?;
        match list.cpus().iter().find(|c| !allowed.cpus().contains(c)) {
            Some(cpu) => Err(Failure::input(format!(
                "{flag}: CPU {cpu} is not one this process may run on ({allowed})"
            ))),
            None => Ok(Some(list)),
        }
    }
}

fn parse_cpus(text: &str) -> Result<CpuList, String> {
    match CpuList::parse(text)? {
        list if list.cpus().is_empty() => Err("no CPU listed".to_string()),
        list => Ok(list),
    }
}

/// `--fsync`: the engine's policies by their names.
fn fsync_policy() -> impl clap::builder::TypedValueParser<Value = FsyncPolicy> {
    use FsyncPolicy::{Each, End, Never};
    named(&[Never, End, Each], FsyncPolicy::name, None)
}

/// The name of a per-char kind: bonnie's `--per-char` value and the result's `per_char`.
pub fn per_char_name(per_char: PerChar) -> &'static str {
    match per_char {
        PerChar::Buffered => "buffered",
        PerChar::Syscall => "syscall",
    }
}
