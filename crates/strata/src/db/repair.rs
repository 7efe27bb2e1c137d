//! Repair (RocksDB's `RepairDB`, `ldb repair`): a new MANIFEST built from
//! the files in the directory, for a database whose MANIFEST or CURRENT is
//! lost or damaged.
//!
//! 1. The LOCK is taken, so no process has the database open meanwhile.
//! 2. Whatever part of the MANIFEST still reads is kept as hints: its
//!    families, each table's family and global seqno, each family's log
//!    number. When CURRENT names it and it reads whole, its live tables are
//!    the only ones put back, at whatever level its edits moved them to
//!    (each edit read deletions first, as a version applies it): the others
//!    are obsolete compaction inputs or unfinished outputs, whose entries
//!    live tables hold too. Without it, a table's family comes from its
//!    `rocksdb.column.family.id` property (for an ingested table, from the
//!    global seqno tail, which records the family that ingested it), and a
//!    table without one (written before the property existed, or ingested
//!    by a build before the tail recorded families) goes to the default
//!    family; the report warns of each ingested one.
//! 3. Every table is read whole: checksums, key order, entry types. Its key
//!    range and sequence numbers come from what it holds; an ingested
//!    table's from its global seqno: the hints', or else the one ingestion
//!    appended to the table itself (`table::seqno_tail`; 0 for a table
//!    placed below every later write). A damaged table, one of a dropped
//!    family, and one pointing into a missing blob file are moved into
//!    `lost/`. A table's comparator must be its family's: the error names
//!    both otherwise, and nothing is changed.
//! 4. Every blob file is read whole; one no table points into, or damaged,
//!    goes to `lost/`.
//! 5. The WALs are replayed into tables, each family's records only above
//!    what its tables hold, so no write lands twice (a merge operand twice
//!    would be applied twice): only WALs from its log number (the hints', or
//!    the largest its tables' `strata.log.number` properties record), and
//!    only records above the largest sequence number its tables hold of
//!    writes that came through a WAL (a compaction output records it in
//!    `strata.largest.logged.seqno`: an ingested table merged into it
//!    brings a global seqno above writes still in a memtable, which its
//!    largest sequence number would hide). The log number matters where a
//!    compaction filter dropped the newest writes from the tables. Damage
//!    is skipped.
//! 6. A new MANIFEST puts every table in L0, records each family's merge
//!    operator with its settings (the old MANIFEST's record, else the one
//!    repair is given, so that an open with another is refused as before),
//!    and becomes CURRENT; the old MANIFESTs and the WALs then move to
//!    `lost/`.
//! 7. L0 is searched newest first by largest sequence number, which answers
//!    right only if overlapping tables' sequence ranges do not interleave.
//!    Tables from different levels often do; each family where they do is
//!    compacted into one sorted run before `repair` returns.
//!
//! What cannot come back: a write only in a damaged stretch of a WAL or a
//! table. An ingested table keeps its place among the writes before and
//! after it, but one ingested by a build before the global seqno tail,
//! whose global seqno no MANIFEST record holds any more, is read as newer
//! than every other write, and the report says so. Without a whole
//! MANIFEST, an unfinished compaction output left beside its inputs (a
//! crash before the MANIFEST named it) is put back with them, as RocksDB's
//! repair does: its merge operands then count twice. A family whose writes
//! are only in WALs is unknown without a MANIFEST (WAL records name
//! families by id only), and its records are counted as dropped.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::repair_family::Family;
use super::repair_scan::{
    convert_wals, is_external, read_manifest_hints, read_table_properties, scan_blob_file,
    scan_table, ManifestHints, ScannedTable, WalTarget,
};
use super::Db;
use crate::error::{Error, Result};
use crate::filename::{
    lock_file_name, parse_file_name, read_current_file, set_current_file, FileType,
};
use crate::fs::Fs;
use crate::key::SequenceNumber;
use crate::key_order::KeyComparator;
use crate::options::{load_latest_options_with_fs, CfOptions, DbOptions, LoadOptions};
use crate::version::set::{manifest_comparator_name, write_manifest};
use crate::version::{BlobFileGarbage, FileMetaData, VersionEdit};
use crate::DEFAULT_COLUMN_FAMILY_NAME;

