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
//! block boundary, so a reader can resynchronise at any block, and a fragment whose
//! length would cross one can only be damage, never a write cut short.

use crate::checksum::mask_crc;

/// Size of a log block.
pub const BLOCK_SIZE: usize = 32 * 1024;
/// Size of a fragment header.
pub const HEADER_SIZE: usize = 7;
/// Largest record (1 GiB): the writer refuses a longer one and the reader calls it
/// corruption, so a damaged log can never make the reader assemble more than this.
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

/// crc32c of each possible type byte alone (index = type code), so a fragment's
/// checksum costs one `crc32c_append` over its payload. Computed at compile time;
/// a test checks it against the `crc32c` crate.
const TYPE_CRCS: [u32; 256] = {
    let mut table = [0u32; 256];
    let mut t = 0;
    while t < 256 {
        table[t] = crc32c_of_byte(t as u8);
        t += 1;
    }
    table
};

/// Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) of one byte.
const fn crc32c_of_byte(byte: u8) -> u32 {
    let mut crc = !0u32 ^ byte as u32;
    let mut bit = 0;
    while bit < 8 {
        crc = if crc & 1 == 1 {
            (crc >> 1) ^ 0x82f6_3b78
        } else {
            crc >> 1
        };
        bit += 1;
    }
    !crc
}

/// The masked crc32c of a fragment: over its type byte, then its payload.
#[inline]
pub fn fragment_checksum(fragment_type: u8, payload: &[u8]) -> u32 {
    let type_crc = TYPE_CRCS[usize::from(fragment_type)];
    mask_crc(crc32c::crc32c_append(type_crc, payload))
}
