//! The column family half of [`Db`]'s API: creating, dropping and listing
//! families, and every read and write that names one.
//!
//! Creating and dropping a family is one MANIFEST edit each, made durable
//! before the change is visible; a dropped family's tables are deleted once
//! no reader holds a version with them.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;

use super::info_log::info;
use super::key_range::KeyRange;
use super::manifest_writer;
use super::{compact, multi_get, properties, read, write, Db, DbInner, DbState};
use crate::cf::{CfShared, CfState, CfStats, ColumnFamily};
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIterator;
use crate::iter::db_range::DbRange;
use crate::key_order::KeyComparator;
use crate::memtable::MemTable;
use crate::options::{
    apply_cf_option, is_mutable_cf_option, write_options_file, CfOptions, DbOptions, ReadOptions,
    WriteOptions, MIN_WRITE_BUFFER_SIZE,
};
use crate::version::set::manifest_comparator_name;
use crate::version::{SuperVersion, VersionEdit};
use crate::write::WriteBatch;

impl Db {
    /// The names of the column families of the database in `path`, the
    /// default family first (RocksDB's `ListColumnFamilies`). Reads the
    /// MANIFEST only; the database may be open elsewhere.
    pub fn list_column_families(
        path: impl AsRef<Path>,
        options: &DbOptions,
    ) -> Result<Vec<String>> {
        crate::version::set::list_families(&*options.fs, path.as_ref())
    }

    /// Creates a column family named `name` with `options` (RocksDB's
    /// `CreateColumnFamily`); durable when this returns. Fails with
    /// `InvalidArgument` when a live family has the name, or the options are
    /// invalid.
    pub fn create_column_family(&self, name: &str, options: CfOptions) -> Result<ColumnFamily> {
        self.inner.check_writable()?;
        options.validate()?;
        if name.is_empty() {
            return Err(Error::invalid_argument(
                "column_family",
                "a column family's name cannot be empty",
            ));
        }
        let mut state = self.inner.state.lock();
        // The MANIFEST's turn first: the checks below then hold until the
        // write, since the mutex stays held.
        manifest_writer::wait_for_turn(&self.inner, &mut state);
        if let Some(e) = &state.recovery.bg_error {
            return Err(e.clone());
        }
        if state.versions.family_id(name).is_some() {
            return Err(Error::invalid_argument(
                "column_family",
                format!("column family {name:?} already exists"),
            ));
        }
        let id = state.versions.next_column_family_id();
        let mut edit = VersionEdit::new();
        // The family's writes all go to the current WAL or later ones.
        state.versions.register_comparator(&options.comparator);
        let order = KeyComparator::new(&options.comparator);
        edit.add_column_family(id, name)
            .set_comparator_name(manifest_comparator_name(&order))
            .set_log_number(state.commit.wal_number);
        super::merge_records::record(&mut edit, options.merge_operator.as_deref());
        if let Err(e) = state.versions.log_and_apply(&mut edit) {
            self.inner.set_bg_error(&mut state, e.clone());
            return Err(e);
        }
        crash_point!("cf.create.applied");
        let shared = add_family(&self.inner, &mut state, id, name, Arc::new(options));
        info!(
            self.inner.info_log,
            "created column family {name:?} (id {id})"
        );
        // The family exists from here on, whatever becomes of the OPTIONS
        // file; an error writing it is returned, and the next open or
        // family change writes the file again.
        let options_file = options_to_persist(&self.inner, &mut state);
        drop(state);
        options_file.write(&self.inner)?;
        Ok(ColumnFamily { shared })
    }

    /// Drops column family `cf` (RocksDB's `DropColumnFamily`); durable when
    /// this returns. Its handles fail from then on; its tables are deleted
    /// once no iterator or snapshot read holds them. The default family
    /// cannot be dropped.
    pub fn drop_column_family(&self, cf: &ColumnFamily) -> Result<()> {
        self.inner.check_writable()?;
        if cf.id() == 0 {
            return Err(Error::invalid_argument(
                "column_family",
                "the default column family cannot be dropped",
            ));
        }
        let mut state = self.inner.state.lock();
        self.inner.family(&state, &cf.shared)?;
        if let Some(e) = &state.recovery.bg_error {
            return Err(e.clone());
        }
        // Let running compactions of the family finish: their results
        // would otherwise be installed into a family that no longer exists.
        // and take the MANIFEST's turn, holding the mutex from then on.
        while state.jobs.manifest_busy
            || state
                .jobs
                .running_compactions
                .iter()
                .any(|r| r.family == cf.id())
        {
            self.inner.bg_cv.wait(&mut state);
        }
        let mut edit = VersionEdit::new();
        edit.drop_column_family(cf.id());
        if let Err(e) = state.versions.log_and_apply(&mut edit) {
            self.inner.set_bg_error(&mut state, e.clone());
            return Err(e);
        }
        crash_point!("cf.drop.applied");
        cf.shared.dropped.store(true, Ordering::Release);
        state.commit.write_controller.forget(cf.id());
        if let Some(family) = state.cfs.remove(&cf.id()) {
            // Handles outlive the family: what they keep published must not
            // pin its tables or memtables (reads through them fail anyway).
            let empty = Arc::new(MemTable::new(MIN_WRITE_BUFFER_SIZE));
            let nothing = new_shared(0, 0, "", &empty, Arc::default(), &family.options);
            cf.shared
                .super_version
                .store(nothing.super_version.load_full());
        }
        info!(
            self.inner.info_log,
            "dropped column family {:?} (id {})",
            cf.name(),
            cf.id()
        );
        // The family's memtables go with it; its tables go once no reader
        // holds its last version.
        compact::sweep_obsolete_tables(&self.inner, &mut state);
        // As for creation: the drop stands even if the OPTIONS file fails.
        let options_file = options_to_persist(&self.inner, &mut state);
        drop(state);
        options_file.write(&self.inner)
    }

