"""The gateway's one gate: every request is authenticated once (one credential form, each with
its time window) and then authorized from the account, the operation and the owners and ACLs of
the bucket and object, on every route: ranged reads answered whole, presigned URLs, unsigned
requests, chunked bodies of unknown length, /metrics. Accounts alice, bob and carol, as boto3
clients, as unsigned clients and as raw HTTP.
"""

import base64
import email.utils
import hashlib
import hmac
import http.client
import os
import random
import socket
import subprocess
import threading
import time
import urllib.parse

import boto3
import botocore
import pytest
from botocore import UNSIGNED
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from gateway_helpers import ALICE, BOB, as_account, code, sigv4, unsigned, IOBM, Server, free_port, wait_for_port

CAROL = ("AKCAROL", "carol-secret-key-0123456789")
NAMES = {"alice": ALICE, "bob": BOB, "carol": CAROL}








def send(server, method, target, headers=None, body=b""):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request(method, target, body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, dict(response.getheaders()), data


def error_code(data):
    text = data.decode(errors="replace")
    return text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in text else text


def sigv2_headers(keys, method, resource, date, extra=None):
    """Headers of a SigV2 header-signed request with the given Date."""
    headers = {"Date": date, **(extra or {})}
    amz = "".join(f"{k.lower()}:{v}\n" for k, v in sorted(headers.items()) if k.lower().startswith("x-amz-"))
    # With an x-amz-date, the Date line of the string to sign is empty.
    signed_date = "" if "x-amz-date" in headers else date
    to_sign = f"{method}\n{headers.get('Content-MD5', '')}\n{headers.get('Content-Type', '')}\n{signed_date}\n{amz}{resource}"
    signature = base64.b64encode(hmac.new(keys[1].encode(), to_sign.encode(), hashlib.sha1).digest()).decode()
    headers["Authorization"] = f"AWS {keys[0]}:{signature}"
    return headers


def write_users(path, *names):
    path.write_text("".join(f"{NAMES[n][0]} {NAMES[n][1]} {n}\n" for n in names))


@pytest.fixture
def three(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, "alice", "bob", "carol")
    server = Server(root, "--users", str(users))
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="a-priv")
    alice.put_object(Bucket="a-priv", Key="secret.txt", Body=b"alice's secret")
    yield server, root
    server.stop()


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("range_", ["bytes=5-2", "bytes=0-1,3-4", "lines=1-2"])
def test_an_ignorable_range_is_authorized_like_any_read(three, method, range_):
    server, _ = three
    bob = as_account(server, BOB)
    for key in ("secret.txt", "missing.txt"):
        url = bob.generate_presigned_url("get_object" if method == "GET" else "head_object",
                                         Params={"Bucket": "a-priv", "Key": key}, ExpiresIn=300)
        status, headers, data = send(server, method, url.split(str(server.port), 1)[1], {"Range": range_})
        # Neither the bytes, nor the ETag and size, nor whether the key exists.
        assert status == 403, (key, status, headers, data)
        assert b"secret" not in data and "ETag" not in headers
    # The owner still gets the whole object, as S3 answers an ignorable Range.
    alice = as_account(server, ALICE)
    url = alice.generate_presigned_url("get_object", Params={"Bucket": "a-priv", "Key": "secret.txt"})
    status, _, data = send(server, "GET", url.split(str(server.port), 1)[1], {"Range": range_})
    assert (status, data) == (200, b"alice's secret")


def test_an_unsigned_ignorable_range_is_refused(three):
    server, _ = three
    status, headers, data = send(server, "GET", "/a-priv/secret.txt", {"Range": "bytes=5-2"})
    assert status == 403 and b"alice" not in data and "ETag" not in headers


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_one_credential_form_per_request(three, version):
    server, _ = three
    alice = as_account(server, ALICE, version)
    url = alice.generate_presigned_url("get_object", Params={"Bucket": "a-priv", "Key": "secret.txt"},
                                       ExpiresIn=30 * 86400)
    target = url.split(str(server.port), 1)[1]
    for extra in ({}, {"Authorization": "Bearer x"}, {"Authorization": "AWS4-HMAC-SHA256 junk"}):
        status, _, data = send(server, "GET", target, extra)
        assert status == 400, (extra, status, data)
        assert b"alice's secret" not in data
    status, _, data = send(server, "GET", target, {"Authorization": "Bearer x"})
    assert error_code(data) in ("InvalidArgument", "AuthorizationQueryParametersError")
    # A good presigned URL with a header credential beside it is refused too: one form.
    good = alice.generate_presigned_url("get_object", Params={"Bucket": "a-priv", "Key": "secret.txt"})
    status, _, data = send(server, "GET", good.split(str(server.port), 1)[1], {"Authorization": "Bearer x"})
    assert (status, error_code(data)) == (400, "InvalidArgument")
    assert send(server, "GET", good.split(str(server.port), 1)[1])[0] == 200


