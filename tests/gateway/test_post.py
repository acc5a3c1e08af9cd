"""Browser-form uploads (POST Object): nothing of the file is read before the form is
authenticated and authorized, and an admitted file is streamed to disk, never held whole in
memory; the policy's conditions (expiry, fields, content-length-range) and S3's answers
(success_action_status, success_action_redirect) as S3 documents them. Forms come from boto3's
generate_presigned_post, sent as raw HTTP.
"""

import base64
import hashlib
import json
import os
import socket
import time

from gateway_helpers import ALICE, BOB, as_account, code, unsigned

BOUNDARY = "iobmFormBoundary7MA4YWxkTrZu0gW"


def form_head(fields, filename="f.bin"):
    """The form's bytes up to its file's first byte."""
    out = b""
    for name, value in fields.items():
        out += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").encode()
    out += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
    return out


TAIL = f"\r\n--{BOUNDARY}--\r\n".encode()


def post(server, bucket, fields, data, chunk=1 << 20):
    """POSTs a form with `data` as its file; the status, headers and body of the answer."""
    head = form_head(fields)
    length = len(head) + len(data) + len(TAIL)
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    try:
        sock.sendall((f"POST /{bucket} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                      f"Content-Length: {length}\r\n\r\n").encode() + head)
        try:
            for i in range(0, len(data), chunk):
                sock.sendall(data[i:i + chunk])
            sock.sendall(TAIL)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered before the whole form was sent: read the answer
        return read_answer(sock)
    finally:
        sock.close()


def read_answer(sock):
    reply = b""
    while b"\r\n\r\n" not in reply:
        piece = sock.recv(65536)
        if not piece:
            break
        reply += piece
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
    want = int(headers.get("content-length", "0"))
    while len(body) < want:
        piece = sock.recv(65536)
        if not piece:
            break
        body += piece
    return int(lines[0].split()[1]), headers, body


def presigned(server, keys, bucket, key, conditions=None, fields=None, expires=300):
    return as_account(server, keys).generate_presigned_post(
        bucket, key, Fields=fields, Conditions=conditions, ExpiresIn=expires)["fields"]


def rss_peak_kib(server):
    with open(f"/proc/{server.proc.pid}/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:"))


def test_an_unauthorized_form_is_refused_before_its_file_is_sent(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="private")
    for fields in ({"key": "k"}, presigned(two, BOB, "private", "k")):
        # The head of a form whose file would be 1 GiB: the answer comes before any of it.
        head = form_head(fields)
        with socket.create_connection(("127.0.0.1", two.port), timeout=10) as sock:
            sock.sendall((f"POST /private HTTP/1.1\r\nHost: 127.0.0.1:{two.port}\r\n"
                          f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                          f"Content-Length: {len(head) + (1 << 30)}\r\n\r\n").encode() + head)
            status, _, body = read_answer(sock)
        assert status == 403 and b"AccessDenied" in body, (status, body)
    assert code(alice.head_object, Bucket="private", Key="k") == "404"


def test_an_admitted_file_is_streamed_to_disk_not_held_in_memory(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="forms")
    data = os.urandom(1 << 20) * 96  # 96 MiB
    fields = presigned(two, ALICE, "forms", "up/${filename}")
    before = rss_peak_kib(two)
    status, headers, body = post(two, "forms", {**fields, "key": "up/${filename}"}, data)
    assert status == 204, body
    assert headers["etag"] == '"%s"' % hashlib.md5(data).hexdigest()
    grown_mib = (rss_peak_kib(two) - before) / 1024
    assert grown_mib < 48, f"the gateway's peak memory grew by {grown_mib:.0f} MiB for a 96 MiB file"
    got = alice.get_object(Bucket="forms", Key="up/f.bin")
    assert got["Body"].read() == data


def test_the_policy_is_kept_to(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="forms")
    ranged = presigned(two, ALICE, "forms", "small", conditions=[["content-length-range", 1, 1000]])
    status, _, body = post(two, "forms", ranged, b"x" * 1001)
    assert status == 400 and b"EntityTooLarge" in body, body
    assert code(alice.head_object, Bucket="forms", Key="small") == "404"
    status, _, body = post(two, "forms", ranged, b"x" * 1000)
    assert status == 204, body
    # A field the policy does not name, a key outside its condition, an expired policy.
    plain = presigned(two, ALICE, "forms", "k")
    status, _, body = post(two, "forms", {**plain, "x-amz-meta-extra": "1"}, b"x")
    assert status == 403 and b"Extra input fields" in body, body
    prefixed = presigned(two, ALICE, "forms", "in/${filename}", conditions=[["starts-with", "$key", "in/"]])
    status, _, body = post(two, "forms", {**prefixed, "key": "out/f"}, b"x")
    assert status == 403, body
    expired = presigned(two, ALICE, "forms", "late", expires=1)
    time.sleep(2)
    status, _, body = post(two, "forms", expired, b"x")
    assert status == 403 and b"expired" in body, body
    assert code(alice.head_object, Bucket="forms", Key="late") == "404"


def test_s3_answers_and_stored_fields(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="forms")
    fields = presigned(two, ALICE, "forms", "doc", fields={"success_action_status": "201",
                                                          "Content-Type": "text/plain",
                                                          "x-amz-meta-color": "blue"},
                       conditions=[{"success_action_status": "201"}, {"Content-Type": "text/plain"},
                                   {"x-amz-meta-color": "blue"}])
    status, headers, body = post(two, "forms", fields, b"hello form")
    assert status == 201, body
    assert b"<Key>doc</Key>" in body and b"<Bucket>forms</Bucket>" in body
    head = alice.head_object(Bucket="forms", Key="doc")
    assert head["ContentType"] == "text/plain" and head["Metadata"] == {"color": "blue"}
    redirected = presigned(two, ALICE, "forms", "r", fields={"success_action_redirect": "http://example.com/done"},
                           conditions=[{"success_action_redirect": "http://example.com/done"}])
    status, headers, _ = post(two, "forms", redirected, b"r")
    assert status == 303 and headers["location"].startswith("http://example.com/done?bucket=forms&key=r&etag=")


def test_an_unsigned_form_writes_where_the_bucket_lets_anyone_write(two):
    alice = as_account(two, ALICE)
    alice.create_bucket(Bucket="dropbox", ACL="public-read-write")
    status, _, body = post(two, "dropbox", {"key": "anon"}, b"from a browser")
    assert status == 204, body
    assert alice.get_object(Bucket="dropbox", Key="anon")["Body"].read() == b"from a browser"
    assert unsigned(two).list_objects_v2(Bucket="dropbox")["KeyCount"] == 1


def test_an_unsigned_form_may_not_take_the_disk(small_disk):
    """As an unsigned PUT: a form whose length would leave less than a tenth free is refused
    before its file is read."""
    server, _ = small_disk
    as_account(server, ALICE).create_bucket(Bucket="dropbox", ACL="public-read-write")
    head = form_head({"key": "fill"})
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall((f"POST /dropbox HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                      f"Content-Length: {len(head) + (60 << 20)}\r\n\r\n").encode() + head)
        status, _, body = read_answer(sock)
    assert status == 507 and b"XMinioStorageFull" in body, (status, body)


def raw_form(server, target, fields, data):
    """POSTs a form built from a list of (name, value) fields (repeats allowed) and `data`."""
    body = b"".join((f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{n}\"\r\n\r\n{v}\r\n").encode()
                    for n, v in fields)
    body += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n").encode()
    body += data + TAIL
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall((f"POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                      f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
        return read_answer(sock)


def test_a_signed_form_cannot_be_made_to_check_another_policy(two):
    """A second, unsigned `policy` field before the signed one: the policy checked is never
    one that was not signed."""
    alice = as_account(two, ALICE)
    for bucket in ("uploads", "private"):
        alice.create_bucket(Bucket=bucket)
    alice.put_object(Bucket="private", Key="precious", Body=b"alice's data")
    signed = presigned(two, ALICE, "uploads", "guest/${filename}",
                       conditions=[["starts-with", "$key", "guest/"], ["content-length-range", 1, 10]])
    conditions = [{k: v} for k, v in signed.items() if k not in ("policy", "x-amz-signature", "key")]
    forged = base64.b64encode(json.dumps({"expiration": "2099-01-01T00:00:00Z", "conditions":
                                          conditions + [["starts-with", "$key", ""]]}).encode()).decode()
    fields = [("key", "precious"), ("policy", forged)] + [(k, v) for k, v in signed.items() if k != "key"]
    status, _, body = raw_form(two, "/private", fields, b"overwritten" * 10)
    assert status == 400, body
    assert alice.get_object(Bucket="private", Key="precious")["Body"].read() == b"alice's data"


def test_a_form_with_a_query_is_a_form_too(two):
    """s3s takes any POST of a form to a bucket as PostObject: with a query string too, nothing
    of the file is read before the form is authorized."""
    as_account(two, ALICE).create_bucket(Bucket="private")
    head = form_head({"key": "k"})
    with socket.create_connection(("127.0.0.1", two.port), timeout=10) as sock:
        sock.sendall((f"POST /private?x=1 HTTP/1.1\r\nHost: 127.0.0.1:{two.port}\r\n"
                      f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                      f"Content-Length: {len(head) + (1 << 30)}\r\n\r\n").encode() + head)
        status, _, body = read_answer(sock)
    assert status == 403, (status, body)
