//! Block compression: none, snappy, lz4, zstd.
//!
//! A compressed block is stored as `varint32 uncompressed_len | codec bytes`. The
//! declared length lets decompression allocate exactly once, and it is checked
//! against the most a codec can expand its input, so a corrupt length cannot ask for
//! more memory than the stored bytes could ever justify. The numeric codes match
//! RocksDB's `CompressionType`.

use std::cell::RefCell;

use crate::encoding::{put_varint32, Decoder};
use crate::error::{Error, Result};

thread_local! {
    // zstd contexts are costly to create (tens of KiB of tables); creating one per
    // 4 KiB block made zstd several times slower than the codec itself. Each thread
    // keeps one decompressor and one compressor (for the last level used).
    static ZSTD_DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
    static ZSTD_COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
}

fn zstd_compress(raw: &[u8], out: &mut [u8], level: i32) -> std::io::Result<usize> {
    ZSTD_COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.as_ref().is_none_or(|(l, _)| *l != level) {
            *slot = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        match slot.as_mut() {
            Some((_, c)) => c.compress_to_buffer(raw, out),
            None => zstd::bulk::compress_to_buffer(raw, out, level),
        }
    })
}

fn zstd_decompress(body: &[u8], out: &mut [u8]) -> std::io::Result<usize> {
    ZSTD_DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new()?);
        }
        match slot.as_mut() {
            Some(d) => d.decompress_to_buffer(body, out),
            None => zstd::bulk::decompress_to_buffer(body, out),
        }
    })
}

/// Compression codec for a block.
///
/// ```
/// use strata::CompressionType;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(CompressionType::parse("kZSTD")?, CompressionType::Zstd { level: 3 });
/// let raw = b"abcdefgh".repeat(100);
/// let mut stored = Vec::new();
/// CompressionType::Lz4.compress_into(&raw, &mut stored)?;
/// assert!(stored.len() < raw.len());
/// assert_eq!(CompressionType::Lz4.decompress(&stored)?, raw);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompressionType {
    /// Stored as is (code 0).
    #[default]
    None,
    /// Snappy raw format (code 1).
    Snappy,
    /// LZ4 block format (code 4).
    Lz4,
    /// Zstandard at the given level (code 7); the level is not stored.
    Zstd {
        /// Compression level, 1..=22; higher is smaller and slower. Default 3.
        level: i32,
    },
}

/// Largest block the engine will decompress (1 GiB): a hard cap on any allocation a
/// block header can ask for.
pub const MAX_UNCOMPRESSED_BLOCK_LEN: usize = 1 << 30;

impl CompressionType {
    /// The byte stored in a block trailer.
    pub fn code(self) -> u8 {
        match self {
            CompressionType::None => 0,
            CompressionType::Snappy => 1,
            CompressionType::Lz4 => 4,
            CompressionType::Zstd { .. } => 7,
        }
    }

