//! The one HTTP client of iobm's evidence: a plain `GET` of a URL (`--server-metrics`,
//! node_exporter, a gateway's `/metrics`), answered in full or an error in a few words. The
//! S3 data path has its own client (`iobm-s3`).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// How long a metrics endpoint may take to connect and to answer.
pub const METRICS_TIMEOUT: Duration = Duration::from_secs(10);

/// The `http://host:port/path` of a URL: the scheme http:// if none,
/// /metrics if no path. Err for https:// and what is not a URL.
pub fn split_url(url: &str) -> Result<(String, String), String> {
    let rest = match url.split_once("://") {
        Some(("http", rest)) => rest,
        Some((scheme, _)) => {
            return Err(format!(
                "{scheme}:// is not read: only http:// (node_exporter's default)"
            ))
        }
        None => url,
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/metrics"),
    };
    if authority.is_empty() || authority.contains(char::is_whitespace) {
        return Err("not a URL (http://HOST:PORT/metrics)".into());
    }
    let has_port = if authority.starts_with('[') {
        authority.contains("]:")
    } else {
        authority.contains(':')
    };
    let authority = if has_port {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Ok((authority, path.to_string()))
}

/// The body of `GET url` (HTTP/1.0, so the answer ends with the connection), within `timeout`
/// for the connection and for each read; Err says why in a few words.
pub fn get(url: &str, timeout: Duration) -> Result<String, String> {
    let (authority, path) = split_url(url)?;
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} resolves to no address"))?;
    let mut conn = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    conn.set_read_timeout(Some(timeout)).ok();
    conn.set_write_timeout(Some(timeout)).ok();
    let host = authority.trim_end_matches(":80");
    // One write: a server may answer and close after the first segment it reads.
    let request = format!(
        "GET {path} HTTP/1.0\r\nHost: {host}\r\nAccept: text/plain\r\nUser-Agent: iobm\r\n\r\n"
    );
    conn.write_all(request.as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    // node_exporter's answer is some 100 KB; a limit keeps a wrong URL from filling memory.
    conn.take(64 << 20)
        .read_to_end(&mut raw)
        .map_err(|e| e.to_string())?;
    let head_end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no HTTP answer")?;
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let status = head.lines().next().unwrap_or("");
    let code = status.split_whitespace().nth(1).unwrap_or("");
    if code != "200" {
        let status = iobm_results::env::printable(status.trim());
        return Err(format!("answered '{status}', not 200"));
    }
    let mut body = raw[head_end + 4..].to_vec();
    let header = |name: &str| {
        head.lines().find_map(|l| {
            let (n, v) = l.split_once(':')?;
            n.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        body = dechunk(&body).ok_or("a malformed chunked answer")?;
    } else if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if body.len() < len {
            return Err(format!(
                "the answer ended after {} of {len} bytes",
                body.len()
            ));
        }
        body.truncate(len);
    }
    String::from_utf8(body).map_err(|_| "the answer is not text".to_string())
}

fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let line_end = data.windows(2).position(|w| w == b"\r\n")?;
        let size = std::str::from_utf8(&data[..line_end]).ok()?;
        let size = usize::from_str_radix(size.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(data.get(..size)?);
        data = data.get(size + 2..)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server on loopback that answers one request with `answer`.
    fn answering(answer: &'static [u8]) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            c.write_all(answer).unwrap();
        });
        format!("http://{at}/metrics")
    }

    #[test]
    fn an_answer_is_read_whole_plain_sized_or_chunked() {
        let plain =
            answering(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nnode_load1 0.5\n");
        assert_eq!(get(&plain, METRICS_TIMEOUT).unwrap(), "node_load1 0.5\n");
        let sized = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcdeXX");
        assert_eq!(get(&sized, METRICS_TIMEOUT).unwrap(), "abcde");
        let chunked =
            answering(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n");
        assert_eq!(get(&chunked, METRICS_TIMEOUT).unwrap(), "abcde");
        let short = answering(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nabc");
        assert!(get(&short, METRICS_TIMEOUT)
            .unwrap_err()
            .contains("3 of 50"));
        let missing = answering(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(
            get(&missing, METRICS_TIMEOUT).unwrap_err(),
            "answered 'HTTP/1.1 404 Not Found', not 200"
        );
    }

    #[test]
    fn an_endpoint_that_is_not_there_says_why() {
        // A port just freed: nothing listens there.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = get(&format!("http://127.0.0.1:{port}"), METRICS_TIMEOUT).unwrap_err();
        assert!(e.contains("refused"), "{e}");
        assert!(get("https://srv:9100/metrics", METRICS_TIMEOUT)
            .unwrap_err()
            .contains("only http://"));
    }

    #[test]
    fn split_urls_get_a_scheme_port_and_path() {
        let url = |u| split_url(u).unwrap();
        assert_eq!(url("srv:9100"), ("srv:9100".into(), "/metrics".into()));
        assert_eq!(
            url("http://srv:9100/m?x=1"),
            ("srv:9100".into(), "/m?x=1".into())
        );
        assert_eq!(
            url("http://srv/metrics"),
            ("srv:80".into(), "/metrics".into())
        );
        assert_eq!(
            url("http://[::1]:9100"),
            ("[::1]:9100".into(), "/metrics".into())
        );
        assert_eq!(url("http://[::1]"), ("[::1]:80".into(), "/metrics".into()));
        assert!(split_url("http:///metrics").is_err());
    }
}
