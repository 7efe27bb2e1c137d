//! Block-based table files (SSTs): immutable sorted runs of internal keys.
//!
//! The byte layout is drawn in [`format`]; [`block`] holds the entry format shared
//! by data, index, metaindex and properties blocks.

pub mod block;
pub mod block_builder;
pub mod format;
