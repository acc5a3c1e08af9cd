#!/usr/bin/env python3
"""The cost of the gateway: PUT and GET of large objects through `iobm serve DIR` against
iobm's own write and read of the same file system, in one run, same bytes, same concurrency.

Raw: `iobm stream` (write then read; one file per worker, 8 MiB blocks, no fsync). Gateway:
`iobm s3 put` then `iobm s3 get` (objects of --size; the GET's data set is uploaded first). On
a disk file system both reads may come from the page cache; the default, tmpfs, is memory for
both. Rates are the makespan aggregate; the client and the gateway share this machine's CPUs.

  python3 bench/gateway_vs_fs.py [--dir /dev/shm] [--objects 32] [--size 64MiB] [--concurrent 8]
                                 [--iobm PATH]   # another build, to compare two versions
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

from common import build_iobm

KEY, SECRET = "AKBENCH", "benchsecretbenchsecretbenchsecret"


def makespan(path, phase):
    with open(path) as f:
        run = json.load(f)
    p = [p for p in run["phases"] if p["name"] == phase][0]
    agg = [a for a in p["aggregates"] if a["kind"] == "makespan"][0]
    return agg["bytes_per_s"] / (1 << 20)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/dev/shm")
    ap.add_argument("--objects", type=int, default=32)
    ap.add_argument("--size", default="64MiB")
    ap.add_argument("--concurrent", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm", help="an iobm binary to measure instead of building this checkout")
    args = ap.parse_args()
    iobm = args.iobm or build_iobm()
    size = int(args.size[:-3]) << 20 if args.size.endswith("MiB") else int(args.size)
    per_job = size * args.objects // args.concurrent
    block = min(8 << 20, per_job // 4096 * 4096)
    work = tempfile.mkdtemp(prefix="iobm-gw-bench-")
    root = tempfile.mkdtemp(dir=args.dir, prefix="iobm-gw-bench-")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    server = subprocess.Popen([iobm, "serve", root, "--listen", f"127.0.0.1:{port}",
                               "--access-key", KEY, "--secret-key", SECRET],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)
    q = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    rows = {"write": [], "read": [], "put": [], "get": []}
    try:
        for r in range(args.rounds):
            j = os.path.join(work, f"raw{r}.json")
            subprocess.run([iobm, "stream", args.dir, "-j", str(args.concurrent), "--size-per-job",
                            str(per_job), "--block", str(block), "--fsync", "never", "--json", j], **q)
            rows["write"].append(makespan(j, "write"))
            rows["read"].append(makespan(j, "read"))
            common = ["--endpoint", f"http://127.0.0.1:{port}", "--bucket", "gwbench",
                      "--concurrent", str(args.concurrent), "--obj-size", str(size),
                      "--objects", str(args.objects), "--ops", str(args.objects)]
            for op in ["put", "get"]:
                j = os.path.join(work, f"{op}{r}.json")
                subprocess.run([iobm, "s3", op, *common, "--json", j], env=env, **q)
                rows[op].append(makespan(j, op))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{args.dir}: {args.objects} objects of {args.size}, {args.concurrent} concurrent, "
          f"{args.rounds} rounds (medians of makespan MiB/s)")
    print("| | raw file system (iobm write/read) | through iobm serve (iobm s3 put/get) | gateway / raw |")
    print("|---|---|---|---|")
    print(f"| write / PUT | {med['write']:.0f} | {med['put']:.0f} | {med['put'] / med['write']:.2f} |")
    print(f"| read / GET | {med['read']:.0f} | {med['get']:.0f} | {med['get'] / med['read']:.2f} |")


if __name__ == "__main__":
    main()
