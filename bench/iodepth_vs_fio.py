#!/usr/bin/env python3
"""iobm --iodepth against fio's io_uring engine: the same file, side by side, in one run.

On the disk holding --disk-dir, one worker does random 4 KiB reads and then random 4 KiB writes
with O_DIRECT at depths 1, 8 and 32 (depth 1: iobm's sync engine and fio's psync, the same
pread/pwrite; deeper: io_uring for both). Reads go over one 1 GiB file that iobm wrote and
keeps; writes go to a new 1 GiB file each (iobm's own data set; fio's with --fallocate=none), so
both allocate as they write, and each tool removes its own file at the end (iobm by default, fio
with --unlink=1), inside its CPU time. On tmpfs (/dev/shm), sequential 1 MiB reads at depth 8. Each
tool's IOPS (iobm: the makespan aggregate; fio: its iops) and whole-process CPU time per
operation (user + system of the process and all its threads, io_uring's workers included, from
wait4: start-up and clean-up too), and the iobm/fio ratios. Medians of --rounds rounds.

Usage: bench/iodepth_vs_fio.py [--disk-dir DIR] [--seconds 5] [--rounds 3] [--iobm PATH]
Installs fio from Debian when it is missing (as root); builds iobm in release mode.
"""

import argparse
import glob
import resource
import json
import os
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
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return out, cpu


def iobm_read_or_write(iobm, data_dir, op, block, depth, seconds, random, direct):
    """IOPS and CPU microseconds per operation of one iobm phase over the kept data set."""
    with tempfile.TemporaryDirectory() as out:
        result = os.path.join(out, "r.json")
        parent = os.path.dirname(data_dir)
        before = set(glob.glob(os.path.join(parent, "iobm-*")))
        if op == "read":
            cmd = [iobm, "read", data_dir]
        else:
            # A new data set beside the kept one, which iobm removes at the end, as fio does
            # its own with --unlink=1.
            cmd = [iobm, "write", parent, "--size", "1GiB"]
        cmd += ["--block", block, "--iodepth", str(depth), "--duration", f"{seconds}s",
                "--json", result]
        cmd += ["--random"] if random else []
        cmd += ["--direct"] if direct else []
        _, cpu = timed(cmd)
        for made in set(glob.glob(os.path.join(parent, "iobm-*"))) - before:
            shutil.rmtree(made)
        with open(result) as f:
            phase = json.load(f)["phases"][0]
    ops = sum(w["span"]["ops"] for w in phase["workers"])
    iops = [a for a in phase["aggregates"] if a["kind"] == "makespan"][0]["ops_per_s"]
    return iops, cpu / max(ops, 1) * 1e6


def fio(path, rw, block, depth, seconds, direct):
    """IOPS and CPU microseconds per operation of one fio job on `path` (writes: a new file
    beside it, which fio removes at the end)."""
    engine = "psync" if depth == 1 else "io_uring"
    writes = "write" in rw
    target = path + ".fio" if writes else path
    try:
        out, cpu = timed(
            ["fio", "--name=j", f"--filename={target}", f"--rw={rw}", f"--bs={block}",
             f"--direct={int(direct)}", f"--ioengine={engine}", f"--iodepth={depth}",
             f"--runtime={seconds}", "--time_based", "--size=1G", "--fallocate=none",
             f"--unlink={int(writes)}", "--output-format=json"])
    finally:
        if writes and os.path.exists(target):
            os.remove(target)
    side = json.loads(out)["jobs"][0]["write" if writes else "read"]
    return side["iops"], cpu / max(side["total_ios"], 1) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--disk-dir", default=os.path.join(ROOT, "target"))
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm")
    args = ap.parse_args()
    ensure_debian("fio", "fio")
    iobm = args.iobm or build_iobm()
    cases = [(d, "read", True, "4k", depth, True) for depth in (1, 8, 32) for d in ["disk"]]
    cases += [("disk", "write", True, "4k", depth, True) for depth in (1, 8, 32)]
    cases += [("tmpfs", "read", False, "1m", 8, False)]
    print("| file system | workload | depth | iobm IOPS | fio IOPS | iobm/fio | iobm CPU-us/op | fio CPU-us/op | ratio |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for where in ("disk", "tmpfs"):
        parent = tempfile.mkdtemp(dir=args.disk_dir if where == "disk" else "/dev/shm",
                                  prefix="iobm-qd-")
        try:
            subprocess.run([iobm, "write", parent, "--size", "1GiB", "--keep"]
                           + (["--direct"] if where == "disk" else []),
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            data_dir = glob.glob(os.path.join(parent, "iobm-*"))[0]
            path = os.path.join(data_dir, "data.0")
            for (w, op, random, block, depth, direct) in cases:
                if w != where:
                    continue
                rw = ("rand" if random else "") + op
                ours, theirs = [], []
                for _ in range(args.rounds):
                    ours.append(iobm_read_or_write(iobm, data_dir, op, block, depth,
                                                   args.seconds, random, direct))
                    theirs.append(fio(path, rw, block, depth, args.seconds, direct))
                iops, cpu = (statistics.median(x[i] for x in ours) for i in (0, 1))
                f_iops, f_cpu = (statistics.median(x[i] for x in theirs) for i in (0, 1))
                label = f"{'random' if random else 'sequential'} {block} {op}s" + (", O_DIRECT" if direct else "")
                print(f"| {where} | {label} | {depth} | {iops:.0f} | {f_iops:.0f} | {iops / f_iops:.2f} "
                      f"| {cpu:.2f} | {f_cpu:.2f} | {cpu / f_cpu:.2f} |", flush=True)
        finally:
            shutil.rmtree(parent, ignore_errors=True)


if __name__ == "__main__":
    main()