def test_sigv2_header_signatures_expire_after_fifteen_minutes(three):
    server, _ = three
    alice = as_account(server, ALICE)
    alice.put_object(Bucket="a-priv", Key="victim", Body=b"v")
    for age, want in [(365 * 86400, 403), (16 * 60, 403), (-16 * 60, 403), (60, 204)]:
        date = email.utils.formatdate(time.time() - age, usegmt=True)
        headers = sigv2_headers(ALICE, "DELETE", "/a-priv/victim", date)
        status, _, data = send(server, "DELETE", "/a-priv/victim", headers)
        assert status == want, (age, status, data)
        if want == 403:
            assert error_code(data) == "RequestTimeTooSkewed"
            assert alice.get_object(Bucket="a-priv", Key="victim")["Body"].read() == b"v"
    assert code(alice.head_object, Bucket="a-priv", Key="victim") == "404"
    # An x-amz-date beside Date is the time that counts, as in S3.
    date = email.utils.formatdate(time.time() - 86400, usegmt=True)
    fresh = email.utils.formatdate(time.time(), usegmt=True)
    headers = sigv2_headers(ALICE, "GET", "/a-priv/secret.txt", date, {"x-amz-date": fresh})
    assert send(server, "GET", "/a-priv/secret.txt", headers)[0] == 200
    headers = sigv2_headers(ALICE, "GET", "/a-priv/secret.txt", fresh, {"x-amz-date": date})
    assert send(server, "GET", "/a-priv/secret.txt", headers)[0] == 403
    # And a request with no date at all is refused.
    headers = sigv2_headers(ALICE, "GET", "/a-priv/secret.txt", "")
    del headers["Date"]
    assert send(server, "GET", "/a-priv/secret.txt", headers)[0] in (400, 403)


def test_sigv2_presigned_listing_of_ones_own_bucket(three):
    server, _ = three
    alice = as_account(server, ALICE, "s3")
    for call, params in [("list_objects", {"Bucket": "a-priv"}), ("list_objects_v2", {"Bucket": "a-priv"}),
                         ("list_objects", {"Bucket": "a-priv", "Prefix": "sec", "MaxKeys": 5})]:
        url = alice.generate_presigned_url(call, Params=params)
        status, _, data = send(server, "GET", url.split(str(server.port), 1)[1])
        assert status == 200, (call, data)
        assert b"secret.txt" in data


