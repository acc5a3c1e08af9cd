//! The `multipart/form-data` body of a browser-form upload: its fields, read whole up to the
//! file part (which S3 requires to be the form's last), then the file's bytes as a stream that
//! ends at the boundary after them, held no longer than it takes to pass them on.

use bytes::{Bytes, BytesMut};
use futures::Stream;
use s3s::{s3_error, S3Error};
use std::pin::Pin;
use std::task::{Context, Poll};

/// Most bytes of a form before its file's first byte (S3 keeps a form's fields small: its
/// policy document is at most 20 KB).
pub const FIELDS_MAX: usize = 64 << 10;

/// A form read up to its file.
#[derive(Debug, Default)]
pub struct Head {
    /// The fields before the file, names in lower case (as S3 matches them), in form order.
    pub fields: Vec<(String, String)>,
    /// The file part's `filename` (what `${filename}` in the key stands for).
    pub filename: String,
    /// The bytes of the form up to the end of the file part's headers.
    pub prefix: Bytes,
    /// Bytes read after them: the file's first bytes.
    pub rest: Bytes,
}

impl Head {
    pub fn field(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

fn malformed(message: &str) -> S3Error {
    s3_error!(MalformedPOSTRequest, "{message}")
}

/// The boundary of a `multipart/form-data` content type.
pub fn boundary(content_type: &str) -> Option<String> {
    let (kind, params) = content_type.split_once(';')?;
    if !kind.trim().eq_ignore_ascii_case("multipart/form-data") {
        return None;
    }
    params.split(';').find_map(|p| {
        let (name, value) = p.trim().split_once('=')?;
        let value = value.trim().trim_matches('"');
        (name.trim().eq_ignore_ascii_case("boundary") && !value.is_empty())
            .then(|| value.to_string())
    })
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// A quoted parameter of a `Content-Disposition` value: `NAME="VALUE"` at its start, VALUE
/// without a quote; the rest after it.
fn quoted<'a>(text: &'a str, name: &str) -> Option<(&'a str, &'a str)> {
    let value = text.strip_prefix(name)?.strip_prefix("=\"")?;
    let (value, rest) = value.split_once('"')?;
    (!value.is_empty()).then_some((value, rest))
}

/// A part's field name and file name, from its headers: one `Content-Disposition`, exactly
/// `form-data; name="NAME"` or `form-data; name="NAME"; filename="FILE"` (as browsers send
/// it, and as s3s reads it when it checks the signature: a form read otherwise by the two
/// could have its policy checked apart from its signature, so anything else is refused).
fn disposition(headers: &[u8]) -> Result<(String, Option<String>), S3Error> {
    let bad = || {
        malformed(
            "a part's Content-Disposition is not form-data; name=\"NAME\"[; filename=\"FILE\"]",
        )
    };
    let text =
        std::str::from_utf8(headers).map_err(|_| malformed("a part's headers are not UTF-8"))?;
    let mut found = None;
    for line in text.split("\r\n") {
        let (name, value) = line.split_once(':').ok_or_else(bad)?;
        if name.starts_with([' ', '\t']) || name.ends_with([' ', '\t']) {
            return Err(bad());
        }
        if name.eq_ignore_ascii_case("content-disposition") {
            if found.is_some() {
                return Err(bad());
            }
            found = Some(value.trim());
        }
    }
    let value = found.ok_or_else(bad)?;
    let (name, rest) =
        quoted(value.strip_prefix("form-data; ").ok_or_else(bad)?, "name").ok_or_else(bad)?;
    let filename = match rest {
        "" => None,
        rest => {
            let (file, rest) =
                quoted(rest.strip_prefix("; ").ok_or_else(bad)?, "filename").ok_or_else(bad)?;
            if !rest.is_empty() {
                return Err(bad());
            }
            Some(file.to_string())
        }
    };
    Ok((name.to_string(), filename))
}

/// The form's head from what has arrived: `None` while the file part's headers have not.
fn parse(buf: &[u8], boundary: &str) -> Result<Option<Head>, S3Error> {
    let opening = format!("--{boundary}");
    let closing = format!("\r\n--{boundary}");
    let Some(start) = find(buf, opening.as_bytes()) else {
        return Ok(None);
    };
    let mut head = Head::default();
    let mut at = start + opening.len();
    loop {
        match buf.get(at..at + 2) {
            None => return Ok(None),
            Some(b"\r\n") => at += 2,
            Some(_) => return Err(malformed("the form has no file field")),
        }
        let Some(end) = find(&buf[at..], b"\r\n\r\n") else {
            return Ok(None);
        };
        let (name, filename) = disposition(&buf[at..at + end])?;
        let body = at + end + 4;
        if name.eq_ignore_ascii_case("file") {
            head.filename = filename.unwrap_or_default();
            head.prefix = Bytes::copy_from_slice(&buf[..body]);
            head.rest = Bytes::copy_from_slice(&buf[body..]);
            return Ok(Some(head));
        }
        let Some(len) = find(&buf[body..], closing.as_bytes()) else {
            return Ok(None);
        };
        let value = std::str::from_utf8(&buf[body..body + len])
            .map_err(|_| malformed("a form field is not UTF-8"))?;
        let name = name.to_ascii_lowercase();
        if head.field(&name).is_some() {
            // Two fields of one name could be read differently by whoever checks the
            // signature and whoever reads the policy: refused, whatever the field.
            return Err(s3_error!(
                InvalidArgument,
                "the form field {name} is given more than once"
            ));
        }
        head.fields.push((name, value.to_string()));
        at = body + len + closing.len();
    }
}

/// Reads a form's fields from `body`, up to its file's first bytes: at most [`FIELDS_MAX`]
/// bytes (a body too slow is cut by its [`crate::body_rate::Metered`] meter).
pub async fn read_head<B>(body: &mut B, boundary: &str) -> Result<Head, S3Error>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    let mut buf = BytesMut::new();
    loop {
        if let Some(head) = parse(&buf, boundary)? {
            return Ok(head);
        }
        if buf.len() > FIELDS_MAX {
            return Err(s3_error!(
                MaxPostPreDataLengthExceededError,
                "a form's fields before its file take at most {FIELDS_MAX} bytes"
            ));
        }
        match std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
            None => return Err(malformed("the form ended before its file field")),
            Some(Err(e)) => {
                return Err(s3_error!(
                    IncompleteBody,
                    "the form's body ended early: {e}"
                ))
            }
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    buf.extend_from_slice(&data);
                }
            }
        }
    }
}

