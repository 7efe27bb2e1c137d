//! The version set: the current version of every column family plus the
//! counters that must survive a crash (next file number, last sequence, each
//! family's log number), kept durable in the MANIFEST.
//!
//! Protocol: an edit is appended to the MANIFEST and synced *before* the version
//! it produces is installed, so anything that acts on the new version (deleting a
//! WAL, deleting a table) happens only after the change is durable. Every open
//! writes a fresh MANIFEST holding the whole state and switches CURRENT to it.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use crate::comparator::Comparator;
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{current_file_name, manifest_file_name, read_current_file, set_current_file};
use crate::fs::{Fs, ReadFileOptions};
use crate::key::SequenceNumber;
use crate::key_order::KeyComparator;
use crate::version::edit::{
    FileMetaData, VersionEdit, BYTEWISE_COMPARATOR_NAME, DEFAULT_COLUMN_FAMILY_NAME,
};
use crate::version::file_index::FileSearch;
use crate::version::version::{InvalidEdit, Version};
use crate::wal::{LogReader, LogWriter};

/// The MANIFEST CURRENT names, with its number and path, ready to read.
fn open_manifest(fs: &dyn Fs, dir: &Path) -> Result<(u64, PathBuf, LogReader)> {
    let manifest_number = read_current_file(fs, dir)?;
    let path = manifest_file_name(dir, manifest_number);
    let file = fs
        .open(&path, ReadFileOptions::default())
        .map_err(|e| match e {
            e if e.is_not_found() => Error::corruption(
                current_file_name(dir),
                0,
                format!("CURRENT names MANIFEST-{manifest_number:06}, which does not exist"),
            ),
            other => other,
        })?;
    let reader = LogReader::new(file, &path);
    Ok((manifest_number, path, reader))
}

/// Writes MANIFEST `number` in `dir` holding `edits` and syncs it; returns
/// its writer, for appends. CURRENT is the caller's to switch.
pub fn write_manifest(
    fs: &dyn Fs,
    dir: &Path,
    number: u64,
    edits: &[VersionEdit],
) -> Result<LogWriter> {
    let mut writer = LogWriter::new(fs.create(&manifest_file_name(dir, number))?);
    for edit in edits {
        writer.add_record(&edit.encode())?;
    }
    writer.sync()?;
    Ok(writer)
}

/// The names of the live families the MANIFEST in `dir` records, by id
/// (the default family first), read from the records that create and drop
/// families alone: no version is built, so no family's comparator is
/// needed (RocksDB's `ListColumnFamilies`).
pub fn list_families(fs: &dyn Fs, dir: &Path) -> Result<Vec<String>> {
    let (_, path, mut reader) = open_manifest(fs, dir)?;
    let mut names = BTreeMap::from([(0, DEFAULT_COLUMN_FAMILY_NAME.to_owned())]);
    while let Some((offset, record)) = reader.read_record()? {
        let edit = VersionEdit::decode(record).map_err(|e| match e {
            Error::Corruption { reason, .. } => Error::corruption(&path, offset, reason),
            other => other,
        })?;
        if let Some(name) = edit.column_family_add {
            names.insert(edit.column_family, name);
        } else if edit.column_family_drop {
            names.remove(&edit.column_family);
        }
    }
    Ok(names.into_values().collect())
}

/// The name a MANIFEST records for `order`: bytewise keeps the name
/// earlier builds wrote (and accept), the others their RocksDB or
/// application name.
pub fn manifest_comparator_name(order: &KeyComparator) -> &str {
    match order {
        KeyComparator::Bytewise => BYTEWISE_COMPARATOR_NAME,
        other => other.name(),
    }
}

/// One column family's live version and the WAL from which it needs replay.
#[derive(Debug)]
struct Family {
    name: String,
    current: Arc<Version>,
    /// WALs numbered below this hold nothing of this family's that is not in
    /// one of its tables.
    log_number: u64,
    /// The name of the merge operator it was opened with, once known.
    merge_operator: Option<String>,
    /// That operator's description (name and settings), when recorded.
    merge_operator_description: Option<String>,
}

/// What one edit does to the families.
#[derive(Debug)]
enum FamilyChange {
    Create(Family),
    Drop,
    Update(Arc<Version>),
}