def test_a_long_account_name_owns_its_bucket(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    long_name = "l" * 300
    users.write_text(f"AKLONG long-secret-0123456789 {long_name}\n{BOB[0]} {BOB[1]} bob\n")
    server = Server(root, "--users", str(users))
    try:
        owner = as_account(server, ("AKLONG", "long-secret-0123456789"))
        owner.create_bucket(Bucket="long-owned")
        owner.put_object(Bucket="long-owned", Key="k", Body=b"mine")
        bob = as_account(server, BOB)
        assert code(bob.list_objects_v2, Bucket="long-owned") == "AccessDenied"
        assert code(bob.get_object, Bucket="long-owned", Key="k") == "AccessDenied"
        assert code(bob.put_object, Bucket="long-owned", Key="x", Body=b"x") == "AccessDenied"
        assert "long-owned" not in [b["Name"] for b in bob.list_buckets()["Buckets"]]
        assert owner.get_object(Bucket="long-owned", Key="k")["Body"].read() == b"mine"
        acl = owner.get_bucket_acl(Bucket="long-owned")
        assert acl["Owner"]["DisplayName"] == long_name
    finally:
        server.stop()


def test_an_account_name_too_long_to_keep_is_refused_up_front(tmp_path):
    # An object's owner is kept in an extended attribute beside its metadata: a name of 5000
    # bytes would not fit ext4's room for them, and its objects would be kept without it.
    users = tmp_path / "users"
    users.write_text(f"{BOB[0]} {BOB[1]} bob\nAKLONG long-secret-0123456789 {'l' * 5000}\n")
    out = subprocess.run([IOBM, "serve", str(tmp_path), "--users", str(users), "--listen", "127.0.0.1:0"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out
    said = out.stderr.strip().splitlines()
    assert len(said) == 1 and str(users) in said[0] and "line 2" in said[0], out.stderr
    assert "l" * 600 not in out.stderr and "long-secret" not in out.stderr


def test_an_owner_that_cannot_be_read_is_refused_not_shared(three):
    server, root = three
    bob = as_account(server, BOB)
    # A bucket whose owner attribute is garbage (not UTF-8) is nobody's to share.
    os.setxattr(root / "a-priv", "user.iobm.owner", b"\xff\xfe")
    assert code(bob.list_objects_v2, Bucket="a-priv") == "AccessDenied"
    assert code(bob.put_object, Bucket="a-priv", Key="x", Body=b"x") == "AccessDenied"
    assert code(bob.get_object, Bucket="a-priv", Key="secret.txt") == "AccessDenied"


def test_bucket_creation_is_atomic_against_other_accounts_writes(three):
    server, root = three
    alice, bob = as_account(server, ALICE), as_account(server, BOB)
    stop = threading.Event()
    landed = []

    def intruder():
        s3 = as_account(server, BOB)
        i = 0
        while not stop.is_set():
            i += 1
            if code(s3.put_object, Bucket="contested", Key=f"in-{i}", Body=b"x") == "ok":
                landed.append(i)

    threads = [threading.Thread(target=intruder) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(150):
            alice.create_bucket(Bucket="contested")
            assert os.listdir(root / "contested") == []
            alice.delete_bucket(Bucket="contested")
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert landed == []
    assert code(bob.head_bucket, Bucket="contested") == "404"


def raw_chunked_put(server, target, headers, chunks, pause=0.0):
    """A PUT with Transfer-Encoding: chunked and no Content-Length; the status, or None if the
    gateway closed the connection first."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    head = f"PUT {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nTransfer-Encoding: chunked\r\n"
    head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    try:
        sock.sendall(head.encode())
        for chunk in chunks:
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            if pause:
                time.sleep(pause)
        sock.sendall(b"0\r\n\r\n")
        reply = sock.recv(4096).decode(errors="replace")
        return int(reply.split()[1]) if reply.startswith("HTTP/1.1") else None
    except OSError:
        try:
            reply = sock.recv(4096).decode(errors="replace")
            return int(reply.split()[1]) if reply.startswith("HTTP/1.1") else None
        except OSError:
            return None
    finally:
        sock.close()


def spooled(root):
    """Bytes in the gateway's temporary files."""
    return sum(os.path.getsize(os.path.join(d, f))
               for d, _, files in os.walk(root / ".iobm-gateway" / "tmp") for f in files)


def test_nothing_is_spooled_before_authentication(small_disk):
    server, root = small_disk
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="a-bkt")
    seen = []

    def watch():
        while not done.is_set():
            seen.append(spooled(root))
            time.sleep(0.01)

    done = threading.Event()
    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        # No signature: refused before one byte lands, however much is sent.
        status = raw_chunked_put(server, "/a-bkt/fill", {}, [b"z" * (1 << 20)] * 80)
        assert status in (403, None)
        # A forged signature with a real access key: refused the same way.
        forged = {"x-amz-date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
                  "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
                  "Authorization": f"AWS4-HMAC-SHA256 Credential={ALICE[0]}/"
                                   f"{time.strftime('%Y%m%d', time.gmtime())}/us-east-1/s3/aws4_request, "
                                   "SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=" + "0" * 64}
        status = raw_chunked_put(server, "/a-bkt/fill", forged, [b"z" * (1 << 20)] * 80)
        assert status in (403, None)
    finally:
        done.set()
        watcher.join()
    assert max(seen) == 0, max(seen)
    # Alice's own upload still fits.
    alice.put_object(Bucket="a-bkt", Key="mine", Body=os.urandom(8 << 20))


def test_a_stalled_spool_is_cut_by_the_body_timeout(small_disk):
    server, root = small_disk
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="pub")
    alice.put_bucket_acl(Bucket="pub", ACL="public-read-write")
    # Unsigned, into a public-read-write bucket: allowed, but a trickle of 1 byte every 2 s
    # (each within the body timeout of 3 s) is cut once the whole body has taken too long.
    started = time.time()
    status = raw_chunked_put(server, "/pub/slow", {}, [b"x"] * 30, pause=2.0)
    assert status in (400, None)
    assert time.time() - started < 50
    assert spooled(root) == 0


def test_a_signed_chunked_put_on_a_full_disk_is_507(small_disk):
    server, root = small_disk
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="full")
    with open(root / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * (1 << 20))
        except OSError:
            pass
    # A signed PUT of a body of unknown length, as an HTTP client sends one it streams.
    headers = sigv4(ALICE, "PUT", "/full/k", "", server.port, "UNSIGNED-PAYLOAD", send_host=False)
    got = raw_chunked_put(server, "/full/k", headers, [b"y" * (1 << 20)] * 8)
    assert got == 507, got
    os.remove(root / "filler")
    assert spooled(root) == 0


def test_metrics_on_the_s3_port_show_an_account_only_its_own_buckets(three):
    server, _ = three
    alice, bob = as_account(server, ALICE), as_account(server, BOB)
    bob.create_bucket(Bucket="b-own")
    bob.put_object(Bucket="b-own", Key="k", Body=b"b")
    alice.get_object(Bucket="a-priv", Key="secret.txt")["Body"].read()

    def scrape(keys):
        request = AWSRequest(method="GET", url=server.endpoint + "/metrics", headers={"Accept": "text/plain"})
        S3SigV4Auth(Credentials(*keys), "s3", "us-east-1").add_auth(request)
        return send(server, "GET", "/metrics", dict(request.headers))

    status, _, data = scrape(BOB)
    assert status == 200, data
    assert b"b-own" in data and b"a-priv" not in data
    status, _, data = scrape(ALICE)
    assert b"a-priv" in data and b"b-own" not in data
    status, _, data = send(server, "GET", "/metrics", {"Accept": "text/plain"})
    assert status == 403 and b"iobm_gateway" not in data


def test_the_banner_never_prints_a_given_secret(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    secret = "a-very-private-secret-0123456789"
    server = Server(root, "--access-key", "AKBANNER", "--secret-key", secret)
    time.sleep(0.5)
    server.stop()
    output = server.proc.stdout.read()
    assert "AKBANNER" in output
    assert secret not in output


def test_put_racing_delete_objects_in_one_prefix_never_fails(three):
    server, _ = three
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="churn")
    errors = []
    putting = threading.Event()
    putting.set()

    def putter(n):
        s3 = as_account(server, ALICE)
        for i in range(250):
            try:
                s3.put_object(Bucket="churn", Key=f"deep/er/still/p{n}-{i % 3}", Body=b"x")
            except botocore.exceptions.ClientError as e:
                errors.append(("put", e.response["Error"]["Code"]))

    def deleter():
        s3 = as_account(server, ALICE)
        while putting.is_set():
            keys = [f"deep/er/still/p{n}-{i}" for n in range(3) for i in range(3)]
            answer = s3.delete_objects(Bucket="churn", Delete={"Objects": [{"Key": k} for k in keys]})
            errors.extend(("delete", e["Code"]) for e in answer.get("Errors", []))

    putters = [threading.Thread(target=putter, args=(n,)) for n in range(3)]
    deleters = [threading.Thread(target=deleter) for _ in range(2)]
    for t in putters + deleters:
        t.start()
    for t in putters:
        t.join()
    putting.clear()
    for t in deleters:
        t.join()
    assert errors == []


# ---- The property test: the gateway's answers against a model of S3's permission rules ----

BUCKET_ACLS = ["private", "public-read", "public-read-write", "authenticated-read"]
OBJECT_ACLS = ["private", "public-read", "authenticated-read", "bucket-owner-read",
               "bucket-owner-full-control"]
CALLERS = ["alice", "bob", "carol", None]


class Model:
    """S3's rules for canned ACLs: a bucket's owner may do anything in it; READ on a bucket
    lists it, WRITE writes and deletes in it; an object reads to its uploader, to the bucket's
    owner, and as its ACL grants; only the bucket's owner deletes the bucket or changes its ACL;
    the object's ACL changes by the bucket's owner or the object's uploader."""

    def __init__(self):
        self.buckets = {}  # name -> {"owner", "acl", "objects": {key: (uploader, acl, body)}}

    @staticmethod
    def grants_read(acl, caller):
        return acl in ("public-read", "public-read-write") or (acl == "authenticated-read" and caller)

    def allowed(self, op, caller, bucket, key):
        b = self.buckets.get(bucket)
        if op == "create_bucket":
            return caller is not None and b is None
        if b is None:
            return False
        owner = b["owner"] == caller
        if op in ("list", "head_bucket"):
            return owner or self.grants_read(b["acl"], caller)
        if op in ("put", "delete"):
            return owner or b["acl"] == "public-read-write"
        if op in ("delete_bucket", "put_bucket_acl"):
            return owner
        o = b["objects"].get(key)
        if op in ("get", "head"):
            if owner:
                return True
            if o is None:
                return self.grants_read(b["acl"], caller)  # NoSuchKey to those who may list
            return o[0] == caller and caller is not None or self.grants_read(o[1], caller)
        if op == "put_object_acl":
            return owner or (o is not None and caller is not None and o[0] == caller)
        raise ValueError(op)


def test_every_answer_is_what_the_permission_model_allows(three):
    server, root = three
    rng = random.Random(20261201)
    clients = {n: as_account(server, NAMES[n]) for n in NAMES}
    clients[None] = unsigned(server)
    model = Model()
    model.buckets["a-priv"] = {"owner": "alice", "acl": "private",
                               "objects": {"secret.txt": ("alice", "private", b"alice's secret")}}
    bucket_names, keys = ["a-priv", "m-1", "m-2", "m-3"], ["k1", "k2", "k3"]
    ops = ["create_bucket", "list", "head_bucket", "put", "get", "head", "delete", "put_bucket_acl",
           "put_object_acl", "delete_bucket"]
    checked = {op: 0 for op in ops}
    for step in range(600):
        op, caller = rng.choice(ops), rng.choice(CALLERS)
        bucket, key = rng.choice(bucket_names), rng.choice(keys)
        s3 = clients[caller]
        want = model.allowed(op, caller, bucket, key)
        b = model.buckets.get(bucket)
        what = (step, op, caller, bucket, key)
        if op == "create_bucket":
            acl = rng.choice(BUCKET_ACLS)
            got = code(s3.create_bucket, Bucket=bucket, ACL=acl)
            if want:
                assert got == "ok", what
                model.buckets[bucket] = {"owner": caller, "acl": acl, "objects": {}}
            else:
                assert got != "ok", what
        elif op == "list":
            got = code(s3.list_objects_v2, Bucket=bucket)
            assert got == ("ok" if want else ("NoSuchBucket" if b is None else "AccessDenied")), what
        elif op == "head_bucket":
            got = code(s3.head_bucket, Bucket=bucket)
            assert got == ("ok" if want else ("404" if b is None else "403")), what
        elif op == "put":
            acl = rng.choice(OBJECT_ACLS)
            body = os.urandom(8)
            got = code(s3.put_object, Bucket=bucket, Key=key, Body=body, ACL=acl)
            assert got == ("ok" if want else ("NoSuchBucket" if b is None else "AccessDenied")), what
            if want:
                b["objects"][key] = (caller, acl, body)
        elif op in ("get", "head"):
            if op == "get":
                try:
                    data = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
                    got = "ok"
                except botocore.exceptions.ClientError as e:
                    got, data = e.response["Error"]["Code"], None
            else:
                got = code(s3.head_object, Bucket=bucket, Key=key)
            o = b and b["objects"].get(key)
            missing = {"get": "NoSuchKey", "head": "404"}[op]
            denied = {"get": "AccessDenied", "head": "403"}[op]
            if b is None:
                expect = {"get": "NoSuchBucket", "head": "404"}[op]
            elif not want:
                expect = denied
            elif o is None:
                expect = missing
            else:
                expect = "ok"
            assert got == expect, what + (got, expect)
            if op == "get" and got == "ok":
                assert data == o[2], what
        elif op == "delete":
            got = code(s3.delete_object, Bucket=bucket, Key=key)
            assert got == ("ok" if want else ("NoSuchBucket" if b is None else "AccessDenied")), what
            if want:
                b["objects"].pop(key, None)
        elif op == "put_bucket_acl":
            acl = rng.choice(BUCKET_ACLS)
            got = code(s3.put_bucket_acl, Bucket=bucket, ACL=acl)
            assert got == ("ok" if want else ("NoSuchBucket" if b is None else "AccessDenied")), what
            if want:
                b["acl"] = acl
        elif op == "put_object_acl":
            acl = rng.choice(OBJECT_ACLS)
            got = code(s3.put_object_acl, Bucket=bucket, Key=key, ACL=acl)
            o = b and b["objects"].get(key)
            if b is None:
                assert got == "NoSuchBucket", what
            elif not want:
                assert got == "AccessDenied", what
            elif o is None:
                assert got == "NoSuchKey", what
            else:
                assert got == "ok", what
                b["objects"][key] = (o[0], acl, o[2])
        elif op == "delete_bucket":
            got = code(s3.delete_bucket, Bucket=bucket)
            if b is None:
                assert got == "NoSuchBucket", what
            elif not want:
                assert got == "AccessDenied", what
            elif b["objects"]:
                assert got == "BucketNotEmpty", what
            else:
                assert got == "ok", what
                del model.buckets[bucket]
        checked[op] += 1
    # Every kind of operation was tried, allowed and refused.
    assert all(n > 20 for n in checked.values()), checked


def test_explicit_grants_give_exactly_what_they_name(three):
    server, _ = three
    alice, bob, carol, anon = (as_account(server, ALICE), as_account(server, BOB),
                               as_account(server, CAROL), unsigned(server))
    # Headers at creation: bob may list and write, carol may read the ACL.
    alice.create_bucket(Bucket="shared-g", GrantRead='id="bob"', GrantWrite='id="bob"',
                        GrantReadACP='id="carol"')
    assert bob.put_object(Bucket="shared-g", Key="from-bob", Body=b"b")["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert [o["Key"] for o in bob.list_objects_v2(Bucket="shared-g")["Contents"]] == ["from-bob"]
    assert code(carol.list_objects_v2, Bucket="shared-g") == "AccessDenied"
    assert code(carol.put_object, Bucket="shared-g", Key="x", Body=b"x") == "AccessDenied"
    acl = carol.get_bucket_acl(Bucket="shared-g")
    assert {(g["Grantee"].get("ID"), g["Permission"]) for g in acl["Grants"]} == \
        {("alice", "FULL_CONTROL"), ("bob", "READ"), ("bob", "WRITE"), ("carol", "READ_ACP")}
    assert code(bob.get_bucket_acl, Bucket="shared-g") == "AccessDenied"
    assert code(carol.put_bucket_acl, Bucket="shared-g", ACL="public-read") == "AccessDenied"
    assert code(anon.list_objects_v2, Bucket="shared-g") == "AccessDenied"
    # An object granted to carol by id reads to her alone; a group grant reaches its group.
    alice.put_object(Bucket="a-priv", Key="for-carol", Body=b"c", GrantRead='id="carol"')
    assert carol.get_object(Bucket="a-priv", Key="for-carol")["Body"].read() == b"c"
    assert code(bob.get_object, Bucket="a-priv", Key="for-carol") == "AccessDenied"
    assert code(carol.get_object, Bucket="a-priv", Key="secret.txt") == "AccessDenied"
    alice.put_object(Bucket="a-priv", Key="members", Body=b"m",
                     GrantRead='uri="http://acs.amazonaws.com/groups/global/AuthenticatedUsers"')
    assert bob.get_object(Bucket="a-priv", Key="members")["Body"].read() == b"m"
    assert code(anon.get_object, Bucket="a-priv", Key="members") == "AccessDenied"
    # An access-control-policy body replaces the ACL: now bob may write the object's ACL.
    owner = alice.get_object_acl(Bucket="a-priv", Key="for-carol")["Owner"]
    alice.put_object_acl(Bucket="a-priv", Key="for-carol", AccessControlPolicy={
        "Owner": owner,
        "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": "alice"}, "Permission": "FULL_CONTROL"},
                   {"Grantee": {"Type": "CanonicalUser", "ID": "bob"}, "Permission": "WRITE_ACP"}]})
    assert code(carol.get_object, Bucket="a-priv", Key="for-carol") == "AccessDenied"
    assert code(bob.get_object, Bucket="a-priv", Key="for-carol") == "AccessDenied"
    bob.put_object_acl(Bucket="a-priv", Key="for-carol", ACL="public-read")
    assert anon.get_object(Bucket="a-priv", Key="for-carol")["Body"].read() == b"c"
    # Multipart uploads and copies carry their grants to the object.
    mp = alice.create_multipart_upload(Bucket="a-priv", Key="mp", GrantRead='id="bob"')
    part = alice.upload_part(Bucket="a-priv", Key="mp", UploadId=mp["UploadId"], PartNumber=1, Body=b"p")
    alice.complete_multipart_upload(Bucket="a-priv", Key="mp", UploadId=mp["UploadId"],
                                    MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert bob.get_object(Bucket="a-priv", Key="mp")["Body"].read() == b"p"
    alice.copy_object(Bucket="a-priv", Key="copied", CopySource={"Bucket": "a-priv", "Key": "secret.txt"},
                      GrantRead='id="carol"')
    assert carol.get_object(Bucket="a-priv", Key="copied")["Body"].read() == b"alice's secret"
    # What S3 refuses: a canned ACL with grant headers, an unknown account, email grantees.
    assert code(alice.put_object, Bucket="a-priv", Key="z", Body=b"z", ACL="public-read",
                GrantRead='id="bob"') == "InvalidRequest"
    assert code(alice.put_object, Bucket="a-priv", Key="z", Body=b"z", GrantRead='id="mallory"') == "InvalidArgument"
    assert code(alice.put_object, Bucket="a-priv", Key="z", Body=b"z",
                GrantRead='emailAddress="bob@example.com"') == "NotImplemented"
    assert code(alice.head_object, Bucket="a-priv", Key="z") == "404"


def encode_names(target):
    """A presigned URL with its credential parameters' names percent-encoded (which s3s decodes
    as the same names)."""
    path, query = target.split("?", 1)
    for name in ("X-Amz-Credential", "X-Amz-Algorithm", "X-Amz-Signature", "X-Amz-Expires",
                 "AWSAccessKeyId", "Signature", "Expires"):
        query = query.replace(f"{name}=", f"{name[:-1]}%{ord(name[-1]):02X}=")
    return path + "?" + query


def test_encoded_parameter_names_are_checked_as_what_they_spell(three):
    server, _ = three
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="a-drop")
    # A presigned PUT cannot be turned into a copy of alice's secret by unsigned headers.
    url = alice.generate_presigned_url("put_object", Params={"Bucket": "a-drop", "Key": "upload.bin"})
    target = encode_names(url.split(str(server.port), 1)[1])
    status, _, data = send(server, "PUT", target,
                           {"x-amz-copy-source": "/a-priv/secret.txt", "x-amz-acl": "public-read"})
    assert status == 403, data
    assert code(alice.head_object, Bucket="a-drop", Key="upload.bin") == "404"
    # Encoded names do not stretch a URL's life past 7 days, SigV4 or SigV2.
    for version in ("s3v4", "s3"):
        signer = as_account(server, ALICE, version)
        url = signer.generate_presigned_url("get_object", Params={"Bucket": "a-priv", "Key": "secret.txt"},
                                            ExpiresIn=10 * 365 * 86400)
        status, _, data = send(server, "GET", encode_names(url.split(str(server.port), 1)[1]))
        assert status == 400 and b"alice's secret" not in data, (version, status)


