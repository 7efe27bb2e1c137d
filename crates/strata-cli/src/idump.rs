//! `idump`: every stored version of the keys in a range, in ldb's format.
//!
//! ldb prints `'key' seq:N, type:T => value` per version and then
//! `Internal keys in range: N`; with `--hex` (or `--key_hex`/`--value_hex`)
//! the bytes are upper-case hex digits without `0x`, as RocksDB's
//! `Slice::ToString(true)` writes them. Strata also lists the range
//! tombstones (type 15, the value being the end key) where ldb shows only
//! point entries. Values kept in blob files show as their references
//! (type 17), decoded with `--decode_blob_index` as in ldb.

use std::io::Write;

use clap::Args;
use strata::{DbOptions, ValueType};

use crate::cli_error::{context, stdout_error, CliResult};
use crate::db_cmd::RangeArgs;
use crate::db_flags::{with_db_read_only, with_stdout, DbFlags};
use crate::hex;

#[derive(Debug, Args)]
pub struct IdumpArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    #[command(flatten)]
    range: RangeArgs,
    /// Print only the count.
    #[arg(long = "count_only")]
    count_only: bool,
    /// Print blob references (type 17, values kept in blob files) decoded,
    /// as `[blob ref] file_number: N offset: O size: S compression: C`.
    #[arg(long = "decode_blob_index")]
    decode_blob_index: bool,
}

pub fn run(flags: &DbFlags, a: &IdumpArgs) -> CliResult {
    let (key_hex, value_hex) = (flags.is_key_hex(), flags.is_value_hex());
    let range = a.range.resolve(flags)?;
    let limit = usize::try_from(range.limit).unwrap_or(usize::MAX);
    let versions = with_db_read_only(flags, DbOptions::default(), |db, cf| {
        db.get_all_key_versions(cf, range.from.as_deref(), range.to.as_deref(), limit)
            .map_err(context("Failed to read the key versions"))
    })?;
    with_stdout(|out| {
        let mut line = Vec::new();
        if !a.count_only {
            for version in &versions {
                line.clear();
                line.push(b'\'');
                append(&mut line, &version.user_key, key_hex);
                let kind = version.value_type as u8;
                write!(line, "' seq:{}, type:{kind} => ", version.sequence)
                    .map_err(stdout_error)?;
                if version.value_type == ValueType::BlobIndex && a.decode_blob_index {
                    let shown = crate::sst::show_blob_index(&version.value, value_hex, true);
                    line.extend_from_slice(shown.as_bytes());
                } else {
                    append(&mut line, &version.value, value_hex);
                }
                line.push(b'\n');
                out.write_all(&line).map_err(stdout_error)?;
            }
        }
        writeln!(out, "Internal keys in range: {}", versions.len()).map_err(stdout_error)
    })
}

/// The bytes raw, or as hex digits without `0x` (ldb's idump form).
fn append(line: &mut Vec<u8>, bytes: &[u8], as_hex: bool) {
    match as_hex {
        true => hex::append_digits(line, bytes),
        false => line.extend_from_slice(bytes),
    }
}
