//! Opening a database: lock, read the MANIFEST, replay the WALs, and make the
//! recovered state durable before anything old is deleted.
//!
//! Recovery is idempotent. Recovered memtables are written to L0 tables and
//! synced, then a fresh MANIFEST naming them (and a new WAL) is synced and
//! CURRENT switched to it; only then are the replayed WALs and the old MANIFEST
//! deleted. A crash at any point leaves either the old MANIFEST with all its WALs
//! (recovery runs again; tables it wrote are unreferenced and removed) or the new
//! one, which no longer needs them.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::families::{new_shared, options_to_persist};
use super::info_log::{info, InfoLog};
use super::merge_records;
use super::open_checks;
use super::snapshot::SnapshotList;
use super::state::{CommitState, DbState, JobState, RecoveryState};
use super::stats::DbStats;
use super::wal_replay::{check_families_not_ahead, replay_logs, OpenWal, WalDamage};
use super::DbInner;
use crate::blob::{BlobFileBuilder, BlobOutput, BlobSource};
use crate::cache::Priority;
use crate::cf::CfState;
use crate::compaction::rate_limiter::{IoPriority, RateLimitedFs};
use crate::comparator::Comparator;
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{
    blob_file_name, corrupt_log_file_name, current_file_name, lock_file_name, log_file_name,
    manifest_file_name, parse_file_name, table_file_name, temp_file_name, FileType,
};
use crate::flush::{write_level0_table, TableOwner};
use crate::fs::{DirectWritesFs, FileLock, Fs, ReadFileOptions};
use crate::key_order::KeyComparator;
use crate::memtable::MemTable;
use crate::options::{CfOptions, DbOptions, MIN_WRITE_BUFFER_SIZE};
use crate::table_cache::TableCache;
use crate::version::set::manifest_comparator_name;
use crate::version::{FileSearch, VersionEdit, VersionSet};
use crate::wal::LogWriter;
use crate::write::publish::Publisher;

