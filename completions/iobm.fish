# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_iobm_global_optspecs
    string join \n print-spec h/help V/version
end

function __fish_iobm_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_iobm_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_iobm_using_subcommand
    set -l cmd (__fish_iobm_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c iobm -n "__fish_iobm_needs_command" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_needs_command" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_needs_command" -s V -l version -d 'Print version'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "write" -d 'Write files in parallel and measure the bandwidth'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "read" -d 'Read a data set left by `iobm write --keep` and measure the bandwidth'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "stream" -d 'Write, then read back the same data, in one run'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "bonnie" -d 'bonnie++-style characterisation: per-char, block, rewrite, seeks, metadata'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "meta" -d 'Metadata at scale, mdtest\'s workload: directories and files created, stat\'ed, read, renamed and removed in trees of a shape, by every worker of every rank'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "io500" -d 'The IO500 suite: ior-easy, ior-hard, mdtest-easy, mdtest-hard and find in the rules\' order, the write phases stonewalled, with the bandwidth, metadata and total scores'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "compare" -d 'Side-by-side table of saved results of one kind, with ratios to the first'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "serve" -d 'An S3 gateway over a directory: buckets are its top-level directories'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "s3" -d 'S3 load: put, get, head, delete, list, multipart or mixed, at high concurrency'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "quick" -d 'A tour of about 40 seconds on a built-in default directory, with a summary table'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "report" -d 'Print a saved result (--json FILE) again, recomputing its aggregates'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "limits" -d 'Measure this machine\'s limits (memory copy, loopback TCP, MD5/SHA-256/CRC32C per core, a directory\'s O_DIRECT rates), which no storage rate can exceed without a cache'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "merge" -d 'Combine results of one workload started by hand on several clients (without MPI) into one run, by their wall clocks, keeping the window in which all were active'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "run" -d 'Run a plan file: runs of any command, expanded by a matrix, each saved by its label, compared at the end'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "rerun" -d 'Run the workload of a saved result again (its recorded spec), optionally changed'
complete -c iobm -n "__fish_iobm_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -s j -l jobs -d 'Worker threads' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -s s -l size -d 'Total bytes, split evenly over the jobs (of all MPI ranks) [default: 1GiB]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l size-per-job -d 'Bytes per job, on every rank (instead of --size)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l segments -d 'ior-hard\'s pattern (IOR -s): one shared file of N segments, each holding one --block transfer (any size: IO500 uses 47008) of every job of every rank in turn, so each job\'s transfers interleave with all the others\'; the size is block x segments x jobs' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l fsync -d 'When to force written data to storage: never, end (once per job, timed) or each (after every write, like bonnie++ -b)' -r -f -a "never\t''
end\t''
each\t''"
complete -c iobm -n "__fish_iobm_using_subcommand write" -l data -d 'Content to write: random (every 512 bytes unique, stamped per 4 KiB), zero, compressible:PCT (the last PCT% of every 4 KiB zero) or dedupe:PCT (PCT% of the 4 KiB blocks repeat earlier ones)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l destroy-data-on -d 'DIR is a raw block device, named here again exactly (a symlink to the same device is fine; a partition of it, or its disk, is not): everything on it is overwritten and nothing is cleaned up, the data on it is gone. Refused if it or a partition of it is mounted, swap, held by md/dm/LVM or opened exclusively by another program. Each job writes its own region of the device, with O_DIRECT (--buffered for the page cache). Under MPI a device per rank: a comma list (rank i takes entry i) or a pattern with {rank}, spelled the same in DIR and here. fio: filename=/dev/sdX; elbencho: a device path as its target' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -s b -l block -d 'Bytes per operation [default: 1MiB; for read: the block the data was written with]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l iodepth -d 'Reads or writes each worker keeps in flight, through io_uring (fio\'s iodepth); 1 is one synchronous pread/pwrite at a time' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l engine -d 'How requests are submitted: sync (pread/pwrite), io_uring, or mmap (the file mapped, each block copied to or from the mapping with its page faults inside the operation\'s time, msync as --fsync\'s flush: fio\'s ioengine=mmap, elbencho\'s --mmap) [default: io_uring when --iodepth is over 1, else sync]' -r -f -a "sync\t''
io_uring\t''
mmap\t''"
complete -c iobm -n "__fish_iobm_using_subcommand write" -l fadvise -d 'posix_fadvise on each file right after it is opened (fio\'s fadvise_hint, elbencho\'s --fadv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
noreuse\t''"
complete -c iobm -n "__fish_iobm_using_subcommand write" -l madvise -d '--engine mmap: madvise on each mapping right after it is made (elbencho\'s --madv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
hugepage\t''"
complete -c iobm -n "__fish_iobm_using_subcommand write" -l cpus -d 'Pin worker w\'s thread to the list\'s CPU w mod its length, e.g. 0-3,8 (fio\'s cpus_allowed, elbencho\'s --cores); refused when a CPU is not one this process may use' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l numa -d 'Pin the workers to the CPUs of NUMA node N in turn, as --cpus would (elbencho\'s --zones)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l mem -d 'Where each worker\'s buffers live: host, or gpu:N[,M...], the memory of GPU N (the workers spread over the GPUs listed in turn, as elbencho\'s --gpuids). GPU buffers move to and from storage through a host bounce buffer, the copy timed inside each operation and its share of the operations\' time reported apart (gdsio -x 2, CPU_GPU); needs the NVIDIA driver (libcuda.so.1, loaded at run time) and --engine sync' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l rwmix -d 'stream: instead of reading the data set back, read and write it together, this percent of the operations reads (fio\'s rwmixread); each kind is reported apart' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -s d -l duration -d 'Stop each phase after this long instead of after one pass (wraps around the data)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l ramp -d 'Run this long before each phase\'s --duration without counting it (fio\'s ramp_time): operations that end in the warm-up are in no rate, latency or series' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l rate -d 'Open loop: start operations at this rate over all jobs of all ranks (each its share), whether or not the last returned: N/s operations, or SIZE/s (200MiB/s) in the phase\'s transfer size; response time (from each intended start) is reported beside service time' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l arrivals -d 'How --rate\'s starts are spaced: uniform (evenly) or poisson (exponential gaps, fio\'s rate_process=poisson) [default: uniform]' -r -f -a "uniform\t''
poisson\t''"
complete -c iobm -n "__fish_iobm_using_subcommand write" -l rate-sweep -d 'read: run the phase at STEPS rates from FROM to TO (operations or sizes per second: 100..1000/4, 10MiB..100MiB/4), then a table of achieved rate against response time' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l slo -d 'With --rate-sweep: the knee is the highest rate up to which every step\'s p99 response time stays under this' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l access -d 'Which blocks (with --random) or objects (s3 get, head and mixed\'s reads) operations pick: uniform, zipf:THETA (the k-th hottest with weight 1/k^THETA), pareto:H (fio\'s: 0.2 puts 80% on the hottest 20%) or normal:SIGMA (around the middle, SIGMA percent of the data set); skewed picks are drawn with replacement, seeded. fio\'s random_distribution (warp has no equivalent: its GETs pick uniformly) [default: uniform]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l think -d 'Idle this long after each operation before the worker starts its next, outside its latency (fio\'s thinktime; elbencho has none); under --rate the idle time delays the next start and is no lag of the client\'s' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l burst -d 'Load in bursts: operations for ON, then idle for OFF, every worker in step from the phase\'s start (fio\'s thinktime_blocks/thinktime_spin come closest); under --rate the rate holds during ON and the phase\'s target is rate x ON / (ON + OFF)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand write" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand write" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand write" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand write" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand write" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand write" -l file-per-job -d 'One file per job (the default)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l shared-file -d 'One file shared by all jobs, each owning a disjoint region'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l keep -d 'Keep the data after the run (read it later with `iobm read DIR/iobm-<run id>`)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l ignore-free-space -d 'Run even when the data set is larger than the free space reported for DIR'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l buffered -d 'With --destroy-data-on: through the page cache, without O_DIRECT'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l random -d 'Visit blocks in random order (every block once per pass)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l direct -d 'Bypass the page cache with O_DIRECT (aligned buffers; block must be a multiple of 4 KiB)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l gdsio-line -d 'After each read or write phase, also print it as one line in the form of NVIDIA\'s gdsio (IoType, XferType, Threads, DataSetSize, IOSize, Throughput in GiB/s, Avg_Latency in microseconds, ops, total_time), to set beside gdsio\'s figures'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l keep-cache -d 'Read what the page cache already holds, instead of flushing the data set and dropping its cached pages before each read phase (posix_fadvise DONTNEED, as fio\'s invalidate=1)'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l drop-caches -d 'Before each read phase drop the whole system\'s page cache (as root: sync, then /proc/sys/vm/drop_caches), else the data set\'s pages only; the result says which'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l verify -d 'Check every byte read back against what was written, outside the timing; a block that is corrupt, misplaced or stale fails the run and is named'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l reorder -d 'Under MPI, read the data the next rank wrote (IOR -C), so no rank reads from its own cache'
complete -c iobm -n "__fish_iobm_using_subcommand write" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand write" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand read" -s b -l block -d 'Bytes per operation [default: 1MiB; for read: the block the data was written with]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l iodepth -d 'Reads or writes each worker keeps in flight, through io_uring (fio\'s iodepth); 1 is one synchronous pread/pwrite at a time' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l engine -d 'How requests are submitted: sync (pread/pwrite), io_uring, or mmap (the file mapped, each block copied to or from the mapping with its page faults inside the operation\'s time, msync as --fsync\'s flush: fio\'s ioengine=mmap, elbencho\'s --mmap) [default: io_uring when --iodepth is over 1, else sync]' -r -f -a "sync\t''
io_uring\t''
mmap\t''"
complete -c iobm -n "__fish_iobm_using_subcommand read" -l fadvise -d 'posix_fadvise on each file right after it is opened (fio\'s fadvise_hint, elbencho\'s --fadv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
noreuse\t''"
complete -c iobm -n "__fish_iobm_using_subcommand read" -l madvise -d '--engine mmap: madvise on each mapping right after it is made (elbencho\'s --madv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
hugepage\t''"
complete -c iobm -n "__fish_iobm_using_subcommand read" -l cpus -d 'Pin worker w\'s thread to the list\'s CPU w mod its length, e.g. 0-3,8 (fio\'s cpus_allowed, elbencho\'s --cores); refused when a CPU is not one this process may use' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l numa -d 'Pin the workers to the CPUs of NUMA node N in turn, as --cpus would (elbencho\'s --zones)' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l mem -d 'Where each worker\'s buffers live: host, or gpu:N[,M...], the memory of GPU N (the workers spread over the GPUs listed in turn, as elbencho\'s --gpuids). GPU buffers move to and from storage through a host bounce buffer, the copy timed inside each operation and its share of the operations\' time reported apart (gdsio -x 2, CPU_GPU); needs the NVIDIA driver (libcuda.so.1, loaded at run time) and --engine sync' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l rwmix -d 'stream: instead of reading the data set back, read and write it together, this percent of the operations reads (fio\'s rwmixread); each kind is reported apart' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -s d -l duration -d 'Stop each phase after this long instead of after one pass (wraps around the data)' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l ramp -d 'Run this long before each phase\'s --duration without counting it (fio\'s ramp_time): operations that end in the warm-up are in no rate, latency or series' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l rate -d 'Open loop: start operations at this rate over all jobs of all ranks (each its share), whether or not the last returned: N/s operations, or SIZE/s (200MiB/s) in the phase\'s transfer size; response time (from each intended start) is reported beside service time' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l arrivals -d 'How --rate\'s starts are spaced: uniform (evenly) or poisson (exponential gaps, fio\'s rate_process=poisson) [default: uniform]' -r -f -a "uniform\t''
poisson\t''"
complete -c iobm -n "__fish_iobm_using_subcommand read" -l rate-sweep -d 'read: run the phase at STEPS rates from FROM to TO (operations or sizes per second: 100..1000/4, 10MiB..100MiB/4), then a table of achieved rate against response time' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l slo -d 'With --rate-sweep: the knee is the highest rate up to which every step\'s p99 response time stays under this' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l access -d 'Which blocks (with --random) or objects (s3 get, head and mixed\'s reads) operations pick: uniform, zipf:THETA (the k-th hottest with weight 1/k^THETA), pareto:H (fio\'s: 0.2 puts 80% on the hottest 20%) or normal:SIGMA (around the middle, SIGMA percent of the data set); skewed picks are drawn with replacement, seeded. fio\'s random_distribution (warp has no equivalent: its GETs pick uniformly) [default: uniform]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l think -d 'Idle this long after each operation before the worker starts its next, outside its latency (fio\'s thinktime; elbencho has none); under --rate the idle time delays the next start and is no lag of the client\'s' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l burst -d 'Load in bursts: operations for ON, then idle for OFF, every worker in step from the phase\'s start (fio\'s thinktime_blocks/thinktime_spin come closest); under --rate the rate holds during ON and the phase\'s target is rate x ON / (ON + OFF)' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand read" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand read" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand read" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand read" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand read" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand read" -l random -d 'Visit blocks in random order (every block once per pass)'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l direct -d 'Bypass the page cache with O_DIRECT (aligned buffers; block must be a multiple of 4 KiB)'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l gdsio-line -d 'After each read or write phase, also print it as one line in the form of NVIDIA\'s gdsio (IoType, XferType, Threads, DataSetSize, IOSize, Throughput in GiB/s, Avg_Latency in microseconds, ops, total_time), to set beside gdsio\'s figures'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l keep-cache -d 'Read what the page cache already holds, instead of flushing the data set and dropping its cached pages before each read phase (posix_fadvise DONTNEED, as fio\'s invalidate=1)'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l drop-caches -d 'Before each read phase drop the whole system\'s page cache (as root: sync, then /proc/sys/vm/drop_caches), else the data set\'s pages only; the result says which'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l verify -d 'Check every byte read back against what was written, outside the timing; a block that is corrupt, misplaced or stale fails the run and is named'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l reorder -d 'Under MPI, read the data the next rank wrote (IOR -C), so no rank reads from its own cache'
complete -c iobm -n "__fish_iobm_using_subcommand read" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand read" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -s j -l jobs -d 'Worker threads' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -s s -l size -d 'Total bytes, split evenly over the jobs (of all MPI ranks) [default: 1GiB]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l size-per-job -d 'Bytes per job, on every rank (instead of --size)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l segments -d 'ior-hard\'s pattern (IOR -s): one shared file of N segments, each holding one --block transfer (any size: IO500 uses 47008) of every job of every rank in turn, so each job\'s transfers interleave with all the others\'; the size is block x segments x jobs' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l fsync -d 'When to force written data to storage: never, end (once per job, timed) or each (after every write, like bonnie++ -b)' -r -f -a "never\t''
end\t''
each\t''"
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l data -d 'Content to write: random (every 512 bytes unique, stamped per 4 KiB), zero, compressible:PCT (the last PCT% of every 4 KiB zero) or dedupe:PCT (PCT% of the 4 KiB blocks repeat earlier ones)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l destroy-data-on -d 'DIR is a raw block device, named here again exactly (a symlink to the same device is fine; a partition of it, or its disk, is not): everything on it is overwritten and nothing is cleaned up, the data on it is gone. Refused if it or a partition of it is mounted, swap, held by md/dm/LVM or opened exclusively by another program. Each job writes its own region of the device, with O_DIRECT (--buffered for the page cache). Under MPI a device per rank: a comma list (rank i takes entry i) or a pattern with {rank}, spelled the same in DIR and here. fio: filename=/dev/sdX; elbencho: a device path as its target' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -s b -l block -d 'Bytes per operation [default: 1MiB; for read: the block the data was written with]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l iodepth -d 'Reads or writes each worker keeps in flight, through io_uring (fio\'s iodepth); 1 is one synchronous pread/pwrite at a time' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l engine -d 'How requests are submitted: sync (pread/pwrite), io_uring, or mmap (the file mapped, each block copied to or from the mapping with its page faults inside the operation\'s time, msync as --fsync\'s flush: fio\'s ioengine=mmap, elbencho\'s --mmap) [default: io_uring when --iodepth is over 1, else sync]' -r -f -a "sync\t''
io_uring\t''
mmap\t''"
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l fadvise -d 'posix_fadvise on each file right after it is opened (fio\'s fadvise_hint, elbencho\'s --fadv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
noreuse\t''"
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l madvise -d '--engine mmap: madvise on each mapping right after it is made (elbencho\'s --madv)' -r -f -a "sequential\t''
random\t''
willneed\t''
dontneed\t''
hugepage\t''"
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l cpus -d 'Pin worker w\'s thread to the list\'s CPU w mod its length, e.g. 0-3,8 (fio\'s cpus_allowed, elbencho\'s --cores); refused when a CPU is not one this process may use' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l numa -d 'Pin the workers to the CPUs of NUMA node N in turn, as --cpus would (elbencho\'s --zones)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l mem -d 'Where each worker\'s buffers live: host, or gpu:N[,M...], the memory of GPU N (the workers spread over the GPUs listed in turn, as elbencho\'s --gpuids). GPU buffers move to and from storage through a host bounce buffer, the copy timed inside each operation and its share of the operations\' time reported apart (gdsio -x 2, CPU_GPU); needs the NVIDIA driver (libcuda.so.1, loaded at run time) and --engine sync' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l rwmix -d 'stream: instead of reading the data set back, read and write it together, this percent of the operations reads (fio\'s rwmixread); each kind is reported apart' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -s d -l duration -d 'Stop each phase after this long instead of after one pass (wraps around the data)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l ramp -d 'Run this long before each phase\'s --duration without counting it (fio\'s ramp_time): operations that end in the warm-up are in no rate, latency or series' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l rate -d 'Open loop: start operations at this rate over all jobs of all ranks (each its share), whether or not the last returned: N/s operations, or SIZE/s (200MiB/s) in the phase\'s transfer size; response time (from each intended start) is reported beside service time' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l arrivals -d 'How --rate\'s starts are spaced: uniform (evenly) or poisson (exponential gaps, fio\'s rate_process=poisson) [default: uniform]' -r -f -a "uniform\t''
poisson\t''"
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l rate-sweep -d 'read: run the phase at STEPS rates from FROM to TO (operations or sizes per second: 100..1000/4, 10MiB..100MiB/4), then a table of achieved rate against response time' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l slo -d 'With --rate-sweep: the knee is the highest rate up to which every step\'s p99 response time stays under this' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l access -d 'Which blocks (with --random) or objects (s3 get, head and mixed\'s reads) operations pick: uniform, zipf:THETA (the k-th hottest with weight 1/k^THETA), pareto:H (fio\'s: 0.2 puts 80% on the hottest 20%) or normal:SIGMA (around the middle, SIGMA percent of the data set); skewed picks are drawn with replacement, seeded. fio\'s random_distribution (warp has no equivalent: its GETs pick uniformly) [default: uniform]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l think -d 'Idle this long after each operation before the worker starts its next, outside its latency (fio\'s thinktime; elbencho has none); under --rate the idle time delays the next start and is no lag of the client\'s' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l burst -d 'Load in bursts: operations for ON, then idle for OFF, every worker in step from the phase\'s start (fio\'s thinktime_blocks/thinktime_spin come closest); under --rate the rate holds during ON and the phase\'s target is rate x ON / (ON + OFF)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l file-per-job -d 'One file per job (the default)'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l shared-file -d 'One file shared by all jobs, each owning a disjoint region'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l keep -d 'Keep the data after the run (read it later with `iobm read DIR/iobm-<run id>`)'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l ignore-free-space -d 'Run even when the data set is larger than the free space reported for DIR'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l buffered -d 'With --destroy-data-on: through the page cache, without O_DIRECT'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l random -d 'Visit blocks in random order (every block once per pass)'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l direct -d 'Bypass the page cache with O_DIRECT (aligned buffers; block must be a multiple of 4 KiB)'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l gdsio-line -d 'After each read or write phase, also print it as one line in the form of NVIDIA\'s gdsio (IoType, XferType, Threads, DataSetSize, IOSize, Throughput in GiB/s, Avg_Latency in microseconds, ops, total_time), to set beside gdsio\'s figures'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l keep-cache -d 'Read what the page cache already holds, instead of flushing the data set and dropping its cached pages before each read phase (posix_fadvise DONTNEED, as fio\'s invalidate=1)'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l drop-caches -d 'Before each read phase drop the whole system\'s page cache (as root: sync, then /proc/sys/vm/drop_caches), else the data set\'s pages only; the result says which'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l verify -d 'Check every byte read back against what was written, outside the timing; a block that is corrupt, misplaced or stale fails the run and is named'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l reorder -d 'Under MPI, read the data the next rank wrote (IOR -C), so no rank reads from its own cache'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand stream" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -s s -l size -d 'Size of the test file [default: twice the RAM, as bonnie++, so the page cache cannot hold it]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l chunk -d 'Bytes per block operation (bonnie++ -s SIZE:CHUNK)' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l per-char -d 'Per-char meaning: buffered (putc/getc through a buffer, bonnie++ 1.0x) or syscall (one write(2)/read(2) per byte on 1/64 of the file, bonnie++ 1.92+)' -r -f -a "buffered\t''
syscall\t''"
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l fsync -d 'When written data is forced to storage: never, end (at close, as bonnie++ 2.x) or each (after every write, bonnie++ -b)' -r -f -a "never\t''
end\t''
each\t''"
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l files -d 'Metadata tests as bonnie++ -n: NUMBER[:MAX[:MIN[:DIRS]]], NUMBER in units of 1024 files, sizes in bytes; 0 skips them' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l seeks -d 'Random seeks in all (bonnie++ 2.x: 8192)' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l seekers -d 'Workers doing the seeks (bonnie++ 2.x: 5)' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l data -d 'Content to write: random, zero, compressible:PCT or dedupe:PCT' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l bonnie-csv -d 'Append bonnie++\'s CSV line (format 1.98, for bon_csv2txt and bon_csv2html) to FILE, which collects one line per run' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l direct -d 'Bypass the page cache with O_DIRECT (bonnie++ -D); chunk must be a multiple of 4 KiB'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l keep-cache -d 'Read what the page cache holds, instead of dropping the file\'s pages before each read test'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l drop-caches -d 'Before each read test drop the whole system\'s page cache (as root: sync, then /proc/sys/vm/drop_caches), else the file\'s pages only; the result says which'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l ignore-free-space -d 'Run even when the test file is larger than the free space'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand bonnie" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -s j -l jobs -d 'Worker threads per process' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -s n -l items -d 'Files (and directories) each worker makes (mdtest -n), or in each directory of its tree with --items-per-dir (mdtest -I)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l depth -d 'Levels of directories below each tree\'s root (mdtest -z)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l branch -d 'Directories made in each directory of the tree above its last level (mdtest -b)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l stride -d 'Stat, read, rename and remove the items of the worker this many ranks on (mdtest -N), so that no client reads what its own caches hold of its own creations' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l write-bytes -d 'Bytes written into each file as it is created (mdtest -w)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l read-bytes -d 'Bytes read from each file by file-read (mdtest -e) [default: --write-bytes]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l phases -d 'The phases to run, comma-separated [default: every one but file-rename, and file-read only when the files hold bytes]' -r -f -a "dir-create\t''
dir-stat\t''
dir-remove\t''
file-create\t''
file-stat\t''
file-read\t''
file-rename\t''
file-remove\t''"
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l stonewall -d 'A stonewall in every creating and lookup phase (creates, stats, reads): it ends for every worker once the first reaches this time, then each goes on to as many items as the most any worker of any rank had done (wear-out), so the later phases work on exactly what was made; renames and removals always see every item made' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l items-per-dir -d '--items counts per directory of the tree, not per worker'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l leaves-only -d 'Items only in the last level\'s directories (mdtest -L)'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l unique-dir -d 'A tree of its own for each worker (mdtest -u); without it every worker of every rank works in one shared tree (mdtest\'s default)'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l drop-caches -d 'Before each phase that looks at what was made (stat, read, rename, remove) drop the system\'s dentry, inode and page caches (as root: sync, then /proc/sys/vm/drop_caches)'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l keep -d 'Keep the run\'s directory and what the phases left in it (without removal phases, the whole namespace) instead of removing it at the end'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand meta" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand io500" -s j -l jobs -d 'Worker threads per process' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l easy-size -d 'ior-easy: the most bytes each worker writes into its own file (its write stops earlier at the stonewall; IO500\'s blockSize, whose default this is)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l easy-transfer -d 'ior-easy: bytes per transfer (IO500\'s transferSize)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l segments -d 'ior-hard: the most 47008-byte transfers each worker writes into the shared file (IOR\'s segments; its write stops earlier at the stonewall; IO500\'s segmentCount)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -s n -l items -d 'mdtest-easy and mdtest-hard: the most files each worker creates (its creations stop earlier at the stonewall), unless --easy-items or --hard-items says otherwise (IO500\'s n, whose default this is)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l easy-items -d 'mdtest-easy: the most files each worker creates (IO500\'s [mdtest-easy] n); --items when not given' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l hard-items -d 'mdtest-hard: the most files each worker creates (IO500\'s [mdtest-hard] n); --items when not given' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l stonewall -d 'The write phases\' stonewall: each ends for every worker once the first reaches this time, then each goes on to the most any worker of any rank did. Other than 300s (the rules\'), the result is NOT a valid IO500 submission' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l keep -d 'Keep the run\'s directory and what the phases left in it instead of removing it'
complete -c iobm -n "__fish_iobm_using_subcommand io500" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand io500" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l format -d 'Output format' -r -f -a "text\t''
markdown\t''
csv\t''"
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l aggregate -d 'The aggregate each value is (see "Reading the output" in docs/results.md)' -r -f -a "makespan\t''
sum-of-rates\t''
first-done\t''
steady-state\t''
warp-window\t''"
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l html -d 'Also save the comparison as one self-contained HTML page: the table (with p99 latency and iobm\'s CPU) and one chart per test across the runs' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l unit -d 'Unit of tests that move data: MiB/s, or bonnie++\'s K/sec (KiB/s)' -r -f -a "mib\t'MiB/s'
k\t'bonnie++\'s K/sec (KiB/s)'"
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l transpose -d 'Runs as columns and tests as rows'
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l wide -d 'One table however wide, instead of tables that fit 100 columns'
complete -c iobm -n "__fish_iobm_using_subcommand compare" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l listen -d 'Address and port to listen on (port 0 picks a free one)' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l metrics-listen -d 'Also serve the gateway\'s counters (bytes served, how many from its page cache, device bytes, CPU) in the Prometheus text format at an unsigned /metrics on this address; on the S3 port /metrics answers only signed requests' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l access-key -d 'Access key clients sign with [default: generated and printed]' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l secret-key -d 'Secret key clients sign with [default: generated and printed]' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l users -d 'Accounts, one `ACCESS_KEY SECRET_KEY NAME` a line (`#` starts a comment): each bucket belongs to the account that made it, others get AccessDenied unless its canned ACL grants them; read again on SIGHUP' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l region -d 'The region signatures must name (AWS_REGION, else us-east-1)' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l header-timeout -d 'Close a connection whose request headers have not all arrived this long after it became ready for a request (also closes idle keep-alive connections)' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l body-timeout -d 'Fail a request whose body stops arriving, or whose response stops being read, this long' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l min-body-rate -d 'Fail a request whose body brings less than this a second over a 10 s window of waiting for it (RequestTimeout); 0: no minimum' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l max-connections -d 'Connections served at once (lowered to what the descriptor limit allows); at the cap a new one closes the connection idle longest, with none idle the one whose request body arrives slowest if under 4 times --min-body-rate, else more wait in the listen backlog' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l abort-incomplete-after -d 'Remove multipart uploads started longer ago than this [default: kept until completed or aborted]' -r
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l tls-cert -d 'Serve HTTPS with this PEM certificate chain (with --tls-key)' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l tls-key -d 'The PEM private key of --tls-cert' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l anonymous -d 'Accept requests without a signature'
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l fsync -d 'fsync every object before it becomes visible'
complete -c iobm -n "__fish_iobm_using_subcommand serve" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand serve" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l endpoint -d 'S3 endpoint, http://HOST:PORT or https://HOST:PORT; repeat or separate with commas to spread the workers over several [default: $AWS_ENDPOINT_URL, else iobm\'s own gateway started in-process]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l dir -d 'Directory the built-in gateway serves (without --endpoint) [default: a new temporary directory]' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l bucket -d 'Bucket to use; created if missing (and then deleted afterwards, unless --keep)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l prefix -d 'Key prefix under which the run makes its own PREFIX/iobm-<run id>/' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l access-key -d 'Access key [default: $AWS_ACCESS_KEY_ID]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l secret-key -d 'Secret key [default: $AWS_SECRET_ACCESS_KEY]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l session-token -d 'Session token of temporary credentials (STS), sent and signed as x-amz-security-token [default: $AWS_SESSION_TOKEN]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l region -d 'Region to sign for [default: $AWS_REGION, else us-east-1]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -s c -l concurrent -d 'Concurrent requests: one worker thread and connection each' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l obj-size -d 'Object size, or sizes drawn per object: log2:MIN..MAX (as many in each doubling; warp\'s --obj.randsize), lognormal:MEDIAN,SIGMA (cut at six deviations), or weighted sizes SIZE:WEIGHT,... (fio\'s bssplit), e.g. 4KiB:50,1MiB:40,64MiB:10' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l obj-size-range -d 'Object sizes drawn uniformly from MIN..MAX per object (instead of --obj-size)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l objects -d 'Objects of the data set for get, head, delete, list and mixed (uploaded first, not counted)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -s d -l duration -d 'Stop after this long' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l ramp -d 'Run this long before the --duration without counting it (fio\'s ramp_time): operations that end in the warm-up are in no rate, latency or series' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l ops -d 'Stop after this many operations in all (instead of --duration)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l range-size -d 'Bytes per ranged GET, from a random offset (get and mixed)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l part-size -d 'Part size of multipart uploads (S3 wants at least 5 MiB but for the last)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l part-concurrency -d 'Parts in flight per multipart upload (each on its own connection)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l page-keys -d 'Keys per list request' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l batch -d 'Delete: keys per DeleteObjects request (warp\'s --batch), counted as one request and that many keys; 1 sends one DELETE per object' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l get -d 'Mixed: weight of GET [default: 45 when no weight is given, else 0]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l head -d 'Mixed: weight of HEAD [default: 30 when no weight is given, else 0]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l put -d 'Mixed: weight of PUT [default: 15 when no weight is given, else 0]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l delete -d 'Mixed: weight of DELETE [default: 10 when no weight is given, else 0]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l list -d 'Mixed: weight of LIST, one page of --page-keys of the run\'s objects each (elbencho\'s ask; warp\'s mixed has none) [default: 0]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l payload-signing -d 'Sign payloads: unsigned (UNSIGNED-PAYLOAD) or sha256 (as clients that hash every body)' -r -f -a "unsigned\t'x-amz-content-sha256: UNSIGNED-PAYLOAD (headers still signed)'
sha256\t'Hash every body with SHA-256 for its signature, inside the operation\'s time'"
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l checksum -d 'Send S3\'s additional checksum of every whole-object PUT\'s body (x-amz-checksum-*, computed inside the operation\'s time, checked by the server): crc32, crc32c, crc64nvme, sha1 or sha256 (warp\'s --checksum; the AWS CLI\'s --checksum-algorithm). PUTs of s3 put and s3 mixed; not multipart uploads' -r -f -a "crc32\t''
crc32c\t''
crc64nvme\t''
sha1\t''
sha256\t''"
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l retries -d 'Try a failed request again up to N times (counted apart); by default failures are only counted' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l max-errors -d 'End the run (failed) once more than N requests failed' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l timeout -d 'Longest wait for a connection, or for progress of a request or an answer' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l rate -d 'Open loop: start operations at this rate over all jobs of all ranks (each its share), whether or not the last returned: N/s operations, or SIZE/s (200MiB/s) in the phase\'s transfer size; response time (from each intended start) is reported beside service time' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l arrivals -d 'How --rate\'s starts are spaced: uniform (evenly) or poisson (exponential gaps, fio\'s rate_process=poisson) [default: uniform]' -r -f -a "uniform\t''
poisson\t''"
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l rate-sweep -d 'read: run the phase at STEPS rates from FROM to TO (operations or sizes per second: 100..1000/4, 10MiB..100MiB/4), then a table of achieved rate against response time' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l slo -d 'With --rate-sweep: the knee is the highest rate up to which every step\'s p99 response time stays under this' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l access -d 'Which blocks (with --random) or objects (s3 get, head and mixed\'s reads) operations pick: uniform, zipf:THETA (the k-th hottest with weight 1/k^THETA), pareto:H (fio\'s: 0.2 puts 80% on the hottest 20%) or normal:SIGMA (around the middle, SIGMA percent of the data set); skewed picks are drawn with replacement, seeded. fio\'s random_distribution (warp has no equivalent: its GETs pick uniformly) [default: uniform]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l think -d 'Idle this long after each operation before the worker starts its next, outside its latency (fio\'s thinktime; elbencho has none); under --rate the idle time delays the next start and is no lag of the client\'s' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l burst -d 'Load in bursts: operations for ON, then idle for OFF, every worker in step from the phase\'s start (fio\'s thinktime_blocks/thinktime_spin come closest); under --rate the rate holds during ON and the phase\'s target is rate x ON / (ON + OFF)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l data -d 'Content of the objects: random (every 512 bytes unique, stamped per 4 KiB), zero, compressible:PCT or dedupe:PCT' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l reuse -d 'get, head, mixed: read the data set an earlier `--keep` left under PREFIX (s3://BUCKET/PREFIX/ as that run printed, or PREFIX in --bucket) instead of uploading one, so the server\'s caches can be dropped in between; the run only reads it and never deletes it' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l tls -d 'Endpoints given as HOST:PORT (without a scheme) use https:// instead of http://'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l insecure -d 'Accept any TLS certificate (self-signed test servers); the connection is still encrypted'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l once -d 'get, head: read each object of the data set once per pass, in an order shuffled anew for each pass, instead of picking each read\'s object at random with replacement (with as many reads as objects, about 37% then repeat an object just read, which a cache may hold) [default with --reuse and --ops no larger than the kept objects]'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l verify -d 'Check every byte a GET returns as it arrives (kept out of its latency), and that the ETag a PUT gets is the MD5 of what was sent; corrupt, misplaced or stale data fails the run'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l drop-caches -d 'With the built-in gateway: after uploading the data set, drop the whole system\'s page cache (as root: sync, then /proc/sys/vm/drop_caches), else the data set\'s files\' pages, outside the timing; the result says which. With --endpoint on this host (an `iobm serve` here), as root: the whole page cache, the server\'s too. Another host\'s is out of reach'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l new-connection -d 'Open a new connection for every request (Connection: close), its setup inside the operation\'s time; by default each worker keeps its connection alive'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l keep -d 'Leave the objects (and the built-in gateway\'s directory) after the run'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand s3" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l step-time -d 'Time per step' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l server-ram -d 'Memory of the server behind the storage (NFS or Lustre server, S3 server): a read data set smaller than this is flagged as possibly served from its cache [default for network file systems: twice this machine\'s RAM]' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l server-metrics -d 'The storage servers\' Prometheus text endpoints (node_exporter\'s http://HOST:9100/metrics, or the gateway\'s of `iobm serve --metrics-listen`), read before and after every phase: what their devices, page cache, network and CPUs did goes into the cache verdict, and their memory replaces --server-ram. Each must answer before the run starts' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l server-devices -d 'The servers\' data devices, as node_exporter names them (sdb,nvme0n1) [default: every disk but device-mapper, md, loop, ram and partitions]' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l server-drop-cmd -d 'A command that drops the storage servers\' caches ("ssh nfs1 sudo sysctl vm.drop_caches=3"), run through sh -c before every read or GET phase, outside its time; if it fails the run ends there with what it measured' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l line-rate -d 'The network\'s speed between this client and the storage: auto (the link speed of the interface the storage is reached through) or a rate (100Gbit, 25Gbit/s, 1.25GB/s). A phase faster than this, one client\'s bytes over the phase\'s whole time, is flagged as served by a cache on this side of the network (not with the built-in gateway, whose bytes cross no network)' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l interval -d 'Length of one interval of the time series (bytes, operations, errors and a latency histogram per interval, per worker) [default: for a phase of known length (--duration) the longest of 10ms, 20ms, 50ms ... 1s giving it at least 20 intervals, else 1s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l repeat -d 'Run the whole workload N times, each on fresh data, and report each aggregate\'s median, range and 95% confidence interval over the N' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l until-stable -d 'End each phase that runs for a --duration early once its rate is steady: every rate of the last WINDOW (sampled ten times in it, over all workers of all ranks) within TOL of their mean (fio\'s steadystate, warp\'s autoterm) [default without a value: 7.5%/15s]' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand quick" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand quick" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand report" -l requests -d 'Re-analyse files written by --requests instead: per phase and kind of operation the count, bytes and exact latency percentiles, each host\'s, rank\'s and worker\'s, the slowest requests with their file or object and offset, and the rate over time. Several files are read together; one FILE of an MPI run brings its FILE.rank1, FILE.rank2, ... along' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand report" -l interval -d 'The interval of --requests\' rate over time (warp analyze\'s --analyze.dur)' -r
complete -c iobm -n "__fish_iobm_using_subcommand report" -l window -d 'Only the requests that started in this window of their phase (2s..5s: from 2 s to 5 s after the phase began)' -r
complete -c iobm -n "__fish_iobm_using_subcommand report" -l limits -d 'Show each rate as a share of this machine\'s limits and flag those above one: a file saved by `iobm limits --json`, or `measure` to measure them now (quickly, without a device)' -r
complete -c iobm -n "__fish_iobm_using_subcommand report" -l csv -d 'Also save the run\'s time series as tidy CSV to FILE (as --csv of the run would have)' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand report" -l html -d 'Also save the run\'s HTML report to FILE (as --html of the run would have)' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand report" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand report" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l size -d 'Bytes the directory\'s measurement writes and reads' -r
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l time -d 'How long each of the other measurements runs' -r
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l json -d 'Save the limits as JSON, for `iobm report --limits`' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l like -d 'Also measure DIR at the block size and requests in flight of every phase of this saved run (--json), the run `iobm report --limits` is to judge' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l gpu -d 'Also measure GPU N\'s copies, host to device and device to host, from pinned and pageable host memory (CUDA\'s driver, loaded at run time), for `--mem gpu` phases' -r
complete -c iobm -n "__fish_iobm_using_subcommand limits" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand limits" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l whole -d 'Keep every run\'s whole phases instead of only the window in which all were active'
complete -c iobm -n "__fish_iobm_using_subcommand merge" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand merge" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand run" -l out -d 'Directory for the results (one RESULT.json per run, named by its label) and plan.json [default: PLAN-results in the current directory]' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand run" -l format -d 'Format of the comparisons printed at the end (csv: the CSV alone on stdout, all else the plan and its runs print on stderr)' -r -f -a "text\t''
markdown\t''
csv\t''"
complete -c iobm -n "__fish_iobm_using_subcommand run" -l dry-run -d 'Print the runs the plan expands to and their command lines; run nothing'
complete -c iobm -n "__fish_iobm_using_subcommand run" -l resume -d 'Skip the runs whose complete result of the same spec is in --out already'
complete -c iobm -n "__fish_iobm_using_subcommand run" -l fail-fast -d 'Stop at the first run that fails (by default a failed run is recorded and the plan goes on)'
complete -c iobm -n "__fish_iobm_using_subcommand run" -l html -d 'Also save each comparison as an HTML page in --out (compare-KIND.html)'
complete -c iobm -n "__fish_iobm_using_subcommand run" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand run" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l set -d 'Change one option of the spec (its long name); a flag takes true or false, an empty value takes the option out; repeat for more' -r
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l json -d 'Save the full result document (versioned JSON, see schema/) to FILE, rewritten after every phase so a killed run keeps what it measured; - prints it to stdout at the end' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l csv -d 'Save the time series as tidy CSV to FILE: one row per phase, worker and second (and per kind of S3 operation over all workers), with bytes, operations and rates' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l html -d 'Save a report to look at as one self-contained HTML file (no network needed): throughput and latency over time, per-worker and per-rank bars, aggregates, cache verdict' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l live -d 'Append one JSON line per interval of each phase to FILE as the phase runs (its bytes, operations, errors and latency percentiles, and each kind of operation\'s), written as soon as every worker has passed the interval, so tail -f and jq can follow a run; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l requests -d 'Keep every operation in FILE as it goes (its start, intended start under --rate, duration, time to first byte, bytes, worker, file or object and offset, error kind), zstd-compressed a chunk at a time so a killed run keeps what was written; `iobm report --requests FILE` re-analyses it; under MPI each rank writes its own, FILE.rankN on rank N' -r -F
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l metrics-listen -d 'Serve the run\'s counters (bytes, operations, errors) and latency histograms by phase and kind of operation for Prometheus at http://ADDR:PORT/metrics while it runs (port 0 picks a free one; under MPI rank 0 serves the sum over the ranks)' -r
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l metrics-linger -d 'After the run, keep serving --metrics-listen until one scrape has read the final counters, for at most DURATION' -r
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l label -d 'Name of the run in the result, so comparisons (`iobm compare`) and bonnie\'s CSV line call it so [default: in comparisons the result\'s file name, in the CSV line the host name]' -r
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -l print-spec -d 'Print the command line as a plan entry (TOML, for `iobm run`) instead of running it'
complete -c iobm -n "__fish_iobm_using_subcommand rerun" -s h -l help -d 'Print help'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "write" -d 'Write files in parallel and measure the bandwidth'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "read" -d 'Read a data set left by `iobm write --keep` and measure the bandwidth'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "stream" -d 'Write, then read back the same data, in one run'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "bonnie" -d 'bonnie++-style characterisation: per-char, block, rewrite, seeks, metadata'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "meta" -d 'Metadata at scale, mdtest\'s workload: directories and files created, stat\'ed, read, renamed and removed in trees of a shape, by every worker of every rank'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "io500" -d 'The IO500 suite: ior-easy, ior-hard, mdtest-easy, mdtest-hard and find in the rules\' order, the write phases stonewalled, with the bandwidth, metadata and total scores'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "compare" -d 'Side-by-side table of saved results of one kind, with ratios to the first'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "serve" -d 'An S3 gateway over a directory: buckets are its top-level directories'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "s3" -d 'S3 load: put, get, head, delete, list, multipart or mixed, at high concurrency'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "quick" -d 'A tour of about 40 seconds on a built-in default directory, with a summary table'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "report" -d 'Print a saved result (--json FILE) again, recomputing its aggregates'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "limits" -d 'Measure this machine\'s limits (memory copy, loopback TCP, MD5/SHA-256/CRC32C per core, a directory\'s O_DIRECT rates), which no storage rate can exceed without a cache'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "merge" -d 'Combine results of one workload started by hand on several clients (without MPI) into one run, by their wall clocks, keeping the window in which all were active'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "run" -d 'Run a plan file: runs of any command, expanded by a matrix, each saved by its label, compared at the end'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "rerun" -d 'Run the workload of a saved result again (its recorded spec), optionally changed'
complete -c iobm -n "__fish_iobm_using_subcommand help; and not __fish_seen_subcommand_from write read stream bonnie meta io500 compare serve s3 quick report limits merge run rerun help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
