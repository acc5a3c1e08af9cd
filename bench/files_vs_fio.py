#!/usr/bin/env python3
"""iobm against fio on the same directory, sizes, block sizes and job counts, in one run.

Measures each tool's whole-process CPU time (user + system, from wait4) and wall time for the
same amount of data, and prints throughput, CPU-seconds per GiB and the iobm/fio ratios.
Usage: bench/files_vs_fio.py [DIR] [--size-per-job 1G] [--jobs 2] [--rounds 3]
Installs fio from Debian when it is missing (as root). Builds iobm in release mode.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """Runs cmd; returns (wall seconds, CPU seconds user+system) of the child."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return wall, usage.ru_utime + usage.ru_stime


def ensure_fio():
    if shutil.which("fio"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", "fio"], check=True, stdout=subprocess.DEVNULL)
    else:
        sys.exit("please install fio")


def parse_size(s):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    return int(s[:-1]) * units[s[-1].lower()] if s[-1].lower() in units else int(s)


def drop_caches():
    subprocess.run(["sync"])
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", default=None)
    ap.add_argument("--size-per-job", default="1G")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    ensure_fio()
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "iobm"], cwd=ROOT, check=True)
    target_dir = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    iobm = os.path.join(target_dir, "release", "iobm")
    base = tempfile.mkdtemp(prefix="iobm-vs-fio-", dir=args.dir)
    per_job = parse_size(args.size_per_job)
    jobs = args.jobs
    gib = per_job * jobs / (1 << 30)
    fio_dir = os.path.join(base, "fio")
    os.mkdir(fio_dir)
    size = args.size_per_job

    fio_common = ["fio", "--name=j", f"--directory={fio_dir}", f"--numjobs={jobs}", f"--size={size}",
                  "--ioengine=psync", "--group_reporting", "--output=/dev/null"]
    workloads = [
        # name, iobm args (after the data set exists), fio args, drop caches first
        ("seq write 1MiB, fsync end",
         None, ["--rw=write", "--bs=1M", "--end_fsync=1"], True),
        # Both drop the files' cached pages first by default (fio: invalidate=1).
        ("seq read 1MiB, from storage", ["--block", "1MiB"], ["--rw=read", "--bs=1M"], False),
        ("seq read 1MiB, page cache", ["--block", "1MiB", "--keep-cache"],
         ["--rw=read", "--bs=1M", "--invalidate=0"], False),
        ("random read 4KiB, page cache", ["--block", "4k", "--random", "--keep-cache"],
         ["--rw=randread", "--bs=4k", "--invalidate=0", "--norandommap", "--randrepeat=0"], False),
        ("seq read 1MiB, O_DIRECT", ["--block", "1MiB", "--direct"], ["--rw=read", "--bs=1M", "--direct=1"], False),
    ]
    results = []
    for name, iobm_args, fio_args, drop in workloads:
        best = {"iobm": None, "fio": None}
        for _ in range(args.rounds):
            for tool in ("iobm", "fio"):
                if drop:
                    drop_caches()
                if tool == "fio":
                    if iobm_args is None:
                        shutil.rmtree(fio_dir)
                        os.mkdir(fio_dir)
                    cmd = fio_common + fio_args
                elif iobm_args is None:
                    for entry in os.listdir(base):
                        if entry.startswith("iobm-"):
                            shutil.rmtree(os.path.join(base, entry))
                    cmd = [iobm, "write", "--keep", "-j", str(jobs), "--size-per-job", size,
                           "--block", "1MiB", "--fsync", "end", base]
                else:
                    data = [e for e in os.listdir(base) if e.startswith("iobm-")][0]
                    cmd = [iobm, "read", *iobm_args, os.path.join(base, data)]
                wall, cpu = run(cmd)
                if best[tool] is None or cpu < best[tool][1]:
                    best[tool] = (wall, cpu)
        results.append((name, best))

    print(f"iobm vs fio: {jobs} jobs x {size} ({gib:.2f} GiB) in {base}; best of {args.rounds} rounds by CPU")
    print(f"{'workload':32} {'tool':5} {'GiB/s':>8} {'CPU-s/GiB':>10}   iobm/fio CPU")
    for name, best in results:
        for tool in ("iobm", "fio"):
            wall, cpu = best[tool]
            ratio = best["iobm"][1] / best["fio"][1] if tool == "iobm" else None
            print(f"{name:32} {tool:5} {gib / wall:8.2f} {cpu / gib:10.3f}   "
                  + (f"{ratio:.2f}" if ratio else ""))
    shutil.rmtree(base)


if __name__ == "__main__":
    main()
