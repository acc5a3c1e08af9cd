#!/usr/bin/env python3
"""iobm against fio: the same sequential workloads, side by side, in one run.

For each file system (tmpfs at /dev/shm, which has no device limit and so shows each tool's own
cost; and the disk holding DIR, with O_DIRECT) and each job count (1 and 2), runs a sequential
write and a sequential read with 1 MiB blocks with iobm and with fio (psync engine: the same
pwrite/pread calls; no preallocation for either). Reports each tool's own bandwidth figure (iobm: makespan; fio: group bw,
which is the same definition), its whole-process CPU time per GiB (user + system from wait4,
start-up and clean-up included), and the iobm/fio ratios. Rates and CPU are medians of --rounds
rounds; each ratio is the median of the ratios within a round (iobm's run against the fio run
beside it): median_r(iobm_r / fio_r).

`--iobm PATH` measures that binary instead of building this checkout; given more than once, every
build is measured in every round (each beside its own fio run, in turn, the order reversed every
other round), one row per build.

Usage: bench/files_vs_fio.py [--disk-dir DIR] [--size-per-job 1G] [--rounds 3] [--iobm PATH]...
Installs fio from Debian when it is missing (as root); builds iobm in release mode.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from common import ROOT, build_iobm, ensure_debian

GIB = 1 << 30


def run(cmd):
    """Runs cmd to completion; returns the child's CPU seconds (user + system)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{err}")
    return usage.ru_utime + usage.ru_stime


def iobm_rate(json_path):
    with open(json_path) as f:
        phase = json.load(f)["phases"][0]
    return next(a["bytes_per_s"] for a in phase["aggregates"] if a["kind"] == "makespan")


def fio_rate(json_path, rw):
    with open(json_path) as f:
        return json.load(f)["jobs"][0][rw]["bw_bytes"]


def one_round(iobm, base, jobs, size, direct, gib):
    """One write and one read with each tool; returns {(tool, op): (bytes/s, cpu-s/GiB)}."""
    out = {}
    work = tempfile.mkdtemp(prefix="round-", dir=base)
    fio_dir = os.path.join(work, "fio")
    os.mkdir(fio_dir)
    result = os.path.join(work, "result.json")
    flags = ["--direct"] if direct else []
    fio = ["fio", "--name=j", f"--directory={fio_dir}", f"--numjobs={jobs}", f"--size={size}",
           # fio preallocates files by default; iobm times a write's block allocation like a
           # real writer, so fio is asked to do the same.
           "--bs=1M", "--ioengine=psync", "--fallocate=none", "--group_reporting",
           "--output-format=json",
           f"--output={result}", f"--direct={int(direct)}"]

    cpu = run([iobm, "write", "--keep", "-j", str(jobs), "--size-per-job", size, "--block", "1MiB",
               "--fsync", "end" if direct else "never", *flags, "--json", result, work])
    out[("iobm", "write")] = (iobm_rate(result), cpu / gib)
    cpu = run(fio + ["--rw=write", f"--end_fsync={int(direct)}"])
    out[("fio", "write")] = (fio_rate(result, "write"), cpu / gib)

    data = next(os.path.join(work, e) for e in os.listdir(work) if e.startswith("iobm-"))
    cpu = run([iobm, "read", "--block", "1MiB", *flags, "--json", result, data])
    out[("iobm", "read")] = (iobm_rate(result), cpu / gib)
    cpu = run(fio + ["--rw=read"])
    out[("fio", "read")] = (fio_rate(result, "read"), cpu / gib)
    shutil.rmtree(work)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disk-dir", default=ROOT, help="a directory on the disk to test with O_DIRECT")
    ap.add_argument("--size-per-job", default="1G")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm", action="append",
                    help="an iobm binary to measure instead of building this checkout (repeatable)")
    args = ap.parse_args()
    ensure_debian("fio", "fio")
    builds = args.iobm or [build_iobm()]
    names = ["iobm"] if len(builds) == 1 else [os.path.basename(b) for b in builds]
    size = args.size_per_job
    per_job = int(size[:-1]) * {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[size[-1].upper()]

    rows = []
    for label, where, direct in [("tmpfs /dev/shm", "/dev/shm", False),
                                 ("disk, O_DIRECT", args.disk_dir, True)]:
        base = tempfile.mkdtemp(prefix="iobm-vs-fio-", dir=where)
        try:
            for jobs in (1, 2):
                gib = per_job * jobs / GIB
                rounds = {b: [] for b in builds}
                for r in range(args.rounds):
                    for b in (builds if r % 2 == 0 else builds[::-1]):
                        rounds[b].append(one_round(b, base, jobs, size, direct, gib))
                fio_runs = [x for b in builds for x in rounds[b]]
                for op in ("write", "read"):
                    fio = tuple(statistics.median(x[("fio", op)][i] for x in fio_runs)
                                for i in (0, 1))
                    for name, b in zip(names, builds):
                        runs = rounds[b]
                        med = tuple(statistics.median(x[("iobm", op)][i] for x in runs)
                                    for i in (0, 1))
                        ratio = tuple(statistics.median(x[("iobm", op)][i] / x[("fio", op)][i]
                                                        for x in runs) for i in (0, 1))
                        rows.append((label, jobs, op, name, med, fio, ratio))
        finally:
            shutil.rmtree(base, ignore_errors=True)

    print(f"iobm vs fio {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}: "
          f"sequential, 1 MiB blocks, {size} per job, median of {args.rounds} rounds")
    build = "" if len(builds) == 1 else " build |"
    print(f"| file system | jobs | op |{build} iobm GiB/s | fio GiB/s | iobm/fio rate "
          "| iobm CPU-s/GiB | fio CPU-s/GiB | iobm/fio CPU |")
    print("|---|---:|---|" + ("---|" if build else "") + "---:|" * 6)
    for label, jobs, op, name, (ir, ic), (fr, fc), (rr, rc) in rows:
        cell = "" if len(builds) == 1 else f" {name} |"
        print(f"| {label} | {jobs} | {op} |{cell} {ir / GIB:.2f} | {fr / GIB:.2f} | {rr:.2f} "
              f"| {ic:.3f} | {fc:.3f} | {rc:.2f} |")


if __name__ == "__main__":
    main()
