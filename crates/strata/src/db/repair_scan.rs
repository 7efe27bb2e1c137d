//! What `repair` reads: whatever part of a MANIFEST still reads, each table
//! and blob file, and the WALs, turned into tables. Nothing here changes the
//! directory but the tables written from WALs, which no MANIFEST names until
//! `repair` installs them.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::ingest::{at_seq, file_bounds};
use crate::blob::{BlobFileReader, BlobRef};
use crate::error::{Error, Result};
use crate::filename::{blob_file_name, log_file_name, manifest_file_name, table_file_name};
use crate::flush::{write_level0_table, TableOwner};
use crate::fs::{Fs, ReadFileOptions};
use crate::iter::InternalIterator;
use crate::key::{ParsedInternalKey, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::memtable::MemTable;
use crate::options::{CfOptions, ReadOptions};
use crate::table::properties::{TableProperties, EXTERNAL_SST_FILE_VERSION};
use crate::table::TableReader;
use crate::version::{BlobFileAddition, FileMetaData, VersionEdit};
use crate::wal::meta as wal_meta;
use crate::wal::reader::read_records_skipping_damage;
use crate::write::WriteBatch;

/// What the records of an old MANIFEST that still read say.
#[derive(Debug, Default)]
pub(super) struct ManifestHints {
    /// Live families by id, with their names.
    pub families: BTreeMap<u32, String>,
    /// Families the MANIFEST dropped.
    pub dropped: BTreeSet<u32>,
    /// Each family's log number: its writes in older WALs are in tables.
    pub log_numbers: BTreeMap<u32, u64>,
    /// The merge operator each family was opened with: its description
    /// (name and settings, `options::format_merge_operator`), or its name
    /// where the record has no description.
    pub merge_operators: BTreeMap<u32, String>,
    /// Every table file the records added: its family and global seqno.
    pub files: HashMap<u64, (u32, Option<SequenceNumber>)>,
    /// The tables the records leave live.
    pub live: HashSet<u64>,
    pub next_file_number: u64,
    pub last_sequence: SequenceNumber,
    /// Records read, and whether reading stopped at damage.
    pub records: usize,
    pub damaged: bool,
}

/// Reads MANIFEST `number` as far as its records are whole and decode;
/// a MANIFEST that cannot be read at all gives no hints.
pub(super) fn read_manifest_hints(fs: &dyn Fs, dir: &Path, number: u64) -> ManifestHints {
    let mut hints = ManifestHints::default();
    let path = manifest_file_name(dir, number);
    let bytes = match fs
        .open(&path, ReadFileOptions::default())
        .and_then(|f| f.read_at(0, usize::try_from(f.len()).unwrap_or(usize::MAX)))
    {
        Ok(bytes) => bytes,
        Err(_) => {
            hints.damaged = true;
            return hints;
        }
    };
    let (records, end) = crate::wal::reader::read_all_records(bytes);
    hints.damaged = end.is_err();
    for record in records {
        let Ok(edit) = VersionEdit::decode(&record) else {
            hints.damaged = true;
            break;
        };
        hints.fold(&edit);
        hints.records += 1;
    }
    hints
}

impl ManifestHints {
    fn fold(&mut self, edit: &VersionEdit) {
        let cf = edit.column_family;
        if cf == 0 {
            self.families
                .entry(0)
                .or_insert_with(|| crate::DEFAULT_COLUMN_FAMILY_NAME.into());
        }
        if let Some(name) = &edit.column_family_add {
            self.families.insert(cf, name.clone());
            self.dropped.remove(&cf);
        }
        if edit.column_family_drop {
            self.families.remove(&cf);
            self.merge_operators.remove(&cf);
            self.dropped.insert(cf);
            let files = &self.files;
            self.live
                .retain(|n| files.get(n).is_none_or(|&(family, _)| family != cf));
        }
        if let Some(n) = edit.log_number {
            self.log_numbers.insert(cf, n);
        }
        // The name and the description are one record, as the version
        // set reads them: a description without its name is not one.
        if let Some(name) = &edit.merge_operator {
            let record = edit.merge_operator_description.as_ref().unwrap_or(name);
            self.merge_operators.insert(cf, record.clone());
        }
        if let Some(n) = edit.next_file_number {
            self.next_file_number = self.next_file_number.max(n);
        }
        if let Some(s) = edit.last_sequence {
            self.last_sequence = self.last_sequence.max(s);
        }
        // Deletions first, as `Version::apply` reads an edit: a compaction
        // that moves a table to another level deletes it from one and adds
        // it to the other in the same edit, and it stays live.
        for (_, number) in &edit.deleted_files {
            self.live.remove(number);
        }
        for (_, file) in &edit.new_files {
            self.files.insert(file.number, (cf, file.global_seqno));
            self.live.insert(file.number);
        }
    }
}

/// A table as found: its properties, read before its family is known.
pub(super) struct FoundTable {
    pub properties: TableProperties,
}

/// Opens table `number` far enough to read its properties.
pub(super) fn read_table_properties(fs: &dyn Fs, dir: &Path, number: u64) -> Result<FoundTable> {
    let path = table_file_name(dir, number);
    let file = fs.open(&path, ReadFileOptions::default())?;
    let table = TableReader::open(file, &path)?;
    Ok(FoundTable {
        properties: table.properties().clone(),
    })
}

/// A table checked entry by entry, with the metadata a MANIFEST records.
pub(super) struct ScannedTable {
    pub meta: FileMetaData,
    /// Its `strata.log.number` property (0 when it has none).
    pub log_number: u64,
    /// The largest sequence number of the writes it holds that came
    /// through a WAL (`TableProperties::logged_through`; 0 when ingested).
    pub logged_through: SequenceNumber,
    /// References into each blob file, by blob file number: how many, and
    /// the bytes of the records they point at (as garbage counts them).
    pub blob_references: BTreeMap<u64, (u64, u64)>,
}

/// Reads every entry and range tombstone of table `number` in `order`,
/// checking checksums, key order and entry types, and derives its
/// metadata from what it holds (an ingested table's at `global_seqno`).
pub(super) fn scan_table(
    fs: &dyn Fs,
    dir: &Path,
    number: u64,
    order: &KeyComparator,
    global_seqno: Option<SequenceNumber>,
) -> Result<ScannedTable> {
    let path = table_file_name(dir, number);
    let file = fs.open(&path, ReadFileOptions::default())?;
    let file_size = file.len();
    let table = Arc::new(TableReader::open_in_order(file, &path, order)?);
    let corrupt = |reason: String| Error::corruption(&path, 0, reason);
    let read = ReadOptions {
        verify_checksums: true,
        fill_cache: false,
        ..ReadOptions::default()
    };
    let mut it = table.iter(&read);
    let (mut first, mut last): (Option<Vec<u8>>, Option<Vec<u8>>) = (None, None);
    let (mut min_seq, mut max_seq) = (SequenceNumber::MAX, 0);
    let mut blob_references = BTreeMap::new();
    it.seek_to_first();
    while it.valid() {
        let key = it.key();
        let parsed = ParsedInternalKey::parse(key)
            .ok_or_else(|| corrupt("an entry key shorter than its tag".into()))?;
        let kind = parsed.value_type();
        if !matches!(
            kind,
            Some(ValueType::Put | ValueType::Delete | ValueType::Merge | ValueType::BlobIndex)
        ) {
            return Err(corrupt(format!(
                "an entry of type {kind:?} among the point entries"
            )));
        }
        if let Some(previous) = &last {
            if !order.compare_internal(previous, key).is_lt() {
                return Err(corrupt("entries out of order".into()));
            }
        }
        if kind == Some(ValueType::BlobIndex) {
            let reference = BlobRef::decode(it.value()).map_err(corrupt)?;
            let bytes = crate::compaction::blobs::record_bytes(parsed.user_key, &reference);
            let seen: &mut (u64, u64) = blob_references
                .entry(reference.file_number)
                .or_insert((0, 0));
            *seen = (seen.0 + 1, seen.1.saturating_add(bytes));
        }
        min_seq = min_seq.min(parsed.seq);
        max_seq = max_seq.max(parsed.seq);
        if first.is_none() {
            first = Some(key.to_vec());
        }
        last = Some(key.to_vec());
        it.next();
    }
    it.status()?;
    table.verify()?;
    let tombstones = table.range_tombstones();
    for t in tombstones.tombstones() {
        min_seq = min_seq.min(t.seq());
        max_seq = max_seq.max(t.seq());
    }
    let Some((smallest, largest)) = file_bounds(first, last, &table, order) else {
        return Err(corrupt("the table holds no entries".into()));
    };
    let meta = match global_seqno {
        Some(seq) => FileMetaData {
            number,
            file_size,
            smallest: at_seq(&smallest, seq),
            largest: at_seq(&largest, seq),
            smallest_seqno: seq,
            largest_seqno: seq,
            blob_files: Vec::new(),
            global_seqno: (seq > 0).then_some(seq),
        },
        None => FileMetaData {
            number,
            file_size,
            smallest,
            largest,
            smallest_seqno: min_seq,
            largest_seqno: max_seq,
            blob_files: blob_references.keys().copied().collect(),
            global_seqno: None,
        },
    };
    let log_number = table.properties().log_number;
    // What it holds, not its properties' say, for tables from builds before
    // the property; an ingested table holds no logged write.
    let logged_through = match (global_seqno, table.properties().largest_logged_seqno) {
        (Some(_), _) => 0,
        (None, Some(seq)) => seq,
        (None, None) => max_seq,
    };
    Ok(ScannedTable {
        meta,
        log_number,
        logged_through,
        blob_references,
    })
}

/// Whether a table's properties mark it as written by `SstFileWriter`.
pub(super) fn is_external(properties: &TableProperties) -> bool {
    properties.external_sst_file_version == EXTERNAL_SST_FILE_VERSION
}

/// A blob file checked record by record.
pub(super) struct ScannedBlobFile {
    pub column_family_id: u32,
    pub addition: BlobFileAddition,
}

/// Reads every record of blob file `number`, checking each.
pub(super) fn scan_blob_file(fs: &dyn Fs, dir: &Path, number: u64) -> Result<ScannedBlobFile> {
    let path = blob_file_name(dir, number);
    let file = fs.open(&path, ReadFileOptions::default())?;
    let reader = BlobFileReader::open(file, &path)?;
    reader.verify()?;
    let headers =
        (crate::blob::format::BLOB_HEADER_LEN + crate::blob::format::BLOB_FOOTER_LEN) as u64;
    Ok(ScannedBlobFile {
        column_family_id: reader.header().column_family_id,
        addition: BlobFileAddition {
            number,
            record_count: reader.footer().record_count,
            record_bytes: reader.file_size().saturating_sub(headers),
            file_size: reader.file_size(),
        },
    })
}

/// A family's WAL records as `convert_wals` takes them.
pub(super) struct WalTarget<'a> {
    pub name: &'a str,
    pub options: &'a CfOptions,
    /// Records at or below this sequence number are in the family's tables:
    /// the largest its tables hold of writes that came through a WAL (not
    /// their largest sequence number, which an ingestion's global seqno may
    /// put above writes still in a memtable).
    pub flushed_through: SequenceNumber,
    /// The family's writes in WALs older than this are in its tables.
    pub log_number: u64,
}

