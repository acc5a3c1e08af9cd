#!/usr/bin/env python3
"""iobm limits against the tools anyone would measure the same maxima with, interleaved.

Each round runs `iobm limits --time T --json` (no directory), then the peers one after the
other: `openssl speed -evp md5` and `-evp sha256` on 1 MiB buffers (one core; both tools divide
by the CPU time the hashing thread had, openssl's default), loopback TCP over each count of
--connections (a sender and a receiver process per connection, 1 MiB sendall / recv_into, bytes
received over the wall time of all; the best count, as iobm takes the best of its counts), and a
memory copy of 64 MiB buffers with one thread (Python's memoryview slice assignment, the C
library's memcpy, over the thread's CPU time as iobm's one-thread figure). The machine may be shared, so the peers run between iobm's runs, every round, and the
table gives each round's iobm/peer ratio and their median, not only the absolute rates.

Usage: bench/limits_vs_peers.py [--rounds 3] [--time 500ms] [--connections 2,4] [--iobm PATH]
Builds iobm in release mode unless --iobm names a binary.
"""

import argparse
import json
import multiprocessing
import os
import re
import socket
import statistics
import subprocess
import tempfile
import time

from common import build_iobm

MIB = 1 << 20


def iobm_limits(iobm, duration):
    """One `iobm limits` run: its JSON document."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "limits.json")
        subprocess.run([iobm, "limits", "--time", duration, "--json", path], check=True,
                       stdout=subprocess.DEVNULL)
        with open(path) as f:
            return json.load(f)


def openssl_speed(algorithm, seconds):
    """openssl speed -evp ALGORITHM on 1 MiB buffers: bytes per second on one core."""
    out = subprocess.run(["openssl", "speed", "-evp", algorithm, "-bytes", str(MIB),
                          "-seconds", str(seconds)], check=True, capture_output=True,
                         text=True).stdout
    # The last line: "md5   751851.30k" (thousands of bytes per second).
    value = re.findall(r"([0-9.]+)k\s*$", out.strip().splitlines()[-1])
    return float(value[0]) * 1000


def _receive(listener, results):
    conn, _ = listener.accept()
    buf = bytearray(MIB)
    view = memoryview(buf)
    total = 0
    while True:
        n = conn.recv_into(view)
        if n == 0:
            break
        total += n
    results.put(total)


def _send(port, seconds, start):
    conn = socket.create_connection(("127.0.0.1", port))
    chunk = os.urandom(MIB)
    while time.monotonic() - start < seconds:
        conn.sendall(chunk)
    conn.close()


def loopback_tcp(connections, seconds):
    """Bytes per second received over `connections` loopback connections together."""
    results = multiprocessing.Queue()
    receivers, senders, listeners = [], [], []
    for _ in range(connections):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listeners.append(listener)
        p = multiprocessing.Process(target=_receive, args=(listener, results))
        p.start()
        receivers.append(p)
    start = time.monotonic()
    for listener in listeners:
        p = multiprocessing.Process(target=_send,
                                    args=(listener.getsockname()[1], seconds, start))
        p.start()
        senders.append(p)
    received = sum(results.get() for _ in receivers)
    elapsed = time.monotonic() - start
    for p in senders + receivers:
        p.join()
    return received / elapsed


def memory_copy(seconds):
    """One thread copying one 64 MiB buffer into another (memcpy): bytes per CPU second."""
    src = bytearray(os.urandom(64 * MIB))
    dst = bytearray(64 * MIB)
    d, s = memoryview(dst), memoryview(src)
    d[:] = s  # warm-up: pages touched
    start, moved = time.thread_time(), 0
    while time.thread_time() - start < seconds:
        d[:] = s
        moved += len(src)
    return moved / (time.thread_time() - start)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--time", default="500ms", help="iobm limits --time")
    ap.add_argument("--connections", default="2,4", help="connection counts the peer tries")
    ap.add_argument("--iobm")
    args = ap.parse_args()
    iobm = args.iobm or build_iobm()
    seconds = 1
    rows = {  # figure: (iobm's field, peer's name, the peer)
        "MD5, one core": ("md5_bytes_per_s_per_core", "openssl speed -evp md5",
                          lambda: openssl_speed("md5", seconds)),
        "SHA-256, one core": ("sha256_bytes_per_s_per_core", "openssl speed -evp sha256",
                              lambda: openssl_speed("sha256", seconds)),
        "loopback TCP, several connections": (
            "loopback_tcp_many_bytes_per_s",
            f"Python, best of {args.connections} connections",
            lambda: max(loopback_tcp(int(n), seconds) for n in args.connections.split(","))),
        "memory copy, one thread": ("memcpy_one_thread_bytes_per_s", "Python memcpy",
                                    lambda: memory_copy(seconds)),
    }
    got = {name: [] for name in rows}
    for r in range(args.rounds):
        limits = iobm_limits(iobm, args.time)
        for name, (field, _, peer) in rows.items():
            got[name].append((limits[field], peer()))
        print(f"round {r + 1}: md5 {limits['md5_implementation']}, copy "
              f"{limits['memcpy_method']}, {limits['loopback_tcp_connections']} connections",
              flush=True)
    print("\n| figure | iobm MiB/s | peer | peer MiB/s | iobm/peer per round | median |")
    print("|---|---:|---|---:|---|---:|")
    for name, (_, peer_name, _) in rows.items():
        pairs = got[name]
        ratios = [i / p for i, p in pairs]
        print(f"| {name} | {statistics.median(i for i, _ in pairs) / MIB:.0f} | {peer_name} | "
              f"{statistics.median(p for _, p in pairs) / MIB:.0f} | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.2f} |")


if __name__ == "__main__":
    main()