def test_unsigned_writes_leave_the_disk_to_the_accounts_and_huge_bodies_are_refused_unread(small_disk):
    server, root = small_disk
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="open-rw")
    alice.put_bucket_acl(Bucket="open-rw", ACL="public-read-write")
    anon = unsigned(server)
    # 60 MiB of a 64 MiB disk, by an unsigned client: refused before the body, as storage full.
    try:
        anon.put_object(Bucket="open-rw", Key="fill", Body=b"z" * (60 << 20))
        got = 200
    except botocore.exceptions.ClientError as e:
        got = e.response["ResponseMetadata"]["HTTPStatusCode"]
    assert got == 507
    anon.put_object(Bucket="open-rw", Key="small", Body=b"z" * (1 << 20))
    alice.put_object(Bucket="open-rw", Key="mine", Body=os.urandom(8 << 20))
    # A body of 10 GB announced: EntityTooLarge before a byte is read.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    sock.sendall(f"PUT /open-rw/huge HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                 "Content-Length: 10000000000\r\n\r\n".encode())
    reply = sock.recv(4096).decode(errors="replace")
    sock.close()
    assert reply.startswith("HTTP/1.1 400") and "EntityTooLarge" in reply, reply


def test_a_trickling_body_is_cut_by_the_body_timeout(small_disk):
    server, root = small_disk
    alice = as_account(server, ALICE)
    alice.create_bucket(Bucket="pub-t")
    alice.put_bucket_acl(Bucket="pub-t", ACL="public-read-write")
    # One byte every 2 s, each within the body timeout (3 s): cut once 3 s pass without
    # 64 KiB arriving, not held for the 100 s the body would take.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    sock.sendall(f"PUT /pub-t/slow HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                 "Content-Length: 50\r\n\r\n".encode())
    started, reply = time.time(), b""
    try:
        for _ in range(50):
            sock.sendall(b"x")
            time.sleep(2)
            if time.time() - started > 45:
                break
    except OSError:
        pass
    try:
        reply = sock.recv(4096)
    except OSError:
        pass
    sock.close()
    assert not reply.startswith(b"HTTP/1.1 200"), reply
    assert code(alice.head_object, Bucket="pub-t", Key="slow") == "404"
    assert time.time() - started < 45


