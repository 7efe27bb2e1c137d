//! The super version: everything a read needs, published as one immutable unit.
//!
//! Readers load the current `Arc<SuperVersion>` from an `ArcSwap` without taking
//! the DB mutex and keep it for the whole read, so a memtable switch or a flush
//! installing a new version never changes what an in-flight read sees.

use std::sync::Arc;

use crate::memtable::MemTable;
use crate::version::version::Version;

/// The active memtable, the immutable ones waiting to be flushed (newest first),
/// and the current version.
#[derive(Debug)]
pub struct SuperVersion {
    /// Takes new writes.
    pub mem: Arc<MemTable>,
    /// Full memtables not yet flushed, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// The live table files.
    pub version: Arc<Version>,
}
