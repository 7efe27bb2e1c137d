//! The super version: everything a read needs, published as one immutable unit.
//!
//! Readers load the current `Arc<SuperVersion>` from an `ArcSwap` without taking
//! the DB mutex and keep it for the whole read, so a memtable switch or a flush
//! installing a new version never changes what an in-flight read sees.

use std::sync::Arc;

use crate::memtable::MemTable;
use crate::options::CfOptions;
use crate::version::version::Version;

/// One column family's active memtable, the immutable ones waiting to be
/// flushed (newest first), its current version and its options.
#[derive(Debug)]
pub struct SuperVersion {
    /// Takes new writes.
    pub mem: Arc<MemTable>,
    /// Full memtables not yet flushed, newest first.
    pub imm: Vec<Arc<MemTable>>,
    /// The live table files.
    pub version: Arc<Version>,
    /// The family's options as of this super version (`set_options` publishes
    /// a new one).
    pub options: Arc<CfOptions>,
}
