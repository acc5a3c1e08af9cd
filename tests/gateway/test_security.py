"""`iobm serve` against hostile and careless clients, over loopback: links planted in the
directory, signatures AWS would refuse, descriptor exhaustion and half-sent requests, racing
writers, and requests past S3's limits. Each probe gets the safe answer, and nothing outside
the served directory changes.
"""

import datetime
import hashlib
import hmac
import http.client
import os
import resource
import socket
import subprocess
import threading
import time
import urllib.parse

import boto3
import botocore
import pytest
from botocore.config import Config

from gateway_helpers import AK, IOBM, SK, Server, client, free_port, tmpfs, wait_for_port

REGION = "us-east-1"


def sign(method, path, query="", headers=None, body=b"", region=REGION, service="s3",
         payload_hash=None, signed=None, secret=SK, when=None):
    """Headers of a SigV4-signed request made by hand; `signed` limits the signed headers."""
    when = when or datetime.datetime.now(datetime.timezone.utc)
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    headers = dict(headers or {})
    headers["x-amz-date"] = amz_date
    headers["x-amz-content-sha256"] = payload_hash or hashlib.sha256(body).hexdigest()
    names = sorted(n.lower() for n in (signed if signed is not None else headers))
    lower = {k.lower(): str(v).strip() for k, v in headers.items()}
    canonical_query = "&".join(
        f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
        for k, v in sorted(urllib.parse.parse_qsl(query, keep_blank_values=True)))
    canonical = "\n".join([
        method, urllib.parse.quote(path, safe="/-_.~"), canonical_query,
        "".join(f"{n}:{lower[n]}\n" for n in names), ";".join(names), lower["x-amz-content-sha256"]])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (day, region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={AK}/{scope}, "
                                f"SignedHeaders={';'.join(names)}, Signature={signature}")
    return headers, key, scope, amz_date, signature


def send(server, method, path, query="", headers=None, body=b""):
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.request(method, path + ("?" + query if query else ""), body=body, headers=headers or {})
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def signed_request(server, method, path, query="", body=b"", extra=None, **kw):
    headers = {"host": f"127.0.0.1:{server.port}", **(extra or {})}
    headers, *_ = sign(method, path, query, headers, body, **kw)
    return send(server, method, path, query, headers, body)


def error_code(data):
    text = data.decode(errors="replace")
    return text.split("<Code>")[1].split("</Code>")[0] if "<Code>" in text else text