/// The file's bytes, from the first ones read with the head to the boundary after the last;
/// an error if the body ends before that boundary or the file is outside `sizes` (the
/// policy's `content-length-range`, or S3's most for one PUT).
pub struct FileStream<B = crate::body_rate::Metered> {
    body: B,
    closing: Vec<u8>,
    held: BytesMut,
    sizes: std::ops::RangeInclusive<u64>,
    passed: u64,
    done: bool,
}

impl<B> FileStream<B> {
    pub fn new(body: B, boundary: &str, rest: Bytes, sizes: std::ops::RangeInclusive<u64>) -> Self {
        FileStream {
            body,
            closing: format!("\r\n--{boundary}").into_bytes(),
            held: BytesMut::from(&rest[..]),
            sizes,
            passed: 0,
            done: false,
        }
    }

    /// `out` passed on, if the file stays within its sizes (`last`: it is the file's end).
    fn pass(&mut self, out: Bytes, last: bool) -> Option<Result<Bytes, S3Error>> {
        self.passed += out.len() as u64;
        if self.passed > *self.sizes.end() {
            self.done = true;
            let e = s3_error!(
                EntityTooLarge,
                "Your proposed upload exceeds the maximum allowed size"
            );
            return Some(Err(e));
        }
        if last {
            self.done = true;
            if self.passed < *self.sizes.start() {
                let e = s3_error!(
                    EntityTooSmall,
                    "Your proposed upload is smaller than the minimum allowed size"
                );
                return Some(Err(e));
            }
        }
        (!out.is_empty()).then_some(Ok(out))
    }
}

