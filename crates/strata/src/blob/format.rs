//! Blob file layout: header, records, footer, and the blob reference a table
//! stores in place of a separated value.
//!
//! ```text
//! blob file NNNNNN.blob
//! +------------------------------+  offset 0
//! | header (24 bytes)            |
//! +------------------------------+  24
//! | record 0                     |  one value each, in the order written
//! | ...                          |  (key order within one flush or compaction
//! | record N-1                   |  output)
//! +------------------------------+  file size - 32
//! | footer (32 bytes)            |
//! +------------------------------+  file size
//!
//! header (24 bytes)
//! +---------+---------+-----------+-------------+---------+----------+
//! | 0..8    | 8..12   | 12..16    | 16          | 17..20  | 20..24   |
//! | magic   | format  | column    | compression | zero    | checksum |
//! | fixed64 | version | family id | u8 (the     | bytes   | fixed32  |
//! |         | fixed32 | fixed32   | file's)     |         |          |
//! +---------+---------+-----------+-------------+---------+----------+
//! checksum = masked crc32c of bytes 0..20
//!
//! record (21-byte header, then the key, then the stored value)
//! +---------+-----------+-------------+----------+----------+-----+--------+
//! | 0..4    | 4..12     | 12          | 13..17   | 17..21   | key | stored |
//! | key len | stored    | compression | header   | data     |     | value  |
//! | fixed32 | value len | u8 (this    | checksum | checksum |     |        |
//! |         | fixed64   | record's)   | fixed32  | fixed32  |     |        |
//! +---------+-----------+-------------+----------+----------+-----+--------+
//! header checksum = masked crc32c of bytes 0..13
//! data checksum   = masked crc32c of key ++ stored value
//! stored value    = the value itself (compression 0), or
//!                   varint32 length ++ codec bytes (as a compressed block)
//!
//! footer (32 bytes)
//! +-----------+-------------+---------+----------+---------+
//! | 0..8      | 8..16       | 16..20  | 20..24   | 24..32  |
//! | record    | stored      | zero    | checksum | magic   |
//! | count     | value bytes | bytes   | fixed32  | fixed64 |
//! | fixed64   | fixed64     |         |          |         |
//! +-----------+-------------+---------+----------+---------+
//! checksum = masked crc32c of bytes 0..20
//!
//! blob reference (the value of a BlobIndex entry)
//! +--------+-------------+-----------------+-------------------+-------------+
//! | kind   | file number | record offset   | stored value len  | compression |
//! | u8 = 1 | varint64    | varint64        | varint64          | u8          |
//! +--------+-------------+-----------------+-------------------+-------------+
//! ```
//!
//! A record's compression is the file's, or none where compressing did not
//! make the value smaller. The reference repeats it and the stored length so
//! that a reader fetches the whole record in one read, and checks both
//! against the record: a reference that points anywhere but at the record of
//! its own key fails as corruption instead of returning another value.
//!
//! The footer is written last: a file without a valid footer was cut short
//! (a crash while writing) and is never linked into a version. All integers
//! are little-endian.

use crate::checksum::mask_crc;
use crate::compression::CompressionType;
use crate::encoding::{
    decode_fixed32, decode_fixed64, put_fixed32, put_fixed64, put_varint64, Decoder,
};

/// Magic number starting every blob file ("STRATAbh" read as little-endian).
pub const BLOB_HEADER_MAGIC: u64 = u64::from_le_bytes(*b"STRATAbh");
/// Magic number ending every complete blob file ("STRATAbf").
pub const BLOB_FOOTER_MAGIC: u64 = u64::from_le_bytes(*b"STRATAbf");
/// The blob file format this build writes and the newest it reads.
pub const BLOB_FORMAT_VERSION: u32 = 1;
/// Bytes in the header.
pub const BLOB_HEADER_LEN: usize = 24;
/// Bytes in the footer.
pub const BLOB_FOOTER_LEN: usize = 32;
/// Bytes in a record's header, before its key.
pub const BLOB_RECORD_HEADER_LEN: usize = 21;
/// The only kind of blob reference so far (a value in a blob file).
const REFERENCE_KIND_PLAIN: u8 = 1;

/// crc32c, masked as every stored checksum is.
fn crc(bytes: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c(bytes))
}

/// What a blob file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobHeader {
    /// The column family whose values the file holds.
    pub column_family_id: u32,
    /// The compression the file's records use where it helps.
    pub compression: CompressionType,
}