/// What [`repair_db`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RepairReport {
    /// Families in the new MANIFEST, by id.
    pub families: Vec<(u32, String)>,
    /// Tables found whole and put back.
    pub tables_recovered: usize,
    /// Tables written from the WALs.
    pub tables_from_wals: usize,
    /// WAL entries written into them.
    pub wal_entries_recovered: u64,
    /// WAL entries left out because their family's tables held them.
    pub wal_entries_already_in_tables: u64,
    /// WAL entries of families the database no longer has, dropped.
    pub wal_entries_of_unknown_families: u64,
    /// Damaged WAL records and stretches skipped.
    pub wal_damage_skipped: u64,
    /// Blob files found whole and put back.
    pub blob_files_recovered: usize,
    /// Files moved into `lost/`, each with the reason.
    pub lost: Vec<(PathBuf, String)>,
    /// Families compacted into one sorted run, because their tables' sequence
    /// ranges interleaved (see the module notes).
    pub compacted_families: Vec<String>,
    /// What the repair had to guess, one line each.
    pub warnings: Vec<String>,
    /// The last sequence number of the repaired database.
    pub last_sequence: SequenceNumber,
    /// Whether the old MANIFEST gave hints, and how many records of it read.
    pub manifest_records_read: usize,
}

/// Rebuilds the MANIFEST of the database in `path` from its files (see the
/// module notes); `families` gives the options of families whose OPTIONS
/// file entry is missing or wrong (a comparator or merge operator of the
/// application's own), as [`Db::open_cf`] takes them. Other families take
/// the newest OPTIONS file's options, and the default family `options`'
/// column family fields when there is none; a family nothing names takes
/// them without their merge operator. The new MANIFEST records each
/// family's merge operator, settings included, as an open does: the one
/// the old MANIFEST records, or else the one given.
///
/// # Errors
///
/// `LockHeld` while the database is open; `NotFound` when `path` does not
/// exist; `InvalidArgument` when a table's comparator is not its family's,
/// when a family is given another merge operator (or other settings) than
/// the one the old MANIFEST records, or when a family to be compacted (step 7) is not
/// given the operator it records and it is not built in.
/// Damaged files are not errors: they go to `lost/` and the report lists
/// them.
pub fn repair_db<N: Into<String>>(
    path: impl AsRef<Path>,
    options: &DbOptions,
    families: impl IntoIterator<Item = (N, CfOptions)>,
) -> Result<RepairReport> {
    let dir = path.as_ref();
    let fs = &*options.fs;
    if !fs.exists(dir)? {
        return Err(Error::NotFound {
            what: format!("database directory {}", dir.display()),
        });
    }
    let given: BTreeMap<String, CfOptions> =
        families.into_iter().map(|(n, o)| (n.into(), o)).collect();
    let lock = fs.lock(&lock_file_name(dir))?;
    let mut repair = Repair::new(fs, dir, options, given)?;
    repair.recover_tables()?;
    repair.recover_blob_files()?;
    repair.convert_wals()?;
    repair.install()?;
    drop(lock);
    repair.compact_interleaved(options)?;
    Ok(repair.report)
}

/// The files of the directory, by kind.
#[derive(Default)]
struct Inventory {
    tables: Vec<u64>,
    blob_files: Vec<u64>,
    wals: Vec<u64>,
    manifests: Vec<u64>,
    largest_number: u64,
}

struct Repair<'a> {
    fs: &'a dyn Fs,
    dir: &'a Path,
    files: Inventory,
    hints: ManifestHints,
    /// Options by family name: the OPTIONS file's, overridden by the
    /// caller's; the caller's column family options for the rest (see
    /// `Family::with_options`).
    named: BTreeMap<String, CfOptions>,
    db_cf_options: CfOptions,
    /// The hints list every live table (see `new`).
    authoritative: bool,
    families: BTreeMap<u32, Family>,
    /// Tables per family as scanned, before blob files are checked.
    scanned: Vec<(u32, ScannedTable)>,
    next_file_number: u64,
    last_sequence: SequenceNumber,
    report: RepairReport,
}

