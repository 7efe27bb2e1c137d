//! Key-value separation: values of at least `min_blob_size` bytes live in
//! blob files (`NNNNNN.blob`), and the tree holds a small reference to each.
//! `format.rs` draws the bytes (and `docs/format/blob.md`), `writer.rs`
//! writes a file, `reader.rs` opens one, fetches a value by reference and
//! walks its records.

pub mod builder;
pub mod format;
pub mod reader;
pub mod source;
pub mod writer;

#[cfg(test)]
mod tests;

pub use builder::{remove_blob_files, BlobFileBuilder, BlobOutput};
pub use format::{BlobFooter, BlobHeader, BlobRef};
pub use reader::{BlobFileReader, BlobRecord};
pub use source::{BlobRead, BlobSource, BlobValues};
pub use writer::{BlobFileWriter, BuiltBlobFile};
