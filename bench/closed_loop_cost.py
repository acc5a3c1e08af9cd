#!/usr/bin/env python3
"""The closed loop's cost per operation in two or more iobm builds (or flags), side by side: one
worker writing 64 MiB in 64-byte operations to tmpfs (/dev/shm, no device: iobm's own cost per
operation), `--fsync never`, builds alternating round by round. Each build's ops/s (makespan), whole-process
CPU ns per operation (user + system from wait4, start-up included) and p50 latency; medians.

Usage: bench/closed_loop_cost.py NAME=IOBM NAME=IOBM [NAME=IOBM...] [--rounds 7]
IOBM may carry flags the build's runs add, in shell words: live="target/release/iobm --live
/dev/shm/l.jsonl --interval 10ms".
"""

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import tempfile


def one(binary):
    """ops/s, CPU ns per op and p50 latency of one run of `binary` (with its flags)."""
    binary, *extra = shlex.split(binary)
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        result = os.path.join(d, "r.json")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([binary, "write", d, "--size", "64MiB", "--block", "64", "--fsync", "never",
                        "--json", result, *extra], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        with open(result) as f:
            phase = json.load(f)["phases"][0]
    ops = sum(w["span"]["ops"] for w in phase["workers"])
    iops = [a for a in phase["aggregates"] if a["kind"] == "makespan"][0]["ops_per_s"]
    return iops, cpu / ops * 1e9, phase["latency"]["p50_ns"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", metavar="NAME=IOBM")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    builds = dict(b.split("=", 1) for b in args.builds)
    runs = {name: [] for name in builds}
    for _ in range(args.rounds):
        for name, binary in builds.items():
            runs[name].append(one(binary))
    print(f"| build | ops/s (median of {args.rounds}) | CPU ns/op | p50 latency ns |")
    print("|---|---:|---:|---:|")
    for name, v in runs.items():
        print(f"| {name} | {statistics.median(x[0] for x in v):.0f} "
              f"| {statistics.median(x[1] for x in v):.0f} | {statistics.median(x[2] for x in v):.0f} |")


if __name__ == "__main__":
    main()