/// What turning the WALs into tables did.
#[derive(Debug, Default)]
pub(super) struct WalConversion {
    /// The tables written, by family.
    pub tables: Vec<(u32, FileMetaData)>,
    /// Entries written into them.
    pub entries: u64,
    /// Entries left out because the family's tables hold them already.
    pub already_in_tables: u64,
    /// Entries of families the database no longer has.
    pub unknown_family: u64,
    /// Records that did not decode, and damaged stretches skipped.
    pub damaged: u64,
    pub max_sequence: SequenceNumber,
}

/// Replays `wals`, oldest first, into memtables of `targets` and writes
/// them out as L0 tables numbered by `new_number`; damage is skipped as
/// `SkipAnyCorruptedRecords` recovery skips it.
pub(super) fn convert_wals(
    fs: &dyn Fs,
    dir: &Path,
    wals: &[u64],
    targets: &BTreeMap<u32, WalTarget<'_>>,
    new_number: &mut dyn FnMut() -> u64,
) -> Result<WalConversion> {
    let mut out = WalConversion::default();
    let mut mems: BTreeMap<u32, MemTable> = BTreeMap::new();
    for &wal in wals {
        let path = log_file_name(dir, wal);
        let bytes = fs
            .open(&path, ReadFileOptions::default())
            .and_then(|f| f.read_at(0, usize::try_from(f.len()).unwrap_or(usize::MAX)))?;
        let (records, skipped) = read_records_skipping_damage(bytes)?;
        out.damaged += skipped as u64;
        for record in records {
            if wal_meta::is_meta(&record) {
                continue;
            }
            let Ok(batch) = WriteBatch::from_data(record) else {
                out.damaged += 1;
                continue;
            };
            for (entry, seq) in batch.iter().zip(batch.sequence()..) {
                let Ok(entry) = entry else {
                    out.damaged += 1;
                    break;
                };
                let Some(target) = targets.get(&entry.cf) else {
                    out.unknown_family += 1;
                    continue;
                };
                if wal < target.log_number || seq <= target.flushed_through {
                    out.already_in_tables += 1;
                    continue;
                }
                let mem = mems
                    .entry(entry.cf)
                    .or_insert_with(|| MemTable::for_family(target.options));
                mem.add(seq, entry.value_type, entry.key, entry.value)?;
                out.entries += 1;
                out.max_sequence = out.max_sequence.max(seq);
                if mem.memory_usage() >= target.options.write_buffer_size {
                    if let Some(full) = mems.remove(&entry.cf) {
                        write_table(fs, dir, entry.cf, target, &full, new_number, &mut out)?;
                    }
                }
            }
        }
    }
    for (id, mem) in mems {
        if let Some(target) = targets.get(&id) {
            write_table(fs, dir, id, target, &mem, new_number, &mut out)?;
        }
    }
    Ok(out)
}

