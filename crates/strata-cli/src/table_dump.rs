//! A table's every entry as stored (sst_dump's `--command=raw`, and what
//! ldb's `dump_live_files` prints per table): each internal key with its
//! sequence number and type, newest version first, then the range
//! tombstones of the range-deletion block.

use std::io::Write;
use std::sync::Arc;

use strata::iter::InternalIterator;
use strata::key::ParsedInternalKey;
use strata::table::TableReader;
use strata::ReadOptions;

use crate::cli_error::{stdout_error, CliResult};
use crate::hex;
use crate::sst::show_blob_index;

/// RocksDB's type number of a range deletion (`kTypeRangeDeletion`).
const RANGE_DELETION_TYPE: u8 = 0xF;

/// Writes `'key' seq:N, type:T => value` for every entry of `table`.
pub fn dump_raw(table: &Arc<TableReader>, hex_output: bool, out: &mut impl Write) -> CliResult {
    let quoted = |bytes: &[u8]| match hex_output {
        true => hex::show(bytes, true),
        false => format!("'{}'", hex::show(bytes, false)),
    };
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    while it.valid() {
        let parsed = ParsedInternalKey::parse(it.key())
            .ok_or_else(|| format!("Corruption: {}: malformed key", table.path().display()))?;
        let value = match parsed.value_type() {
            Some(strata::ValueType::BlobIndex) => show_blob_index(it.value(), hex_output, true),
            _ => hex::show(it.value(), hex_output),
        };
        writeln!(
            out,
            "{} seq:{}, type:{} => {value}",
            quoted(parsed.user_key),
            parsed.seq,
            parsed.type_code
        )
        .map_err(stdout_error)?;
        it.next();
    }
    it.status()?;
    for t in table.range_tombstones().tombstones() {
        writeln!(
            out,
            "{} seq:{}, type:{RANGE_DELETION_TYPE} => {}",
            quoted(t.start()),
            t.seq(),
            hex::show(t.end(), hex_output)
        )
        .map_err(stdout_error)?;
    }
    Ok(())
}
