//! Versions: which table files are live, at which level.
//!
//! A version changes only through a [`VersionEdit`] appended to the MANIFEST;
//! replaying the MANIFEST's edits in order rebuilds the current version at open.
//! Byte layout: `edit.rs` and `docs/format/manifest.md`.

pub mod edit;

pub use edit::{FileMetaData, VersionEdit, BYTEWISE_COMPARATOR_NAME, MAX_LEVELS};
