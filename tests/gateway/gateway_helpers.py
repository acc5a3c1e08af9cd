"""What the gateway tests share: the `iobm serve` process, and clients of it."""

import hashlib
import hmac
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse

import boto3
import botocore
from botocore import UNSIGNED
from botocore.config import Config

IOBM = os.environ.get("IOBM_BIN", os.path.join(os.path.dirname(__file__), "../../target/debug/iobm"))
AK, SK = "AKIAIOBMTEST", "iobm-test-secret-key"
# The accounts of the gateways with a users file.
ALICE = ("AKALICE", "alice-secret-key-0123456789")
BOB = ("AKBOB", "bob-secret-key-0123456789")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, seconds=20):
    """Waits until something accepts connections on loopback `port`; fails if `proc` never does."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("iobm serve did not start: " + proc.stdout.read())


class Server:
    """An `iobm serve` process on a free port over `root` (`preexec_fn` runs in the child before
    it starts, to set its limits)."""

    def __init__(self, root, *extra, preexec_fn=None):
        self.root = str(root)
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [IOBM, "serve", self.root, "--listen", f"127.0.0.1:{self.port}", *extra],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=preexec_fn)
        wait_for_port(self.port, self.proc)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=10)


def client(server, secret=SK):
    return boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=AK, aws_secret_access_key=secret,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))


def aws(server, *args):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_DEFAULT_REGION="us-east-1")
    env.pop("AWS_CA_BUNDLE", None)
    out = subprocess.run([sys.executable, "-m", "awscli", "--endpoint-url", server.endpoint, *args], env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def as_account(server, keys, version="s3v4"):
    """A boto3 client of one account (keys: access key, secret), path style, no retries."""
    return boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=keys[0], aws_secret_access_key=keys[1],
        region_name="us-east-1",
        config=Config(signature_version=version, s3={"addressing_style": "path"},
                      retries={"max_attempts": 1}))


def unsigned(server):
    """A boto3 client that signs nothing."""
    return boto3.client(
        "s3", endpoint_url=server.endpoint, region_name="us-east-1",
        config=Config(signature_version=UNSIGNED, s3={"addressing_style": "path"},
                      retries={"max_attempts": 1}))


def code(call, *args, **kwargs):
    """The S3 error code a call fails with, or "ok"."""
    try:
        call(*args, **kwargs)
        return "ok"
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]


def tmpfs(path, options):
    """A new directory `path` with a tmpfs of `options` (`size=64m`) mounted on it (root only)."""
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
    return path


def sigv4(keys, method, path, query, port, payload_hash, extra=None, send_host=True):
    """The headers of a SigV4 header-signed request, every x-amz-* header and host signed
    (`send_host=False`: host left out of the headers, for a sender that writes its own)."""
    amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    day = amz_date[:8]
    headers = {"host": f"127.0.0.1:{port}", "x-amz-content-sha256": payload_hash,
               "x-amz-date": amz_date, **{k.lower(): v for k, v in (extra or {}).items()}}
    names = sorted(headers)
    pairs = sorted(urllib.parse.parse_qsl(query, keep_blank_values=True))
    canonical_query = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                               for k, v in pairs)
    canonical = "\n".join([method, urllib.parse.quote(path, safe="/-_.~"), canonical_query,
                           "".join(f"{n}:{headers[n]}\n" for n in names), ";".join(names), payload_hash])
    scope = f"{day}/us-east-1/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + keys[1]).encode()
    for part in (day, "us-east-1", "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={keys[0]}/{scope}, "
                                f"SignedHeaders={';'.join(names)}, Signature={signature}")
    if not send_host:
        del headers["host"]
    return headers
