//! Unit tests of the HTTP/1.1 connection against one-shot local servers: bodies, hang-ups, retries
//! and timeouts.

use super::*;
use std::net::TcpListener;
use std::thread;

/// A one-shot server that reads one request head and answers `answer`.
fn serve(answers: Vec<&'static [u8]>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        for answer in answers {
            let mut got = Vec::new();
            let mut b = [0u8; 4096];
            while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = s.read(&mut b).unwrap();
                got.extend_from_slice(&b[..n]);
            }
            s.write_all(answer).unwrap();
        }
    });
    addr
}

fn get(conn: &mut Connection) -> io::Result<(Head, Vec<u8>)> {
    let head = conn.send(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", &mut |_| Ok(()), false)?;
    let body = conn.body_bytes(&head)?;
    Ok((head, body))
}

#[test]
fn reads_length_chunked_and_close_delimited_bodies_on_one_connection() {
    let addr = serve(vec![
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: \"e\"\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        b"HTTP/1.0 503 Slow\r\n\r\nbusy",
    ]);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    let (head, body) = get(&mut conn).unwrap();
    assert_eq!(
        (head.status, conn.etag(), &body[..]),
        (200, "\"e\"", &b"hello"[..])
    );
    let (head, body) = get(&mut conn).unwrap();
    assert_eq!((head.status, &body[..]), (200, &b"abcde"[..]));
    let (head, body) = get(&mut conn).unwrap();
    assert_eq!(
        (head.status, head.close, &body[..]),
        (503, true, &b"busy"[..])
    );
    assert!(conn.stream.is_none(), "closed after a close-delimited body");
}

#[test]
fn a_server_that_hangs_up_is_an_error_not_a_hang() {
    let addr = serve(vec![b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"]);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    let err = get(&mut conn).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionAborted);
    let refused = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let err = get(&mut Connection::new(refused, Duration::from_secs(5), None)).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn a_slow_down_answer_is_an_error_named_by_its_s3_code() {
    let body =
        "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>";
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let addr = serve(vec![Box::leak(answer.into_bytes().into_boxed_slice())]);
    let config = crate::S3Config {
        endpoints: vec![crate::Endpoint::parse(&format!("http://{addr}")).unwrap()],
        bucket: "b".into(),
        prefix: "p/".into(),
        credentials: None,
        region: "us-east-1".into(),
        payload: crate::PayloadSigning::Unsigned,
        checksum: None,
        timeout: Duration::from_secs(5),
        new_connection_per_request: false,
        versions: false,
        first_worker: 0,
        tls: None,
    };
    let target = crate::S3Target::new(config);
    let mut session = iobm_target::Target::objects(&target, 0).unwrap();
    let err = session.get("x", None, &mut |_| {}).unwrap_err();
    assert_eq!(iobm_target::error_kind(&err), "HTTP 503 SlowDown");
    assert!(
        err.to_string().contains("reduce your request rate"),
        "{err}"
    );
}

/// A server that answers each connection's requests in turn with `answers`, then closes
/// it and says so on the channel; `connections` connections, one after the other. Each
/// request line it got is sent on the second channel.
fn serve_then_close(
    answers: Vec<&'static [u8]>,
    connections: usize,
) -> (
    SocketAddr,
    std::sync::mpsc::Receiver<()>,
    std::sync::mpsc::Receiver<String>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (closed_tx, closed) = std::sync::mpsc::channel();
    let (requests_tx, requests) = std::sync::mpsc::channel();
    thread::spawn(move || {
        for _ in 0..connections {
            let (mut s, _) = listener.accept().unwrap();
            for answer in &answers {
                let mut got = Vec::new();
                let mut b = [0u8; 4096];
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut b) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => got.extend_from_slice(&b[..n]),
                    }
                }
                if got.is_empty() {
                    break;
                }
                let line = String::from_utf8_lossy(&got);
                let _ = requests_tx.send(line.lines().next().unwrap_or("").to_string());
                s.write_all(answer).unwrap();
            }
            drop(s);
            let _ = closed_tx.send(());
        }
    });
    (addr, closed, requests)
}

const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

#[test]
fn a_connection_closed_while_idle_is_replaced_before_the_next_request() {
    // As a server's idle or header timeout does: it answers, then hangs up.
    let (addr, closed, requests) = serve_then_close(vec![OK], 2);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    assert_eq!(get(&mut conn).unwrap().1, b"ok");
    closed.recv().unwrap();
    thread::sleep(IDLE_CHECK * 2);
    // Found closed by the check before sending: any request, POST too, goes on a new one.
    let head = conn
        .send(
            b"POST /x HTTP/1.1\r\nhost: x\r\n\r\n",
            &mut |_| Ok(()),
            false,
        )
        .unwrap();
    assert_eq!(conn.body_bytes(&head).unwrap(), b"ok");
    assert_eq!(conn.reconnects(), 1);
    let sent: Vec<String> = requests.try_iter().collect();
    assert_eq!(sent, ["GET / HTTP/1.1", "POST /x HTTP/1.1"]);
}

#[test]
fn an_idempotent_request_on_a_connection_just_closed_is_sent_again_once() {
    let (addr, closed, requests) = serve_then_close(vec![OK], 2);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    assert_eq!(get(&mut conn).unwrap().1, b"ok");
    // Closed, but too recently for the check: the GET fails before any byte of its answer
    // and goes again on a new connection.
    closed.recv().unwrap();
    assert_eq!(get(&mut conn).unwrap().1, b"ok");
    assert_eq!(conn.reconnects(), 1);
    assert_eq!(
        requests.try_iter().count(),
        2,
        "the server saw each GET once"
    );
}

#[test]
fn a_post_on_a_connection_just_closed_is_not_sent_again() {
    let (addr, closed, requests) = serve_then_close(vec![OK], 2);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    assert_eq!(get(&mut conn).unwrap().1, b"ok");
    closed.recv().unwrap();
    // The server may have acted on a POST whose answer never came: it is the caller's.
    let err = conn
        .send(
            b"POST /x HTTP/1.1\r\nhost: x\r\n\r\n",
            &mut |_| Ok(()),
            false,
        )
        .unwrap_err();
    assert!(closed_by_server(&err), "{err}");
    assert_eq!(conn.reconnects(), 0);
    assert_eq!(requests.try_iter().count(), 1);
}

#[test]
fn a_server_that_closes_a_fresh_connection_fails_the_request() {
    // Not an idle connection: nothing to replace, the failure is the request's.
    let (addr, _closed, _requests) = serve_then_close(vec![], 1);
    let mut conn = Connection::new(addr, Duration::from_secs(5), None);
    let err = get(&mut conn).unwrap_err();
    assert!(closed_by_server(&err), "{err}");
    assert_eq!(conn.reconnects(), 0);
}

#[test]
fn a_silent_server_times_out() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let mut conn = Connection::new(addr, Duration::from_millis(200), None);
    let err = get(&mut conn).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    drop(listener);
}