def tree_digest(top):
    """Every path below `top` with its type and, for files, the hash of its bytes."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                out.append((path, "link", os.readlink(path)))
            elif os.path.isfile(path):
                with open(path, "rb") as f:
                    out.append((path, "file", hashlib.sha256(f.read()).hexdigest()))
            else:
                out.append((path, "dir", ""))
    return sorted(out)


@pytest.fixture
def planted(tmp_path):
    """A served directory with links out of it at every level a request can name."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    (outside / "sub").mkdir(parents=True)
    (outside / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (outside / "f.txt").write_text("outside")
    (outside / "sub" / "g.txt").write_text("outside too")
    (root / "bkt").mkdir()
    (root / "bkt" / "real.txt").write_text("inside")
    os.symlink(outside, root / "etcbkt")
    os.symlink(outside, root / "bkt" / "lnkdir")
    os.symlink(outside / "passwd", root / "bkt" / "lnkfile")
    before = tree_digest(outside)
    server = Server(root, "--access-key", AK, "--secret-key", SK)
    yield server, outside
    server.stop()
    assert tree_digest(outside) == before, "something outside the served directory changed"


def refused(call):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    return e.value.response["Error"]["Code"]


def test_links_planted_in_the_directory_lead_nowhere(planted):
    server, outside = planted
    s3 = client(server)
    assert refused(lambda: s3.get_object(Bucket="etcbkt", Key="passwd")) == "AccessDenied"
    assert refused(lambda: s3.list_objects_v2(Bucket="etcbkt")) == "AccessDenied"
    assert refused(lambda: s3.put_object(Bucket="etcbkt", Key="new", Body=b"x")) == "AccessDenied"
    assert refused(lambda: s3.delete_bucket(Bucket="etcbkt")) == "AccessDenied"
    for key in ["lnkdir/f.txt", "lnkdir/sub/g.txt", "lnkfile"]:
        assert refused(lambda: s3.get_object(Bucket="bkt", Key=key)) == "AccessDenied", key
        assert refused(lambda: s3.head_object(Bucket="bkt", Key=key)) == "403", key
        assert refused(lambda: s3.delete_object(Bucket="bkt", Key=key)) == "AccessDenied", key
        assert refused(lambda: s3.copy_object(Bucket="bkt", Key="copy", CopySource={"Bucket": "bkt", "Key": key})) \
            == "AccessDenied", key
    for key in ["lnkdir/new.txt", "lnkdir/newsub/deep.txt"]:
        assert refused(lambda: s3.put_object(Bucket="bkt", Key=key, Body=b"x")) == "AccessDenied", key
        assert refused(lambda: s3.copy_object(Bucket="bkt", Key=key, CopySource={"Bucket": "bkt", "Key": "real.txt"})) \
            == "AccessDenied", key
    gone = s3.delete_objects(Bucket="bkt", Delete={"Objects": [{"Key": "lnkdir/f.txt"}, {"Key": "lnkfile"}]})
    assert sorted(e["Code"] for e in gone["Errors"]) == ["AccessDenied", "AccessDenied"]
    assert refused(lambda: s3.delete_objects(Bucket="etcbkt", Delete={"Objects": [{"Key": "f.txt"}]})) \
        == "AccessDenied"
    upload = s3.create_multipart_upload(Bucket="bkt", Key="lnkdir/mpu")["UploadId"]
    etag = s3.upload_part(Bucket="bkt", Key="lnkdir/mpu", UploadId=upload, PartNumber=1, Body=b"x")["ETag"]
    assert refused(lambda: s3.complete_multipart_upload(
        Bucket="bkt", Key="lnkdir/mpu", UploadId=upload,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})) == "AccessDenied"
    # Listings and the bucket list leave links out; what is really inside is served.
    assert [o["Key"] for o in s3.list_objects_v2(Bucket="bkt")["Contents"]] == ["real.txt"]
    assert s3.list_objects_v2(Bucket="bkt", Prefix="lnkdir/").get("Contents", []) == []
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["bkt"]
    assert s3.get_object(Bucket="bkt", Key="real.txt")["Body"].read() == b"inside"
    server.stop()
    log = server.proc.stdout.read()
    assert "refused bkt/lnkdir/f.txt: it crosses a symbolic link" in log
    assert log.count("refused bkt/lnkdir/f.txt") == 1  # logged once


def test_a_header_added_after_signing_is_refused(server):
    s3 = client(server)
    s3.create_bucket(Bucket="sig")

    def inject(request, **_):
        request.headers["x-amz-meta-injected"] = "evil"

    s3.meta.events.register("before-send.s3.PutObject", inject)
    assert refused(lambda: s3.put_object(Bucket="sig", Key="k", Body=b"x")) == "AccessDenied"
    assert refused(lambda: client(server).head_object(Bucket="sig", Key="k")) == "404"
    # The same request signed with the header is accepted and keeps it.
    status, _ = signed_request(server, "PUT", "/sig/k", body=b"x", extra={"x-amz-meta-fine": "yes"})
    assert status == 200
    assert client(server).head_object(Bucket="sig", Key="k")["Metadata"] == {"fine": "yes"}


def test_signatures_scoped_elsewhere_are_malformed(server):
    client(server).create_bucket(Bucket="scope")
    with_region = botocore.session.get_session().create_client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
        region_name="eu-west-1", config=botocore.config.Config(s3={"addressing_style": "path"},
                                                               retries={"max_attempts": 1}))
    assert refused(lambda: with_region.list_objects_v2(Bucket="scope")) == "AuthorizationHeaderMalformed"
    for kw in [{"region": "eu-west-1"}, {"service": "ec2"}]:
        status, data = signed_request(server, "GET", "/scope", **kw)
        assert (status, error_code(data)) == (400, "AuthorizationHeaderMalformed"), kw