impl<B> Stream for FileStream<B>
where
    B: hyper::body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    type Item = Result<Bytes, S3Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(at) = find(&this.held, &this.closing) {
                let out = this.held.split_to(at).freeze();
                this.held.clear();
                return Poll::Ready(this.pass(out, true));
            }
            // All but what could be the start of the boundary may go on.
            let keep = this.closing.len() - 1;
            if this.held.len() > keep {
                let out = this.held.split_to(this.held.len() - keep).freeze();
                if let Some(item) = this.pass(out, false) {
                    return Poll::Ready(Some(item));
                }
                continue;
            }
            match Pin::new(&mut this.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    this.done = true;
                    let e = s3_error!(
                        IncompleteBody,
                        "the form ended before the boundary after its file"
                    );
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    let e = s3_error!(IncompleteBody, "the form's body ended early: {e}");
                    return Poll::Ready(Some(Err(e)));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data() {
                        this.held.extend_from_slice(&data);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORM: &[u8] = b"--XyZ\r\nContent-Disposition: form-data; name=\"Key\"\r\n\r\nup/${filename}\r\n--XyZ\r\nContent-Disposition: form-data; name=\"acl\"\r\n\r\npublic-read\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nfile bytes\r\n--XyZ--\r\n";

    #[test]
    fn the_fields_are_read_up_to_the_file() {
        // Nothing until the file part's headers are whole.
        let headers_end = find(FORM, b"text/plain\r\n\r\n").unwrap() + 14;
        for cut in [0, 10, 60, headers_end - 1] {
            assert!(parse(&FORM[..cut], "XyZ").unwrap().is_none(), "{cut}");
        }
        let head = parse(&FORM[..headers_end + 4], "XyZ").unwrap().unwrap();
        assert_eq!(head.field("key"), Some("up/${filename}"));
        assert_eq!(head.field("acl"), Some("public-read"));
        assert_eq!(head.filename, "a.txt");
        assert_eq!(&head.prefix[..], &FORM[..headers_end]);
        assert_eq!(&head.rest[..], b"file");
    }

    #[test]
    fn a_form_without_a_file_or_with_bad_parts_is_malformed() {
        let no_file = b"--b\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\nk\r\n--b--\r\n";
        let code = |form: &[u8]| parse(form, "b").unwrap_err().code().as_str().to_string();
        assert_eq!(code(no_file), "MalformedPOSTRequest");
        assert_eq!(
            code(b"--b\r\nContent-Type: x\r\n\r\nv\r\n--b--"),
            "MalformedPOSTRequest"
        );
    }

    /// A body that arrives in the given pieces.
    struct Pieces(std::collections::VecDeque<&'static [u8]>);

    impl hyper::body::Body for Pieces {
        type Data = Bytes;
        type Error = std::io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<hyper::body::Frame<Bytes>, std::io::Error>>> {
            Poll::Ready(
                self.0
                    .pop_front()
                    .map(|p| Ok(hyper::body::Frame::data(Bytes::from_static(p)))),
            )
        }
    }

    fn file(
        rest: &'static [u8],
        pieces: &[&'static [u8]],
        sizes: std::ops::RangeInclusive<u64>,
    ) -> Result<Vec<u8>, String> {
        let body = Pieces(pieces.iter().copied().collect());
        let stream = FileStream::new(body, "XyZ", Bytes::from_static(rest), sizes);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut out = Vec::new();
            let mut stream = std::pin::pin!(stream);
            while let Some(piece) = futures::StreamExt::next(&mut stream).await {
                out.extend_from_slice(&piece.map_err(|e| e.to_string())?);
            }
            Ok(out)
        })
    }

    #[test]
    fn the_file_ends_at_its_boundary_wherever_the_pieces_split_it() {
        let all = b"file bytes\r\n--XyZ--\r\n";
        let want = Ok(b"file bytes".to_vec());
        assert_eq!(file(all, &[], 0..=100), want);
        for cut in 1..all.len() {
            let (a, b) = all.split_at(cut);
            assert_eq!(file(b"", &[a, b], 0..=100), want, "{cut}");
            assert_eq!(file(a, &[b], 0..=100), want, "{cut}");
        }
        // A boundary-like run inside the file is file bytes.
        assert_eq!(
            file(b"a\r\n--XyQ\r\n--XyZ--", &[], 0..=100),
            Ok(b"a\r\n--XyQ".to_vec())
        );
    }

    #[test]
    fn a_file_cut_short_or_outside_its_sizes_is_refused() {
        let cut = file(b"file bytes", &[b"\r\n--Xy"], 0..=100).unwrap_err();
        assert!(cut.contains("ended before the boundary"), "{cut}");
        let big = file(b"file bytes\r\n--XyZ--", &[], 0..=9).unwrap_err();
        assert!(big.contains("exceeds the maximum"), "{big}");
        let small = file(b"file bytes\r\n--XyZ--", &[], 11..=100).unwrap_err();
        assert!(small.contains("smaller than the minimum"), "{small}");
        assert_eq!(
            file(b"file bytes\r\n--XyZ--", &[], 10..=10),
            Ok(b"file bytes".to_vec())
        );
    }

    /// A form of one field part with `disposition`, then the file part's head.
    fn one_field(disposition: &str) -> String {
        format!(
            "--b\r\nContent-Disposition: {disposition}\r\n\r\nv\r\n--b\r\n\
             Content-Disposition: form-data; name=\"file\"\r\n\r\n"
        )
    }

    fn read(form: &str) -> String {
        match parse(form.as_bytes(), "b") {
            Ok(head) => format!("{:?}", head.map(|h| h.fields)),
            Err(e) => e.code().as_str().to_string(),
        }
    }

    #[test]
    fn fields_that_two_parsers_could_read_apart_are_refused() {
        let twice = "--b\r\nContent-Disposition: form-data; name=\"policy\"\r\n\r\nA\r\n\
                     --b\r\nContent-Disposition: form-data; name=\"Policy\"\r\n\r\nB\r\n\
                     --b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n";
        assert_eq!(read(twice), "InvalidArgument");
        for bad in [
            "form-data; name=\"x\"; filename=\"; name=\\\"policy\\\"\"",
            "form-data; name=\"key\"; name=\"policy\"",
            "form-data; name=\"key",
            "form-data; name=key",
            "form-data;name=\"key\"",
            "form-data; name*=UTF-8''policy",
            "form-data; name=\"\"",
            "form-data; filename=\"f\"; name=\"key\"",
        ] {
            assert_eq!(read(&one_field(bad)), "MalformedPOSTRequest", "{bad}");
        }
        let folded = "--b\r\nContent-Disposition: form-data;\r\n name=\"key\"\r\n\r\nv\r\n";
        assert_eq!(read(folded), "MalformedPOSTRequest");
        let two_headers = "--b\r\nContent-Disposition: form-data; name=\"key\"\r\n\
                           content-disposition: form-data; name=\"policy\"\r\n\r\nv\r\n";
        assert_eq!(read(two_headers), "MalformedPOSTRequest");
        assert_eq!(
            read(&one_field("form-data; name=\"key\"")),
            r#"Some([("key", "v")])"#
        );
        let file =
            "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a;b.txt\"\r\n\r\n";
        assert_eq!(
            parse(file.as_bytes(), "b").unwrap().unwrap().filename,
            "a;b.txt"
        );
    }

    #[test]
    fn boundaries_are_read_from_the_content_type() {
        assert_eq!(
            boundary("multipart/form-data; boundary=abc").as_deref(),
            Some("abc")
        );
        assert_eq!(
            boundary("Multipart/Form-Data; charset=x; boundary=\"q r\"").as_deref(),
            Some("q r")
        );
        assert_eq!(boundary("application/xml; boundary=abc"), None);
        assert_eq!(boundary("multipart/form-data"), None);
    }
}
