//! A body's checksum as the store keeps it with its object: which of S3's algorithms and the
//! base64 of its digest. Computing and checking it as a body arrives is the bodies' layer's
//! (`crate::checksums`).

/// A checksum algorithm of S3's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Algorithm {
    Crc32,
    Crc32c,
    Crc64Nvme,
    Sha1,
    Sha256,
}

impl Algorithm {
    pub const ALL: [Algorithm; 5] = [
        Algorithm::Crc32,
        Algorithm::Crc32c,
        Algorithm::Crc64Nvme,
        Algorithm::Sha1,
        Algorithm::Sha256,
    ];

    /// Its name in `x-amz-sdk-checksum-algorithm` and in S3's messages.
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Crc32 => "CRC32",
            Algorithm::Crc32c => "CRC32C",
            Algorithm::Crc64Nvme => "CRC64NVME",
            Algorithm::Sha1 => "SHA1",
            Algorithm::Sha256 => "SHA256",
        }
    }
}

/// A body's checksum as kept with its object: the algorithm and the base64 of its digest.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Stored {
    pub algorithm: Algorithm,
    pub value: String,
}
