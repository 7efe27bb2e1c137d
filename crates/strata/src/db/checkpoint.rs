//! Checkpoints (RocksDB's `Checkpoint::CreateCheckpoint`): an openable copy
//! of the database, made while writes go on.
//!
//! 1. Every family's memtable is flushed, so writes made without the WAL are
//!    in tables too.
//! 2. Deleting obsolete files (tables, blob files, WALs) is held off until the
//!    copy is made, so nothing it names goes away meanwhile. A deletion
//!    decided before that only removes files already obsolete then, which no
//!    later state names.
//! 3. The active WAL's buffered bytes (`manual_wal_flush`) go to the OS. Under
//!    the DB mutex the state to copy is taken: every family's current version
//!    and the counters, as a new MANIFEST's records, and which WALs hold what
//!    a family has not flushed (from the oldest one needed to the active one).
//! 4. With the mutex released, tables and blob files are hard-linked into the
//!    checkpoint directory (copied where the file system cannot link), the
//!    WALs copied as they are then, cut after their last whole record (a
//!    record being appended is left out), the OPTIONS file copied, the
//!    MANIFEST written, every file and the directory synced, and CURRENT
//!    written last.
//!
//! The copy is the database as a crash at step 3 would have left it with its
//! WALs whole: every write acknowledged before the call is in it, later ones
//! may be, and a batch is in it whole or not at all (families included:
//! their WALs replay from the captured log numbers). A failure or crash while
//! it is made leaves a directory without CURRENT: with files in it, opening
//! it fails as a damaged database; still empty, it is no database at all.

use std::path::Path;
use std::sync::atomic::Ordering;

use super::info_log::info;
use super::DbInner;
use crate::error::{Error, Result};
use crate::filename::{
    blob_file_name, log_file_name, options_file_name, parse_file_name, set_current_file,
    table_file_name, FileType,
};
use crate::fs::{Fs, ReadFileOptions};
use crate::version::set::write_manifest;
use crate::wal::LogReader;

/// Bytes copied per read when a file is copied.
const COPY_CHUNK: usize = 1 << 20;

/// What step 3 takes under the mutex.
struct Capture {
    manifest_number: u64,
    edits: Vec<crate::version::VersionEdit>,
    /// Tables and blob files, by number: `true` for a table.
    linked: Vec<(bool, u64)>,
    /// WALs to copy.
    wals: Vec<u64>,
    /// The newest OPTIONS file's number and bytes, read while no OPTIONS
    /// file is written or deleted: a family created or dropped during the
    /// checkpoint replaces that file, and a copy made later found it gone.
    options_file: Option<(u64, Vec<u8>)>,
}

/// Holds off obsolete-file deletion while alive.
struct DeletionsHeld<'a>(&'a DbInner);

impl<'a> DeletionsHeld<'a> {
    fn new(inner: &'a DbInner) -> Self {
        inner.state.lock().jobs.deletions_held += 1;
        DeletionsHeld(inner)
    }
}

impl Drop for DeletionsHeld<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock();
        state.jobs.deletions_held -= 1;
        // The files held meanwhile go at the background thread's next sweep.
        state.jobs.obsolete_held = true;
        self.0.bg_cv.notify_all();
    }
}

/// Makes a checkpoint of the database in `dir`, which must not exist.
pub(super) fn create(inner: &DbInner, dir: &Path) -> Result<()> {
    inner.check_writable()?;
    let fs = &*inner.fs;
    if fs.exists(dir)? {
        return Err(Error::invalid_argument(
            "checkpoint_dir",
            format!("{} already exists", dir.display()),
        ));
    }
    let families: Vec<_> = inner
        .state
        .lock()
        .cfs
        .values()
        .map(|f| f.shared.clone())
        .collect();
    for family in &families {
        match super::write::flush(inner, family) {
            // A family dropped since the list was taken is not copied: the
            // capture below lists the live families only.
            Err(_) if family.dropped.load(Ordering::Acquire) => {}
            flushed => flushed?,
        }
    }
    let held = DeletionsHeld::new(inner);
    flush_wal_buffer(inner)?;
    let capture = capture(inner)?;
    fs.create_dir_all(dir)?;
    let written = write_copy(inner, dir, &capture);
    drop(held);
    written?;
    info!(
        inner.info_log,
        "checkpoint in {}: {} tables and blob files, {} WALs",
        dir.display(),
        capture.linked.len(),
        capture.wals.len()
    );
    Ok(())
}

/// Hands the active WAL's buffered appends to the OS, so the copy holds every
/// write acknowledged before the call; a failure stops writes, as a failed
/// WAL write does.
fn flush_wal_buffer(inner: &DbInner) -> Result<()> {
    let flushed = match inner.wal.lock().as_mut() {
        Some(wal) => wal.flush(),
        None => Ok(()),
    };
    if let Err(e) = &flushed {
        let mut state = inner.state.lock();
        inner.set_bg_error(&mut state, e.clone());
    }
    flushed
}