impl BlobHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; BLOB_HEADER_LEN] {
        let mut out = Vec::with_capacity(BLOB_HEADER_LEN);
        put_fixed64(&mut out, BLOB_HEADER_MAGIC);
        put_fixed32(&mut out, BLOB_FORMAT_VERSION);
        put_fixed32(&mut out, self.column_family_id);
        out.push(self.compression.code());
        out.extend_from_slice(&[0; 3]);
        let checksum = crc(&out);
        put_fixed32(&mut out, checksum);
        let mut bytes = [0; BLOB_HEADER_LEN];
        bytes.copy_from_slice(&out);
        bytes
    }

    /// Parses a header; the error is the reason, without file or offset.
    pub fn decode(bytes: &[u8]) -> Result<BlobHeader, String> {
        let bytes = bytes
            .get(..BLOB_HEADER_LEN)
            .ok_or("file is shorter than a blob file header")?;
        if decode_fixed64(bytes) != Some(BLOB_HEADER_MAGIC) {
            return Err("bad blob file header magic (not a blob file)".into());
        }
        let stored = decode_fixed32(&bytes[20..]).unwrap_or(0);
        if crc(&bytes[..20]) != stored {
            return Err("blob file header checksum mismatch".into());
        }
        let version = decode_fixed32(&bytes[8..]).unwrap_or(0);
        if version == 0 || version > BLOB_FORMAT_VERSION {
            return Err(format!(
                "blob file format version {version} is not supported by this build \
                 (newest known: {BLOB_FORMAT_VERSION})"
            ));
        }
        let compression = CompressionType::from_code(bytes[16])
            .ok_or_else(|| format!("unknown blob file compression code {}", bytes[16]))?;
        Ok(BlobHeader {
            column_family_id: decode_fixed32(&bytes[12..]).unwrap_or(0),
            compression,
        })
    }
}

/// What a complete blob file's footer says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFooter {
    /// Records in the file.
    pub record_count: u64,
    /// Sum of the records' stored value lengths.
    pub value_bytes: u64,
}

impl BlobFooter {
    /// The footer's bytes.
    pub fn encode(&self) -> [u8; BLOB_FOOTER_LEN] {
        let mut out = Vec::with_capacity(BLOB_FOOTER_LEN);
        put_fixed64(&mut out, self.record_count);
        put_fixed64(&mut out, self.value_bytes);
        put_fixed32(&mut out, 0);
        let checksum = crc(&out);
        put_fixed32(&mut out, checksum);
        put_fixed64(&mut out, BLOB_FOOTER_MAGIC);
        let mut bytes = [0; BLOB_FOOTER_LEN];
        bytes.copy_from_slice(&out);
        bytes
    }

    /// Parses a footer; the error is the reason, without file or offset.
    pub fn decode(bytes: &[u8]) -> Result<BlobFooter, String> {
        if bytes.len() != BLOB_FOOTER_LEN {
            return Err("blob file footer has the wrong length".into());
        }
        if decode_fixed64(&bytes[24..]) != Some(BLOB_FOOTER_MAGIC) {
            return Err("blob file has no footer (written only in part)".into());
        }
        if crc(&bytes[..20]) != decode_fixed32(&bytes[20..]).unwrap_or(0) {
            return Err("blob file footer checksum mismatch".into());
        }
        Ok(BlobFooter {
            record_count: decode_fixed64(bytes).unwrap_or(0),
            value_bytes: decode_fixed64(&bytes[8..]).unwrap_or(0),
        })
    }
}

/// A record's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// Bytes of the key that follows.
    pub key_len: u32,
    /// Bytes of the stored value after the key.
    pub stored_len: u64,
    /// How the value is stored.
    pub compression: CompressionType,
    /// Masked crc32c of the key and the stored value.
    pub data_checksum: u32,
}

impl RecordHeader {
    /// Appends the header for `key` and `stored` to `out`.
    pub fn encode_for(key: &[u8], stored: &[u8], compression: CompressionType, out: &mut Vec<u8>) {
        let start = out.len();
        // Key lengths are capped far below 4 GiB by the write path; the
        // writer checks before it gets here.
        put_fixed32(out, key.len() as u32);
        put_fixed64(out, stored.len() as u64);
        out.push(compression.code());
        let header_checksum = crc(&out[start..]);
        put_fixed32(out, header_checksum);
        let mut data = crc32c::crc32c(key);
        data = crc32c::crc32c_append(data, stored);
        put_fixed32(out, mask_crc(data));
    }

    /// Parses a record header; the error is the reason.
    pub fn decode(bytes: &[u8]) -> Result<RecordHeader, String> {
        let bytes = bytes
            .get(..BLOB_RECORD_HEADER_LEN)
            .ok_or("blob record header runs past the end of the records")?;
        if crc(&bytes[..13]) != decode_fixed32(&bytes[13..]).unwrap_or(0) {
            return Err("blob record header checksum mismatch".into());
        }
        let compression = CompressionType::from_code(bytes[12])
            .ok_or_else(|| format!("unknown blob record compression code {}", bytes[12]))?;
        Ok(RecordHeader {
            key_len: decode_fixed32(bytes).unwrap_or(0),
            stored_len: decode_fixed64(&bytes[4..]).unwrap_or(0),
            compression,
            data_checksum: decode_fixed32(&bytes[17..]).unwrap_or(0),
        })
    }