    /// Changes options of family `cf` while the database is open (RocksDB's
    /// `SetOptions`), by RocksDB's names and value spellings, e.g.
    /// `[("write_buffer_size", "8388608"), ("level0_file_num_compaction_trigger", "8")]`.
    /// All or nothing: an option that cannot change at run time (see
    /// [`crate::options::mutable_cf_option_names`]), an unknown name or a bad
    /// value fails with `InvalidArgument` naming it, changing nothing. The
    /// new options apply to the next memtable switch, flush and compaction,
    /// and are written to a new OPTIONS file.
    pub fn set_options(&self, cf: &ColumnFamily, changes: &[(&str, &str)]) -> Result<()> {
        self.inner.check_writable()?;
        let mut state = self.inner.state.lock();
        let family = self.inner.family(&state, &cf.shared)?;
        let mut changed = (*family.options).clone();
        for &(name, value) in changes {
            if !is_mutable_cf_option(name) {
                return Err(Error::invalid_argument(
                    "set_options",
                    format!(
                        "{name:?} is not an option that can change while the database is open \
                         (or not one Strata knows)"
                    ),
                ));
            }
            apply_cf_option(&mut changed, name, value)?;
        }
        changed.validate()?;
        if let Some(family) = state.cfs.get_mut(&cf.id()) {
            family.options = Arc::new(changed);
        }
        self.inner.install_super_version(&mut state, cf.id());
        info!(
            self.inner.info_log,
            "[{}] set_options: {changes:?}",
            cf.name()
        );
        // Compaction may be due under the new triggers.
        self.inner.bg_cv.notify_all();
        let options_file = options_to_persist(&self.inner, &mut state);
        drop(state);
        options_file.write(&self.inner)
    }

    /// A handle on the live family named `name` (RocksDB's handle lookup).
    pub fn cf_handle(&self, name: &str) -> Option<ColumnFamily> {
        let state = self.inner.state.lock();
        state
            .cfs
            .values()
            .find(|cf| cf.shared.name == name)
            .map(|cf| ColumnFamily {
                shared: cf.shared.clone(),
            })
    }

    /// A handle on the default family.
    pub fn default_cf(&self) -> ColumnFamily {
        ColumnFamily {
            shared: self.inner.default_cf.clone(),
        }
    }

    /// Handles on every live family, the default one first.
    pub fn column_families(&self) -> Vec<ColumnFamily> {
        let state = self.inner.state.lock();
        state
            .cfs
            .values()
            .map(|cf| ColumnFamily {
                shared: cf.shared.clone(),
            })
            .collect()
    }

