"""The gateways the tests share: `server`, an `iobm serve` with known keys over a new directory;
`two`, one of the accounts alice and bob; `small_disk`, one of alice and bob over a 64 MiB tmpfs."""

import os
import subprocess

import pytest

from gateway_helpers import AK, ALICE, BOB, SK, Server, tmpfs


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--access-key", AK, "--secret-key", SK)
    yield s
    s.stop()


@pytest.fixture
def two(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    users.write_text(f"{ALICE[0]} {ALICE[1]} alice\n{BOB[0]} {BOB[1]} bob\n")
    server = Server(root, "--users", str(users))
    yield server
    server.stop()


@pytest.fixture
def small_disk(tmp_path):
    """A gateway with accounts over a 64 MiB tmpfs (root only)."""
    if os.geteuid() != 0:
        pytest.fail("needs root to mount a tmpfs (scripts/test runs the gateway tests as root)")
    root = tmpfs(tmp_path / "small", "size=64m")
    users = tmp_path / "users"
    users.write_text(f"{ALICE[0]} {ALICE[1]} alice\n{BOB[0]} {BOB[1]} bob\n")
    server = Server(root, "--users", str(users), "--body-timeout", "3s")
    yield server, root
    server.stop()
    subprocess.run(["umount", str(root)], check=True)
