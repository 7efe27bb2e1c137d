//! The log record format shared by the write-ahead log and the MANIFEST
//! (LevelDB's, as RocksDB uses it).
//!
//! ```text
//! log file = 32 KiB blocks (the last one may be short)
//! +--------------------------------- block (32768 bytes) ---------------------------------+
//! | fragment | fragment | ... | fragment | zero padding (< 7 bytes, only when no header fits) |
//! +---------------------------------------------------------------------------------------+
//!
//! fragment
//! +-----------------------+------------------+-----------+----------------------+
//! | checksum: fixed32 LE  | length: fixed16  | type: u8  | payload (length B)   |
//! +-----------------------+------------------+-----------+----------------------+
//! checksum = mask(crc32c(type byte ++ payload)), mask(c) = rotr(c, 15) + 0xa282ead8
//! type: 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST (0 is never written: zeros are padding)
//! ```
//!
//! A record is one FULL fragment or FIRST, MIDDLE*, LAST. Fragments never cross a
//! block boundary, so a reader can resynchronise at any block.

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a fragment header.
pub const HEADER_SIZE: usize = 7;
/// Largest record accepted by the reader (1 GiB); a longer one is corruption.
pub const MAX_RECORD_SIZE: usize = 1 << 30;

/// Fragment types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum FragmentType {
    /// A whole record.
    Full = 1,
    /// The first fragment of a record.
    First = 2,
    /// An inner fragment.
    Middle = 3,
    /// The last fragment.
    Last = 4,
}

impl FragmentType {
    /// Parses a type byte; `None` for 0 (padding) and unknown values.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(FragmentType::Full),
            2 => Some(FragmentType::First),
            3 => Some(FragmentType::Middle),
            4 => Some(FragmentType::Last),
            _ => None,
        }
    }
}

/// The masked crc32c of a fragment: over its type byte, then its payload.
#[inline]
pub fn fragment_checksum(fragment_type: u8, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&[fragment_type]);
    crate::checksum::mask_crc(crc32c::crc32c_append(crc, payload))
}