def test_a_deleted_buckets_uploads_go_with_it(three):
    server, _ = three
    alice, bob = as_account(server, ALICE), as_account(server, BOB)
    alice.create_bucket(Bucket="shared-name")
    mp = alice.create_multipart_upload(Bucket="shared-name", Key="alice/plans-2027.xlsx")
    alice.upload_part(Bucket="shared-name", Key="alice/plans-2027.xlsx", UploadId=mp["UploadId"],
                      PartNumber=1, Body=b"p" * 1024)
    alice.delete_bucket(Bucket="shared-name")
    bob.create_bucket(Bucket="shared-name")
    assert bob.list_multipart_uploads(Bucket="shared-name").get("Uploads", []) == []
    assert code(bob.list_parts, Bucket="shared-name", Key="alice/plans-2027.xlsx",
                UploadId=mp["UploadId"]) == "NoSuchUpload"


OVERRIDES = {"response-content-type": "text/evil", "response-content-language": "xx",
             "response-expires": "Thu, 01 Jan 1970 00:00:00 GMT", "response-cache-control": "no-store",
             "response-content-disposition": "attachment", "response-content-encoding": "gzip"}


def test_unsigned_reads_cannot_set_the_response_headers(three):
    server, _ = three
    alice = as_account(server, ALICE)
    alice.put_object(Bucket="a-priv", Key="open", Body=b"public", ACL="public-read")
    assert send(server, "GET", "/a-priv/open")[0] == 200
    for name, value in OVERRIDES.items():
        target = f"/a-priv/open?{name}={urllib.parse.quote(value)}"
        status, headers, data = send(server, "GET", target)
        assert (status, error_code(data)) == (400, "InvalidRequest"), (name, status, data)
        assert b"Request specific response headers cannot be used for anonymous GET requests." in data
        assert {k.lower(): v for k, v in headers.items()}.get("content-type") != value
        assert send(server, "HEAD", target)[0] == 400
    # Signed, presigned or in a header, they are honoured.
    url = alice.generate_presigned_url("get_object", Params={
        "Bucket": "a-priv", "Key": "open", "ResponseContentType": "text/evil"})
    status, headers, data = send(server, "GET", url.split(str(server.port), 1)[1])
    headers = {k.lower(): v for k, v in headers.items()}
    assert (status, headers["content-type"], data) == (200, "text/evil", b"public")
    got = alice.get_object(Bucket="a-priv", Key="open", ResponseContentLanguage="xx")
    assert got["ContentLanguage"] == "xx"