def test_payload_hashes_are_checked_as_aws_does(server):
    client(server).create_bucket(Bucket="hash")
    status, data = signed_request(server, "PUT", "/hash/zz", body=b"abc", payload_hash="zz")
    assert (status, error_code(data)) == (400, "InvalidArgument")
    status, data = signed_request(server, "PUT", "/hash/wrong", body=b"abc",
                                  payload_hash=hashlib.sha256(b"abd").hexdigest())
    assert (status, error_code(data)) == (400, "XAmzContentSHA256Mismatch")
    status, _ = signed_request(server, "PUT", "/hash/right", body=b"abc")
    assert status == 200
    assert refused(lambda: client(server).head_object(Bucket="hash", Key="wrong")) == "404"


def test_a_header_named_signed_must_be_sent(server):
    s3 = client(server)
    s3.create_bucket(Bucket="sig")
    s3.put_object(Bucket="sig", Key="k", Body=b"x")
    # Named in SignedHeaders, absent, and left out of what was signed (as s3s leaves out a
    # header it does not find): refused, as S3 refuses it.
    headers, *_ = sign("GET", "/sig/k", "", {"host": f"127.0.0.1:{server.port}"})
    headers["Authorization"] = headers["Authorization"].replace("SignedHeaders=",
                                                                "SignedHeaders=content-type;")
    status, data = send(server, "GET", "/sig/k", "", headers)
    assert (status, error_code(data)) == (403, "AccessDenied"), data
    assert b"content-type" in data


def test_whole_bodies_that_differ_from_their_signed_hash_are_400(server):
    s3 = client(server)
    s3.create_bucket(Bucket="xml")
    s3.put_object(Bucket="xml", Key="k", Body=b"x", Tagging="a=1")
    uid = s3.create_multipart_upload(Bucket="xml", Key="m")["UploadId"]
    etag = s3.upload_part(Bucket="xml", Key="m", UploadId=uid, PartNumber=1, Body=b"p")["ETag"]
    grant = ('<AccessControlPolicy><Owner><ID>iobm</ID></Owner><AccessControlList><Grant>'
             '<Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="Group">'
             '<URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee>'
             '<Permission>%s</Permission></Grant></AccessControlList></AccessControlPolicy>')
    tags = "<Tagging><TagSet><Tag><Key>a</Key><Value>%s</Value></Tag></TagSet></Tagging>"
    delete = "<Delete><Object><Key>%s</Key></Object></Delete>"
    complete = "<CompleteMultipartUpload><Part><PartNumber>%s</PartNumber><ETag>" + etag + "</ETag></Part></CompleteMultipartUpload>"
    # Each signed for one body and sent with another.
    for method, path, query, template, signed_for, sent in [
            ("PUT", "/xml", "acl=", grant, "WRITE", "READ"),
            ("PUT", "/xml/k", "tagging=", tags, "1", "2"),
            ("POST", "/xml", "delete=", delete, "other", "k"),
            ("POST", "/xml/m", "uploadId=" + uid, complete, "2", "1")]:
        body = (template % sent).encode()
        status, data = signed_request(server, method, path, query, body=body,
                                      payload_hash=hashlib.sha256((template % signed_for).encode()).hexdigest())
        assert (status, error_code(data)) == (400, "XAmzContentSHA256Mismatch"), (path, query, status, data)
    # None of them did anything.
    assert len(s3.get_bucket_acl(Bucket="xml")["Grants"]) == 1
    assert s3.get_object_tagging(Bucket="xml", Key="k")["TagSet"] == [{"Key": "a", "Value": "1"}]
    assert s3.get_object(Bucket="xml", Key="k")["Body"].read() == b"x"
    assert refused(lambda: s3.head_object(Bucket="xml", Key="m")) == "404"