    /// Parses a trailer byte. Zstd decoding does not need the level.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(CompressionType::None),
            1 => Some(CompressionType::Snappy),
            4 => Some(CompressionType::Lz4),
            7 => Some(CompressionType::Zstd { level: 3 }),
            _ => None,
        }
    }

    /// Lower-case name used by options and tools.
    pub fn name(self) -> &'static str {
        match self {
            CompressionType::None => "none",
            CompressionType::Snappy => "snappy",
            CompressionType::Lz4 => "lz4",
            CompressionType::Zstd { .. } => "zstd",
        }
    }

    /// Parses `none|snappy|lz4|zstd` (and RocksDB's `kSnappyCompression` spellings).
    pub fn parse(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "none" | "no" | "knocompression" => Ok(CompressionType::None),
            "snappy" | "ksnappycompression" => Ok(CompressionType::Snappy),
            "lz4" | "klz4compression" => Ok(CompressionType::Lz4),
            "zstd" | "kzstd" => Ok(CompressionType::Zstd { level: 3 }),
            _ => Err(Error::invalid_argument(
                "compression",
                format!("unknown compression {s:?}; expected none, snappy, lz4 or zstd"),
            )),
        }
    }

    /// The most output one input byte can produce, bounding the declared length.
    fn max_expansion(self) -> usize {
        match self {
            CompressionType::None => 1,
            // A 3-byte copy op emits at most 64 bytes.
            CompressionType::Snappy => 32,
            // Each 255-valued length byte adds at most 255 output bytes.
            CompressionType::Lz4 => 256,
            // An RLE block of up to 128 KiB costs 4 bytes (3 header + 1 byte).
            CompressionType::Zstd { .. } => 32 * 1024 + 1,
        }
    }

    /// Compresses `raw`, appending `varint32 len | codec bytes` to `out`.
    pub fn compress_into(self, raw: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let raw_len = u32::try_from(raw.len())
            .ok()
            .filter(|&n| n as usize <= MAX_UNCOMPRESSED_BLOCK_LEN)
            .ok_or_else(|| Error::invalid_argument("block_size", "a block may not exceed 1 GiB"))?;
        if self == CompressionType::None {
            out.extend_from_slice(raw);
            return Ok(());
        }
        put_varint32(out, raw_len);
        let start = out.len();
        match self {
            CompressionType::None => {}
            CompressionType::Snappy => {
                out.resize(start + snap::raw::max_compress_len(raw.len()), 0);
                let n = snap::raw::Encoder::new()
                    .compress(raw, &mut out[start..])
                    .map_err(|e| Error::invalid_argument("compression", e.to_string()))?;
                out.truncate(start + n);
            }
            CompressionType::Lz4 => {
                out.resize(
                    start + lz4_flex::block::get_maximum_output_size(raw.len()),
                    0,
                );
                let n = lz4_flex::block::compress_into(raw, &mut out[start..])
                    .map_err(|e| Error::invalid_argument("compression", e.to_string()))?;
                out.truncate(start + n);
            }
            CompressionType::Zstd { level } => {
                let bound = zstd::zstd_safe::compress_bound(raw.len());
                out.resize(start + bound, 0);
                let n = zstd_compress(raw, &mut out[start..], level)
                    .map_err(|e| Error::invalid_argument("compression", e.to_string()))?;
                out.truncate(start + n);
            }
        }
        Ok(())
    }

    /// Decompresses a stored block. `None` input is returned as is by the caller and
    /// never reaches here. Errors carry only a reason; the caller adds file and offset.
    pub fn decompress(self, stored: &[u8]) -> std::result::Result<Vec<u8>, String> {
        let mut d = Decoder::new(stored);
        let declared = d
            .varint32()
            .ok_or("compressed block has no valid length prefix")? as usize;
        let body = d.remaining();
        let limit = body
            .len()
            .saturating_mul(self.max_expansion())
            .min(MAX_UNCOMPRESSED_BLOCK_LEN);
        if declared > limit {
            return Err(format!(
                "declared uncompressed length {declared} is impossible for {} bytes of {}",
                body.len(),
                self.name()
            ));
        }
        let mut out = vec![0u8; declared];
        let produced = match self {
            CompressionType::None => return Err("uncompressed block passed to decompress".into()),
            CompressionType::Snappy => {
                let n = snap::raw::decompress_len(body).map_err(|e| e.to_string())?;
                if n != declared {
                    return Err(format!(
                        "snappy length {n} differs from declared {declared}"
                    ));
                }
                snap::raw::Decoder::new()
                    .decompress(body, &mut out)
                    .map_err(|e| format!("snappy: {e}"))?
            }
            CompressionType::Lz4 => {
                lz4_flex::block::decompress_into(body, &mut out).map_err(|e| format!("lz4: {e}"))?
            }
            CompressionType::Zstd { .. } => {
                zstd_decompress(body, &mut out).map_err(|e| format!("zstd: {e}"))?
            }
        };
        if produced != declared {
            return Err(format!(
                "{} produced {produced} bytes, block declared {declared}",
                self.name()
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CODECS: [CompressionType; 3] = [
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd { level: 3 },
    ];

    #[test]
    fn roundtrip_each_codec() {
        let raw: Vec<u8> = (0..10_000u32)
            .flat_map(|i| (i % 97).to_le_bytes())
            .collect();
        for c in CODECS {
            let mut out = Vec::new();
            c.compress_into(&raw, &mut out).unwrap();
            assert!(out.len() < raw.len() / 2, "{} did not compress", c.name());
            assert_eq!(c.decompress(&out).unwrap(), raw);
        }
    }

    #[test]
    fn huge_declared_length_is_rejected_without_allocating() {
        for c in CODECS {
            let mut stored = Vec::new();
            put_varint32(&mut stored, u32::MAX);
            stored.extend_from_slice(&[0u8; 8]);
            let err = c.decompress(&stored).unwrap_err();
            assert!(err.contains("impossible"), "{err}");
        }
    }

    #[test]
    fn codes_and_names() {
        for c in CODECS.into_iter().chain([CompressionType::None]) {
            assert_eq!(
                CompressionType::from_code(c.code()).map(|x| x.code()),
                Some(c.code())
            );
            assert_eq!(CompressionType::parse(c.name()).unwrap().code(), c.code());
        }
        assert!(CompressionType::from_code(2).is_none());
        assert!(matches!(
            CompressionType::parse("brotli"),
            Err(Error::InvalidArgument {
                field: "compression",
                ..
            })
        ));
    }

    proptest! {
        #[test]
        fn roundtrip_random(raw in proptest::collection::vec(any::<u8>(), 0..3000)) {
            for c in CODECS {
                let mut out = Vec::new();
                c.compress_into(&raw, &mut out).unwrap();
                prop_assert_eq!(c.decompress(&out).unwrap(), raw.clone());
            }
        }

        #[test]
        fn garbage_never_panics(stored in proptest::collection::vec(any::<u8>(), 0..200)) {
            for c in CODECS {
                let _ = c.decompress(&stored);
            }
        }
    }
}
