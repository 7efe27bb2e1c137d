//! Block checksums: crc32c (hardware accelerated where the CPU has it) and xxh3.
//!
//! The numeric codes match RocksDB's `ChecksumType` so that `--checksum_type=4`
//! means xxh3 in both engines.

use crate::error::{Error, Result};

/// Which function checksums the blocks of a table file.
///
/// ```
/// use strata::{ChecksumType, TableOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(ChecksumType::default(), ChecksumType::Xxh3);
/// // Names and RocksDB's numeric codes both parse.
/// assert_eq!(ChecksumType::parse("crc32c")?, ChecksumType::Crc32c);
/// assert_eq!(ChecksumType::parse("4")?.name(), "xxh3");
/// assert!(ChecksumType::parse("md5").is_err());
/// let table = TableOptions { checksum: ChecksumType::Crc32c, ..TableOptions::default() };
/// assert_eq!(table.checksum.code(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ChecksumType {
    /// CRC-32C (Castagnoli), code 1.
    Crc32c,
    /// Low 32 bits of XXH3-64, code 4. The default: fastest on every CPU.
    #[default]
    Xxh3,
}

impl ChecksumType {
    /// The byte stored in the table footer.
    pub fn code(self) -> u8 {
        match self {
            ChecksumType::Crc32c => 1,
            ChecksumType::Xxh3 => 4,
        }
    }

    /// Parses the footer byte; `None` for codes this build does not know.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(ChecksumType::Crc32c),
            4 => Some(ChecksumType::Xxh3),
            _ => None,
        }
    }

    /// Lower-case name used by options and tools.
    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::Crc32c => "crc32c",
            ChecksumType::Xxh3 => "xxh3",
        }
    }

    /// Parses a name or RocksDB's numeric code (`"crc32c"`, `"1"`, `"xxh3"`, `"4"`).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "crc32c" | "1" => Ok(ChecksumType::Crc32c),
            "xxh3" | "4" => Ok(ChecksumType::Xxh3),
            _ => Err(Error::invalid_argument(
                "checksum_type",
                format!("unknown checksum type {s:?}; expected crc32c (1) or xxh3 (4)"),
            )),
        }
    }

    /// Checksum of `data` followed by the single byte `last`.
    ///
    /// Blocks are checksummed together with their compression-type byte; taking the
    /// byte separately avoids copying the block to append it.
    #[inline]
    pub fn checksum_with_byte(self, data: &[u8], last: u8) -> u32 {
        match self {
            ChecksumType::Crc32c => {
                let crc = crc32c::crc32c(data);
                crc32c::crc32c_append(crc, &[last])
            }
            ChecksumType::Xxh3 => {
                // Streaming xxh3 is slower than the one-shot call for small inputs;
                // instead mix the trailing byte into the one-shot hash.
                let h = xxhash_rust::xxh3::xxh3_64(data);
                let mixed = h ^ u64::from(last).wrapping_mul(0x9E37_79B1_85EB_CA87);
                (mixed ^ (mixed >> 32)) as u32
            }
        }
    }
}

const MASK_DELTA: u32 = 0xa282_ead8;

/// Masks a crc32c so that a checksum of data that itself holds checksums stays strong
/// (LevelDB's rotation trick). Used by WAL records and the table footer.
#[inline]
pub fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Inverse of [`mask_crc`].
#[inline]
pub fn unmask_crc(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_vector() {
        // RFC 3720 test vector: 32 bytes of zeros.
        assert_eq!(crc32c::crc32c(&[0u8; 32]), 0x8a91_36aa);
    }

    #[test]
    fn mask_roundtrip() {
        for v in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert_eq!(unmask_crc(mask_crc(v)), v);
            assert_ne!(mask_crc(v), v);
        }
    }

    #[test]
    fn trailing_byte_changes_checksum() {
        for t in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
            let a = t.checksum_with_byte(b"block", 0);
            let b = t.checksum_with_byte(b"block", 1);
            let c = t.checksum_with_byte(b"blocl", 0);
            assert_ne!(a, b);
            assert_ne!(a, c);
        }
        // crc32c with the byte mixed in equals crc32c of the concatenation.
        assert_eq!(
            ChecksumType::Crc32c.checksum_with_byte(b"abc", b'd'),
            crc32c::crc32c(b"abcd")
        );
    }

    #[test]
    fn codes_and_names() {
        for t in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
            assert_eq!(ChecksumType::from_code(t.code()), Some(t));
            assert_eq!(ChecksumType::parse(t.name()).ok(), Some(t));
        }
        assert!(ChecksumType::from_code(0).is_none());
        assert!(matches!(
            ChecksumType::parse("md5"),
            Err(Error::InvalidArgument {
                field: "checksum_type",
                ..
            })
        ));
    }
}