    /// Whether `key` and `stored` match the data checksum.
    pub fn data_matches(&self, key: &[u8], stored: &[u8]) -> bool {
        let data = crc32c::crc32c_append(crc32c::crc32c(key), stored);
        mask_crc(data) == self.data_checksum
    }

    /// The record's length: header, key and stored value (saturating).
    pub fn record_len(&self) -> u64 {
        (BLOB_RECORD_HEADER_LEN as u64)
            .saturating_add(u64::from(self.key_len))
            .saturating_add(self.stored_len)
    }
}

/// Where a separated value lives: the value of a `BlobIndex` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobRef {
    /// The blob file's number.
    pub file_number: u64,
    /// Offset of the record (its header) in the file.
    pub offset: u64,
    /// The record's stored value length.
    pub stored_len: u64,
    /// How the value is stored.
    pub compression: CompressionType,
}

impl BlobRef {
    /// Appends the reference's encoding to `out`.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(REFERENCE_KIND_PLAIN);
        put_varint64(out, self.file_number);
        put_varint64(out, self.offset);
        put_varint64(out, self.stored_len);
        out.push(self.compression.code());
    }

    /// The reference's encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(24);
        self.encode_into(&mut out);
        out
    }

    /// Parses a reference; the error is the reason. Trailing bytes are an
    /// error, so a value that is not a reference is not taken for one.
    pub fn decode(bytes: &[u8]) -> Result<BlobRef, String> {
        let mut d = Decoder::new(bytes);
        match d.u8() {
            Some(REFERENCE_KIND_PLAIN) => {}
            Some(kind) => return Err(format!("unknown blob reference kind {kind}")),
            None => return Err("empty blob reference".into()),
        }
        let (Some(file_number), Some(offset), Some(stored_len), Some(code)) =
            (d.varint64(), d.varint64(), d.varint64(), d.u8())
        else {
            return Err("truncated blob reference".into());
        };
        if !d.is_empty() {
            return Err("blob reference has trailing bytes".into());
        }
        let compression = CompressionType::from_code(code)
            .ok_or_else(|| format!("unknown blob reference compression code {code}"))?;
        Ok(BlobRef {
            file_number,
            offset,
            stored_len,
            compression,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_footer_and_reference_round_trip() {
        let header = BlobHeader {
            column_family_id: 7,
            compression: CompressionType::Lz4,
        };
        assert_eq!(BlobHeader::decode(&header.encode()), Ok(header));
        let footer = BlobFooter {
            record_count: 3,
            value_bytes: 12_345,
        };
        assert_eq!(BlobFooter::decode(&footer.encode()), Ok(footer));
        let reference = BlobRef {
            file_number: 12,
            offset: 24,
            stored_len: 1 << 20,
            compression: CompressionType::None,
        };
        assert_eq!(BlobRef::decode(&reference.encode()), Ok(reference));
    }

    #[test]
    fn every_flipped_bit_of_a_header_or_footer_is_caught() {
        let header = BlobHeader {
            column_family_id: 1,
            compression: CompressionType::None,
        }
        .encode();
        let footer = BlobFooter {
            record_count: 1,
            value_bytes: 10,
        }
        .encode();
        for bit in 0..header.len() * 8 {
            let mut h = header;
            h[bit / 8] ^= 1 << (bit % 8);
            assert!(BlobHeader::decode(&h).is_err(), "header bit {bit}");
        }
        for bit in 0..footer.len() * 8 {
            let mut f = footer;
            f[bit / 8] ^= 1 << (bit % 8);
            assert!(BlobFooter::decode(&f).is_err(), "footer bit {bit}");
        }
    }

    #[test]
    fn malformed_references_are_refused() {
        let good = BlobRef {
            file_number: 5,
            offset: 100,
            stored_len: 9,
            compression: CompressionType::Snappy,
        }
        .encode();
        assert!(BlobRef::decode(&[]).is_err());
        assert!(BlobRef::decode(&good[..good.len() - 1]).is_err());
        let mut trailing = good.clone();
        trailing.push(0);
        assert!(BlobRef::decode(&trailing).is_err());
        let mut kind = good.clone();
        kind[0] = 2;
        assert!(BlobRef::decode(&kind).is_err());
        let mut codec = good;
        let last = codec.len() - 1;
        codec[last] = 0x7f;
        assert!(BlobRef::decode(&codec).is_err());
    }

    #[test]
    fn a_newer_format_version_is_refused_by_name() {
        let mut bytes = BlobHeader {
            column_family_id: 0,
            compression: CompressionType::None,
        }
        .encode();
        bytes[8..12].copy_from_slice(&(BLOB_FORMAT_VERSION + 1).to_le_bytes());
        let checksum = crc(&bytes[..20]);
        bytes[20..24].copy_from_slice(&checksum.to_le_bytes());
        let err = BlobHeader::decode(&bytes).unwrap_err();
        assert!(err.contains("format version 2"), "{err}");
    }
}
