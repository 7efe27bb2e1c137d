//! `dump --path=NNNNNN.blob`: prints a blob file's header, each record (its
//! offset, key, stored and value sizes, compression) and, with
//! `--dump_uncompressed_blobs`, each value, as ldb's blob dump does; then the
//! footer's counts, once every record has checked out against them.

use std::io::Write;
use std::path::Path;

use strata::blob::BlobFileReader;
use strata::fs::{Fs, ReadFileOptions, StdFs};

use crate::cli_error::{stdout_error, CliError, CliResult};
use crate::db_flags::with_stdout;
use crate::hex;

/// How keys and values are shown.
#[derive(Debug, Clone, Copy)]
pub struct Show {
    pub key_hex: bool,
    pub value_hex: bool,
    /// Print each value, decompressed.
    pub values: bool,
}

/// Dumps blob file `path`.
pub fn dump_blob_file(path: &Path, show: Show) -> CliResult {
    let failed = |e: strata::Error| CliError::Failed(e.to_string());
    let file = StdFs
        .open(path, ReadFileOptions::default())
        .map_err(failed)?;
    let reader = BlobFileReader::open(file, path).map_err(failed)?;
    let header = reader.header();
    let footer = reader.footer();
    with_stdout(|out| {
        writeln!(out, "Blob file: {}", path.display()).map_err(stdout_error)?;
        writeln!(out, "  Column family ID : {}", header.column_family_id).map_err(stdout_error)?;
        writeln!(out, "  Compression      : {}", header.compression.name())
            .map_err(stdout_error)?;
        writeln!(out, "  File size        : {}", reader.file_size()).map_err(stdout_error)?;
        for record in reader.records() {
            let record = record.map_err(failed)?;
            writeln!(
                out,
                "Record at offset {}: key '{}' ({} bytes), value {} bytes, stored {} bytes ({})",
                record.offset,
                hex::show(&record.key, show.key_hex),
                record.key.len(),
                record.value.len(),
                record.stored_len,
                record.compression.name()
            )
            .map_err(stdout_error)?;
            if show.values {
                writeln!(out, "  value: {}", hex::show(&record.value, show.value_hex))
                    .map_err(stdout_error)?;
            }
        }
        writeln!(
            out,
            "Footer: {} records, {} stored value bytes",
            footer.record_count, footer.value_bytes
        )
        .map_err(stdout_error)
    })
}
