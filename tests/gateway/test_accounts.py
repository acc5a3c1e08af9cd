"""Accounts (`iobm serve --users FILE`) and canned ACLs, with boto3 as two accounts and as an
unsigned client, and the aws CLI."""

import os
import select
import signal
import subprocess
import sys
import time

import boto3
import botocore
import pytest
from botocore import UNSIGNED
from botocore.config import Config

from gateway_helpers import as_account, code, unsigned, Server

ALICE = ("AKALICE", "alice-secret-key-0123456789")
BOB = ("AKBOB", "bob-secret-key-0123456789")
CAROL = ("AKCAROL", "carol-secret-key-0123456789")








def write_users(path, *accounts):
    path.write_text("# test accounts\n" + "".join(f"{ak} {sk} {name}\n" for name, (ak, sk) in accounts))


@pytest.fixture
def shared(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    users = tmp_path / "users"
    write_users(users, ("alice", ALICE), ("bob", BOB))
    server = Server(root, "--users", str(users))
    yield server, users
    server.stop()


def test_accounts_own_their_buckets_and_are_kept_apart(shared):
    server, _ = shared
    alice, bob = as_account(server, ALICE), as_account(server, BOB)
    alice.create_bucket(Bucket="alices")
    alice.put_object(Bucket="alices", Key="diary", Body=b"dear diary")
    assert code(alice.create_bucket, Bucket="alices") == "BucketAlreadyOwnedByYou"
    assert code(bob.create_bucket, Bucket="alices") == "BucketAlreadyExists"
    # Bob can neither list, read, write nor delete in Alice's bucket, nor see it.
    assert code(bob.list_objects_v2, Bucket="alices") == "AccessDenied"
    assert code(bob.get_object, Bucket="alices", Key="diary") == "AccessDenied"
    assert code(bob.head_object, Bucket="alices", Key="diary") == "403"
    assert code(bob.put_object, Bucket="alices", Key="graffiti", Body=b"x") == "AccessDenied"
    assert code(bob.delete_object, Bucket="alices", Key="diary") == "AccessDenied"
    assert code(bob.delete_bucket, Bucket="alices") == "AccessDenied"
    assert code(bob.get_bucket_acl, Bucket="alices") == "AccessDenied"
    assert code(bob.put_bucket_acl, Bucket="alices", ACL="public-read-write") == "AccessDenied"
    assert code(bob.copy_object, Bucket="alices", Key="copy",
                CopySource={"Bucket": "alices", "Key": "diary"}) == "AccessDenied"
    bob.create_bucket(Bucket="bobs")
    assert code(bob.copy_object, Bucket="bobs", Key="stolen",
                CopySource={"Bucket": "alices", "Key": "diary"}) == "AccessDenied"
    assert [b["Name"] for b in bob.list_buckets()["Buckets"]] == ["bobs"]
    assert [b["Name"] for b in alice.list_buckets()["Buckets"]] == ["alices"]
    # Unsigned requests get nothing of a private bucket.
    anon = unsigned(server)
    assert code(anon.list_objects_v2, Bucket="alices") == "AccessDenied"
    assert code(anon.get_object, Bucket="alices", Key="diary") == "AccessDenied"
    assert code(anon.list_buckets) == "AccessDenied"
    assert alice.get_object(Bucket="alices", Key="diary")["Body"].read() == b"dear diary"
    acl = alice.get_bucket_acl(Bucket="alices")
    assert acl["Owner"]["DisplayName"] == "alice"
    assert [(g["Grantee"].get("DisplayName"), g["Permission"]) for g in acl["Grants"]] == \
        [("alice", "FULL_CONTROL")]


def test_canned_acls_grant_exactly_what_they_say(shared):
    server, _ = shared
    alice, bob, anon = as_account(server, ALICE), as_account(server, BOB), unsigned(server)
    alice.create_bucket(Bucket="open", ACL="public-read")
    alice.put_object(Bucket="open", Key="private-doc", Body=b"p")
    alice.put_object(Bucket="open", Key="public-doc", Body=b"q", ACL="public-read")
    alice.put_object(Bucket="open", Key="members-doc", Body=b"m", ACL="authenticated-read")
    # A public-read bucket lists to all; each object reads as its own ACL says.
    assert [o["Key"] for o in anon.list_objects_v2(Bucket="open")["Contents"]] == \
        ["members-doc", "private-doc", "public-doc"]
    assert anon.get_object(Bucket="open", Key="public-doc")["Body"].read() == b"q"
    assert code(anon.get_object, Bucket="open", Key="private-doc") == "AccessDenied"
    assert code(bob.get_object, Bucket="open", Key="private-doc") == "AccessDenied"
    assert code(anon.get_object, Bucket="open", Key="members-doc") == "AccessDenied"
    assert bob.get_object(Bucket="open", Key="members-doc")["Body"].read() == b"m"
    assert code(anon.put_object, Bucket="open", Key="x", Body=b"x") == "AccessDenied"
    assert code(bob.put_object, Bucket="open", Key="x", Body=b"x") == "AccessDenied"
    # A missing key says NoSuchKey to those who may list, AccessDenied to others.
    assert code(anon.get_object, Bucket="open", Key="missing") == "NoSuchKey"
    # PutObjectAcl opens one object; the grants read back.
    alice.put_object_acl(Bucket="open", Key="private-doc", ACL="public-read")
    assert anon.get_object(Bucket="open", Key="private-doc")["Body"].read() == b"p"
    grants = alice.get_object_acl(Bucket="open", Key="private-doc")["Grants"]
    assert {(g["Grantee"].get("URI", g["Grantee"].get("DisplayName")), g["Permission"]) for g in grants} == \
        {("alice", "FULL_CONTROL"), ("http://acs.amazonaws.com/groups/global/AllUsers", "READ")}
    # public-read-write: anyone writes and deletes; what Bob writes is his.
    alice.create_bucket(Bucket="dropbox")
    alice.put_bucket_acl(Bucket="dropbox", ACL="public-read-write")
    anon.put_object(Bucket="dropbox", Key="from-anyone", Body=b"a")
    bob.put_object(Bucket="dropbox", Key="from-bob", Body=b"b")
    assert code(anon.get_object, Bucket="dropbox", Key="from-bob") == "AccessDenied"
    assert bob.get_object(Bucket="dropbox", Key="from-bob")["Body"].read() == b"b"
    assert bob.get_object_acl(Bucket="dropbox", Key="from-bob")["Owner"]["DisplayName"] == "bob"
    assert alice.get_object(Bucket="dropbox", Key="from-bob")["Body"].read() == b"b"
    owners = {o["Key"]: o["Owner"]["DisplayName"]
              for o in alice.list_objects_v2(Bucket="dropbox", FetchOwner=True)["Contents"]}
    assert owners == {"from-anyone": "iobm", "from-bob": "bob"}
    anon.delete_object(Bucket="dropbox", Key="from-anyone")
    # authenticated-read on a bucket: accounts list it, unsigned requests do not.
    alice.create_bucket(Bucket="members", ACL="authenticated-read")
    assert bob.list_objects_v2(Bucket="members")["KeyCount"] == 0
    assert code(anon.list_objects_v2, Bucket="members") == "AccessDenied"
    # Only canned ACLs are kept.
    assert code(alice.put_bucket_acl, Bucket="members", ACL="log-delivery-write") == "InvalidArgument"


def said_within(proc, text, seconds):
    """What `proc` wrote on its output until a line holding `text`, read from the descriptor
    (its text buffer stays empty for a later read); fails after `seconds` without it."""
    seen = b""
    deadline = time.monotonic() + seconds
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"not said within {seconds} s: {text!r}; said: {seen.decode()!r}"
        ready, _, _ = select.select([proc.stdout.fileno()], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 65536)
            assert chunk, f"output closed before {text!r}: {seen.decode()!r}"
            seen += chunk
    # The rest of that line.
    while not seen.endswith(b"\n"):
        seen += os.read(proc.stdout.fileno(), 1)
    return seen.decode()


def test_the_users_file_is_read_again_on_sighup_and_secrets_stay_out_of_logs(shared):
    server, users = shared
    carol = as_account(server, CAROL)
    assert code(carol.list_buckets) == "InvalidAccessKeyId"
    write_users(users, ("alice", ALICE), ("carol", CAROL))
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.time() + 10
    while code(carol.list_buckets) != "ok" and time.time() < deadline:
        time.sleep(0.1)
    assert code(carol.list_buckets) == "ok"
    assert code(as_account(server, BOB).list_buckets) == "InvalidAccessKeyId"
    # A broken file leaves the accounts as they were, once the gateway has said it read it.
    users.write_text("AKX only-two-fields\n")
    server.proc.send_signal(signal.SIGHUP)
    said = said_within(server.proc, "the accounts stay as they were", 30)
    assert code(carol.list_buckets) == "ok"
    server.stop()
    output = said + server.proc.stdout.read()
    assert "SIGHUP: 2 accounts read" in output and "line 1" in output
    for _, secret in (ALICE, BOB, CAROL):
        assert secret not in output


def test_a_bad_users_file_is_refused_up_front(tmp_path):
    users = tmp_path / "users"
    users.write_text("AK1 secret alice\nAK2 secret2 alice\n")
    out = subprocess.run([os.environ.get("IOBM_BIN", "target/debug/iobm"), "serve", str(tmp_path),
                          "--users", str(users), "--listen", "127.0.0.1:0"],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2, out
    assert "line 2" in out.stderr and "alice" in out.stderr
    assert "secret" not in out.stderr.replace("SECRET_KEY", "")


def test_aws_cli_as_two_accounts(shared, tmp_path):
    server, _ = shared

    def aws(keys, *args, check=True):
        env = dict(os.environ, AWS_ACCESS_KEY_ID=keys[0], AWS_SECRET_ACCESS_KEY=keys[1],
                   AWS_DEFAULT_REGION="us-east-1")
        env.pop("AWS_CA_BUNDLE", None)
        out = subprocess.run([sys.executable, "-m", "awscli", "--endpoint-url", server.endpoint, *args],
                             env=env, capture_output=True, text=True, timeout=120)
        assert (out.returncode == 0) == check, out.stderr
        return out.stdout + out.stderr

    aws(ALICE, "s3", "mb", "s3://cli-alice")
    (tmp_path / "f").write_bytes(b"cli")
    aws(ALICE, "s3", "cp", str(tmp_path / "f"), "s3://cli-alice/f", "--acl", "public-read")
    assert "AccessDenied" in aws(BOB, "s3", "ls", "s3://cli-alice/", check=False)
    assert "AccessDenied" in aws(BOB, "s3", "cp", str(tmp_path / "f"), "s3://cli-alice/g", check=False)
    aws(BOB, "s3", "cp", "s3://cli-alice/f", str(tmp_path / "g"))
    assert (tmp_path / "g").read_bytes() == b"cli"
