//! `--checksum`: S3's additional checksum of each PUT's body (`x-amz-checksum-ALGORITHM`, the
//! base64 of its digest), computed inside the operation's time as SDKs that send one do, so
//! the server checks the body against it.

use crate::sigv4::push_base64;
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

    /// The base64 of the digest of `body`'s bytes `from..to`, into `out` (cleared first; no
    /// allocation once `out` has grown).
    pub fn of(self, body: &Body<'_>, (from, to): (u64, u64), out: &mut String) -> io::Result<()> {
        out.clear();
        match self {
            Checksum::Crc32 | Checksum::Crc32c | Checksum::Crc64Nvme => {
                let algorithm = match self {
                    Checksum::Crc32 => crc_fast::CrcAlgorithm::Crc32IsoHdlc,
                    Checksum::Crc32c => crc_fast::CrcAlgorithm::Crc32Iscsi,
                    _ => crc_fast::CrcAlgorithm::Crc64Nvme,
                };
                let mut digest = crc_fast::Digest::new(algorithm);
                each(body, from, to, |s| digest.update(s))?;
                let crc = digest.finalize().to_be_bytes();
                // A 32-bit CRC is the low half of the 64 bits.
                let skip = if self == Checksum::Crc64Nvme { 0 } else { 4 };
                push_base64(out, &crc[skip..]);
            }
            Checksum::Sha1 => {
                let mut hasher = sha1::Sha1::new();
                each(body, from, to, |s| hasher.update(s))?;
                push_base64(out, &hasher.finalize());
            }
            Checksum::Sha256 => {
                let mut hasher = sha2::Sha256::new();
                each(body, from, to, |s| hasher.update(s))?;
                push_base64(out, &hasher.finalize());
            }
        }
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
}
