//! The write path: [`WriteBatch`], the unit of atomicity that the commit leader
//! numbers, writes to the WAL as one record, and inserts into the memtable.
//!
//! Byte layout: `batch.rs` and `docs/format/write_batch.md`.

pub mod batch;

pub use batch::{BatchEntry, BatchIter, WriteBatch, MAX_KEY_SIZE, MAX_VALUE_SIZE};