impl<'a> Repair<'a> {
    fn new(
        fs: &'a dyn Fs,
        dir: &'a Path,
        options: &DbOptions,
        given: BTreeMap<String, CfOptions>,
    ) -> Result<Self> {
        let mut files = Inventory::default();
        for name in fs.list(dir)? {
            let Some(kind) = parse_file_name(&name) else {
                continue;
            };
            let number = match kind {
                FileType::Table(n) => {
                    files.tables.push(n);
                    n
                }
                FileType::Blob(n) => {
                    files.blob_files.push(n);
                    n
                }
                FileType::Log(n) => {
                    files.wals.push(n);
                    n
                }
                FileType::Manifest(n) => {
                    files.manifests.push(n);
                    n
                }
                FileType::Options(n) | FileType::Temp(n) | FileType::CorruptLog(n) => n,
                _ => 0,
            };
            files.largest_number = files.largest_number.max(number);
        }
        for list in [
            &mut files.tables,
            &mut files.blob_files,
            &mut files.wals,
            &mut files.manifests,
        ] {
            list.sort_unstable();
        }
        // The MANIFEST CURRENT names, or else the newest one.
        let current = read_current_file(fs, dir).ok();
        let manifest = current.or_else(|| files.manifests.last().copied());
        let hints = manifest
            .map(|n| read_manifest_hints(fs, dir, n))
            .unwrap_or_default();
        // Read whole, the MANIFEST CURRENT names says which tables are live:
        // others on disk are obsolete or unfinished outputs, whose entries
        // live tables hold too (a merge operand twice is applied twice).
        // Any other MANIFEST may be one a crash cut short.
        let authoritative = current.is_some() && hints.records > 0 && !hints.damaged;
        let mut report = RepairReport {
            manifest_records_read: hints.records,
            ..RepairReport::default()
        };
        let loaded = load_latest_options_with_fs(
            options.fs.clone(),
            dir,
            &LoadOptions {
                ignore_unknown_options: true,
                ..LoadOptions::default()
            },
        );
        let mut named: BTreeMap<String, CfOptions> = match loaded {
            Ok((_, families)) => families.into_iter().collect(),
            Err(Error::NotFound { .. }) => BTreeMap::new(),
            Err(e) => {
                report
                    .warnings
                    .push(format!("the OPTIONS file was not used: {e}"));
                BTreeMap::new()
            }
        };
        named.extend(given);
        let db_cf_options = options.cf_options();
        let mut families = BTreeMap::new();
        for (id, name) in [(0, DEFAULT_COLUMN_FAMILY_NAME)]
            .into_iter()
            .chain(hints.families.iter().map(|(&id, n)| (id, n.as_str())))
        {
            let recorded = hints.merge_operators.get(&id).map(String::as_str);
            let family = Family::with_options(&named, &db_cf_options, id, name, recorded)?;
            families.insert(id, family);
        }
        let next_file_number = files.largest_number.max(hints.next_file_number) + 1;
        let last_sequence = hints.last_sequence;
        Ok(Repair {
            fs,
            dir,
            named,
            db_cf_options,
            files,
            hints,
            authoritative,
            families,
            scanned: Vec::new(),
            next_file_number,
            last_sequence,
            report,
        })
    }

    /// Steps 2 and 3: every table, into its family or `lost/`.
    fn recover_tables(&mut self) -> Result<()> {
        let mut external = Vec::new();
        for number in self.files.tables.clone() {
            if self.authoritative && !self.hints.live.contains(&number) {
                let reason =
                    "the MANIFEST does not list it: an obsolete table or an unfinished output";
                self.lose(FileType::Table(number), reason.into());
                continue;
            }
            let found = match read_table_properties(self.fs, self.dir, number) {
                Ok(found) => found,
                Err(e) => {
                    self.lose(FileType::Table(number), e.to_string());
                    continue;
                }
            };
            let props = &found.properties;
            let hinted = self.hints.files.get(&number).copied();
            // An ingested table's family is in its global seqno tail.
            let id = match (props.column_family_id, hinted) {
                (Some(id), _) => id,
                (None, Some((id, _))) => id,
                (None, None) if is_external(props) => {
                    self.report.warnings.push(format!(
                        "ingested table #{number} does not record its column family (ingested \
                         by an earlier build); it is put into the default family"
                    ));
                    0
                }
                (None, None) => 0,
            };
            if self.hints.dropped.contains(&id) {
                self.lose(
                    FileType::Table(number),
                    format!("its column family {id} was dropped"),
                );
                continue;
            }
            if !self.families.contains_key(&id) {
                if props.column_family_name.is_empty() {
                    self.lose(
                        FileType::Table(number),
                        format!("no record names its column family {id}"),
                    );
                    continue;
                }
                let name = &props.column_family_name;
                let family =
                    Family::with_options(&self.named, &self.db_cf_options, id, name, None)?;
                self.families.insert(id, family);
            }
            let Some(family) = self.families.get(&id) else {
                continue;
            };
            if props.comparator_name != family.order.name() {
                return Err(Error::invalid_argument(
                    "column_families",
                    format!(
                        "table #{number} is sorted by {}, but column family {:?} is given {}; \
                         pass the family's options with its comparator",
                        props.comparator_name,
                        family.name,
                        family.order.name()
                    ),
                ));
            }
            // An ingested table is read at the global seqno the MANIFEST
            // recorded, or else the one its tail records (0 included: it
            // is then older than every later write).
            let global_seqno = match (is_external(props), hinted, props.global_seqno) {
                (false, _, _) => None,
                (true, Some((_, seq)), _) => Some(seq.unwrap_or(0)),
                (true, None, Some(seq)) => Some(seq),
                (true, None, None) => {
                    external.push((id, number));
                    continue;
                }
            };
            self.scan(id, number, global_seqno);
        }
        // Ingested tables no record places (ingested by a build before the
        // global seqno tail): newer than everything else, in the order they
        // were numbered.
        for (id, number) in external {
            let seq = self.last_sequence + 1;
            if self.scan(id, number, Some(seq)) {
                self.last_sequence = seq;
                self.report.warnings.push(format!(
                    "ingested table #{number} has no global seqno on record; it is read as newer \
                     than every other write (sequence number {seq})"
                ));
            }
        }
        Ok(())
    }