pub(super) fn open(
    dir: &Path,
    options: DbOptions,
    families: Vec<(String, CfOptions)>,
) -> Result<DbInner> {
    options.validate()?;
    for (_, cf_options) in &families {
        cf_options.validate()?;
    }
    let fs = options.fs.clone();
    if !fs.exists(dir)? {
        if !options.create_if_missing {
            return Err(Error::invalid_argument(
                "create_if_missing",
                format!(
                    "{} does not exist (create_if_missing is false)",
                    dir.display()
                ),
            ));
        }
        fs.create_dir_all(dir)?;
    }
    let lock = fs.lock(&lock_file_name(dir))?;
    let exists = fs.exists(&current_file_name(dir))?;
    if !exists {
        // Creating a database happens only where none of its files are: a
        // directory with tables, WALs or a MANIFEST but no CURRENT holds a
        // damaged database, and a new one would delete them as obsolete.
        open_checks::refuse_files_without_current(&*fs, dir)?;
    }
    if exists && options.error_if_exists {
        return Err(Error::invalid_argument(
            "error_if_exists",
            format!("the database {} already exists", dir.display()),
        ));
    }
    if !exists && !options.create_if_missing {
        return Err(Error::invalid_argument(
            "create_if_missing",
            format!(
                "{} is not a Strata database (no CURRENT file) and create_if_missing is false",
                dir.display()
            ),
        ));
    }
    let info_log = InfoLog::open(&*fs, dir, options.keep_log_file_num)?;
    info!(
        info_log,
        "opening {} ({})",
        dir.display(),
        if exists { "existing" } else { "new" }
    );
    info!(info_log, "options: {options:?}");

    let listing = list_and_open_wals(&*fs, dir)?;
    let comparators = known_comparators(&options, &families);
    let mut versions = if exists {
        VersionSet::recover(fs.clone(), dir, &comparators)?
    } else {
        VersionSet::new_empty(fs.clone(), dir, KeyComparator::new(&options.comparator))
    };
    versions.set_file_search(file_search(&options));
    let (family_options, missing) = match_families(&versions, &options, families)?;
    open_checks::check_comparators(&versions, &family_options)?;
    merge_records::check(&*fs, dir, &versions, &family_options, exists)?;
    if !missing.is_empty() && !options.create_missing_column_families {
        let names: Vec<&str> = missing.iter().map(|(n, _)| n.as_str()).collect();
        return Err(Error::invalid_argument(
            "column_family",
            format!(
                "the database has no column family {} (create_missing_column_families is false)",
                names.join(", ")
            ),
        ));
    }
    for (&id, cf_options) in &family_options {
        let version = versions.current(id);
        open_checks::check_levels(dir, &version, cf_options.compaction.num_levels)?;
        if options.paranoid_checks {
            open_checks::check_live_tables(&*fs, dir, &version)?;
        }
    }
    let logs = logs_to_replay(&*fs, dir, &mut versions, listing)?;
    let mut edits: BTreeMap<u32, VersionEdit> = BTreeMap::new();
    let replay = replay_logs(
        dir,
        &options,
        &info_log,
        &logs,
        &mut versions,
        &family_options,
        &mut |versions, id, mem| {
            flush_recovered(&*fs, dir, &family_options, versions, &mut edits, id, &mem)
        },
    )?;
    check_families_not_ahead(dir, &versions, &replay)?;
    crash_point!("recovery.replayed");
    for (&id, mem) in &replay.mems {
        flush_recovered(
            &*fs,
            dir,
            &family_options,
            &mut versions,
            &mut edits,
            id,
            mem,
        )?;
    }
    crash_point!("recovery.flushed");

    // Make the recovered state durable in a new MANIFEST with a new WAL.
    let new_log = versions.new_file_number();
    let wal_file = fs.create(&log_file_name(dir, new_log))?;
    fs.sync_dir(dir)?;
    crash_point!("recovery.new_wal");
    // In the new MANIFEST's records, so a later open with another is refused.
    merge_records::record_at_open(&versions, &family_options, &mut edits);
    for (&id, edit) in &mut edits {
        versions.apply_unlogged(edit.set_column_family(id))?;
    }
    versions.write_new_manifest(Some(new_log))?;
    crash_point!("recovery.new_manifest");
    let mut family_options = family_options;
    for (name, cf_options) in missing {
        let id = versions.next_column_family_id();
        let mut edit = VersionEdit::new();
        versions.register_comparator(&cf_options.comparator);
        let order = KeyComparator::new(&cf_options.comparator);
        edit.add_column_family(id, name.clone())
            .set_comparator_name(manifest_comparator_name(&order))
            .set_log_number(new_log);
        merge_records::record(&mut edit, cf_options.merge_operator.as_deref());
        versions.log_and_apply(&mut edit)?;
        info!(info_log, "created column family {name:?} (id {id})");
        family_options.insert(id, Arc::new(cf_options));
    }
    info!(
        info_log,
        "recovered: {} families, {} files, last sequence {}, new WAL #{new_log}, MANIFEST #{}",
        family_options.len(),
        versions.num_live_files(),
        versions.last_sequence(),
        versions.manifest_number()
    );

    // The new MANIFEST no longer needs any replayed WAL; the damaged ones
    // are kept as evidence rather than deleted with the rest.
    for &number in &replay.set_aside {
        let (from, to) = (
            log_file_name(dir, number),
            corrupt_log_file_name(dir, number),
        );
        match fs.rename(&from, &to) {
            Ok(()) => info!(
                info_log,
                "[ERROR] kept damaged WAL #{number} as {}",
                to.display()
            ),
            Err(e) => info!(
                info_log,
                "[ERROR] could not keep damaged WAL #{number}: {e}"
            ),
        }
    }
    if !replay.set_aside.is_empty() {
        fs.sync_dir(dir)?;
    }
    delete_obsolete_files(&*fs, dir, &mut versions, &info_log);

    let recovered = Recovered {
        families: family_options
            .into_iter()
            .map(|(id, options)| RecoveredFamily {
                id,
                mem: MemTable::for_family(&options),
                imm: Vec::new(),
                options,
            })
            .collect(),
        versions,
        wal_damage: replay.damage,
    };
    let mut inner = build_inner(
        dir,
        options,
        fs,
        recovered,
        Some((LogWriter::new(wal_file), new_log)),
        info_log,
        Some(lock),
    );
    inner.events = super::events::EventQueue::start(&inner.options.listeners)?;
    // The options this open runs with, for tools and for the next open.
    let options_file = options_to_persist(&inner, &mut inner.state.lock());
    options_file.write(&inner)?;
    Ok(inner)
}