def test_a_sigv2_presigned_read_with_an_ignorable_range_is_whole_as_a_signed_one(three):
    server, _ = three
    alice = as_account(server, ALICE)
    alice.put_object(Bucket="a-priv", Key="ranged", Body=b"0123456789")
    header_signed = alice.get_object(Bucket="a-priv", Key="ranged", Range="bytes=5-2")
    assert header_signed["Body"].read() == b"0123456789"
    for version in ("s3", "s3v4"):
        signer = as_account(server, ALICE, version)
        url = signer.generate_presigned_url("get_object", Params={"Bucket": "a-priv", "Key": "ranged"})
        status, headers, data = send(server, "GET", url.split(str(server.port), 1)[1], {"Range": "bytes=5-2"})
        assert (status, data) == (200, b"0123456789"), (version, status, data)
        assert {k.lower(): v for k, v in headers.items()}["content-length"] == "10"


def test_a_bucket_name_made_again_starts_its_counters_from_zero(three):
    server, _ = three
    alice, bob = as_account(server, ALICE), as_account(server, BOB)
    alice.create_bucket(Bucket="reused")
    alice.put_object(Bucket="reused", Key="k", Body=b"a" * 100_000)
    alice.get_object(Bucket="reused", Key="k")["Body"].read()
    alice.delete_object(Bucket="reused", Key="k")
    alice.delete_bucket(Bucket="reused")
    bob.create_bucket(Bucket="reused")
    bob.put_object(Bucket="reused", Key="mine", Body=b"bob")

    request = AWSRequest(method="GET", url=server.endpoint + "/metrics", headers={"Accept": "text/plain"})
    S3SigV4Auth(Credentials(*BOB), "s3", "us-east-1").add_auth(request)
    status, _, data = send(server, "GET", "/metrics", dict(request.headers))
    assert status == 200, data
    text = data.decode()
    assert 'iobm_gateway_received_bytes_total{bucket="reused"} 3\n' in text, text
    assert 'iobm_gateway_served_bytes_total{bucket="reused"} 0\n' in text, text
    assert 'iobm_gateway_put_requests_total{bucket="reused"} 1\n' in text, text
