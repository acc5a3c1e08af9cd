#!/usr/bin/env python3
"""iobm --rate against fio's rate_iops with rate_process=poisson: open-loop random 4 KiB reads.

On the disk holding --disk-dir, one worker reads random 4 KiB blocks with O_DIRECT from a 1 GiB
file that iobm wrote and keeps, for --seconds at each target rate (--rates), Poisson arrivals
for both (iobm: --rate N/s --arrivals poisson; fio: --rate_iops=N --rate_process=poisson, psync,
depth 1). For each target: the rate each tool achieved (iobm: the result's
pace.achieved_ops_per_s; fio: its iops), iobm's p99 response time (from each read's intended
start) and p99 service time, fio's p99 completion latency (from the read's submission), and
each process's whole CPU time per operation (user + system from wait4: start-up and clean-up
too). Medians of --rounds rounds.

Usage: bench/rate_vs_fio.py [--disk-dir DIR] [--seconds 5] [--rounds 1] [--rates 200,1000,5000]
       [--iobm PATH]
Installs fio from Debian when it is missing (as root); builds iobm in release mode.
"""

import argparse
import glob
import json
import os
import resource
import shutil
import statistics
import subprocess
import tempfile

from common import ROOT, build_iobm, ensure_debian


def timed(cmd):
    """Runs cmd; returns its output and the CPU seconds (user + system) it and its threads used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def iobm_paced(iobm, data_dir, rate, seconds):
    """Achieved ops/s, p99 response and service time (µs), CPU µs per op of one paced read."""
    with tempfile.TemporaryDirectory() as out:
        result = os.path.join(out, "r.json")
        _, cpu = timed([iobm, "read", data_dir, "--random", "--block", "4k", "--direct",
                        "--rate", f"{rate}/s", "--arrivals", "poisson",
                        "--duration", f"{seconds}s", "--json", result])
        with open(result) as f:
            phase = json.load(f)["phases"][0]
    ops = sum(w["span"]["ops"] for w in phase["workers"])
    pace = phase["pace"]
    return (pace["achieved_ops_per_s"], pace["response"]["p99_ns"] / 1e3,
            phase["latency"]["p99_ns"] / 1e3, cpu / max(ops, 1) * 1e6)


def fio_paced(path, rate, seconds):
    """Achieved ops/s, p99 completion latency (µs), CPU µs per op of one fio job at `rate`."""
    out, cpu = timed(["fio", "--name=j", f"--filename={path}", "--rw=randread", "--bs=4k",
                      "--direct=1", "--ioengine=psync", "--iodepth=1", f"--rate_iops={rate}",
                      "--rate_process=poisson", f"--runtime={seconds}", "--time_based",
                      "--size=1G", "--output-format=json"])
    read = json.loads(out)["jobs"][0]["read"]
    p99 = read["clat_ns"]["percentile"]["99.000000"] / 1e3
    return read["iops"], p99, cpu / max(read["total_ios"], 1) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disk-dir", default=os.path.join(ROOT, "target"))
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--rates", default="200,1000,5000")
    ap.add_argument("--iobm")
    args = ap.parse_args()
    ensure_debian("fio", "fio")
    iobm = args.iobm or build_iobm()
    parent = tempfile.mkdtemp(dir=args.disk_dir, prefix="iobm-rate-")
    print("| target IOPS | iobm achieved | fio achieved | iobm p99 response µs | iobm p99 service µs "
          "| fio p99 clat µs | iobm CPU-µs/op | fio CPU-µs/op |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        subprocess.run([iobm, "write", parent, "--size", "1GiB", "--keep", "--direct"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        data_dir = glob.glob(os.path.join(parent, "iobm-*"))[0]
        path = os.path.join(data_dir, "data.0")
        for rate in (int(r) for r in args.rates.split(",")):
            ours = [iobm_paced(iobm, data_dir, rate, args.seconds) for _ in range(args.rounds)]
            theirs = [fio_paced(path, rate, args.seconds) for _ in range(args.rounds)]
            a, resp, serv, cpu = (statistics.median(x[i] for x in ours) for i in range(4))
            fa, fp99, fcpu = (statistics.median(x[i] for x in theirs) for i in range(3))
            print(f"| {rate} | {a:.0f} | {fa:.0f} | {resp:.0f} | {serv:.0f} | {fp99:.0f} "
                  f"| {cpu:.2f} | {fcpu:.2f} |", flush=True)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    main()
