//! Table file layout: block handles, block trailers and the footer.
//!
//! ```text
//! table file
//! +--------------------------+  offset 0
//! | data block 0   | trailer |  entries sorted by internal key
//! | ...                      |
//! | data block N-1 | trailer |
//! | filter block   | trailer |  optional: full-file bloom filter over user keys
//! | range-del block| trailer |  optional (format version 2, 3): range tombstones
//! | index block    | trailer |  one entry per data block: separator -> handle
//! | properties     | trailer |  name -> value (counts, sizes, key range, ...)
//! | metaindex      | trailer |  meta block name -> handle (filter, range-del,
//! |                          |  properties)
//! | footer (57 bytes)        |
//! +--------------------------+  file size, or where a global seqno tail starts
//! | properties     | trailer |  ingested tables only (see `seqno_tail`): the
//! | metaindex      | trailer |  properties again with the global seqno and
//! | footer (57 bytes)        |  family added, a metaindex pointing at them, a
//! |                          |  footer
//! +--------------------------+  file size
//!
//! format version 3 (two-level index): the index and, optionally, the filter
//! come in partitions, written after the data blocks as
//! | filter partition 0..P-1  |  optional: bloom filters, partition p over the
//! |                          |  user keys of index partition p's data blocks
//! | top-level filter index   |  last separator of partition p -> handle of
//! |                          |  filter partition p ("strata.filter.partitioned.bloom")
//! |   (or a filter block, or no filter)
//! | range-del block          |  optional
//! | index partition 0..P-1   |  separator -> data block handle, as an index block
//! | top-level index          |  last separator of partition p -> handle of
//! |                          |  index partition p; the footer's index handle
//! | properties, metaindex, footer as above
//!
//! range-deletion block entry (block format, restart interval 1, internal-key
//! order; RocksDB's layout): key = internal key (start, seq, RangeDeletion 0x0F),
//! value = end user key, start < end. Writers store tombstones fragmented (no
//! two entries' ranges overlap unless their starts and ends are equal); readers
//! fragment whatever they find, so reads do not depend on it
//!
//! block trailer (5 bytes)
//! +------------------+------------------------------------------------+
//! | compression: u8  | checksum: fixed32 LE over block bytes + type   |
//! +------------------+------------------------------------------------+
//!
//! block handle: offset varint64 | size varint64   (size excludes the trailer)
//!
//! footer (57 bytes)
//! +------+-----------------------------------------+---------+----------+---------+
//! | 0    | 1..41                                   | 41..45  | 45..49   | 49..57  |
//! | csum | metaindex handle, index handle, zero    | format  | footer   | magic   |
//! | type | padding to 40 bytes                     | version | checksum | fixed64 |
//! | u8   | (varints)                               | fixed32 | fixed32  |         |
//! +------+-----------------------------------------+---------+----------+---------+
//! footer checksum = masked crc32c of bytes 0..45
//! format version: 1 = one index block, no range-deletion block; 2 = one
//! index block and a range-deletion block, which a reader of version 1 would
//! ignore, so it must refuse the file; 3 = a two-level index (a reader of
//! versions 1 and 2 would take index partitions for data blocks), a
//! range-deletion block optional, a filter whole, partitioned or absent.
//! Only version 3 may have a partitioned filter
//! ```
//!
//! Readers start from the last footer. The blocks it leads to tile the file
//! with no gaps, but for one shape: in an ingested table, the properties,
//! metaindex and footer a global seqno tail superseded lie between the index
//! and the tail. So every byte is covered by a block checksum, a trailer, or
//! a footer checksum; `verify` checks the tiling too, and that the bytes
//! superseded are exactly that.

use crate::encoding::{put_varint64, Decoder, MAX_VARINT64_LEN};

/// Magic number ending every table file ("STRATAsb" read as little-endian bytes).
pub const TABLE_MAGIC: u64 = u64::from_le_bytes(*b"STRATAsb");
/// The format of tables without range tombstones: still written for them, so
/// that earlier builds keep reading every table they can read correctly.
pub const FORMAT_VERSION_PLAIN: u32 = 1;
/// The format of tables with a range-deletion block. A build that reads only
/// version 1 refuses these instead of ignoring their deletions.
pub const FORMAT_VERSION_RANGE_DEL: u32 = 2;
/// The format of tables with a two-level (partitioned) index, with or
/// without range tombstones and with a whole, partitioned or no filter.
/// Builds that read only versions 1 and 2 refuse these instead of reading
/// index partitions as data blocks.
pub const FORMAT_VERSION_TWO_LEVEL_INDEX: u32 = 3;
/// The newest table format this build reads (and the one it writes for a
/// two-level index).
pub const LATEST_FORMAT_VERSION: u32 = FORMAT_VERSION_TWO_LEVEL_INDEX;
/// Bytes after every block: compression type + checksum.
pub const BLOCK_TRAILER_LEN: usize = 5;
/// Room reserved in the footer for the two block handles.
pub const FOOTER_HANDLES_LEN: usize = 4 * MAX_VARINT64_LEN;
/// Size of the footer at the end of every table file.
pub const FOOTER_LEN: usize = 1 + FOOTER_HANDLES_LEN + 4 + 4 + 8;