    /// Scans one table into `scanned`; false when it went to `lost/`.
    fn scan(&mut self, id: u32, number: u64, global_seqno: Option<SequenceNumber>) -> bool {
        let Some(family) = self.families.get(&id) else {
            return false;
        };
        match scan_table(self.fs, self.dir, number, &family.order, global_seqno) {
            Ok(table) => {
                self.last_sequence = self.last_sequence.max(table.meta.largest_seqno);
                self.scanned.push((id, table));
                true
            }
            Err(e) => {
                self.lose(FileType::Table(number), e.to_string());
                false
            }
        }
    }

    /// Step 4: blob files some table points into, with the garbage the
    /// references leave; tables pointing into a missing one go to `lost/`.
    fn recover_blob_files(&mut self) -> Result<()> {
        let mut whole = BTreeMap::new();
        for number in self.files.blob_files.clone() {
            match scan_blob_file(self.fs, self.dir, number) {
                Ok(blob) => {
                    whole.insert(number, blob);
                }
                Err(e) => self.lose(FileType::Blob(number), e.to_string()),
            }
        }
        let mut referenced: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        for (id, table) in std::mem::take(&mut self.scanned) {
            let missing = table
                .blob_references
                .keys()
                .find(|n| whole.get(*n).is_none_or(|b| b.column_family_id != id));
            if let Some(blob) = missing {
                let reason =
                    format!("it points into blob file #{blob}, which is missing or damaged");
                self.lose(FileType::Table(table.meta.number), reason);
                continue;
            }
            for (&blob, &(count, bytes)) in &table.blob_references {
                let seen = referenced.entry(blob).or_insert((0, 0));
                *seen = (seen.0 + count, seen.1.saturating_add(bytes));
            }
            if let Some(family) = self.families.get_mut(&id) {
                family.tables.push(table.meta);
                family.log_number = family.log_number.max(table.log_number);
                family.logged_through = family.logged_through.max(table.logged_through);
                self.report.tables_recovered += 1;
            }
        }
        for (number, blob) in whole {
            let Some(&live) = referenced.get(&number) else {
                self.lose(FileType::Blob(number), "no table points into it".into());
                continue;
            };
            if let Some(family) = self.families.get_mut(&blob.column_family_id) {
                family.blob_files.insert(number, (blob.addition, live));
                self.report.blob_files_recovered += 1;
            }
        }
        Ok(())
    }

