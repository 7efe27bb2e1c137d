//! The write path: [`WriteBatch`], the unit of atomicity that the commit leader
//! numbers and writes to the WAL as one record, and the pieces of the commit
//! pipeline that do not depend on the database's state: the queue of writers
//! and the groups their leader forms (`commit.rs`), publishing committed
//! batches in sequence order (`publish.rs`), waiting without sleeping
//! (`spin.rs`), and the write controller: when compaction is far enough
//! behind to slow or stop writes, and how fast they may go (`controller.rs`).
//! The leader's steps that need the database — stalls, memtable
//! switches, the WAL write — are `db/write.rs`.
//!
//! Byte layout: `batch.rs` and `docs/format/write_batch.md`.

pub mod batch;
pub(crate) mod commit;
pub(crate) mod controller;
pub(crate) mod publish;
pub(crate) mod spin;
mod sync;

pub use batch::{BatchEntry, BatchIter, WriteBatch, MAX_KEY_SIZE, MAX_VALUE_SIZE};
