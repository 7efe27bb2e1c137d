//! The write-ahead log record format (also the MANIFEST's): a file of 32 KiB
//! blocks holding checksummed fragments of records. The byte layout is drawn in
//! [`format`] and `docs/format/wal.md`.

pub mod format;
pub mod reader;
pub mod writer;

pub use reader::{read_all_records, LogReader, TornTail};
pub use writer::LogWriter;

#[cfg(test)]
mod tests;
