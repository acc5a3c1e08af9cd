#!/usr/bin/env python3
"""iobm serve against s3s-fs, in one run, with one client: `iobm s3 put` then `iobm s3 get` of the
same objects (8 MiB, 20 concurrent by default) against each server in turn, every server over a
new directory in the same tmpfs.

Reports each server's throughput (the client's makespan aggregate) and, for PUT, the server's own
CPU-seconds per GiB stored (user + system of the server process, from /proc/PID/stat around the
client's run), with the ratios to s3s-fs. `--baseline PATH` adds an older iobm binary's gateway as
a third server (a before/after figure in one run). GET's server CPU is not shown: `iobm s3 get`
uploads its data set first, through the same server.

  python3 bench/gateway_vs_peers.py [--objects 64] [--size 8MiB] [--concurrent 20] [--rounds 3]
                                    [--iobm PATH] [--baseline PATH] [--dir /dev/shm]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

from common import build_iobm, free_port, wait_for_port

KEY, SECRET = "AKBENCH", "benchsecretbenchsecretbenchsecret"
TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """User + system CPU seconds of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--objects", type=int, default=64)
    ap.add_argument("--size", default="8MiB")
    ap.add_argument("--concurrent", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iobm", help="an iobm binary to measure instead of building this checkout")
    ap.add_argument("--baseline", help="an older iobm binary whose gateway is measured too")
    ap.add_argument("--dir", default="/dev/shm", help="the tmpfs where the servers keep objects")
    args = ap.parse_args()
    if not shutil.which("s3s-fs"):
        raise SystemExit("s3s-fs is missing: cargo install s3s-fs --locked (scripts/test does)")
    iobm = args.iobm or build_iobm()

    servers = {"iobm serve": lambda root, port: [iobm, "serve", root, "--listen", f"127.0.0.1:{port}",
                                                   "--access-key", KEY, "--secret-key", SECRET]}
    if args.baseline:
        servers["iobm serve (baseline)"] = lambda root, port: [
            args.baseline, "serve", root, "--listen", f"127.0.0.1:{port}",
            "--access-key", KEY, "--secret-key", SECRET]
    servers["s3s-fs"] = lambda root, port: ["s3s-fs", "--host", "127.0.0.1", "--port", str(port),
                                            "--access-key", KEY, "--secret-key", SECRET, root]
    env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)
    results = {name: {"put": [], "get": [], "put_cpu": []} for name in servers}
    out_dir = tempfile.mkdtemp(prefix="iobm-bench-out-")

    def client(op, url):
        out = os.path.join(out_dir, f"{op}.json")
        subprocess.run([iobm, "s3", op, "--endpoint", url, "--bucket", "bench",
                        "--objects", str(args.objects), "--ops", str(args.objects),
                        "--concurrent", str(args.concurrent), "--obj-size", args.size,
                        "--json", out], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            phase = json.load(f)["phases"][-1]
        agg = [a for a in phase["aggregates"] if a["kind"] == "makespan"][0]
        return agg["bytes_per_s"] / (1 << 20), agg["bytes"]

    for _ in range(args.rounds):
        for name, command in servers.items():
            root = tempfile.mkdtemp(dir=args.dir, prefix="iobm-bench-")
            os.mkdir(os.path.join(root, "bench"))
            port = free_port()
            server = subprocess.Popen(command(root, port), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
            try:
                wait_for_port(port)
                url = f"http://127.0.0.1:{port}"
                cpu0 = process_cpu(server.pid)
                rate, moved = client("put", url)
                results[name]["put"].append(rate)
                results[name]["put_cpu"].append((process_cpu(server.pid) - cpu0) / (moved / (1 << 30)))
                results[name]["get"].append(client("get", url)[0])
            finally:
                server.terminate()
                server.wait(timeout=10)
                shutil.rmtree(root, ignore_errors=True)

    peer = {k: statistics.median(v) for k, v in results["s3s-fs"].items()}
    print(f"{args.objects} objects of {args.size}, {args.concurrent} concurrent, client iobm s3, "
          f"median of {args.rounds} rounds\n")
    print("| server | PUT MiB/s | vs s3s-fs | server CPU-s per GiB PUT | vs s3s-fs | GET MiB/s | vs s3s-fs |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in results.items():
        m = {k: statistics.median(v) for k, v in r.items()}
        print(f"| {name} | {m['put']:.0f} | {m['put'] / peer['put']:.2f} | {m['put_cpu']:.2f} | "
              f"{m['put_cpu'] / peer['put_cpu']:.2f} | {m['get']:.0f} | {m['get'] / peer['get']:.2f} |")
    shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