/// Each open family's options, by id.
type FamilyOptions = BTreeMap<u32, Arc<CfOptions>>;

/// Pairs the database's families with the options the caller gave: the
/// default family's come from `options` unless `families` names "default".
/// Returns the options by family id, and the families `families` names that
/// the database lacks. A family the database has and `families` lacks, or a
/// name given twice, is an error naming it.
/// The application comparators an open knows: the default family's and
/// every named family's (the MANIFEST names each family's; the built-in
/// orders need no object).
fn known_comparators(
    options: &DbOptions,
    families: &[(String, CfOptions)],
) -> Vec<Arc<dyn Comparator>> {
    std::iter::once(&options.comparator)
        .chain(families.iter().map(|(_, o)| &o.comparator))
        .cloned()
        .collect()
}

fn match_families(
    versions: &VersionSet,
    options: &DbOptions,
    families: Vec<(String, CfOptions)>,
) -> Result<(FamilyOptions, Vec<(String, CfOptions)>)> {
    let mut given: BTreeMap<String, CfOptions> = BTreeMap::new();
    for (name, cf_options) in families {
        if given.contains_key(&name) {
            return Err(Error::invalid_argument(
                "column_family",
                format!("column family {name:?} is named twice"),
            ));
        }
        given.insert(name, cf_options);
    }
    let mut matched = BTreeMap::new();
    let mut not_opened = Vec::new();
    for (id, name) in versions.families() {
        match given.remove(name) {
            Some(cf_options) => {
                matched.insert(id, Arc::new(cf_options));
            }
            None if id == 0 => {
                matched.insert(id, Arc::new(options.cf_options()));
            }
            None => not_opened.push(name.to_owned()),
        }
    }
    if !not_opened.is_empty() {
        return Err(Error::invalid_argument(
            "column_family",
            format!(
                "the database has column families the open does not name: {} (open every \
                 family, e.g. with the names Db::list_column_families returns)",
                not_opened.join(", ")
            ),
        ));
    }
    Ok((matched, given.into_iter().collect()))
}

/// Opens the database for reads only (RocksDB's `OpenForReadOnly`): replays
/// the MANIFEST and the WALs into memtables and writes nothing at all — no
/// LOCK, no LOG, no tables, no MANIFEST. Writes, flushes and compactions fail
/// with `InvalidArgument`. Another process may be writing the database; files
/// it deletes meanwhile make reads fail rather than return wrong data. Every
/// family is opened, with `options`' column family fields.
pub(super) fn open_read_only(
    dir: &Path,
    options: DbOptions,
    given: Vec<(String, CfOptions)>,
) -> Result<DbInner> {
    options.validate()?;
    let fs = options.fs.clone();
    if !fs.exists(&current_file_name(dir))? {
        if fs.exists(dir)? {
            // A damaged database is not "no database": say what is there.
            open_checks::refuse_files_without_current(&*fs, dir)?;
        }
        return Err(Error::invalid_argument(
            "path",
            format!(
                "{} is not a Strata database (no CURRENT file)",
                dir.display()
            ),
        ));
    }
    let recovered = open_checks::retry_while_changing(&*fs, dir, || {
        recover_read_only(&fs, dir, &options, &given)
    })?;
    Ok(build_inner(
        dir,
        options,
        fs,
        recovered,
        None,
        InfoLog::disabled(),
        None,
    ))
}