/// Name of the full-file bloom filter in the metaindex.
pub const FILTER_BLOCK_NAME: &[u8] = b"strata.filter.bloom";
/// Name of the top-level index of a partitioned bloom filter in the
/// metaindex (RocksDB names its own `partitionedfilter.<policy>`).
pub const PARTITIONED_FILTER_BLOCK_NAME: &[u8] = b"strata.filter.partitioned.bloom";
/// Name of the properties block in the metaindex.
pub const PROPERTIES_BLOCK_NAME: &[u8] = b"strata.properties";
/// Name of the range-deletion block in the metaindex (RocksDB's name).
pub const RANGE_DEL_BLOCK_NAME: &[u8] = b"rocksdb.range_del";

/// The trailer of a block of `contents` stored with `compression`: the
/// type byte, then the checksum of the contents and that byte.
pub fn block_trailer(
    contents: &[u8],
    compression: crate::compression::CompressionType,
    checksum: crate::checksum::ChecksumType,
) -> [u8; BLOCK_TRAILER_LEN] {
    let type_byte = compression.code();
    let crc = checksum.checksum_with_byte(contents, type_byte);
    let mut trailer = [0u8; BLOCK_TRAILER_LEN];
    trailer[0] = type_byte;
    trailer[1..].copy_from_slice(&crc.to_le_bytes());
    trailer
}

/// Where a block lives in the file: its offset and its size without the trailer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Length of the stored (possibly compressed) block, trailer excluded.
    pub size: u64,
}

impl BlockHandle {
    /// Appends the varint encoding.
    pub fn encode_to(&self, dst: &mut Vec<u8>) {
        put_varint64(dst, self.offset);
        put_varint64(dst, self.size);
    }

    /// Reads a handle; `None` if the bytes are not two varints.
    pub fn decode_from(d: &mut Decoder<'_>) -> Option<Self> {
        Some(BlockHandle {
            offset: d.varint64()?,
            size: d.varint64()?,
        })
    }

    /// Offset just past this block's trailer; `None` on overflow.
    pub fn end_with_trailer(&self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(BLOCK_TRAILER_LEN as u64)
    }
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footer {
    /// Checksum type byte (validated by the reader).
    pub checksum_code: u8,
    /// Where the metaindex block is.
    pub metaindex: BlockHandle,
    /// Where the index block is.
    pub index: BlockHandle,
    /// Table format version.
    pub format_version: u32,
}

impl Footer {
    /// Encodes the footer into exactly [`FOOTER_LEN`] bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        out.push(self.checksum_code);
        self.metaindex.encode_to(&mut out);
        self.index.encode_to(&mut out);
        out.resize(1 + FOOTER_HANDLES_LEN, 0);
        out.extend_from_slice(&self.format_version.to_le_bytes());
        let crc = crate::checksum::mask_crc(crc32c::crc32c(&out));
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&TABLE_MAGIC.to_le_bytes());
        out
    }

    /// Decodes and checks a footer; the error is a reason for `Error::Corruption`.
    pub fn decode(bytes: &[u8]) -> Result<Footer, String> {
        if bytes.len() != FOOTER_LEN {
            return Err(format!(
                "footer is {} bytes, expected {FOOTER_LEN}",
                bytes.len()
            ));
        }
        let mut d = Decoder::new(bytes);
        let checksum_code = d.u8().ok_or("footer truncated")?;
        let handles = d.bytes(FOOTER_HANDLES_LEN).ok_or("footer truncated")?;
        let format_version = d.fixed32().ok_or("footer truncated")?;
        let stored_crc = d.fixed32().ok_or("footer truncated")?;
        let magic = d.fixed64().ok_or("footer truncated")?;
        if magic != TABLE_MAGIC {
            return Err(format!(
                "bad magic number {magic:#018x}: not a Strata table file"
            ));
        }
        let covered = bytes
            .get(..1 + FOOTER_HANDLES_LEN + 4)
            .ok_or("footer truncated")?;
        let actual = crate::checksum::mask_crc(crc32c::crc32c(covered));
        if actual != stored_crc {
            return Err(format!(
                "footer checksum mismatch: stored {stored_crc:#010x}, computed {actual:#010x}"
            ));
        }
        if !(FORMAT_VERSION_PLAIN..=LATEST_FORMAT_VERSION).contains(&format_version) {
            return Err(format!("unsupported table format version {format_version}"));
        }
        let mut hd = Decoder::new(handles);
        let metaindex = BlockHandle::decode_from(&mut hd).ok_or("bad metaindex handle")?;
        let index = BlockHandle::decode_from(&mut hd).ok_or("bad index handle")?;
        if hd.remaining().iter().any(|&b| b != 0) {
            return Err("nonzero footer padding".into());
        }
        Ok(Footer {
            checksum_code,
            metaindex,
            index,
            format_version,
        })
    }
}

