//! Options. Names and meanings follow RocksDB's wherever RocksDB has the option, so
//! a user's RocksDB knowledge carries over. Every field states its default and its
//! trade-off; [`TableOptions::validate`] runs before use and names the bad field.

use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::error::{Error, Result};

/// How table files are built (RocksDB's `BlockBasedTableOptions` plus the
/// compression setting that RocksDB keeps in column family options).
#[derive(Debug, Clone, PartialEq)]
pub struct TableOptions {
    /// Target uncompressed size of a data block, in bytes. Default 4096.
    /// Larger blocks compress better and shrink the index, but a point read must
    /// read and checksum the whole block.
    pub block_size: usize,
    /// Keys between restart points in data blocks. Default 16. Smaller makes seeks
    /// within a block faster and blocks larger (less prefix compression).
    pub block_restart_interval: usize,
    /// Bits per key of the full-file bloom filter; 0 disables it. Default 10
    /// (about 1% false positives). Each bit per key costs memory and saves reads
    /// for keys that are absent.
    pub bloom_bits_per_key: f64,
    /// Codec for data blocks. Default snappy, as RocksDB. A block stays
    /// uncompressed when compression would save less than 12.5%.
    pub compression: CompressionType,
    /// Block checksum function. Default xxh3 (RocksDB's `kXXH3`, code 4).
    pub checksum: ChecksumType,
}

impl Default for TableOptions {
    fn default() -> Self {
        TableOptions {
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: 10.0,
            compression: CompressionType::Snappy,
            checksum: ChecksumType::Xxh3,
        }
    }
}

/// Largest accepted `block_size` (256 MiB).
pub const MAX_BLOCK_SIZE: usize = 256 << 20;

impl TableOptions {
    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.block_size == 0 || self.block_size > MAX_BLOCK_SIZE {
            return Err(Error::invalid_argument(
                "block_size",
                format!("{} is outside 1..={MAX_BLOCK_SIZE}", self.block_size),
            ));
        }
        if self.block_restart_interval == 0 || self.block_restart_interval > u32::MAX as usize {
            return Err(Error::invalid_argument(
                "block_restart_interval",
                format!("{} must be at least 1", self.block_restart_interval),
            ));
        }
        if !(0.0..=100.0).contains(&self.bloom_bits_per_key) {
            return Err(Error::invalid_argument(
                "bloom_bits_per_key",
                format!("{} is outside 0..=100", self.bloom_bits_per_key),
            ));
        }
        if let CompressionType::Zstd { level } = self.compression {
            if !(1..=22).contains(&level) {
                return Err(Error::invalid_argument(
                    "compression_level",
                    format!("zstd level {level} is outside 1..=22"),
                ));
            }
        }
        Ok(())
    }
}

/// Options for one read (RocksDB's `ReadOptions`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOptions {
    /// Verify the checksum of every data block read. Default true. Index and
    /// filter blocks are verified when loaded whatever this says.
    pub verify_checksums: bool,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_checksums: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(o: &TableOptions) -> Option<&'static str> {
        match o.validate() {
            Err(Error::InvalidArgument { field, .. }) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn defaults_are_valid() {
        assert!(TableOptions::default().validate().is_ok());
    }

    #[test]
    fn invalid_fields_are_named() {
        let mut o = TableOptions {
            block_size: 0,
            ..Default::default()
        };
        assert_eq!(field_of(&o), Some("block_size"));
        o.block_size = 4096;
        o.block_restart_interval = 0;
        assert_eq!(field_of(&o), Some("block_restart_interval"));
        o.block_restart_interval = 16;
        o.bloom_bits_per_key = -1.0;
        assert_eq!(field_of(&o), Some("bloom_bits_per_key"));
        o.bloom_bits_per_key = f64::NAN;
        assert_eq!(field_of(&o), Some("bloom_bits_per_key"));
        o.bloom_bits_per_key = 10.0;
        o.compression = CompressionType::Zstd { level: 99 };
        assert_eq!(field_of(&o), Some("compression_level"));
    }
}
