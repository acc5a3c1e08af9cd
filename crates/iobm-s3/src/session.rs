//! A worker's object session over S3: its connection, and the helper connections of its
//! multipart uploads.

use crate::client::{Client, Payload};
use crate::{sigv4, xml, S3Config};
use iobm_target::{Body, HttpError, ListPage, Objects};
use std::fmt::Write as _;
use std::io;

/// A worker's object session: its connection, and helpers for multipart uploads.
pub(crate) struct S3Session<'a> {
    pub(crate) config: &'a S3Config,
    pub(crate) client: Client,
    pub(crate) helpers: Vec<Client>,
    pub(crate) worker: usize,
    /// The full key of the current operation (reused).
    pub(crate) key: String,
    /// The `Range` header value of the current GET (reused).
    pub(crate) range: String,
    /// The DeleteObjects document of the current batch (reused).
    pub(crate) batch: String,
    /// The `--checksum` header value of the current PUT (reused).
    pub(crate) checksum: String,
}

impl S3Session<'_> {
    /// Runs `f` with the client and the full key of object `name`, built in a reused buffer.
    fn keyed<R>(&mut self, name: &str, f: impl FnOnce(&mut Client, &S3Config, &str) -> R) -> R {
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.push_str(&self.config.prefix);
        key.push_str(name);
        let result = f(&mut self.client, self.config, &key);
        self.key = key;
        result
    }

    /// A GET of the object (or `range` of it) with `query` (a version), its body handed to
    /// `sink` as it arrives, after an empty slice when the answer begins.
    fn get_of(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        query: &[(&str, &str)],
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        let mut range_value = std::mem::take(&mut self.range);
        range_value.clear();
        if let Some((first, last)) = range {
            let _ = write!(range_value, "bytes={first}-{last}");
        }
        let range_header = [("range", range_value.as_str())];
        let headers: &[(&str, &str)] = if range.is_some() { &range_header } else { &[] };
        let result = self.keyed(name, |c, config, key| {
            let head = c.request(config, "GET", Some(key), query, headers, None)?;
            if head.status != 200 && head.status != 206 {
                return Err(c.error(&head));
            }
            sink(&[]);
            c.conn.read_body(&head, sink)
        });
        self.range = range_value;
        result
    }

    /// Refuses operations on versions unless the run declared them ([`S3Config::versions`]).
    fn versions(&self) -> io::Result<()> {
        match self.config.versions {
            true => Ok(()),
            false => Err(iobm_target::Unsupported(iobm_target::Capability::Versions).into()),
        }
    }

    /// A DELETE of the object with `query` (a version).
    fn delete_of(&mut self, name: &str, query: &[(&str, &str)]) -> io::Result<()> {
        self.keyed(name, |c, config, key| {
            let head = c.request(config, "DELETE", Some(key), query, &[], None)?;
            c.expect_ok(&head)
        })
    }
}