/// How the versions of a database opened with `options` search their levels.
fn file_search(options: &DbOptions) -> FileSearch {
    if options.file_index_prefix_cache {
        FileSearch::KeyPrefix
    } else {
        FileSearch::Full
    }
}

/// One attempt at reading the database's state without writing anything. A
/// writer beside it may flush and delete a WAL, or replace the MANIFEST, at
/// any moment; the caller retries when that happened.
fn recover_read_only(
    fs: &Arc<dyn Fs>,
    dir: &Path,
    options: &DbOptions,
    given: &[(String, CfOptions)],
) -> Result<Recovered> {
    let listing = list_and_open_wals(&**fs, dir)?;
    let comparators = known_comparators(options, given);
    let mut versions = VersionSet::recover(fs.clone(), dir, &comparators)?;
    versions.set_file_search(file_search(options));
    let logs = logs_to_replay(&**fs, dir, &mut versions, listing)?;
    let family_options = read_only_family_options(fs, dir, options, given, &versions);
    open_checks::check_comparators(&versions, &family_options)?;
    // Only the families the caller gave options for (the default family's
    // come with the database's) are held to their merge operator record:
    // the others' options are a guess, which is no reason to refuse a view.
    let named: BTreeMap<u32, Arc<CfOptions>> = family_options
        .iter()
        .filter(|(&id, _)| {
            id == 0
                || versions
                    .families()
                    .any(|(i, name)| i == id && given.iter().any(|(n, _)| n == name))
        })
        .map(|(&id, options)| (id, options.clone()))
        .collect();
    merge_records::check(&**fs, dir, &versions, &named, true)?;
    let mut imm: BTreeMap<u32, Vec<Arc<MemTable>>> = BTreeMap::new();
    let replay = replay_logs(
        dir,
        options,
        &InfoLog::disabled(),
        &logs,
        &mut versions,
        &family_options,
        &mut |_, id, mem| {
            imm.entry(id).or_default().push(Arc::new(mem));
            Ok(())
        },
    )?;
    check_families_not_ahead(dir, &versions, &replay)?;
    let families = replay
        .mems
        .into_iter()
        .map(|(id, mem)| {
            let mut imm = imm.remove(&id).unwrap_or_default();
            // Newest first, as the write path keeps them.
            imm.reverse();
            RecoveredFamily {
                id,
                options: family_options
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(options.cf_options())),
                mem,
                imm,
            }
        })
        .collect();
    Ok(Recovered {
        versions,
        families,
        wal_damage: replay.damage,
    })
}

/// The options of each family a read-only open reads with: the default
/// family's are `options`' column family fields; another family's are those
/// the caller gave for it, else those the newest OPTIONS file records for it
/// (a merge operator must match the one that wrote the operands), else
/// `options`' column family fields.
fn read_only_family_options(
    fs: &Arc<dyn Fs>,
    dir: &Path,
    options: &DbOptions,
    given: &[(String, CfOptions)],
    versions: &VersionSet,
) -> BTreeMap<u32, Arc<CfOptions>> {
    let load = crate::options::LoadOptions {
        ignore_unknown_options: true,
        merge_operators: options.merge_operator.iter().cloned().collect(),
        ..crate::options::LoadOptions::default()
    };
    // A file that cannot be read or resolved leaves the fallback.
    let stored = crate::options::load_latest_options_for_reading(fs.clone(), dir, &load)
        .map(|(_, families)| families)
        .unwrap_or_default();
    let default_options = Arc::new(options.cf_options());
    versions
        .families()
        .map(|(id, name)| {
            let chosen = if name == crate::cf::DEFAULT_COLUMN_FAMILY_NAME {
                None
            } else {
                let named = given.iter().find(|(n, _)| n == name);
                let recorded = || {
                    stored
                        .iter()
                        .find(|(n, _)| n == name)
                        .map(|(_, o)| o.clone())
                };
                named.map(|(_, o)| o.clone()).or_else(|| {
                    // Options not given are a guess, except in the order
                    // the MANIFEST records, which a built-in fixes.
                    let mut guess = recorded().unwrap_or_else(|| (*default_options).clone());
                    // A built-in operator the MANIFEST records beats the guess.
                    if let Some(op) = merge_records::recorded_built_in(
                        versions,
                        id,
                        guess.merge_operator.as_deref(),
                    ) {
                        guess.merge_operator = Some(op);
                    }
                    if let Some(order) = versions.order(id) {
                        if !matches!(order, KeyComparator::User(_)) {
                            guess.comparator = order.to_comparator();
                        }
                    }
                    Some(guess)
                })
            };
            (id, chosen.map_or_else(|| default_options.clone(), Arc::new))
        })
        .collect()
}