    /// Step 5: the WALs, into tables.
    fn convert_wals(&mut self) -> Result<()> {
        let targets: BTreeMap<u32, WalTarget<'_>> = self
            .families
            .iter()
            .map(|(&id, family)| {
                let target = WalTarget {
                    name: &family.name,
                    options: &family.options,
                    flushed_through: family.logged_through,
                    log_number: family
                        .log_number
                        .max(self.hints.log_numbers.get(&id).copied().unwrap_or(0)),
                };
                (id, target)
            })
            .collect();
        let mut next = self.next_file_number;
        let mut new_number = || {
            next += 1;
            next - 1
        };
        let converted = convert_wals(
            self.fs,
            self.dir,
            &self.files.wals,
            &targets,
            &mut new_number,
        )?;
        drop(targets);
        self.next_file_number = next;
        self.last_sequence = self.last_sequence.max(converted.max_sequence);
        self.report.tables_from_wals = converted.tables.len();
        self.report.wal_entries_recovered = converted.entries;
        self.report.wal_entries_already_in_tables = converted.already_in_tables;
        self.report.wal_entries_of_unknown_families = converted.unknown_family;
        self.report.wal_damage_skipped = converted.damaged;
        for (id, table) in converted.tables {
            if let Some(family) = self.families.get_mut(&id) {
                family.tables.push(table);
            }
        }
        Ok(())
    }

    /// Step 6: the new MANIFEST, CURRENT, then the old files to `lost/`.
    fn install(&mut self) -> Result<()> {
        // Step 7 opens the database, which refuses a family without the
        // merge operator its MANIFEST records: found now, nothing is
        // installed.
        let unopenable = self
            .families
            .values()
            .find(|f| !f.has_recorded_merge_operator() && interleaves(&f.tables, &f.order));
        if let Some(family) = unopenable {
            return Err(Error::invalid_argument(
                "merge_operator",
                format!(
                    "column family {:?} must be compacted, and its operands were written for \
                     merge operator {}, which is not built in; pass the family's options with it",
                    family.name,
                    family
                        .merge_operator
                        .as_ref()
                        .map_or("", |r| r.description.as_str())
                ),
            ));
        }
        // An empty WAL for the log number to name: open replays from it, so
        // an old WAL that fails to move away is never replayed twice.
        let wal = self.next_file_number;
        let mut file = self
            .fs
            .create(&crate::filename::log_file_name(self.dir, wal))?;
        file.sync()?;
        drop(file);
        let manifest = wal + 1;
        let next_file_number = manifest + 1;
        let max_family = self.families.keys().copied().max().unwrap_or(0);
        let max_family = max_family.max(self.hints.dropped.iter().copied().max().unwrap_or(0));
        let mut edits = Vec::new();
        for (&id, family) in &self.families {
            let mut edit = VersionEdit::new();
            edit.set_comparator_name(manifest_comparator_name(&family.order));
            if id == 0 {
                edit.set_next_file_number(next_file_number)
                    .set_last_sequence(self.last_sequence)
                    .set_max_column_family(max_family)
                    .set_min_log_number_to_keep(wal)
                    .set_wal_features(crate::wal::WAL_FEATURES);
            } else {
                edit.add_column_family(id, family.name.clone());
            }
            // Every WAL before the empty one is in tables now.
            edit.set_log_number(wal);
            if let Some(record) = &family.merge_operator {
                edit.set_merge_operator(&record.name, &record.description);
            }
            for table in &family.tables {
                edit.add_file(0, table.clone());
            }
            for (addition, (live_count, live_bytes)) in family.blob_files.values() {
                edit.blob_file_additions.push(*addition);
                // The records no table points at, counted as compactions
                // count the ones they drop.
                let count = addition.record_count.saturating_sub(*live_count);
                if count > 0 {
                    edit.blob_file_garbage.push(BlobFileGarbage {
                        number: addition.number,
                        count,
                        bytes: addition.record_bytes.saturating_sub(*live_bytes),
                    });
                }
            }
            self.report.families.push((id, family.name.clone()));
            edits.push(edit);
        }
        write_manifest(self.fs, self.dir, manifest, &edits)?;
        self.fs.sync_dir(self.dir)?;
        set_current_file(self.fs, self.dir, manifest)?;
        self.report.last_sequence = self.last_sequence;
        for number in self.files.manifests.clone() {
            self.lose(
                FileType::Manifest(number),
                "replaced by the repaired MANIFEST".into(),
            );
        }
        for number in self.files.wals.clone().into_iter().filter(|&n| n != wal) {
            self.lose(FileType::Log(number), "replayed into tables".into());
        }
        Ok(())
    }