    /// Sets `key` to `value` in family `cf`.
    pub fn put_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put_cf(cf, key, value)?;
        self.write(&WriteOptions::default(), batch)
    }

    /// Adds a merge operand for `key` in family `cf` (see [`Db::merge`]).
    pub fn merge_cf(
        &self,
        cf: &ColumnFamily,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.merge_cf(cf, key, operand)?;
        self.write(&WriteOptions::default(), batch)
    }

    /// Deletes `key` from family `cf`.
    pub fn delete_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete_cf(cf, key)?;
        self.write(&WriteOptions::default(), batch)
    }

    /// Deletes every key in `[begin, end)` of family `cf` (RocksDB's
    /// `DeleteRange`). `begin >= end` is `InvalidArgument` naming
    /// `delete_range`.
    pub fn delete_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Result<()> {
        if begin.as_ref() == end.as_ref() {
            // Nothing to delete (see `Db::delete_range`).
            self.inner.check_writable()?;
            return cf.shared.check_usable(self.inner.instance);
        }
        let mut batch = WriteBatch::new();
        batch.delete_range_cf(cf, begin, end)?;
        self.write(&WriteOptions::default(), batch)
    }

    /// The value of `key` in family `cf`, or `None`.
    pub fn get_cf(&self, cf: &ColumnFamily, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        self.get_cf_opt(cf, &ReadOptions::default(), key)
    }

    /// The value of `key` in family `cf` with read options.
    pub fn get_cf_opt(
        &self,
        cf: &ColumnFamily,
        options: &ReadOptions,
        key: impl AsRef<[u8]>,
    ) -> Result<Option<Bytes>> {
        cf.shared.check_usable(self.inner.instance)?;
        read::get(&self.inner, &cf.shared, options, key.as_ref())
    }

    /// The values of several keys of family `cf`, read at one consistent
    /// sequence number.
    pub fn multi_get_cf<K: AsRef<[u8]>>(
        &self,
        cf: &ColumnFamily,
        options: &ReadOptions,
        keys: &[K],
    ) -> Vec<Result<Option<Bytes>>> {
        if let Err(e) = cf.shared.check_usable(self.inner.instance) {
            return keys.iter().map(|_| Err(e.clone())).collect();
        }
        multi_get::multi_get(&self.inner, &cf.shared, options, keys)
    }

    /// The values of `(family, key)` pairs, in their order, every family
    /// read at one sequence number (RocksDB's `MultiGet` over column
    /// families): a batch written to several families is seen whole or not
    /// at all. Batched per family as [`Db::multi_get`] is. A pair naming a
    /// dropped family, or one of another database, fails alone.
    pub fn multi_get_cfs<K: AsRef<[u8]>>(
        &self,
        options: &ReadOptions,
        requests: &[(&ColumnFamily, K)],
    ) -> Vec<Result<Option<Bytes>>> {
        let mut values: Vec<Result<Option<Bytes>>> = Vec::new();
        values.resize_with(requests.len(), || Ok(None));
        let mut usable = Vec::new();
        let mut positions = Vec::new();
        for (i, (cf, key)) in requests.iter().enumerate() {
            match cf.shared.check_usable(self.inner.instance) {
                Ok(()) => {
                    usable.push((&*cf.shared, key.as_ref()));
                    positions.push(i);
                }
                Err(e) => values[i] = Err(e),
            }
        }
        let found = multi_get::multi_get_across(&self.inner, options, &usable);
        for (i, value) in positions.into_iter().zip(found) {
            values[i] = value;
        }
        values
    }

    /// A cursor over family `cf`, reading the latest state (see
    /// [`Db::iter`]).
    pub fn iter_cf(&self, cf: &ColumnFamily) -> DbIterator {
        self.iter_cf_opt(cf, &ReadOptions::default())
    }

    /// A cursor over family `cf` with read options (see [`Db::iter_opt`]).
    pub fn iter_cf_opt(&self, cf: &ColumnFamily, options: &ReadOptions) -> DbIterator {
        let (lower, upper) = (
            options.iterate_lower_bound.clone(),
            options.iterate_upper_bound.clone(),
        );
        if let Err(e) = cf.shared.check_usable(self.inner.instance) {
            return read::failed_iter(e, lower, upper);
        }
        read::iter(&self.inner, &cf.shared, options, lower, upper)
    }

    /// The entries of family `cf` in `range`, reading the latest state (see
    /// [`Db::range`]).
    pub fn range_cf(&self, cf: &ColumnFamily, range: impl KeyRange) -> DbRange {
        self.range_cf_opt(cf, &ReadOptions::default(), range)
    }

    /// The entries of family `cf` in `range` with read options (see
    /// [`Db::range_opt`]).
    pub fn range_cf_opt(
        &self,
        cf: &ColumnFamily,
        options: &ReadOptions,
        range: impl KeyRange,
    ) -> DbRange {
        if let Err(e) = cf.shared.check_usable(self.inner.instance) {
            let front = read::failed_iter(e.clone(), None, None);
            return DbRange::new(front, read::failed_iter(e, None, None));
        }
        read::range(&self.inner, &cf.shared, options, range)
    }

    /// Flushes family `cf`'s active memtable and waits until every full
    /// memtable of it is flushed.
    pub fn flush_cf(&self, cf: &ColumnFamily) -> Result<()> {
        cf.shared.check_usable(self.inner.instance)?;
        write::flush(&self.inner, &cf.shared)
    }

    /// Compacts family `cf`'s keys in `[begin, end]` (see
    /// [`Db::compact_range`]).
    pub fn compact_range_cf(
        &self,
        cf: &ColumnFamily,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Result<()> {
        self.inner.check_writable()?;
        self.flush_cf(cf)?;
        compact::compact_range(&self.inner, cf.id(), begin, end)
    }

    /// About how many bytes of table files family `cf` holds for user keys
    /// in `[start, end)` (RocksDB's `GetApproximateSizes`, files only): whole
    /// files inside the range, and the part of each boundary file between
    /// the data blocks that would hold `start` and `end`. Memtables are not
    /// counted.
    pub fn approximate_size_cf(&self, cf: &ColumnFamily, start: &[u8], end: &[u8]) -> Result<u64> {
        cf.shared.check_usable(self.inner.instance)?;
        let sv = cf.shared.super_version.load();
        let order = sv.version.order();
        if !order.lt(start, end) {
            return Ok(0);
        }
        let mut total = 0u64;
        for (level, file) in sv.version.all_files() {
            let (smallest, largest) = (
                crate::key::user_key(&file.smallest),
                crate::key::user_key(&file.largest),
            );
            if order.lt(largest, start) || order.le(end, smallest) {
                continue;
            }
            if order.le(start, smallest) && order.lt(largest, end) {
                total += file.file_size;
                continue;
            }
            let table = self.inner.table_cache.get(file, level, order)?;
            let from = table.approximate_offset_of(start)?;
            let to = table.approximate_offset_of(end)?;
            total += to.saturating_sub(from);
        }
        Ok(total)
    }

    /// A property of family `cf` (see [`Db::property`]); `strata.stats` and
    /// `strata.cfstats` show this family's compaction stats.
    pub fn property_cf(&self, cf: &ColumnFamily, name: &str) -> Option<String> {
        cf.shared.check_usable(self.inner.instance).ok()?;
        properties::property(&self.inner, &cf.shared, name)
    }
}