/// One family's state after recovery.
struct RecoveredFamily {
    id: u32,
    options: Arc<CfOptions>,
    /// The active memtable, and full ones (newest first) a read-only open keeps.
    mem: MemTable,
    imm: Vec<Arc<MemTable>>,
}

/// The state recovery produced.
struct Recovered {
    versions: VersionSet,
    families: Vec<RecoveredFamily>,
    /// What replaying the WALs found damaged.
    wal_damage: Vec<WalDamage>,
}

/// Numbers every database opened in this process, so family handles of one
/// are told apart from another's.
static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

fn build_inner(
    dir: &Path,
    options: DbOptions,
    fs: Arc<dyn Fs>,
    recovered: Recovered,
    wal: Option<(LogWriter, u64)>,
    info_log: InfoLog,
    lock: Option<Box<dyn FileLock>>,
) -> DbInner {
    let Recovered {
        versions,
        families,
        wal_damage,
    } = recovered;
    let instance = NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed);
    let wal_number = wal.as_ref().map_or(0, |(_, n)| *n);
    let mut cfs = BTreeMap::new();
    for family in families {
        let mem = Arc::new(family.mem);
        let name = versions
            .families()
            .find(|(id, _)| *id == family.id)
            .map_or_else(String::new, |(_, n)| n.to_owned());
        let shared = new_shared(
            instance,
            family.id,
            &name,
            &mem,
            versions.current(family.id),
            &family.options,
        );
        let state = CfState::new(shared, family.options, mem, family.imm, wal_number);
        state.publish(versions.current(family.id));
        cfs.insert(family.id, state);
    }
    let default_cf = match cfs.get(&0) {
        Some(family) => family.shared.clone(),
        // Every version set has the default family; this is never taken.
        None => new_shared(
            instance,
            0,
            crate::version::DEFAULT_COLUMN_FAMILY_NAME,
            &Arc::new(MemTable::new(MIN_WRITE_BUFFER_SIZE)),
            versions.current(0),
            &Arc::new(options.cf_options()),
        ),
    };
    let last_sequence = versions.last_sequence();
    let read_options = ReadFileOptions {
        use_mmap_reads: options.use_mmap_reads,
        use_direct_reads: options.use_direct_reads,
    };
    let read_only = wal.is_none();
    DbInner {
        dir: dir.to_path_buf(),
        instance,
        blobs: Arc::new(BlobSource::new(
            fs.clone(),
            dir.to_path_buf(),
            read_options,
            options.statistics.clone(),
        )),
        table_cache: Arc::new(
            TableCache::new(fs.clone(), dir.to_path_buf(), read_options)
                .with_block_cache(options.block_cache.clone(), options.statistics.clone())
                .with_max_open_files(options.max_open_files)
                .with_cached_index_and_filter(
                    meta_priority(&options),
                    options.table.pin_l0_filter_and_index_blocks_in_cache,
                    options.table.pin_top_level_index_and_filter,
                ),
        ),
        flush_fs: limited(&fs, &options, IoPriority::High),
        compaction_fs: limited(&fs, &options, IoPriority::Low),
        fs,
        state: Mutex::new(DbState {
            commit: CommitState::new(wal_number, options.compaction.delayed_write_rate),
            versions,
            cfs,
            jobs: JobState::new(options.compaction.compaction_threads()),
            recovery: RecoveryState::default(),
        }),
        bg_cv: Condvar::new(),
        default_cf,
        publisher: Publisher::new(last_sequence),
        spin_positions: std::thread::available_parallelism().map_or(1, |n| n.get()),
        wal: Mutex::new(wal.map(|(w, _)| w)),
        retired_wals: Default::default(),
        newest_options_file: Mutex::new(0),
        snapshots: Arc::new(SnapshotList::default()),
        wal_damage,
        info_log,
        events: super::events::EventQueue::default(),
        stats: DbStats::default(),
        opened_at: std::time::Instant::now(),
        shutting_down: AtomicBool::new(false),
        read_only,
        options,
        _lock: lock,
    }
}