/// Checks that the metaindex lists the meta blocks the footer's format
/// version allows: version 1 no range-deletion block, version 2 one,
/// version 3 either; a partitioned filter only in version 3 (it needs the
/// two-level index's separators); at most one filter. The error is a reason
/// for `Error::Corruption`.
pub fn check_meta_blocks(
    version: u32,
    range_del: bool,
    full_filter: bool,
    partitioned_filter: bool,
) -> Result<(), String> {
    let range_del_allowed = match version {
        FORMAT_VERSION_PLAIN => Some(false),
        FORMAT_VERSION_RANGE_DEL => Some(true),
        _ => None,
    };
    if range_del_allowed.is_some_and(|required| required != range_del) {
        let verb = if range_del { "cannot have" } else { "lacks" };
        return Err(format!(
            "table format version {version} {verb} a range-deletion block"
        ));
    }
    if partitioned_filter && version <= FORMAT_VERSION_RANGE_DEL {
        return Err(format!(
            "table format version {version} cannot have a partitioned filter"
        ));
    }
    if partitioned_filter && full_filter {
        return Err("metaindex lists both a whole and a partitioned filter".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_golden_bytes() {
        let f = Footer {
            checksum_code: 4,
            metaindex: BlockHandle {
                offset: 300,
                size: 20,
            },
            index: BlockHandle {
                offset: 325,
                size: 1,
            },
            format_version: 1,
        };
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        // type, metaindex (300 = ac 02, 20 = 14), index (325 = c5 02, 1 = 01)
        assert_eq!(&bytes[..8], &[4, 0xac, 0x02, 0x14, 0xc5, 0x02, 0x01, 0]);
        assert!(bytes[8..41].iter().all(|&b| b == 0));
        assert_eq!(&bytes[41..45], &[1, 0, 0, 0]);
        assert_eq!(&bytes[49..], b"STRATAsb");
        assert_eq!(Footer::decode(&bytes), Ok(f));
        // A two-level index changes only the version and the checksum.
        let two_level = Footer {
            format_version: FORMAT_VERSION_TWO_LEVEL_INDEX,
            ..f
        };
        let v3 = two_level.encode();
        assert_eq!(&v3[..41], &bytes[..41]);
        assert_eq!(&v3[41..45], &[3, 0, 0, 0]);
        assert_eq!(&v3[49..], &bytes[49..]);
        assert_eq!(Footer::decode(&v3), Ok(two_level));
    }

    #[test]
    fn versions_one_to_three_open_and_later_ones_are_refused() {
        let footer = |format_version| Footer {
            checksum_code: 4,
            metaindex: BlockHandle { offset: 7, size: 9 },
            index: BlockHandle { offset: 0, size: 7 },
            format_version,
        };
        for v in [
            FORMAT_VERSION_PLAIN,
            FORMAT_VERSION_RANGE_DEL,
            FORMAT_VERSION_TWO_LEVEL_INDEX,
        ] {
            assert_eq!(Footer::decode(&footer(v).encode()), Ok(footer(v)));
        }
        for v in [0, 4, u32::MAX] {
            let err = Footer::decode(&footer(v).encode()).unwrap_err();
            assert!(err.contains("unsupported table format version"), "{err}");
        }
    }

    #[test]
    fn every_footer_byte_is_checked() {
        let f = Footer {
            checksum_code: 1,
            metaindex: BlockHandle { offset: 7, size: 9 },
            index: BlockHandle {
                offset: 21,
                size: 3,
            },
            format_version: LATEST_FORMAT_VERSION,
        };
        let bytes = f.encode();
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            assert!(
                Footer::decode(&bad).is_err(),
                "flip at byte {i} went unnoticed"
            );
        }
    }
}