def test_an_acl_body_over_s3s_limit_is_refused_from_its_length(server):
    client(server).create_bucket(Bucket="xml")
    # 6 MB: refused before it is sent, as S3 answers (the client waits for 100 Continue, and
    # sends the body only if it comes).
    huge = b"<AccessControlPolicy>" + b" " * (6 << 20) + b"</AccessControlPolicy>"
    headers = {"host": f"127.0.0.1:{server.port}", "content-length": str(len(huge)), "expect": "100-continue"}
    headers, *_ = sign("PUT", "/xml", "acl=", headers, huge)
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(("PUT /xml?acl= HTTP/1.1\r\n"
                      + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n").encode())
        reply = sock.recv(65536)
        if reply.startswith(b"HTTP/1.1 100"):
            sock.sendall(huge)
            reply = reply.split(b"\r\n\r\n", 1)[1] or sock.recv(65536)
    status = int(reply.split()[1])
    assert (status, error_code(reply)) == (400, "MaxMessageLengthExceeded"), reply


def chunked_body(data, key, scope, amz_date, seed, corrupt, final=True):
    """An aws-chunked body of one data chunk and (unless not `final`) the final empty one, each
    signed."""
    out, previous = b"", seed
    for chunk in (data, b"") if final else (data,):
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous,
                             hashlib.sha256(b"").hexdigest(), hashlib.sha256(chunk).hexdigest()])
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        if corrupt and chunk:
            signature = "0" * 64
        out += f"{len(chunk):x};chunk-signature={signature}\r\n".encode() + chunk + b"\r\n"
        previous = signature
    return out