/// The numbered files of a database directory, with every WAL already open.
struct Listing {
    /// Open WALs, by ascending number.
    wals: Vec<OpenWal>,
    /// Every file number seen: none may be handed out again.
    numbers: Vec<u64>,
}

/// Lists `dir` and opens every WAL in it, *before* the MANIFEST is read. A
/// writer beside a read-only open deletes a WAL only after a durable
/// MANIFEST edit made it obsolete; so a WAL gone before it could be opened
/// is one the MANIFEST read afterwards does not need, and one opened here
/// stays readable (the open handle) however soon the writer deletes it.
fn list_and_open_wals(fs: &dyn Fs, dir: &Path) -> Result<Listing> {
    let mut listing = Listing {
        wals: Vec::new(),
        numbers: Vec::new(),
    };
    for name in &fs.list(dir)? {
        match parse_file_name(name) {
            Some(FileType::Log(number)) => {
                listing.numbers.push(number);
                match fs.open(&log_file_name(dir, number), ReadFileOptions::default()) {
                    Ok(file) => listing.wals.push(OpenWal { number, file }),
                    Err(e) if e.is_not_found() => {}
                    Err(e) => return Err(e),
                }
            }
            Some(
                FileType::Table(n)
                | FileType::Manifest(n)
                | FileType::Temp(n)
                | FileType::CorruptLog(n)
                | FileType::Blob(n)
                | FileType::Options(n),
            ) => listing.numbers.push(n),
            _ => {}
        }
    }
    listing.wals.sort_unstable_by_key(|w| w.number);
    Ok(listing)
}

/// The WALs recovery must replay (numbered at or above the MANIFEST's log
/// number), in order; marks every file number listed as used.
///
/// The WAL the log number names must be among them: every WAL is created and
/// its directory entry synced before an edit names it, and deleted only after
/// a durable edit moved the log number past it. If it is missing, the
/// MANIFEST lost the edit that made it obsolete (damage read as a torn final
/// record), and replaying without it would silently bring back old values.
fn logs_to_replay(
    fs: &dyn Fs,
    dir: &Path,
    versions: &mut VersionSet,
    listing: Listing,
) -> Result<Vec<OpenWal>> {
    for &number in &listing.numbers {
        versions.mark_file_number_used(number);
    }
    let named = versions.min_log_number();
    let logs: Vec<OpenWal> = listing
        .wals
        .into_iter()
        .filter(|w| w.number >= named)
        .collect();
    if named != 0 && logs.first().map(|w| w.number) != Some(named) {
        let manifest = manifest_file_name(dir, versions.manifest_number());
        let end = fs.file_size(&manifest).unwrap_or(0);
        return Err(Error::corruption(
            manifest,
            end,
            format!(
                "the MANIFEST says WAL #{named} holds the oldest unflushed writes, but it does \
                 not exist: the MANIFEST has lost an edit"
            ),
        ));
    }
    Ok(logs)
}

/// Where index and filter blocks go in the block cache, if they go there.
fn meta_priority(options: &DbOptions) -> Option<Priority> {
    let t = &options.table;
    let priority = if t.cache_index_and_filter_blocks_with_high_priority {
        Priority::High
    } else {
        Priority::Low
    };
    t.cache_index_and_filter_blocks.then_some(priority)
}