fn write_table(
    fs: &dyn Fs,
    dir: &Path,
    id: u32,
    target: &WalTarget<'_>,
    mem: &MemTable,
    new_number: &mut dyn FnMut() -> u64,
    out: &mut WalConversion,
) -> Result<()> {
    let number = new_number();
    let options = target.options.l0_table_options();
    let owner = TableOwner {
        family_id: id,
        family_name: target.name,
        log_number: 0,
    };
    let built = write_level0_table(fs, dir, number, owner, mem, &options, None)?;
    if let Some(file) = built.file {
        out.tables.push((id, file));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueType};
    use crate::version::BlobFileGarbage;

    fn table(number: u64, global_seqno: Option<SequenceNumber>) -> FileMetaData {
        let key = |k: &[u8]| {
            let mut out = Vec::new();
            append_internal_key(&mut out, k, 1, ValueType::Put);
            out
        };
        FileMetaData {
            number,
            file_size: 1,
            smallest: key(b"a"),
            largest: key(b"z"),
            smallest_seqno: 1,
            largest_seqno: 1,
            blob_files: Vec::new(),
            global_seqno,
        }
    }

    fn hints_of(edits: &[VersionEdit]) -> ManifestHints {
        let mut hints = ManifestHints::default();
        for edit in edits {
            hints.fold(edit);
        }
        hints
    }

    fn live(hints: &ManifestHints) -> Vec<u64> {
        let mut live: Vec<u64> = hints.live.iter().copied().collect();
        live.sort_unstable();
        live
    }

    /// Every edit shape that moves, re-adds or removes a table, read as
    /// `Version::apply` reads it: an edit's deletions before its additions.
    /// A move (one edit deleting a table from its level and adding it to
    /// another) used to leave the table not live.
    #[test]
    fn hints_apply_each_edits_deletions_before_its_additions() {
        let mut flush = VersionEdit::new();
        flush
            .add_file(0, table(7, None))
            .add_file(0, table(8, None));
        let mut moved = VersionEdit::new();
        moved.delete_file(0, 7).add_file(6, table(7, None));
        assert_eq!(live(&hints_of(&[flush.clone(), moved.clone()])), [7, 8]);

        // Deleted in one edit, added back in a later one; and the reverse.
        let mut deleted = VersionEdit::new();
        deleted.delete_file(0, 8);
        let mut added = VersionEdit::new();
        added.add_file(1, table(8, None));
        let edits = [flush.clone(), deleted.clone(), added.clone()];
        assert_eq!(live(&hints_of(&edits)), [7, 8]);
        let edits = [flush.clone(), added, deleted];
        assert_eq!(live(&hints_of(&edits)), [7]);

        // An ingested table moved down keeps its global seqno on record.
        let mut ingested = VersionEdit::new();
        ingested.add_file(0, table(9, Some(40)));
        let mut down = VersionEdit::new();
        down.delete_file(0, 9).add_file(3, table(9, Some(40)));
        let hints = hints_of(&[ingested, down]);
        assert_eq!(live(&hints), [9]);
        assert_eq!(hints.files.get(&9), Some(&(0, Some(40))));

        // Blob file records name no table: the live set is unchanged.
        let mut blobs = VersionEdit::new();
        blobs.blob_file_additions.push(BlobFileAddition {
            number: 7,
            record_count: 1,
            record_bytes: 1,
            file_size: 1,
        });
        blobs.blob_file_garbage.push(BlobFileGarbage {
            number: 7,
            count: 1,
            bytes: 1,
        });
        assert_eq!(live(&hints_of(&[flush, moved, blobs])), [7, 8]);
    }

    /// A dropped family's tables are not live, whatever moved them, and
    /// its merge operator record goes with it; other families' stay, with
    /// their settings.
    #[test]
    fn hints_forget_a_dropped_familys_tables_and_merge_operator() {
        let create = |id: u32, name: &str, operator: &str, description: &str| {
            let mut edit = VersionEdit::new();
            edit.add_column_family(id, name)
                .set_merge_operator(operator, description);
            edit
        };
        let bar = "{id=StringAppendOperator;delimiter=|;}";
        let created = [
            create(1, "a", "UInt64AddOperator", "UInt64AddOperator"),
            create(2, "b", "MaxOperator", "MaxOperator"),
            create(3, "c", "StringAppendOperator", bar),
        ];
        let mut flush = VersionEdit::new();
        flush.set_column_family(1).add_file(0, table(5, None));
        let mut moved = VersionEdit::new();
        moved
            .set_column_family(1)
            .delete_file(0, 5)
            .add_file(2, table(5, None));
        let mut other = VersionEdit::new();
        other.set_column_family(2).add_file(0, table(6, None));
        let mut dropped = VersionEdit::new();
        dropped.drop_column_family(1);
        let mut edits = created.to_vec();
        edits.extend([flush, moved, other, dropped]);
        let hints = hints_of(&edits);
        assert_eq!(live(&hints), [6]);
        assert!(hints.dropped.contains(&1));
        assert_eq!(hints.merge_operators.get(&1), None);
        let record = |id| hints.merge_operators.get(&id).map(String::as_str);
        assert_eq!(record(2), Some("MaxOperator"));
        // The description where the record has one: the settings count.
        assert_eq!(record(3), Some(bar));
    }
}