/// The live version of every column family, and the durable counters.
#[derive(Debug)]
pub struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    /// The live families by id; the default family (0) is always here.
    families: BTreeMap<u32, Family>,
    /// Every version installed so far that may still be in use (by a super
    /// version, an iterator or a running job), dropped families' last ones
    /// among them: their files must stay on disk.
    older: Vec<Weak<Version>>,
    next_file_number: u64,
    last_sequence: SequenceNumber,
    /// The largest family id ever handed out: ids are never reused, so a
    /// dropped family's WAL records can never be taken for a new one's.
    max_column_family: u32,
    /// WALs below this hold nothing any family needs (see
    /// [`VersionEdit::min_log_number_to_keep`]).
    min_log_number_to_keep: u64,
    /// The MANIFEST being appended to. Shared with a [`ManifestWrite`] in
    /// flight, which writes it without the DB mutex; `None` after a failed
    /// write, when the file's state is unknown.
    manifest: Option<Arc<Mutex<LogWriter>>>,
    /// Why `manifest` was closed: a later writer that finds it closed fails
    /// with this error (a full disk stays a full disk, which recovery
    /// waits out), not with one of its own.
    manifest_failure: Option<Error>,
    manifest_number: u64,
    /// How the versions of families created from now on search their levels.
    file_search: FileSearch,
    /// The application's comparators the MANIFEST's comparator names may
    /// stand for (the built-in orders are always known).
    comparators: Vec<Arc<dyn Comparator>>,
}

