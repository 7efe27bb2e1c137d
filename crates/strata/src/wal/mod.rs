//! The write-ahead log record format (also the MANIFEST's): a file of 32 KiB
//! blocks holding checksummed fragments of records. The byte layout is drawn in
//! [`mod@format`] and `docs/format/wal.md`.
//!
//! - [`LogWriter`] appends each record with one `append` call, so a group commit
//!   is one write and a crash tears at most the record being written.
//! - [`LogReader`] returns whole records with their file offsets, and tells the
//!   end of the data apart three ways: a clean end (`Ok(None)`), a torn tail
//!   (`Ok(None)` with [`LogReader::torn_tail`] set: what a crash mid-write
//!   leaves), or corruption (`Error::Corruption` with the bad fragment's offset:
//!   damage with more data after it). Recovery decides what each means.

pub mod format;
pub mod meta;
pub mod reader;
pub mod writer;

/// Bit of [`WAL_FEATURES`]: a WAL may start with a [`meta`] record (the
/// predecessor record of a memtable switch). Versions before it read that
/// record as a damaged batch and would stop replay at it, dropping the
/// whole WAL; the MANIFEST's `wal_features` field makes them refuse instead.
pub const WAL_FEATURE_METADATA_RECORDS: u64 = 1;

/// Every WAL feature this version writes and reads; every MANIFEST it
/// writes records them.
pub const WAL_FEATURES: u64 = WAL_FEATURE_METADATA_RECORDS;

pub use reader::{read_all_records, read_records_skipping_damage, LogReader, TornTail};
pub use writer::LogWriter;

#[cfg(test)]
mod tests;