    /// Step 7: families whose L0 order would answer wrong, compacted.
    fn compact_interleaved(&mut self, options: &DbOptions) -> Result<()> {
        let interleaved: BTreeSet<u32> = self
            .families
            .iter()
            .filter(|(_, f)| interleaves(&f.tables, &f.order))
            .map(|(&id, _)| id)
            .collect();
        if interleaved.is_empty() {
            return Ok(());
        }
        let mut default = options.clone();
        default.create_if_missing = false;
        // The caller's services (a web view, say) belong to its own opens,
        // not to this one that only compacts.
        default.services.clear();
        let mut others = Vec::new();
        for (&id, family) in &self.families {
            let mut cf = family.options.clone();
            cf.compaction.disable_auto_compactions = true;
            if id == 0 {
                default.set_cf_options(cf);
            } else {
                others.push((family.name.clone(), cf));
            }
        }
        let db = Db::open_cf(self.dir, default, others)?;
        for id in interleaved {
            let Some(family) = self.families.get(&id) else {
                continue;
            };
            match db.cf_handle(&family.name) {
                Some(cf) => db.compact_range_cf(&cf, None, None)?,
                None => db.compact_range(None, None)?,
            }
            self.report.compacted_families.push(family.name.clone());
        }
        db.close()
    }

    /// Moves a file into `lost/`, recording why.
    fn lose(&mut self, kind: FileType, reason: String) {
        let name = match kind {
            FileType::Table(n) => crate::filename::table_file_name(self.dir, n),
            FileType::Blob(n) => crate::filename::blob_file_name(self.dir, n),
            FileType::Log(n) => crate::filename::log_file_name(self.dir, n),
            FileType::Manifest(n) => crate::filename::manifest_file_name(self.dir, n),
            _ => return,
        };
        let lost = self.dir.join("lost");
        let moved = self.fs.create_dir_all(&lost).and_then(|()| {
            let to = lost.join(name.file_name().unwrap_or_default());
            self.fs.rename(&name, &to).map(|()| to)
        });
        match moved {
            Ok(to) => self.report.lost.push((to, reason)),
            Err(e) => self.report.warnings.push(format!(
                "{} ({reason}) could not be moved: {e}",
                name.display()
            )),
        }
    }
}

/// Whether two tables overlapping in key range have sequence ranges that
/// interleave, so that L0's newest-first search could stop at an older
/// version of a key.
fn interleaves(tables: &[FileMetaData], order: &KeyComparator) -> bool {
    let mut sorted: Vec<&FileMetaData> = tables.iter().collect();
    sorted.sort_by(|a, b| order.compare_internal(&a.smallest, &b.smallest));
    for (i, a) in sorted.iter().enumerate() {
        for b in &sorted[i + 1..] {
            if a.ends_before(crate::key::user_key(&b.smallest), order) {
                break;
            }
            let disjoint = a.smallest_seqno > b.largest_seqno || b.smallest_seqno > a.largest_seqno;
            if !disjoint {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{append_internal_key, ValueType};

    fn table(number: u64, keys: (&str, &str), seqs: (u64, u64)) -> FileMetaData {
        let key = |k: &str, seq| {
            let mut out = Vec::new();
            append_internal_key(&mut out, k.as_bytes(), seq, ValueType::Put);
            out
        };
        FileMetaData {
            number,
            file_size: 1,
            smallest: key(keys.0, seqs.1),
            largest: key(keys.1, seqs.0),
            smallest_seqno: seqs.0,
            largest_seqno: seqs.1,
            blob_files: Vec::new(),
            global_seqno: None,
        }
    }

    #[test]
    fn only_overlapping_tables_with_interleaved_sequence_ranges_interleave() {
        let order = KeyComparator::Bytewise;
        // Flushes: overlapping, sequence ranges apart.
        let flushes = [
            table(1, ("a", "m"), (1, 10)),
            table(2, ("c", "z"), (11, 20)),
        ];
        assert!(!interleaves(&flushes, &order));
        // Apart in key range: any sequence ranges.
        let apart = [table(1, ("a", "c"), (1, 30)), table(2, ("d", "z"), (5, 20))];
        assert!(!interleaves(&apart, &order));
        // A deeper table written later than a shallower one it overlaps.
        let levels = [table(1, ("a", "m"), (5, 12)), table(2, ("k", "z"), (1, 30))];
        assert!(interleaves(&levels, &order));
        // Found past a table that ends before: the scan does not stop early.
        let three = [
            table(1, ("a", "b"), (1, 2)),
            table(2, ("c", "x"), (1, 30)),
            table(3, ("d", "e"), (3, 4)),
        ];
        assert!(interleaves(&three, &order));
    }
}
