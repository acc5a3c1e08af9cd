#!/usr/bin/env python3
"""The system calls `iobm serve` makes for N GETs and N PUTs of one 4 KiB object, counted by
`strace -c -f` over the whole gateway process (start and stop included), in a bucket that never
kept versions and in one with versioning enabled. `--baseline PATH` adds an older iobm binary
as the first column, in the unversioned bucket: a before/after count of what a change costs.
Needs strace and boto3.

  python3 bench/gateway_syscalls.py [--requests 300] [--iobm PATH] [--baseline PATH]
"""

import argparse
import os
import signal
import subprocess
import tempfile

import boto3
from botocore.config import Config

from common import build_iobm, ensure_debian, free_port, wait_for_port

KEY, SECRET = "AKBENCH", "benchsecretbenchsecretbenchsecret"


def count(binary, op, n, versioned):
    """System call name -> calls, of a gateway serving `n` requests of `op`."""
    root = tempfile.mkdtemp()
    port = free_port()
    out = tempfile.mktemp()
    tracer = subprocess.Popen(
        ["strace", "-f", "-c", "-o", out, binary, "serve", root, "--listen",
         f"127.0.0.1:{port}", "--access-key", KEY, "--secret-key", SECRET],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_port(port)
    s3 = boto3.client("s3", endpoint_url=f"http://127.0.0.1:{port}", aws_access_key_id=KEY,
                      aws_secret_access_key=SECRET, region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}))
    s3.create_bucket(Bucket="bkt")
    if versioned:
        s3.put_bucket_versioning(Bucket="bkt", VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket="bkt", Key="d/k", Body=b"x" * 4096)
    for _ in range(n):
        if op == "GET":
            s3.get_object(Bucket="bkt", Key="d/k")["Body"].read()
        else:
            s3.put_object(Bucket="bkt", Key="d/k", Body=b"y" * 4096)
    gateway = int(subprocess.check_output(["pgrep", "-P", str(tracer.pid)]).split()[0])
    os.kill(gateway, signal.SIGTERM)
    tracer.wait(timeout=60)
    calls = {}
    with open(out) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
                calls[fields[-1]] = int(fields[3])
    return calls


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--requests", type=int, default=300)
    p.add_argument("--iobm", help="the iobm binary (default: build it in release mode)")
    p.add_argument("--baseline", help="an older iobm binary, counted first")
    args = p.parse_args()
    ensure_debian("strace", "strace")
    iobm = args.iobm or build_iobm()
    runs = [("unversioned", iobm, False), ("versioned", iobm, True)]
    if args.baseline:
        runs.insert(0, ("baseline", args.baseline, False))
    for op in ("GET", "PUT"):
        columns = [count(binary, op, args.requests, versioned) for _, binary, versioned in runs]
        names = sorted(set().union(*columns), key=lambda k: (-max(c.get(k, 0) for c in columns), k))
        print(f"{args.requests} {op}s: calls by system call")
        print(f"{'':20s}" + "".join(f"{label:>13s}" for label, _, _ in runs))
        for name in names:
            print(f"{name:20s}" + "".join(f"{c.get(name, 0):13d}" for c in columns))
        print(f"{'total':20s}" + "".join(f"{sum(c.values()):13d}" for c in columns))


if __name__ == "__main__":
    main()
