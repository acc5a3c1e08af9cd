"""What the benchmark scripts share: installing a Debian peer tool, building iobm, and finding
and waiting for a loopback port."""

import os
import shutil
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ensure_debian(command, package):
    """Installs `package` from Debian when `command` is missing (as root), or stops."""
    if shutil.which(command):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-qq"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", package], check=True,
                       stdout=subprocess.DEVNULL)
    else:
        sys.exit(f"please install {package}")


def build_iobm():
    """Builds iobm in release mode; returns the binary's path."""
    subprocess.run(["cargo", "build", "--release", "--locked", "-q", "-p", "iobm"], cwd=ROOT,
                   check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "iobm")


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, seconds=20):
    """Waits until something accepts connections on loopback `port`, or stops."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"no server on port {port}")
