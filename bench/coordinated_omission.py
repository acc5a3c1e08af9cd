#!/usr/bin/env python3
"""Coordinated omission, shown: a GET phase against `iobm serve` whose server is stopped
(SIGSTOP) for a second in the middle, once open loop (`--rate`) and once closed loop.

Each run: `iobm serve` over a fresh directory on loopback, then `iobm s3 get` against it
(--concurrent C, small objects, --duration D); at D/2 the server is sent SIGSTOP and, --stall
later, SIGCONT. The open-loop run starts its GETs at --rate; the closed-loop run issues each GET
when the last returned. Printed, for each: operations, the p50/p99/p99.9/max of the phase's
latency (service time: from each GET's actual start) and, for the open loop, of its response
time (from each GET's intended start), with the rate achieved. A stall of S seconds holds back
rate x S GETs of the open loop, each of which waits for it: response time's top percentiles
show the stall; the closed loop's workers simply stop asking, so only C GETs (one per worker)
see it, and its p99.9 does not.

Usage: bench/coordinated_omission.py [--rate 200] [--duration 10] [--stall 1] [--concurrent 4]
                                     [--iobm PATH]
Builds iobm in release mode unless --iobm names a binary.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time

from common import build_iobm, free_port, wait_for_port

KEY, SECRET = "coordinatedomission", "coordinatedomission-secret"


def ms(ns):
    return f"{ns / 1e6:.2f}"


def one(iobm, rate, args, out_dir):
    root = tempfile.mkdtemp(prefix="iobm-co-")
    os.mkdir(os.path.join(root, "stall"))
    port = free_port()
    server = subprocess.Popen([iobm, "serve", root, "--listen", f"127.0.0.1:{port}",
                               "--access-key", KEY, "--secret-key", SECRET],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = os.path.join(out_dir, f"get-{rate or 'closed'}.json")
    try:
        wait_for_port(port)
        env = dict(os.environ, AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET)
        cmd = [iobm, "s3", "get", "--endpoint", f"http://127.0.0.1:{port}", "--bucket", "stall",
               "--objects", "64", "--obj-size", "16KiB", "--concurrent", str(args.concurrent),
               "--duration", f"{args.duration}s", "--json", out]
        if rate:
            cmd += ["--rate", f"{rate}/s"]
        client = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)

        def stall():
            # The data set is uploaded first: wait until the GET phase is under way.
            time.sleep(2 + args.duration / 2)
            server.send_signal(signal.SIGSTOP)
            time.sleep(args.stall)
            server.send_signal(signal.SIGCONT)

        staller = threading.Thread(target=stall)
        staller.start()
        client.wait(timeout=args.duration + 120)
        staller.join()
        if client.returncode != 0:
            raise SystemExit(f"iobm s3 get exited {client.returncode}: {' '.join(cmd)}")
        with open(out) as f:
            phase = json.load(f)["phases"][-1]
        return cmd, phase
    finally:
        server.send_signal(signal.SIGCONT)
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(root, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=int, default=200)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--stall", type=float, default=1.0)
    ap.add_argument("--concurrent", type=int, default=4)
    ap.add_argument("--iobm", help="an iobm binary to measure instead of building this checkout")
    args = ap.parse_args()
    iobm = args.iobm or build_iobm()
    out_dir = tempfile.mkdtemp(prefix="iobm-co-out-")
    print(f"GET of 16 KiB objects, {args.concurrent} workers, {args.duration} s, the server "
          f"stopped for {args.stall} s at about {args.duration / 2:.0f} s into the phase\n")
    print("| loop | GETs | achieved GETs/s | service p50 ms | p99 | p99.9 | max "
          "| response p50 ms | p99 | p99.9 | max |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    commands = []
    for rate in (args.rate, None):
        cmd, phase = one(iobm, rate, args, out_dir)
        commands.append(" ".join(cmd).replace(out_dir, "$OUT"))
        lat = phase["latency"]
        ops = lat["histogram"]["count"]
        cells = [ms(lat["p50_ns"]), ms(lat["p99_ns"]), ms(lat["p999_ns"]), ms(lat["max_ns"])]
        pace = phase.get("pace")
        if pace:
            r = pace["response"]
            achieved = f"{pace['achieved_ops_per_s']:.1f}"
            cells += [ms(r["p50_ns"]), ms(r["p99_ns"]), ms(r["p999_ns"]), ms(r["max_ns"])]
            label = f"open, --rate {rate}/s"
        else:
            makespan = [a for a in phase["aggregates"] if a["kind"] == "makespan"][0]
            achieved = f"{makespan['ops_per_s']:.1f}"
            cells += ["-"] * 4
            label = "closed"
        print(f"| {label} | {ops} | {achieved} | " + " | ".join(cells) + " |")
    print("\nThe client commands ($OUT: a temporary directory; the server's port varies):\n")
    for c in commands:
        print(f"- `{c}`")
    shutil.rmtree(out_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