/// The file system of flushes or compactions: `fs`, creating its tables with
/// `O_DIRECT` when asked, behind the options' rate limiter if there is one.
fn limited(fs: &Arc<dyn Fs>, options: &DbOptions, priority: IoPriority) -> Arc<dyn Fs> {
    let fs: Arc<dyn Fs> = if options.use_direct_io_for_flush_and_compaction {
        Arc::new(DirectWritesFs::new(fs.clone()))
    } else {
        fs.clone()
    };
    match &options.rate_limiter {
        Some(limiter) => Arc::new(RateLimitedFs::new(fs, limiter.clone(), priority)),
        None => fs,
    }
}

/// Writes a memtable replayed for family `id` to an L0 table, recording
/// it in that family's recovery edit.
fn flush_recovered(
    fs: &dyn Fs,
    dir: &Path,
    family_options: &BTreeMap<u32, Arc<CfOptions>>,
    versions: &mut VersionSet,
    edits: &mut BTreeMap<u32, VersionEdit>,
    id: u32,
    mem: &MemTable,
) -> Result<()> {
    if mem.is_empty() {
        return Ok(());
    }
    let Some(cf_options) = family_options.get(&id) else {
        return Ok(());
    };
    let number = versions.new_file_number();
    // Blob files take the numbers after the table's, handed out here and
    // marked used in the version set once the flush is done.
    let first_blob = versions.next_file_number();
    let next_blob = AtomicU64::new(first_blob);
    let new_blob_number = || next_blob.fetch_add(1, Ordering::Relaxed);
    let blobs = cf_options.blob.separates_at_flush().then(|| {
        let out = BlobOutput {
            fs,
            dir,
            new_file_number: &new_blob_number,
            column_family_id: id,
        };
        BlobFileBuilder::new(out, &cf_options.blob, 0)
    });
    let name = versions
        .families()
        .find(|&(family, _)| family == id)
        .map_or_else(String::new, |(_, name)| name.to_owned());
    let table_options = cf_options.l0_table_options();
    // The WALs it covers are not known here: replay may stop mid-WAL.
    let owner = TableOwner {
        family_id: id,
        family_name: &name,
        log_number: 0,
    };
    let out = write_level0_table(fs, dir, number, owner, mem, &table_options, blobs)?;
    let after_blobs = next_blob.load(Ordering::Relaxed);
    if after_blobs > first_blob {
        versions.mark_file_number_used(after_blobs - 1);
    }
    let edit = edits.entry(id).or_default();
    if let Some(file) = out.file {
        edit.add_file(0, file);
    }
    edit.blob_file_additions.extend(out.blob_files);
    Ok(())
}

/// Removes files no longer needed: WALs below the log number, MANIFESTs other
/// than the live one, tables not in the version, temp files. Runs only after the
/// state naming what is live is durable.
fn delete_obsolete_files(fs: &dyn Fs, dir: &Path, versions: &mut VersionSet, info_log: &InfoLog) {
    let Ok(names) = fs.list(dir) else {
        return;
    };
    let live = versions.live_file_numbers();
    for name in names {
        let path = match parse_file_name(&name) {
            Some(FileType::Log(n)) if n < versions.min_log_number() => log_file_name(dir, n),
            Some(FileType::Manifest(n)) if n != versions.manifest_number() => {
                manifest_file_name(dir, n)
            }
            Some(FileType::Table(n)) if !live.contains(&n) => table_file_name(dir, n),
            // A blob file no version links: left by a flush or compaction
            // that did not install (a crash before its MANIFEST record).
            Some(FileType::Blob(n)) if !live.contains(&n) => blob_file_name(dir, n),
            Some(FileType::Temp(n)) => temp_file_name(dir, n),
            _ => continue,
        };
        match fs.remove(&path) {
            Ok(()) => info!(info_log, "deleted obsolete file {name}"),
            Err(e) => info!(info_log, "could not delete obsolete file {name}: {e}"),
        }
    }
}