/// Step 3: the state to copy, under the DB mutex.
fn capture(inner: &DbInner) -> Result<Capture> {
    let mut state = inner.state.lock();
    if let Some(e) = inner.wait_error(&state) {
        return Err(e);
    }
    let active = state.commit.wal_number;
    let versions = &mut state.versions;
    let manifest_number = versions.new_file_number();
    let edits = versions.manifest_for_copy(manifest_number);
    let oldest_wal = versions
        .min_log_number()
        .min(versions.min_log_number_to_keep());
    let mut linked = Vec::new();
    for (id, _) in versions.families() {
        let version = versions.current(id);
        linked.extend(version.all_files().map(|(_, table)| (true, table.number)));
        linked.extend(version.blob_files().keys().map(|&number| (false, number)));
    }
    drop(state);
    let mut wals = Vec::new();
    for name in inner.fs.list(&inner.dir)? {
        if let Some(FileType::Log(n)) = parse_file_name(&name) {
            if n >= oldest_wal && n <= active {
                wals.push(n);
            }
        }
    }
    wals.sort_unstable();
    let options_file = read_newest_options_file(inner)?;
    Ok(Capture {
        manifest_number,
        edits,
        linked,
        wals,
        options_file,
    })
}

/// Step 4: the files of the checkpoint, CURRENT last.
fn write_copy(inner: &DbInner, dir: &Path, capture: &Capture) -> Result<()> {
    let fs = &*inner.fs;
    let mut copied = 0;
    for &(table, number) in &capture.linked {
        let name = if table {
            table_file_name
        } else {
            blob_file_name
        };
        let (from, to) = (name(&inner.dir, number), name(dir, number));
        if !fs.hard_link(&from, &to)? {
            copy_file(fs, &from, &to)?;
            copied += 1;
        }
    }
    if copied > 0 {
        info!(
            inner.info_log,
            "checkpoint in {}: the file system cannot hard-link here; copied {copied} files",
            dir.display()
        );
    }
    for &number in &capture.wals {
        copy_wal(
            fs,
            &log_file_name(&inner.dir, number),
            &log_file_name(dir, number),
        )?;
    }
    if let Some((n, bytes)) = &capture.options_file {
        let mut file = fs.create(&options_file_name(dir, *n))?;
        file.append(bytes)?;
        file.sync()?;
    }
    write_manifest(fs, dir, capture.manifest_number, &capture.edits)?;
    fs.sync_dir(dir)?;
    set_current_file(fs, dir, capture.manifest_number)
}

/// The newest OPTIONS file's number and bytes, if one was written. The lock
/// on its number is the one every OPTIONS writer holds while it writes the
/// next file and deletes the older ones, so the file is there to read.
fn read_newest_options_file(inner: &DbInner) -> Result<Option<(u64, Vec<u8>)>> {
    let newest = inner.newest_options_file.lock();
    if *newest == 0 {
        return Ok(None);
    }
    let path = options_file_name(&inner.dir, *newest);
    let file = inner.fs.open(&path, ReadFileOptions::default())?;
    let len = usize::try_from(file.len()).map_err(|_| {
        Error::corruption(&path, 0, "the OPTIONS file is larger than memory can hold")
    })?;
    Ok(Some((*newest, file.read_at(0, len)?.to_vec())))
}

/// Copies `from` to `to` and syncs the copy.
pub(super) fn copy_file(fs: &dyn Fs, from: &Path, to: &Path) -> Result<()> {
    let source = fs.open(from, ReadFileOptions::default())?;
    let total = source.len();
    let mut out = fs.create(to)?;
    let mut at = 0;
    while at < total {
        let n = (total - at).min(COPY_CHUNK as u64);
        out.append(&source.read_at(at, to_usize(n)?)?)?;
        at += n;
    }
    out.sync()
}

/// Copies WAL `from` as it is now to `to`, up to the end of its last whole
/// record (a record being appended is left out), and syncs the copy.
fn copy_wal(fs: &dyn Fs, from: &Path, to: &Path) -> Result<()> {
    let source = fs.open(from, ReadFileOptions::default())?;
    let data = source.read_at(0, to_usize(source.len())?)?;
    let mut reader = LogReader::from_bytes(data.clone(), from);
    while let Ok(Some(_)) = reader.read_record() {}
    let end = to_usize(reader.records_end())?.min(data.len());
    let mut out = fs.create(to)?;
    out.append(&data[..end])?;
    out.sync()
}

fn to_usize(n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::invalid_argument("checkpoint", "file too large to copy"))
}