/// The OPTIONS file a change calls for: every live family's options (the
/// database options' column family fields are the default family's), taken
/// with the DB mutex held after the change, and written by
/// [`PendingOptionsFile::write`] once the mutex is released, so no writer
/// waits on its two fsyncs.
pub(super) struct PendingOptionsFile {
    number: u64,
    db_options: DbOptions,
    families: Vec<(String, Arc<CfOptions>)>,
}

/// Takes the options to write; the caller holds the DB mutex.
pub(super) fn options_to_persist(inner: &DbInner, state: &mut DbState) -> PendingOptionsFile {
    let number = state.versions.new_file_number();
    let families: Vec<(String, Arc<CfOptions>)> = state
        .cfs
        .values()
        .map(|f| (f.shared.name.clone(), f.options.clone()))
        .collect();
    let mut db_options = inner.options.clone();
    if let Some((_, default)) = families.first() {
        db_options.set_cf_options((**default).clone());
    }
    PendingOptionsFile {
        number,
        db_options,
        families,
    }
}

impl PendingOptionsFile {
    /// Writes the file and keeps the newest two, without the DB mutex. Files
    /// are written one at a time; one older than a file already written is
    /// skipped, since that file's options were taken later and hold this
    /// change too.
    pub(super) fn write(self, inner: &DbInner) -> Result<()> {
        let mut newest = inner.newest_options_file.lock();
        if *newest > self.number {
            return Ok(());
        }
        let families: Vec<(&str, &CfOptions)> = self
            .families
            .iter()
            .map(|(n, o)| (n.as_str(), &**o))
            .collect();
        write_options_file(
            &*inner.fs,
            &inner.dir,
            self.number,
            &self.db_options,
            &families,
        )?;
        *newest = self.number;
        Ok(())
    }
}

/// Adds family `id` to the state with an empty memtable whose writes start
/// in the current WAL, and publishes its first super version.
pub(super) fn add_family(
    inner: &DbInner,
    state: &mut DbState,
    id: u32,
    name: &str,
    options: Arc<CfOptions>,
) -> Arc<CfShared> {
    let mem = Arc::new(MemTable::for_family(&options));
    let shared = new_shared(
        inner.instance,
        id,
        name,
        &mem,
        state.versions.current(id),
        &options,
    );
    let wal_number = state.commit.wal_number;
    state.cfs.insert(
        id,
        CfState::new(shared.clone(), options, mem, Vec::new(), wal_number),
    );
    inner.install_super_version(state, id);
    shared
}

/// A family's shared part, publishing a first super version of `mem` and
/// `version`.
pub(super) fn new_shared(
    instance: u64,
    id: u32,
    name: &str,
    mem: &Arc<MemTable>,
    version: Arc<crate::version::Version>,
    options: &Arc<CfOptions>,
) -> Arc<CfShared> {
    Arc::new(CfShared {
        id,
        name: name.to_owned(),
        db_instance: instance,
        dropped: AtomicBool::new(false),
        super_version: ArcSwap::from_pointee(SuperVersion {
            mem: mem.clone(),
            imm: Vec::new(),
            version,
            options: options.clone(),
        }),
        stats: CfStats::default(),
    })
}
