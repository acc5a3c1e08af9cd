#!/usr/bin/env python3
"""iobm s3 against peer S3 clients, in one run, on one server: PUT then GET of the same number
of objects of one size at one concurrency, by iobm, rclone, the aws CLI and boto3 (threads).

Reports each client's throughput and its own CPU-seconds per GiB (user + system of the client's
processes, from getrusage of the children), and the ratios to iobm. The server is `iobm serve`
over a tmpfs directory, started once; its CPU is not counted for any client.

Peers are measured as whole processes, so their start-up (interpreter, imports) counts; the
"net" columns subtract the CPU of the same client doing one trivial request. iobm's numbers are
its measured phase from --json (its data set upload for GET is not counted, as for the peers,
whose GET reads what their PUT wrote).

`--iobm PATH` measures that binary instead of building this checkout; given more than once, each
build is measured in every round (in turn, the order reversed every other round), so two builds
compare in one run. A second table gives, for each build, its CPU per GiB over each peer's net
CPU per GiB: the median over rounds of the ratio within each round (formula: median_r(iobm
CPU_r / (peer CPU_r - peer no-op CPU_r))).

  python3 bench/s3_vs_peers.py [--objects 64] [--size 8MiB] [--concurrent 20] [--rounds 3] [--iobm PATH]...
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import build_iobm, ensure_debian, free_port

KEY, SECRET = "AKBENCH", "benchsecretbenchsecretbenchsecret"


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, env=None, check=True):
    """Runs cmd; returns (wall seconds, client CPU seconds)."""
    cpu0, t0 = children_cpu(), time.monotonic()
    subprocess.run(cmd, check=check, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.monotonic() - t0, children_cpu() - cpu0


def parse_size(s):
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    s = s.lower().replace("ib", "").replace("b", "")
    return int(float(s[:-1]) * units[s[-1]]) if s[-1] in units else int(s)


BOTO = r'''
import sys, os, boto3, concurrent.futures as cf
from botocore.config import Config
op, url, bucket, prefix, n, size, conc = sys.argv[1:8]
n, size, conc = int(n), int(size), int(conc)
s3 = boto3.client("s3", endpoint_url=url, aws_access_key_id=os.environ["K"], aws_secret_access_key=os.environ["S"],
                  region_name="us-east-1", config=Config(max_pool_connections=conc))
if op == "noop":
    s3.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1); sys.exit()
bodies = [os.urandom(size) for _ in range(conc)]
def one(i):
    key = f"{prefix}{i}"
    if op == "put":
        s3.put_object(Bucket=bucket, Key=key, Body=bodies[i % conc])
    else:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"]
        while body.read(1 << 20):
            pass
with cf.ThreadPoolExecutor(conc) as ex:
    list(ex.map(one, range(n)))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=64)
    ap.add_argument("--size", default="8MiB")
    ap.add_argument("--concurrent", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm", action="append",
                    help="an iobm binary to measure instead of building this checkout (repeatable)")
    ap.add_argument("--dir", default="/dev/shm", help="where the server keeps the objects")
    args = ap.parse_args()
    size = parse_size(args.size)
    ensure_debian("rclone", "rclone")
    subprocess.run([sys.executable, "-c", "import boto3, awscli"], check=True)
    builds = args.iobm or [build_iobm()]
    # Each build's name in the tables: "iobm", or its file name when there are several.
    names = ["iobm"] if len(builds) == 1 else [os.path.basename(b) for b in builds]
    iobm = builds[0]
    root = tempfile.mkdtemp(dir=args.dir, prefix="iobm-bench-")
    src = tempfile.mkdtemp(dir=args.dir, prefix="iobm-bench-src-")
    dst = tempfile.mkdtemp(dir=args.dir, prefix="iobm-bench-dst-")
    aux = tempfile.mkdtemp(dir=args.dir, prefix="iobm-bench-aux-")  # configs and results
    for i in range(args.objects):
        with open(os.path.join(src, str(i)), "wb") as f:
            f.write(os.urandom(size))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([iobm, "serve", root, "--listen", f"127.0.0.1:{port}",
                               "--access-key", KEY, "--secret-key", SECRET],
                              stdout=subprocess.DEVNULL)
    time.sleep(1)
    os.makedirs(os.path.join(root, "bench"), exist_ok=True)
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET,
               AWS_DEFAULT_REGION="us-east-1", K=KEY, S=SECRET)
    env.pop("AWS_ENDPOINT_URL", None)
    rclone_env = dict(env)
    rclone_env.pop("AWS_CA_BUNDLE", None)  # breaks Debian's rclone
    awscfg = os.path.join(aux, "aws.cfg")
    with open(awscfg, "w") as f:
        f.write(f"[default]\ns3 =\n  max_concurrent_requests = {args.concurrent}\n"
                "  multipart_threshold = 1GB\n")
    aws_env = dict(env, AWS_CONFIG_FILE=awscfg)
    total = args.objects * size
    n, c = str(args.objects), str(args.concurrent)
    rclone_common = ["--s3-provider", "Other", "--s3-endpoint", url, "--s3-access-key-id", KEY,
                     "--s3-secret-access-key", SECRET, "--s3-upload-cutoff", "1G",
                     "--transfers", c, "--checkers", c, "--s3-chunk-size", "64M"]

    def clean(prefix):
        for d in [os.path.join(root, "bench", prefix)]:
            shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(dst, exist_ok=True)

    def iobm_run(binary, op):
        out = os.path.join(aux, f"iobm-{op}.json")
        subprocess.run([binary, "s3", op, "--endpoint", url, "--bucket", "bench", "--objects", n,
                        "--ops", n, "--concurrent", c, "--obj-size", str(size), "--json", out],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            phase = json.load(f)["phases"][0]
        wall = (phase["end_ns"] - phase["start_ns"]) / 1e9
        return wall, phase["cpu"]["user_s"] + phase["cpu"]["system_s"]

    clients = {
        name: {
            "put": lambda p, b=binary: iobm_run(b, "put"),
            "get": lambda p, b=binary: iobm_run(b, "get"),
            "noop": None,
        }
        for name, binary in zip(names, builds)
    }
    clients.update({
        "rclone": {
            "put": lambda p: timed(["rclone", "copy", src, f":s3:bench/{p}"] + rclone_common, rclone_env),
            "get": lambda p: timed(["rclone", "copy", f":s3:bench/{p}", dst] + rclone_common, rclone_env),
            "noop": lambda p: timed(["rclone", "lsf", f":s3:bench/{p}"] + rclone_common, rclone_env),
        },
        "aws CLI": {
            "put": lambda p: timed([sys.executable, "-m", "awscli", "--endpoint-url", url, "s3", "cp",
                                    "--recursive", "--quiet", src, f"s3://bench/{p}"], aws_env),
            "get": lambda p: timed([sys.executable, "-m", "awscli", "--endpoint-url", url, "s3", "cp",
                                    "--recursive", "--quiet", f"s3://bench/{p}", dst], aws_env),
            "noop": lambda p: timed([sys.executable, "-m", "awscli", "--endpoint-url", url, "s3", "ls",
                                     f"s3://bench/{p}none"], aws_env, check=False),
        },
        "boto3": {
            op: (lambda p, op=op: timed([sys.executable, "-c", BOTO, op, url, "bench", p, n, str(size), c], env))
            for op in ["put", "get", "noop"]
        },
    })
    peers = [name for name in clients if name not in names]
    results = {name: {"put": [], "get": [], "noop": []} for name in clients}
    try:
        for r in range(args.rounds):
            order = (names if r % 2 == 0 else names[::-1]) + peers
            for name in order:
                ops = clients[name]
                prefix = f"r{r}-{name.replace(' ', '')}/"
                for op in ["put", "get", "noop"]:
                    if ops[op] is None:
                        continue
                    results[name][op].append(ops[op](prefix))
                clean(prefix)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.rmtree(aux, ignore_errors=True)

    gib = total / (1 << 30)
    print(f"{args.objects} objects of {args.size}, {args.concurrent} concurrent, {args.rounds} rounds "
          f"(medians); server: iobm serve over {args.dir}")
    print("| client | op | MiB/s | CPU-s/GiB | net CPU-s/GiB | rate vs iobm | net CPU vs iobm |")
    print("|---|---|---|---|---|---|---|")
    base = {}
    for name in clients:
        noop = statistics.median(c for _, c in results[name]["noop"]) if results[name]["noop"] else 0.0
        for op in ["put", "get"]:
            walls = [w for w, _ in results[name][op]]
            cpus = [c for _, c in results[name][op]]
            rate = total / statistics.median(walls) / (1 << 20)
            cpu = statistics.median(cpus) / gib
            net = max(statistics.median(cpus) - noop, 0.0) / gib
            if name == names[0]:
                base[op] = (rate, net)
            print(f"| {name} | {op} | {rate:.0f} | {cpu:.2f} | {net:.2f} | "
                  f"{rate / base[op][0]:.2f} | {net / base[op][1]:.1f} |")
    print()
    print("iobm's CPU per GiB over each peer's net CPU per GiB, median of the rounds' ratios")
    print("| build | op | " + " | ".join(f"/ {p}" for p in peers) + " |")
    print("|---|---|" + "---:|" * len(peers))
    for name in names:
        for op in ["put", "get"]:
            cells = []
            for p in peers:
                ratios = [i[1] / (c - n) for i, (_, c), (_, n)
                          in zip(results[name][op], results[p][op], results[p]["noop"]) if c > n]
                cells.append(f"{statistics.median(ratios):.3f}" if ratios else "n/a")
            print(f"| {name} | {op} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