@pytest.mark.parametrize("corrupt", [False, True])
def test_chunk_signatures_are_checked(server, corrupt):
    client(server).create_bucket(Bucket="chunks")
    data = os.urandom(10_000)
    headers = {"host": f"127.0.0.1:{server.port}", "content-encoding": "aws-chunked",
               "x-amz-decoded-content-length": str(len(data))}
    # The body's length is known before signing: sign with a placeholder of the same size.
    probe = chunked_body(data, b"k" * 32, "s", "d", "0" * 64, False)
    headers["content-length"] = str(len(probe))
    headers, key, scope, amz_date, seed = sign("PUT", "/chunks/k", "", headers,
                                               payload_hash="STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    body = chunked_body(data, key, scope, amz_date, seed, corrupt)
    assert len(body) == len(probe)
    status, reply = send(server, "PUT", "/chunks/k", "", headers, body)
    if corrupt:
        assert (status, error_code(reply)) == (403, "SignatureDoesNotMatch")
        assert refused(lambda: client(server).head_object(Bucket="chunks", Key="k")) == "404"
    else:
        assert status == 200, reply
        assert client(server).get_object(Bucket="chunks", Key="k")["Body"].read() == data


def test_an_aws_chunked_body_without_its_final_chunk_is_refused(server):
    # Every data chunk is signed, but the signed final chunk that closes the chain is missing:
    # the body may have been cut, so it is not stored.
    client(server).create_bucket(Bucket="cut")
    data = os.urandom(10_000)
    headers = {"host": f"127.0.0.1:{server.port}", "content-encoding": "aws-chunked",
               "x-amz-decoded-content-length": str(len(data))}
    probe = chunked_body(data, b"k" * 32, "s", "d", "0" * 64, False, final=False)
    headers["content-length"] = str(len(probe))
    headers, key, scope, amz_date, seed = sign("PUT", "/cut/k", "", headers,
                                               payload_hash="STREAMING-AWS4-HMAC-SHA256-PAYLOAD")
    body = chunked_body(data, key, scope, amz_date, seed, False, final=False)
    status, reply = send(server, "PUT", "/cut/k", "", headers, body)
    assert status == 400, reply
    assert error_code(reply) == "IncompleteBody"
    assert refused(lambda: client(server).head_object(Bucket="cut", Key="k")) == "404"


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_presigned_urls_live_at_most_seven_days(server, version):
    s3 = client(server)
    s3.create_bucket(Bucket="pre")
    s3.put_object(Bucket="pre", Key="k", Body=b"v")
    signer = boto3.client(
        "s3", endpoint_url=server.endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
        region_name=REGION, config=Config(signature_version=version, s3={"addressing_style": "path"}))
    for days, want in [(7, 200), (115, 400)]:
        url = signer.generate_presigned_url("get_object", Params={"Bucket": "pre", "Key": "k"},
                                            ExpiresIn=days * 86400 - 60)
        assert ("X-Amz-Expires" in url) == (version == "s3v4")
        status, data = send(server, "GET", url.split(str(server.port), 1)[1])
        assert status == want, (days, data)
        if want == 400:
            assert error_code(data) == "AuthorizationQueryParametersError"


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_descriptor_exhaustion_and_half_sent_requests_do_not_stall_the_gateway(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    port = free_port()

    proc = subprocess.Popen([IOBM, "serve", str(root), "--anonymous", "--listen", f"127.0.0.1:{port}",
                             "--header-timeout", "2s"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    slow = []
    try:
        wait_for_port(port, proc)
        # Lowered once it runs: its connection cap, sized for the limit at its start, no longer
        # fits, so that its descriptors do run out.
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (64, 64))
        for _ in range(100):
            s = socket.create_connection(("127.0.0.1", port), timeout=5)
            s.sendall(b"GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # half a request, never finished
            slow.append(s)
        time.sleep(0.5)
        cpu_before = cpu_seconds(proc.pid)
        time.sleep(1.5)
        assert cpu_seconds(proc.pid) - cpu_before < 0.5, "the accept loop spins"
        # A normal client is served once the slow ones time out (2 s each, plus the backlog);
        # the socket's 30 s timeout is the deadline that fails.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("PUT", "/after")
        assert conn.getresponse().status == 200
    finally:
        for s in slow:
            s.close()
        proc.terminate()
        said, _ = proc.communicate(timeout=10)
    # The descriptors did run out (else this test proves nothing), and the gateway said so.
    assert "cannot accept connections" in said and "pausing accepts" in said, said


def test_a_body_that_stops_arriving_times_out(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--anonymous", "--body-timeout", "1s")
    try:
        send(s, "PUT", "/slow")
        conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=30)
        conn.putrequest("PUT", "/slow/k")
        conn.putheader("Content-Length", "1000")
        conn.endheaders()
        conn.send(b"x" * 10)  # and nothing more
        # The gateway's RequestTimeout, not the client's 30 s timeout, ends the wait.
        response = conn.getresponse()
        assert response.status == 400 and error_code(response.read()) == "RequestTimeout"
        assert os.listdir(root / "slow") == []
    finally:
        s.stop()


def stamped(writer, n, size=64 * 1024):
    stamp = f"writer {writer:03d} version {n:06d};".encode()
    return (stamp * (size // len(stamp) + 1))[:size]


def test_racing_writers_readers_and_deletes_stay_consistent(server):
    s3 = client(server)
    s3.create_bucket(Bucket="race")
    s3.put_object(Bucket="race", Key="k", Body=stamped(0, 0))
    problems, errors, stop = [], [], threading.Event()

    def writer(w):
        c = client(server)
        for n in range(15):
            c.put_object(Bucket="race", Key="k", Body=stamped(w, n))

    def reader():
        c = client(server)
        for _ in range(10):
            got = c.get_object(Bucket="race", Key="k")
            body = got["Body"].read()
            stamp = body[:body.index(b";") + 1]
            whole = body == (stamp * (len(body) // len(stamp) + 1))[:len(body)]
            if not whole or got["ETag"] != '"%s"' % hashlib.md5(body).hexdigest():
                problems.append((len(body), got["ETag"]))

    def sibling_churn(n):
        # A PUT racing the delete of its only sibling, which prunes their shared directory.
        c = client(server)
        while not stop.is_set():
            try:
                c.put_object(Bucket="race", Key=f"dir{n}/a", Body=b"a")
                c.delete_object(Bucket="race", Key=f"dir{n}/a")
            except botocore.exceptions.ClientError as e:
                errors.append(e.response["Error"]["Code"])

    def sibling_put(n):
        c = client(server)
        for i in range(40):
            try:
                c.put_object(Bucket="race", Key=f"dir{n}/b{i}", Body=b"b")
                c.delete_object(Bucket="race", Key=f"dir{n}/b{i}")
            except botocore.exceptions.ClientError as e:
                errors.append(e.response["Error"]["Code"])

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(1, 51)]
    threads += [threading.Thread(target=reader) for _ in range(50)]
    churn = [threading.Thread(target=sibling_churn, args=(n,)) for n in range(4)]
    threads += [threading.Thread(target=sibling_put, args=(n,)) for n in range(4)]
    for t in threads + churn:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in churn:
        t.join()
    assert problems == []
    assert errors == []


def test_concurrent_completes_of_one_upload_join_the_parts_once(server):
    s3 = client(server)
    s3.create_bucket(Bucket="mpu")
    uid = s3.create_multipart_upload(Bucket="mpu", Key="big")["UploadId"]
    part = os.urandom(5 * 1024 * 1024)
    etag = s3.upload_part(Bucket="mpu", Key="big", UploadId=uid, PartNumber=1, Body=part)["ETag"]
    results, barrier = [], threading.Barrier(8)

    def complete():
        c = client(server)
        barrier.wait()
        try:
            done = c.complete_multipart_upload(
                Bucket="mpu", Key="big", UploadId=uid,
                MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
            results.append(done["ETag"])
        except botocore.exceptions.ClientError as e:
            results.append(e.response["Error"]["Code"])

    threads = [threading.Thread(target=complete) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # One completion joins the parts; one arriving while it does finds no upload, one after
    # it gets the same answer (as a retried completion does).
    answers = set(results) - {"NoSuchUpload"}
    assert len(results) == 8 and len(answers) == 1, results
    assert answers.pop().endswith('-1"')
    assert s3.get_object(Bucket="mpu", Key="big")["Body"].read() == part
    assert os.listdir(os.path.join(server.root, ".iobm-gateway", "uploads")) == []


def test_requests_past_s3s_limits(server):
    s3 = client(server)
    s3.create_bucket(Bucket="lim")
    many = [{"Key": f"k{i}"} for i in range(1001)]
    assert refused(lambda: s3.delete_objects(Bucket="lim", Delete={"Objects": many})) == "MalformedXML"
    # A 10 MB body is refused from its length, before it is sent (the client waits for 100).
    huge = b"<Delete>" + b"<Object><Key>kkkkkkkkkkkkkkkkkkkkkkkkk</Key></Object>" * 200_000 + b"</Delete>"
    headers = {"host": f"127.0.0.1:{server.port}", "content-length": str(len(huge)), "expect": "100-continue"}
    headers, *_ = sign("POST", "/lim", "delete=", headers, huge)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    conn.putrequest("POST", "/lim?delete=", skip_host=True, skip_accept_encoding=True)
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.endheaders()
    response = conn.getresponse()
    assert (response.status, error_code(response.read())) == (400, "MalformedXML")
    ids = sorted(s3.create_multipart_upload(Bucket="lim", Key=f"u{i % 3}")["UploadId"] for i in range(5))
    seen, kw = [], {}
    while True:
        page = s3.list_multipart_uploads(Bucket="lim", MaxUploads=2, **kw)
        assert len(page.get("Uploads", [])) <= 2
        seen += [u["UploadId"] for u in page.get("Uploads", [])]
        if not page["IsTruncated"]:
            break
        kw = {"KeyMarker": page["NextKeyMarker"], "UploadIdMarker": page["NextUploadIdMarker"]}
    assert sorted(seen) == ids


def test_ranges_follow_rfc_9110(server):
    s3 = client(server)
    s3.create_bucket(Bucket="rng")
    body = bytes(range(100))
    s3.put_object(Bucket="rng", Key="k", Body=body)
    for invalid in ["bytes=5-2", "bytes=0-99999999999999999999", "bytes=0-1,3-4", "lines=1-2"]:
        got = s3.get_object(Bucket="rng", Key="k", Range=invalid)
        assert got["ResponseMetadata"]["HTTPStatusCode"] == 200, invalid
        assert got["Body"].read() == body, invalid
        assert "ContentRange" not in got, invalid
    assert refused(lambda: s3.get_object(Bucket="rng", Key="k", Range="bytes=100-")) == "InvalidRange"
    got = s3.get_object(Bucket="rng", Key="k", Range="bytes=90-")
    assert got["Body"].read() == body[90:] and got["ContentRange"] == "bytes 90-99/100"


def test_abandoned_uploads_are_removed(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--access-key", AK, "--secret-key", SK, "--abort-incomplete-after", "1s")
    try:
        s3 = client(s)
        s3.create_bucket(Bucket="old")
        s3.create_multipart_upload(Bucket="old", Key="abandoned")
        deadline = time.time() + 15
        while s3.list_multipart_uploads(Bucket="old").get("Uploads"):
            assert time.time() < deadline, "the abandoned upload was kept"
            time.sleep(0.2)
    finally:
        s.stop()


def test_a_full_file_system_is_answered_as_storage_full(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    root = tmpfs(tmp_path / "small", "size=2m")
    try:
        s = Server(root, "--access-key", AK, "--secret-key", SK)
        try:
            s3 = client(s)
            s3.create_bucket(Bucket="full")
            with pytest.raises(botocore.exceptions.ClientError) as e:
                s3.put_object(Bucket="full", Key="big", Body=os.urandom(4 * 1024 * 1024))
            assert e.value.response["Error"]["Code"] == "XMinioStorageFull"
            assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 507
            s3.put_object(Bucket="full", Key="small", Body=b"still works")
        finally:
            s.stop()
    finally:
        subprocess.run(["umount", str(root)], check=True)


def test_https_with_a_certificate_of_ones_own(tmp_path):
    # A certificate authority of the test's own, and the gateway's certificate signed by it.
    ca, ca_key = tmp_path / "ca.pem", tmp_path / "ca-key.pem"
    cert, key, csr = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "cert.csr"
    openssl = lambda *args: subprocess.run(["openssl", *args], check=True, capture_output=True)
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=iobm test CA",
            "-keyout", str(ca_key), "-out", str(ca))
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", str(key), "-out", str(csr))
    ext = tmp_path / "ext.cnf"
    ext.write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n")
    openssl("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
            "-days", "2", "-extfile", str(ext), "-out", str(cert))
    root = tmp_path / "root"
    root.mkdir()
    s = Server(root, "--access-key", AK, "--secret-key", SK, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        endpoint = f"https://127.0.0.1:{s.port}"
        s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=AK, aws_secret_access_key=SK,
                          region_name=REGION, verify=str(ca),
                          config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
        s3.create_bucket(Bucket="tls")
        s3.put_object(Bucket="tls", Key="k", Body=b"over TLS")
        assert s3.get_object(Bucket="tls", Key="k")["Body"].read() == b"over TLS"
        # iobm's own client trusts it through AWS_CA_BUNDLE.
        env = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK, AWS_CA_BUNDLE=str(ca))
        run = subprocess.run([IOBM, "s3", "put", "--endpoint", endpoint, "--bucket", "tls", "--objects", "20",
                              "--obj-size", "64KiB", "--concurrent", "2", "--ops", "20"],
                             env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        # Plain HTTP to the TLS port gets no S3 answer.
        with pytest.raises((ConnectionError, http.client.HTTPException, OSError)):
            send(s, "GET", "/tls/k")
    finally:
        s.stop()
    assert "S3 on https://" in s.proc.stdout.read()


def test_the_gateway_says_when_it_serves_plain_http_beyond_loopback_or_runs_as_root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    port = free_port()
    proc = subprocess.Popen([IOBM, "serve", str(root), "--anonymous", "--listen", f"0.0.0.0:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_for_port(port, proc)
    finally:
        proc.terminate()
        out = proc.communicate(timeout=10)[0]
    assert "plain HTTP" in out and "readable on the network" in out, out
    assert ("running as root" in out) == (os.geteuid() == 0), out