impl VersionSet {
    /// The state of a database that has no MANIFEST yet: the default family,
    /// empty, in `order`.
    pub fn new_empty(fs: Arc<dyn Fs>, dir: &Path, order: KeyComparator) -> VersionSet {
        let default = Family {
            name: DEFAULT_COLUMN_FAMILY_NAME.to_owned(),
            current: Arc::new(Version::empty(FileSearch::default(), order)),
            log_number: 0,
            merge_operator: None,
            merge_operator_description: None,
        };
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            families: BTreeMap::from([(0, default)]),
            older: Vec::new(),
            next_file_number: 1,
            last_sequence: 0,
            max_column_family: 0,
            min_log_number_to_keep: 0,
            manifest: None,
            manifest_failure: None,
            manifest_number: 0,
            file_search: FileSearch::default(),
            comparators: Vec::new(),
        }
    }

    /// Makes `comparator` known by its name, for a family about to be
    /// created in its order (the MANIFEST records only the name).
    pub fn register_comparator(&mut self, comparator: &Arc<dyn Comparator>) {
        if !self
            .comparators
            .iter()
            .any(|c| c.name() == comparator.name())
        {
            self.comparators.push(comparator.clone());
        }
    }

    /// The order a MANIFEST's comparator `name` stands for: a built-in
    /// (`strata.bytewise` being what earlier builds wrote for bytewise), or
    /// a registered application comparator.
    fn resolve_comparator(&self, name: &str) -> std::result::Result<KeyComparator, InvalidEdit> {
        if name == BYTEWISE_COMPARATOR_NAME {
            return Ok(KeyComparator::Bytewise);
        }
        if let Some(order) = KeyComparator::built_in(name) {
            return Ok(order);
        }
        self.comparators
            .iter()
            .find(|c| c.name() == name)
            .map(KeyComparator::new)
            .ok_or_else(|| InvalidEdit(format!("unknown comparator {name:?}")))
    }

    /// The key order of live family `id`.
    pub fn order(&self, id: u32) -> Option<&KeyComparator> {
        self.families.get(&id).map(|f| f.current.order())
    }

    /// Every family's versions, from now on, search their sorted levels with
    /// `search` (the key-prefix cache or full compares).
    pub fn set_file_search(&mut self, search: FileSearch) {
        self.file_search = search;
        for family in self.families.values_mut() {
            family.current = Arc::new(family.current.with_file_search(search));
        }
    }

    /// Reads CURRENT and replays the MANIFEST it names. A torn final record is
    /// ignored (its edit was never synced, so never acted on); damage before it
    /// fails the open. The MANIFEST names each family's comparator; a name
    /// that is neither built in nor one of `comparators` is
    /// `InvalidArgument` naming it and the family.
    pub fn recover(
        fs: Arc<dyn Fs>,
        dir: &Path,
        comparators: &[Arc<dyn Comparator>],
    ) -> Result<VersionSet> {
        let (manifest_number, path, mut reader) = open_manifest(&*fs, dir)?;
        let mut set = VersionSet::new_empty(fs.clone(), dir, KeyComparator::Bytewise);
        for c in comparators {
            set.register_comparator(c);
        }
        let (mut saw_next_file, mut saw_last_seq, mut saw_log) = (false, false, false);
        while let Some((offset, record)) = reader.read_record()? {
            let rewrap = |e: Error| match e {
                Error::Corruption { reason, .. } => Error::corruption(&path, offset, reason),
                other => other,
            };
            let edit = VersionEdit::decode(record).map_err(rewrap)?;
            if let Some(name) = &edit.comparator {
                set.resolve_comparator(name).map_err(|_| {
                    Error::invalid_argument(
                        "comparator",
                        format!(
                            "column family {} of {} is sorted by comparator {name:?}, which is \
                             neither built in nor the comparator of any family's options",
                            edit.column_family_add
                                .as_deref()
                                .unwrap_or(DEFAULT_COLUMN_FAMILY_NAME),
                            dir.display()
                        ),
                    )
                })?;
            }
            set.apply_edit(&edit)
                .map_err(|e| Error::corruption(&path, offset, e.0))?;
            if let Some(n) = edit.next_file_number {
                set.next_file_number = n;
                saw_next_file = true;
            }
            if let Some(s) = edit.last_sequence {
                set.last_sequence = s;
                saw_last_seq = true;
            }
            saw_log |= edit.log_number.is_some() && edit.column_family == 0;
        }
        if !(saw_next_file && saw_last_seq && saw_log) {
            return Err(Error::corruption(
                &path,
                0,
                "MANIFEST lacks the next file number, last sequence or log number",
            ));
        }
        set.manifest_number = manifest_number;
        set.mark_file_number_used(manifest_number);
        let highest_table = set.all_live_files().map(|f| f.number).max();
        let highest_blob = set
            .families
            .values()
            .filter_map(|f| f.current.blob_files().keys().next_back().copied())
            .max();
        if let Some(n) = highest_table.max(highest_blob) {
            set.mark_file_number_used(n);
        }
        Ok(set)
    }

    /// Applies `edit` to the family it names, creating or dropping the family
    /// when it says so. Changes nothing on error.
    fn apply_edit(&mut self, edit: &VersionEdit) -> std::result::Result<(), InvalidEdit> {
        let change = self.prepare(edit)?;
        self.install(edit, change);
        Ok(())
    }

    /// What `edit` does to the families, checked but not yet installed.
    fn prepare(&self, edit: &VersionEdit) -> std::result::Result<FamilyChange, InvalidEdit> {
        let id = edit.column_family;
        if let Some(name) = &edit.column_family_add {
            if self.families.contains_key(&id) {
                return Err(InvalidEdit(format!("column family {id} is created twice")));
            }
            if self.family_id(name).is_some() {
                return Err(InvalidEdit(format!(
                    "column family {id} is named {name:?}, which a live family already is"
                )));
            }
            let order = match &edit.comparator {
                Some(c) => self.resolve_comparator(c)?,
                None => KeyComparator::Bytewise,
            };
            return Ok(FamilyChange::Create(Family {
                name: name.clone(),
                current: Arc::new(Version::empty(self.file_search, order).apply(edit)?),
                log_number: edit.log_number.unwrap_or(0),
                merge_operator: edit.merge_operator.clone(),
                merge_operator_description: edit
                    .merge_operator
                    .as_ref()
                    .and(edit.merge_operator_description.clone()),
            }));
        }
        let family = self.families.get(&id).ok_or_else(|| {
            InvalidEdit(format!(
                "the edit names column family {id}, which does not exist"
            ))
        })?;
        if edit.column_family_drop {
            return Ok(FamilyChange::Drop);
        }
        if let Some(c) = &edit.comparator {
            // Only the default family's first record names its order (the
            // others are named as they are created), before any file.
            let order = self.resolve_comparator(c)?;
            if order != *family.current.order() {
                if family.current.all_files().next().is_some() {
                    return Err(InvalidEdit(format!(
                        "column family {id} changes comparator from {} to {c} while it has files",
                        family.current.order().name()
                    )));
                }
                let empty = Version::empty(self.file_search, order);
                return Ok(FamilyChange::Update(Arc::new(empty.apply(edit)?)));
            }
        }
        Ok(FamilyChange::Update(Arc::new(family.current.apply(edit)?)))
    }

    /// Installs a change [`prepare`](Self::prepare) made of `edit`.
    fn install(&mut self, edit: &VersionEdit, change: FamilyChange) {
        let id = edit.column_family;
        if let Some(max) = edit.max_column_family {
            self.max_column_family = self.max_column_family.max(max);
        }
        if let Some(keep) = edit.min_log_number_to_keep {
            self.min_log_number_to_keep = self.min_log_number_to_keep.max(keep);
        }
        self.older.retain(|v| v.strong_count() > 0);
        match change {
            FamilyChange::Create(family) => {
                self.max_column_family = self.max_column_family.max(id);
                self.families.insert(id, family);
            }
            FamilyChange::Drop => {
                if let Some(dropped) = self.families.remove(&id) {
                    self.older.push(Arc::downgrade(&dropped.current));
                }
            }
            FamilyChange::Update(version) => {
                if let Some(family) = self.families.get_mut(&id) {
                    if let Some(l) = edit.log_number {
                        family.log_number = l;
                    }
                    // The name and the description are one record: a
                    // description without its name is not one.
                    if let Some(name) = &edit.merge_operator {
                        family.merge_operator = Some(name.clone());
                        family
                            .merge_operator_description
                            .clone_from(&edit.merge_operator_description);
                    }
                    let old = std::mem::replace(&mut family.current, version);
                    self.older.push(Arc::downgrade(&old));
                }
            }
        }
    }

    /// The live version of family `id` (an empty bytewise version for an id that is
    /// not live: callers hold ids of live families, under the DB mutex).
    pub fn current(&self, id: u32) -> Arc<Version> {
        self.families
            .get(&id)
            .map_or_else(|| Arc::new(Version::default()), |f| f.current.clone())
    }

    /// The live families as `(id, name)`, by id (the default family first).
    pub fn families(&self) -> impl Iterator<Item = (u32, &str)> {
        self.families.iter().map(|(id, f)| (*id, f.name.as_str()))
    }

    /// The name of the merge operator family `id` was opened with, if one
    /// is on record.
    pub fn merge_operator(&self, id: u32) -> Option<&str> {
        self.families.get(&id)?.merge_operator.as_deref()
    }

    /// The description (name and settings, see
    /// [`VersionEdit::merge_operator_description`]) of that operator, if it
    /// is on record: not for an operator without settings, nor for one
    /// recorded before descriptions were.
    pub fn merge_operator_description(&self, id: u32) -> Option<&str> {
        self.families
            .get(&id)?
            .merge_operator_description
            .as_deref()
    }

    /// The id of the live family named `name`.
    pub fn family_id(&self, name: &str) -> Option<u32> {
        self.families().find(|(_, n)| *n == name).map(|(id, _)| id)
    }

    /// The id a new family gets (one past the largest ever handed out).
    pub fn next_column_family_id(&self) -> u32 {
        self.max_column_family.saturating_add(1)
    }

    /// Hands out a new file number (never reused).
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// Makes sure numbers up to `number` are never handed out.
    pub fn mark_file_number_used(&mut self, number: u64) {
        self.next_file_number = self.next_file_number.max(number + 1);
    }

    /// The next number [`new_file_number`](Self::new_file_number) would return.
    pub fn next_file_number(&self) -> u64 {
        self.next_file_number
    }

    /// The last sequence number recorded as durable in a table or the MANIFEST.
    pub fn last_sequence(&self) -> SequenceNumber {
        self.last_sequence
    }

    /// Raises the last sequence number (it never goes down).
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) {
        self.last_sequence = self.last_sequence.max(seq);
    }

    /// WALs numbered below this hold nothing of family `id` that is not in
    /// its tables (0 for an id that is not live): where its replay starts.
    pub fn log_number(&self, id: u32) -> u64 {
        self.families
            .get(&id)
            .map_or(0, |f| f.log_number)
            .max(self.min_log_number_to_keep)
    }

    /// WALs numbered below this hold nothing of any family that is not in a
    /// table: the oldest WAL recovery may need, and the one it must find.
    pub fn min_log_number(&self) -> u64 {
        self.families
            .keys()
            .map(|&id| self.log_number(id))
            .min()
            .unwrap_or(self.min_log_number_to_keep)
    }

    /// The oldest WAL any family may need, as last made durable.
    pub fn min_log_number_to_keep(&self) -> u64 {
        self.min_log_number_to_keep
    }

    /// Number of the MANIFEST in use.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    /// The records that start a new MANIFEST: the default family's with the
    /// DB-wide counters, then one per other family, created with its files.
    fn snapshot_edits(&self) -> Vec<VersionEdit> {
        self.families
            .iter()
            .map(|(&id, family)| {
                let mut edit = VersionEdit::new();
                edit.set_comparator_name(manifest_comparator_name(family.current.order()));
                if id == 0 {
                    edit.set_next_file_number(self.next_file_number)
                        .set_last_sequence(self.last_sequence)
                        .set_max_column_family(self.max_column_family)
                        .set_min_log_number_to_keep(self.min_log_number_to_keep)
                        .set_wal_features(crate::wal::WAL_FEATURES);
                } else {
                    edit.add_column_family(id, family.name.clone());
                }
                edit.set_log_number(family.log_number);
                edit.merge_operator.clone_from(&family.merge_operator);
                edit.merge_operator_description
                    .clone_from(&family.merge_operator_description);
                for (level, f) in family.current.all_files() {
                    edit.add_file(level as u32, (**f).clone());
                }
                for meta in family.current.blob_files().values() {
                    edit.blob_file_additions.push(meta.addition);
                    if meta.garbage_count > 0 {
                        edit.blob_file_garbage
                            .push(crate::version::BlobFileGarbage {
                                number: meta.addition.number,
                                count: meta.garbage_count,
                                bytes: meta.garbage_bytes,
                            });
                    }
                }
                edit
            })
            .collect()
    }

    /// Writes a new MANIFEST holding the whole state (with every family's log
    /// number raised to `log_number` if given: the caller has flushed every
    /// memtable), syncs it, and switches CURRENT to it. Returns the number of
    /// the MANIFEST it replaces (0 if none), which the caller may delete.
    pub fn write_new_manifest(&mut self, log_number: Option<u64>) -> Result<u64> {
        let number = self.new_file_number();
        if let Some(l) = log_number {
            for family in self.families.values_mut() {
                family.log_number = family.log_number.max(l);
            }
            self.min_log_number_to_keep = self.min_log_number_to_keep.max(l);
        }
        let writer = write_manifest(&*self.fs, &self.dir, number, &self.snapshot_edits())?;
        crash_point!("manifest.new.written");
        set_current_file(&*self.fs, &self.dir, number)?;
        let old = std::mem::replace(&mut self.manifest_number, number);
        self.manifest = Some(Arc::new(Mutex::new(writer)));
        self.manifest_failure = None;
        Ok(old)
    }

    /// The records of a MANIFEST numbered `manifest_number` that holds the
    /// whole state, for a copy of the database (a checkpoint): the current
    /// records, with the next file number past `manifest_number`.
    pub fn manifest_for_copy(&self, manifest_number: u64) -> Vec<VersionEdit> {
        let mut edits = self.snapshot_edits();
        if let Some(first) = edits.first_mut() {
            let next = self.next_file_number.max(manifest_number + 1);
            first.set_next_file_number(next);
        }
        edits
    }

    /// Installs the version `edit` produces without writing the MANIFEST: for
    /// recovery, which then writes a whole new MANIFEST holding the result.
    pub fn apply_unlogged(&mut self, edit: &VersionEdit) -> Result<()> {
        self.apply_edit(edit).map_err(|e| self.invalid_edit(e))
    }

    /// An edit the engine made does not apply: a bug, reported against the
    /// MANIFEST it was going to be appended to, at its end.
    fn invalid_edit(&self, e: InvalidEdit) -> Error {
        let path = manifest_file_name(&self.dir, self.manifest_number);
        let end = self.manifest.as_ref().map_or(0, |w| w.lock().len());
        Error::corruption(
            path,
            end,
            format!("an edit about to be written is invalid: {}", e.0),
        )
    }

    /// Every file of every live family's current version.
    fn all_live_files(&self) -> impl Iterator<Item = &Arc<FileMetaData>> {
        self.families
            .values()
            .flat_map(|f| f.current.all_files().map(|(_, file)| file))
    }

    /// Number of table files the live families' current versions hold.
    pub fn num_live_files(&self) -> usize {
        self.all_live_files().count()
    }

    /// Numbers of the table and blob files some live version refers to: the
    /// current ones and every older one still held somewhere (a dropped
    /// family's too, while a reader holds it). Tables and blob files share
    /// one number space, so one set names both.
    pub fn live_file_numbers(&mut self) -> HashSet<u64> {
        self.older.retain(|v| v.strong_count() > 0);
        let mut live: HashSet<u64> = HashSet::new();
        let current = self.families.values().map(|f| f.current.clone());
        let older = self.older.iter().filter_map(Weak::upgrade);
        for version in current.chain(older) {
            live.extend(version.all_files().map(|(_, f)| f.number));
            live.extend(version.blob_files().keys().copied());
        }
        live
    }

    /// Number of blob files the live families' current versions link.
    pub fn num_live_blob_files(&self) -> usize {
        self.families
            .values()
            .map(|f| f.current.blob_files().len())
            .sum()
    }

    /// Appends `edit` (completed with the current counters) to the MANIFEST,
    /// syncs it, and only then installs the resulting version (or creates or
    /// drops the family it names). On error nothing is installed and the
    /// MANIFEST must not be written again: the caller stops the database,
    /// since the file's state on disk is unknown.
    pub fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        let write = self.begin_log(edit)?;
        let written = write.write();
        self.finish_log(write, written)
    }

    /// The first step of [`log_and_apply`](Self::log_and_apply): completes
    /// `edit` with the current counters, checks it, and computes the change
    /// it makes, so a bug never reaches the MANIFEST. The caller then runs
    /// [`ManifestWrite::write`] (the DB mutex may be released for it) and
    /// hands the outcome to [`finish_log`](Self::finish_log). Between the two
    /// calls no other MANIFEST write may start, and no other change may be
    /// made to the versions: the change was computed from the current ones.
    pub fn begin_log(&mut self, edit: &mut VersionEdit) -> Result<ManifestWrite> {
        edit.set_next_file_number(self.next_file_number)
            .set_last_sequence(self.last_sequence);
        if edit.column_family_add.is_some() {
            edit.set_max_column_family(self.max_column_family.max(edit.column_family));
        }
        edit.validate()?;
        let change = self.prepare(edit).map_err(|e| self.invalid_edit(e))?;
        let writer = self
            .manifest
            .clone()
            .ok_or_else(|| match &self.manifest_failure {
                Some(failure) => failure.clone(),
                None => Error::invalid_argument("manifest", "no MANIFEST is open for writing"),
            })?;
        Ok(ManifestWrite {
            record: edit.encode(),
            edit: edit.clone(),
            change,
            writer,
        })
    }

    /// The last step of [`log_and_apply`](Self::log_and_apply): installs the
    /// change once `written` says the record is durable; after a failed
    /// write, installs nothing and closes the MANIFEST to further writes.
    pub fn finish_log(&mut self, write: ManifestWrite, written: Result<()>) -> Result<()> {
        if let Err(e) = written {
            self.manifest = None;
            self.manifest_failure = Some(e.clone());
            return Err(e);
        }
        crash_point!("manifest.append.synced");
        self.install(&write.edit, write.change);
        Ok(())
    }
}

/// A MANIFEST record between [`VersionSet::begin_log`] and
/// [`VersionSet::finish_log`]: it holds its own handle on the file, so the
/// write and fsync need neither the version set nor the DB mutex.
#[derive(Debug)]
pub struct ManifestWrite {
    record: Vec<u8>,
    edit: VersionEdit,
    change: FamilyChange,
    writer: Arc<Mutex<LogWriter>>,
}

impl ManifestWrite {
    /// Appends the record to the MANIFEST and syncs it.
    pub fn write(&self) -> Result<()> {
        let mut writer = self.writer.lock();
        crash_point!("manifest.append.before");
        writer.add_record(&self.record)?;
        crash_point!("manifest.append.before_sync");
        writer.sync()
    }
}

#[cfg(test)]
#[path = "set_tests.rs"]
mod tests;
