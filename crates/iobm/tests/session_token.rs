//! Temporary credentials: a session token from a real STS (moto's, with its authentication on)
//! is sent and signed as `x-amz-security-token`, from `AWS_SESSION_TOKEN` or `--session-token`;
//! the server refuses the same key without it or with another token.

mod common;

use common::{free_port, load, u, wait_for, Server};
use std::process::{Command, Stdio};

/// moto_server with its IAM authentication on after the first three requests (the role, its
/// policy and the AssumeRole that makes the temporary credentials), and those credentials:
/// (access key, secret, session token).
fn moto_with_sts() -> (Server, [String; 3]) {
    let port = free_port();
    let mut child = Command::new("moto_server")
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .env("INITIAL_NO_AUTH_ACTION_COUNT", "3")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("moto_server is not installed (scripts/test installs it)");
    wait_for(port, &mut child);
    let url = format!("http://127.0.0.1:{port}");
    let script = r#"
import boto3, json, sys
kw = dict(endpoint_url=sys.argv[1], region_name="us-east-1",
          aws_access_key_id="AKIDSETUP", aws_secret_access_key="setup")
iam, sts = boto3.client("iam", **kw), boto3.client("sts", **kw)
trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow",
         "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
role = iam.create_role(RoleName="bench", AssumeRolePolicyDocument=json.dumps(trust))
s3 = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*",
      "Resource": "*"}]}
iam.put_role_policy(RoleName="bench", PolicyName="s3", PolicyDocument=json.dumps(s3))
c = sts.assume_role(RoleArn=role["Role"]["Arn"], RoleSessionName="iobm")["Credentials"]
print(c["AccessKeyId"], c["SecretAccessKey"], c["SessionToken"])
"#;
    let out = Command::new("python3")
        .args(["-c", script, &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let words: Vec<String> = text.split_whitespace().map(String::from).collect();
    assert_eq!(words.len(), 3, "{text}");
    (
        Server { child, url },
        [words[0].clone(), words[1].clone(), words[2].clone()],
    )
}

/// `iobm s3 put` of 8 objects against `url` with `key`, `secret` and `token` (None: no
/// AWS_SESSION_TOKEN); the output. The data set is kept: moto refuses the clean-up's listing
/// of a prefix with a '/' whoever signs it (botocore's too), so the run lists nothing.
fn put(
    url: &str,
    [key, secret]: [&str; 2],
    token: Option<&str>,
    json: &std::path::Path,
) -> std::process::Output {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("iobm"));
    cmd.args([
        "s3",
        "put",
        "--endpoint",
        url,
        "--ops",
        "8",
        "--obj-size",
        "16KiB",
    ])
    .args(["-c", "2", "--bucket", "temporary", "--keep", "--json"])
    .arg(json)
    .env("AWS_ACCESS_KEY_ID", key)
    .env("AWS_SECRET_ACCESS_KEY", secret)
    .env_remove("AWS_ENDPOINT_URL")
    .env_remove("AWS_SESSION_TOKEN");
    if let Some(token) = token {
        cmd.env("AWS_SESSION_TOKEN", token);
    }
    cmd.output().unwrap()
}

#[test]
fn temporary_credentials_sign_with_their_session_token() {
    let (server, [key, secret, token]) = moto_with_sts();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let pair = [key.as_str(), secret.as_str()];
    let out = put(&server.url, pair, Some(&token), &json);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result = load(&json);
    assert_eq!(result["status"], "complete");
    let phase = &result["phases"][0];
    assert_eq!(u(&phase["operations"][0]["ops"]), 8);
    assert_eq!(phase["errors"], serde_json::json!([]));
    // The token is a secret: not in the result.
    assert!(!std::fs::read_to_string(&json).unwrap().contains(&token));

    // The same key without its token, or with another: refused, and said in one line.
    for (given, code) in [
        (None, "InvalidAccessKeyId"),
        (Some(format!("{token}x")), "InvalidToken"),
    ] {
        let out = put(
            &server.url,
            pair,
            given.as_deref(),
            &dir.path().join("bad.json"),
        );
        assert_eq!(out.status.code(), Some(1), "{given:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(code), "{given:?}: {err}");
    }
}
