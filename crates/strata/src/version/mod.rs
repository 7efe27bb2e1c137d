//! Versions: which table files are live, at which level.
//!
//! A version changes only through a [`VersionEdit`] appended to the MANIFEST;
//! replaying the MANIFEST's edits in order rebuilds the current version at open.
//! Byte layout: `edit.rs` and `docs/format/manifest.md`.

pub mod blob_files;
pub mod edit;
pub mod file_index;
pub mod set;
pub mod super_version;
#[allow(clippy::module_inception)]
pub mod version;

pub use blob_files::{BlobFileAddition, BlobFileGarbage, BlobFileMeta, GarbageTally};
pub use edit::{
    FileMetaData, VersionEdit, BYTEWISE_COMPARATOR_NAME, DEFAULT_COLUMN_FAMILY_NAME, MAX_LEVELS,
};
pub use file_index::FileSearch;
pub use set::VersionSet;
pub use super_version::SuperVersion;
pub use version::{Version, NUM_LEVELS};