impl Objects for S3Session<'_> {
    fn put(&mut self, name: &str, body: &Body<'_>) -> io::Result<()> {
        let mut value = std::mem::take(&mut self.checksum);
        let put = self.keyed(name, |c, config, key| {
            let header = match config.checksum {
                Some(algorithm) => {
                    algorithm.of(body, (0, body.len()), &mut value)?;
                    Some((algorithm.header(), value.as_str()))
                }
                None => None,
            };
            let payload = Payload::Body(body, 0, body.len());
            let headers = header.as_slice();
            let head = c.request(config, "PUT", Some(key), &[], headers, Some(payload))?;
            c.expect_ok(&head)
        });
        self.checksum = value;
        put
    }

    fn last_etag(&self) -> Option<&str> {
        Some(self.client.conn.etag().trim_matches('"')).filter(|e| !e.is_empty())
    }

    fn get(
        &mut self,
        name: &str,
        range: Option<(u64, u64)>,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        self.get_of(name, range, &[], sink)
    }

    fn head(&mut self, name: &str) -> io::Result<u64> {
        self.keyed(name, |c, config, key| c.head(config, key, &[]))
    }

    fn delete(&mut self, name: &str) -> io::Result<()> {
        self.delete_of(name, &[])
    }

    fn delete_batch(&mut self, names: &[String]) -> io::Result<u64> {
        self.batch.clear();
        self.batch.push_str("<Delete><Quiet>true</Quiet>");
        for name in names {
            let key = xml::escape(&format!("{}{name}", self.config.prefix));
            let _ = write!(self.batch, "<Object><Key>{key}</Key></Object>");
        }
        self.batch.push_str("</Delete>");
        // S3 requires the document's MD5.
        let md5 = <md5::Md5 as md5::Digest>::digest(self.batch.as_bytes());
        let md5 = sigv4::base64(&md5);
        let c = &mut self.client;
        let head = c.request(
            self.config,
            "POST",
            None,
            &[("delete", "")],
            &[("content-md5", md5.as_str())],
            Some(Payload::Bytes(self.batch.as_bytes())),
        )?;
        if head.status != 200 {
            return Err(c.error(&head));
        }
        // Quiet: the answer lists only the keys that were not deleted.
        let answer = c.conn.body_bytes(&head)?;
        let answer = String::from_utf8_lossy(&answer);
        let failed = xml::texts(&answer, "Error").count() as u64;
        if failed > 0 {
            return Err(HttpError {
                status: 200,
                code: xml::text(&answer, "Code"),
                message: Some(format!(
                    "{failed} of {} keys not deleted; first: {}",
                    names.len(),
                    xml::text(&answer, "Message").unwrap_or_default()
                )),
                request_id: None,
            }
            .into_io());
        }
        Ok(names.len() as u64)
    }

    fn list(&mut self, after: Option<&str>, max: u32) -> io::Result<ListPage> {
        let (keys, next) = self.client.list_page(self.config, after, max)?;
        Ok(ListPage {
            keys: keys.len() as u64,
            next,
        })
    }

    fn last_version(&self) -> Option<&str> {
        Some(self.client.conn.version()).filter(|v| !v.is_empty())
    }

    fn get_version(
        &mut self,
        name: &str,
        version: &str,
        sink: &mut dyn FnMut(&[u8]),
    ) -> io::Result<u64> {
        self.versions()?;
        self.get_of(name, None, &[("versionId", version)], sink)
    }

    fn head_version(&mut self, name: &str, version: &str) -> io::Result<u64> {
        self.versions()?;
        self.keyed(name, |c, config, key| {
            c.head(config, key, &[("versionId", version)])
        })
    }

    fn delete_version(&mut self, name: &str, version: &str) -> io::Result<()> {
        self.versions()?;
        self.delete_of(name, &[("versionId", version)])
    }

    fn list_versions(&mut self, after: Option<&str>, max: u32) -> io::Result<ListPage> {
        self.versions()?;
        let page = self.client.versions_page(self.config, after, max)?;
        Ok(ListPage {
            keys: page.entries.len() as u64,
            next: page.next,
        })
    }

    fn multipart(
        &mut self,
        name: &str,
        body: &Body<'_>,
        part_size: u64,
        concurrency: usize,
    ) -> io::Result<()> {
        let key = format!("{}{name}", self.config.prefix);
        let upload_id = self.create_upload(&key)?;
        let upload = Upload {
            key: &key,
            id: &upload_id,
            body,
            part_size,
        };
        match self.put_parts(&upload, concurrency) {
            Ok(etags) => self.complete_upload(&upload, etags),
            Err(e) => {
                self.abort_upload(&upload);
                Err(e)
            }
        }
    }
}

/// A multipart upload under way: its key, its id and the body cut into parts.
struct Upload<'u, 'b> {
    key: &'u str,
    id: &'u str,
    body: &'u Body<'b>,
    part_size: u64,
}

impl Upload<'_, '_> {
    fn parts(&self) -> u64 {
        self.body.len().div_ceil(self.part_size).max(1)
    }

    /// The bytes of part `p` (from 0) of the body.
    fn range(&self, p: u64) -> (u64, u64) {
        let size = self.part_size;
        (p * size, ((p + 1) * size).min(self.body.len()))
    }
}

