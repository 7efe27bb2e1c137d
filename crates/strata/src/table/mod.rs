//! Block-based table files (SSTs): immutable sorted runs of internal keys.
//!
//! The byte layout is drawn in [`mod@format`]; [`block`] holds the entry format shared
//! by data, index, metaindex and properties blocks. [`TableBuilder`] writes a
//! table, [`TableReader`] opens one for point reads, iteration and verification.

pub mod block;
pub mod block_builder;
pub mod builder;
pub mod cached;
pub mod filter;
pub mod format;
pub mod iter;
pub mod lookup;
pub mod partitioned_filter;
mod partitioned_index;
mod partitioner;
pub mod prefetch;
pub mod properties;
pub mod reader;
pub mod seqno_tail;
pub mod sst_file_writer;
mod two_level;
mod verify;

pub use builder::{BuiltTable, TableBuilder};
pub use cached::MetaPinning;
pub use iter::TableIterator;
pub use lookup::TableLookup;
pub use partitioned_filter::{FilterQuery, TableFilter};
pub use properties::TableProperties;
pub use reader::{TableEntry, TableReader};
pub use sst_file_writer::{ExternalSstFileInfo, SstFileWriter};
pub use verify::VerifyReport;

#[cfg(test)]
mod partitioned_tests;
#[cfg(test)]
mod range_del_tests;
#[cfg(test)]
mod seqno_tail_tests;
#[cfg(test)]
mod tests;
