//! `--checksum`: S3's additional checksum of each PUT's body (`x-amz-checksum-ALGORITHM`, the
//! base64 of its digest), computed inside the operation's time as SDKs that send one do, so
//! the server checks the body against it.

use iobm_target::Body;
use sha2::Digest;
use std::io;

/// An additional checksum algorithm of S3's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    Crc32,
    Crc32c,
    Crc64Nvme,
    Sha1,
    Sha256,
}

impl Checksum {
    pub const ALL: [Checksum; 5] = [
        Checksum::Crc32,
        Checksum::Crc32c,
        Checksum::Crc64Nvme,
        Checksum::Sha1,
        Checksum::Sha256,
    ];

    /// Its name on the command line and in the run's config.
    pub fn name(self) -> &'static str {
        match self {
            Checksum::Crc32 => "crc32",
            Checksum::Crc32c => "crc32c",
            Checksum::Crc64Nvme => "crc64nvme",
            Checksum::Sha1 => "sha1",
            Checksum::Sha256 => "sha256",
        }
    }

    /// The request header that carries it.
    pub fn header(self) -> &'static str {
        match self {
            Checksum::Crc32 => "x-amz-checksum-crc32",
            Checksum::Crc32c => "x-amz-checksum-crc32c",
            Checksum::Crc64Nvme => "x-amz-checksum-crc64nvme",
            Checksum::Sha1 => "x-amz-checksum-sha1",
            Checksum::Sha256 => "x-amz-checksum-sha256",
        }
    }

    /// The base64 of the digest of `body`'s bytes `from..to`, into `out` (cleared first).
    pub fn of(self, body: &Body<'_>, (from, to): (u64, u64), out: &mut String) -> io::Result<()> {
        let digest = match self {
            Checksum::Crc32 | Checksum::Crc32c | Checksum::Crc64Nvme => {
                let algorithm = match self {
                    Checksum::Crc32 => crc_fast::CrcAlgorithm::Crc32IsoHdlc,
                    Checksum::Crc32c => crc_fast::CrcAlgorithm::Crc32Iscsi,
                    _ => crc_fast::CrcAlgorithm::Crc64Nvme,
                };
                let mut digest = crc_fast::Digest::new(algorithm);
                each(body, from, to, |s| digest.update(s))?;
                let crc = digest.finalize();
                match self {
                    Checksum::Crc64Nvme => crc.to_be_bytes().to_vec(),
                    _ => (crc as u32).to_be_bytes().to_vec(),
                }
            }
            Checksum::Sha1 => {
                let mut hasher = sha1::Sha1::new();
                each(body, from, to, |s| hasher.update(s))?;
                hasher.finalize().to_vec()
            }
            Checksum::Sha256 => {
                let mut hasher = sha2::Sha256::new();
                each(body, from, to, |s| hasher.update(s))?;
                hasher.finalize().to_vec()
            }
        };
        out.clear();
        base64(&digest, out);
        Ok(())
    }
}

/// Every piece of `body` from `from` to `to`, in order.
fn each(body: &Body<'_>, from: u64, to: u64, mut f: impl FnMut(&[u8])) -> io::Result<()> {
    body.for_each_batch(from, to, &mut |slices| {
        slices.iter().for_each(|s| f(&s[..]));
        Ok(())
    })
}

/// Standard base64 (RFC 4648, padded) of `bytes`, appended to `out`.
fn base64(bytes: &[u8], out: &mut String) {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same bytes for every id.
    struct Fixed(&'static [u8]);

    impl iobm_target::objects::Content for Fixed {
        fn fill(&self, out: &mut [u8], _id: u64, offset: u64) {
            out.copy_from_slice(&self.0[offset as usize..offset as usize + out.len()]);
        }
    }

    fn of(algorithm: Checksum, data: &'static [u8]) -> String {
        let mut out = String::from("left over");
        let content = Fixed(data);
        let body = Body::new(&content, 0, data.len() as u64);
        algorithm.of(&body, (0, body.len()), &mut out).unwrap();
        out
    }

    #[test]
    fn each_algorithm_gives_the_base64_of_its_check_value() {
        // The catalogue's check values of "123456789", big-endian, in base64.
        let check = b"123456789";
        assert_eq!(of(Checksum::Crc32, check), "y/Q5Jg=="); // 0xCBF43926
        assert_eq!(of(Checksum::Crc32c, check), "4waSgw=="); // 0xE3069283
        assert_eq!(of(Checksum::Crc64Nvme, check), "rosUhgp5mIg="); // 0xAE8B14860A799888
        assert_eq!(of(Checksum::Sha1, b"abc"), "qZk+NkcGgWq6PiVxeFDCbJzQ2J0=");
        assert_eq!(
            of(Checksum::Sha256, b"abc"),
            "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0="
        );
    }

    #[test]
    fn base64_pads_one_and_two_byte_tails() {
        let b64 = |b: &[u8]| {
            let mut s = String::new();
            base64(b, &mut s);
            s
        };
        assert_eq!(b64(b""), "");
        assert_eq!(b64(b"f"), "Zg==");
        assert_eq!(b64(b"fo"), "Zm8=");
        assert_eq!(b64(b"foo"), "Zm9v");
        assert_eq!(b64(b"foobar"), "Zm9vYmFy");
    }
}
