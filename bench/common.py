"""What the benchmark scripts share: installing a Debian peer tool and building iobm."""

import os
import shutil
import subprocess
import sys

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