/// A multipart upload's steps: created, its parts put over the worker's connection and its
/// helpers', then completed, or aborted after a failure.
impl S3Session<'_> {
    /// Starts an upload of `key`; returns its id.
    fn create_upload(&mut self, key: &str) -> io::Result<String> {
        let head = self.client.request(
            self.config,
            "POST",
            Some(key),
            &[("uploads", "")],
            &[],
            None,
        )?;
        if head.status != 200 {
            return Err(self.client.error(&head));
        }
        let answer = String::from_utf8_lossy(&self.client.conn.body_bytes(&head)?).into_owned();
        xml::text(&answer, "UploadId")
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no UploadId in the answer"))
    }

    /// Puts every part, `concurrency` at a time (one lane on the worker's connection, the
    /// others on helpers to the same endpoint, each lane every `lanes`-th part); returns the
    /// parts' numbers and ETags, or the first failure.
    fn put_parts(&mut self, upload: &Upload, concurrency: usize) -> io::Result<Vec<(u64, String)>> {
        let config = self.config;
        let parts = upload.parts();
        let lanes = concurrency.clamp(1, parts as usize);
        while self.helpers.len() < lanes - 1 {
            let index = self.worker + self.helpers.len() + 1;
            let mut helper = Client::new(config, index);
            // Helpers talk to the worker's own endpoint.
            helper.endpoint = self.client.endpoint;
            helper.conn = config.connection(helper.endpoint);
            self.helpers.push(helper);
        }
        let lane = |client: &mut Client, first: u64| -> io::Result<Vec<(u64, String)>> {
            let mut etags = Vec::new();
            let mut p = first;
            while p < parts {
                let (key, id, range) = (upload.key, upload.id, upload.range(p));
                let etag = client.put_part(config, key, id, p + 1, upload.body, range)?;
                etags.push((p + 1, etag));
                p += lanes as u64;
            }
            Ok(etags)
        };
        let (client, helpers) = (&mut self.client, &mut self.helpers[..lanes - 1]);
        let results: Vec<io::Result<Vec<(u64, String)>>> = std::thread::scope(|scope| {
            let handles: Vec<_> = helpers
                .iter_mut()
                .enumerate()
                .map(|(i, h)| scope.spawn(move || lane(h, i as u64 + 1)))
                .collect();
            let mut results = vec![lane(client, 0)];
            results.extend(handles.into_iter().map(|h| h.join().expect("part thread")));
            results
        });
        let mut etags = Vec::with_capacity(parts as usize);
        let mut failure = None;
        for r in results {
            match r {
                Ok(e) => etags.extend(e),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        failure.map_or(Ok(etags), Err)
    }

    /// Best effort: leaves no upload behind.
    fn abort_upload(&mut self, upload: &Upload) {
        let query = [("uploadId", upload.id)];
        if let Ok(head) =
            self.client
                .request(self.config, "DELETE", Some(upload.key), &query, &[], None)
        {
            let _ = self.client.conn.skip_body(&head);
        }
    }

    /// Completes the upload from its parts' ETags.
    fn complete_upload(
        &mut self,
        upload: &Upload,
        mut etags: Vec<(u64, String)>,
    ) -> io::Result<()> {
        etags.sort_unstable();
        let mut complete = String::from("<CompleteMultipartUpload>");
        for (n, etag) in &etags {
            let _ = write!(
                complete,
                "<Part><PartNumber>{n}</PartNumber><ETag>{}</ETag></Part>",
                xml::escape(etag)
            );
        }
        complete.push_str("</CompleteMultipartUpload>");
        let head = self.client.request(
            self.config,
            "POST",
            Some(upload.key),
            &[("uploadId", upload.id)],
            &[],
            Some(Payload::Bytes(complete.as_bytes())),
        )?;
        if head.status != 200 {
            return Err(self.client.error(&head));
        }
        // S3 may answer 200 and put the error in the body.
        let answer = self.client.conn.body_bytes(&head)?;
        let answer = String::from_utf8_lossy(&answer);
        if answer.contains("<Error>") {
            return Err(HttpError {
                status: 200,
                code: xml::text(&answer, "Code"),
                message: xml::text(&answer, "Message"),
                request_id: xml::text(&answer, "RequestId"),
            }
            .into_io());
        }
        Ok(())
    }
}
