//! The version set: the current version plus the counters that must survive a
//! crash (next file number, last sequence, log number), kept durable in the
//! MANIFEST.
//!
//! Protocol: an edit is appended to the MANIFEST and synced *before* the version
//! it produces is installed, so anything that acts on the new version (deleting a
//! WAL, deleting a table) happens only after the change is durable. Every open
//! writes a fresh MANIFEST holding the whole state and switches CURRENT to it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};

use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{current_file_name, manifest_file_name, read_current_file, set_current_file};
use crate::fs::{Fs, ReadFileOptions};
use crate::key::SequenceNumber;
use crate::version::edit::{VersionEdit, BYTEWISE_COMPARATOR_NAME};
use crate::version::version::{InvalidEdit, Version};
use crate::wal::{LogReader, LogWriter};

/// The live version and the durable counters.
#[derive(Debug)]
pub struct VersionSet {
    dir: PathBuf,
    fs: Arc<dyn Fs>,
    current: Arc<Version>,
    /// Every version installed so far that may still be in use (by a super
    /// version, an iterator or a running job): their files must stay on disk.
    older: Vec<Weak<Version>>,
    next_file_number: u64,
    last_sequence: SequenceNumber,
    /// WALs numbered below this hold nothing that is not in a table.
    log_number: u64,
    manifest: Option<LogWriter>,
    manifest_number: u64,
}

impl VersionSet {
    /// The state of a database that has no MANIFEST yet.
    pub fn new_empty(fs: Arc<dyn Fs>, dir: &Path) -> VersionSet {
        VersionSet {
            dir: dir.to_path_buf(),
            fs,
            current: Arc::new(Version::default()),
            older: Vec::new(),
            next_file_number: 1,
            last_sequence: 0,
            log_number: 0,
            manifest: None,
            manifest_number: 0,
        }
    }

    /// Reads CURRENT and replays the MANIFEST it names. A torn final record is
    /// ignored (its edit was never synced, so never acted on); damage before it
    /// fails the open.
    pub fn recover(fs: Arc<dyn Fs>, dir: &Path) -> Result<VersionSet> {
        let manifest_number = read_current_file(&*fs, dir)?;
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
        let mut reader = LogReader::new(file, &path);
        let mut set = VersionSet::new_empty(fs.clone(), dir);
        let (mut saw_next_file, mut saw_last_seq, mut saw_log) = (false, false, false);
        while let Some((offset, record)) = reader.read_record()? {
            let rewrap = |e: Error| match e {
                Error::Corruption { reason, .. } => Error::corruption(&path, offset, reason),
                other => other,
            };
            let edit = VersionEdit::decode(record).map_err(rewrap)?;
            if let Some(name) = &edit.comparator {
                if name != BYTEWISE_COMPARATOR_NAME {
                    return Err(Error::invalid_argument(
                        "comparator",
                        format!("the database uses comparator {name:?}, this build only {BYTEWISE_COMPARATOR_NAME:?}"),
                    ));
                }
            }
            let version = set
                .current
                .apply(&edit)
                .map_err(|e| Error::corruption(&path, offset, e.0))?;
            set.current = Arc::new(version);
            if let Some(n) = edit.next_file_number {
                set.next_file_number = n;
                saw_next_file = true;
            }
            if let Some(s) = edit.last_sequence {
                set.last_sequence = s;
                saw_last_seq = true;
            }
            if let Some(l) = edit.log_number {
                set.log_number = l;
                saw_log = true;
            }
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
        let highest_table = set.current.all_files().map(|(_, f)| f.number).max();
        if let Some(n) = highest_table {
            set.mark_file_number_used(n);
        }
        Ok(set)
    }

    /// The live version.
    pub fn current(&self) -> &Arc<Version> {
        &self.current
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

    /// WALs numbered below this are obsolete.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    /// Number of the MANIFEST in use.
    pub fn manifest_number(&self) -> u64 {
        self.manifest_number
    }

    fn snapshot_edit(&self) -> VersionEdit {
        let mut edit = VersionEdit::new();
        edit.set_comparator_name(BYTEWISE_COMPARATOR_NAME)
            .set_log_number(self.log_number)
            .set_next_file_number(self.next_file_number)
            .set_last_sequence(self.last_sequence);
        for (level, f) in self.current.all_files() {
            edit.add_file(level as u32, (**f).clone());
        }
        edit
    }

    /// Writes a new MANIFEST holding the whole state (with `log_number` if
    /// given), syncs it, and switches CURRENT to it. Returns the number of the
    /// MANIFEST it replaces (0 if none), which the caller may delete.
    pub fn write_new_manifest(&mut self, log_number: Option<u64>) -> Result<u64> {
        let number = self.new_file_number();
        if let Some(l) = log_number {
            self.log_number = l;
        }
        let path = manifest_file_name(&self.dir, number);
        let mut writer = LogWriter::new(self.fs.create(&path)?);
        writer.add_record(&self.snapshot_edit().encode())?;
        writer.sync()?;
        crash_point!("manifest.new.written");
        set_current_file(&*self.fs, &self.dir, number)?;
        let old = std::mem::replace(&mut self.manifest_number, number);
        self.manifest = Some(writer);
        Ok(old)
    }

    /// Installs the version `edit` produces without writing the MANIFEST: for
    /// recovery, which then writes a whole new MANIFEST holding the result.
    pub fn apply_unlogged(&mut self, edit: &VersionEdit) -> Result<()> {
        let version = self.current.apply(edit).map_err(|e| self.invalid_edit(e))?;
        self.install(version);
        Ok(())
    }

    /// An edit the engine made does not apply: a bug, reported against the
    /// MANIFEST it was going to be appended to, at its end.
    fn invalid_edit(&self, e: InvalidEdit) -> Error {
        let path = manifest_file_name(&self.dir, self.manifest_number);
        let end = self.manifest.as_ref().map_or(0, |w| w.len());
        Error::corruption(
            path,
            end,
            format!("an edit about to be written is invalid: {}", e.0),
        )
    }

    fn install(&mut self, version: Version) {
        let old = std::mem::replace(&mut self.current, Arc::new(version));
        self.older.retain(|v| v.strong_count() > 0);
        self.older.push(Arc::downgrade(&old));
    }

    /// Numbers of the table files some live version refers to: the current one
    /// and every older one still held somewhere.
    pub fn live_table_numbers(&mut self) -> HashSet<u64> {
        self.older.retain(|v| v.strong_count() > 0);
        let mut live: HashSet<u64> = self.current.all_files().map(|(_, f)| f.number).collect();
        for version in self.older.iter().filter_map(Weak::upgrade) {
            live.extend(version.all_files().map(|(_, f)| f.number));
        }
        live
    }

    /// Appends `edit` (completed with the current counters) to the MANIFEST,
    /// syncs it, and only then installs the resulting version. On error nothing
    /// is installed and the MANIFEST must not be written again: the caller stops
    /// the database, since the file's state on disk is unknown.
    pub fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        edit.set_next_file_number(self.next_file_number)
            .set_last_sequence(self.last_sequence);
        let version = self.current.apply(edit).map_err(|e| self.invalid_edit(e))?;
        let writer = self.manifest.as_mut().ok_or_else(|| {
            Error::invalid_argument("manifest", "no MANIFEST is open for writing")
        })?;
        crash_point!("manifest.append.before");
        let written = writer.add_record(&edit.encode()).and_then(|()| {
            crash_point!("manifest.append.before_sync");
            writer.sync()
        });
        if let Err(e) = written {
            self.manifest = None;
            return Err(e);
        }
        crash_point!("manifest.append.synced");
        if let Some(l) = edit.log_number {
            self.log_number = l;
        }
        self.install(version);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::SimFs;
    use crate::key::{internal_key, ValueType};
    use crate::version::edit::FileMetaData;

    fn meta(number: u64, key: &[u8], seq: u64) -> FileMetaData {
        FileMetaData {
            number,
            file_size: 10,
            smallest: internal_key(key, seq, ValueType::Put),
            largest: internal_key(key, seq, ValueType::Put),
            smallest_seqno: seq,
            largest_seqno: seq,
        }
    }

    #[test]
    fn edits_survive_reopen_and_torn_tail() {
        let fs = SimFs::new(3);
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir);
        set.write_new_manifest(Some(0)).unwrap();
        let n = set.new_file_number();
        set.set_last_sequence(7);
        let mut edit = VersionEdit::new();
        edit.add_file(0, meta(n, b"k", 7)).set_log_number(5);
        set.log_and_apply(&mut edit).unwrap();

        let again = VersionSet::recover(Arc::new(fs.clone()), dir).unwrap();
        assert_eq!(again.current().num_files(0), 1);
        assert_eq!(again.last_sequence(), 7);
        assert_eq!(again.log_number(), 5);
        assert!(again.next_file_number() > n);

        // A half-written final record is ignored.
        let path = manifest_file_name(dir, set.manifest_number());
        let len = fs.file_size(&path).unwrap();
        let mut edit = VersionEdit::new();
        edit.add_file(0, meta(set.new_file_number(), b"z", 9));
        set.log_and_apply(&mut edit).unwrap();
        fs.set_len(&path, len + 5).unwrap();
        let torn = VersionSet::recover(Arc::new(fs.clone()), dir).unwrap();
        assert_eq!(torn.current().num_files(0), 1);
    }

    #[test]
    fn manifest_sync_failure_installs_nothing() {
        let fs = SimFs::new(4);
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir);
        set.write_new_manifest(Some(0)).unwrap();
        fs.inject(crate::fs::sim::Fault::ErrorOnNth {
            op: crate::fs::sim::OpKind::Sync,
            n: 1,
        });
        let mut edit = VersionEdit::new();
        edit.add_file(0, meta(set.new_file_number(), b"k", 1));
        assert!(set.log_and_apply(&mut edit).is_err());
        assert_eq!(set.current().num_files(0), 0);
        // The MANIFEST is not written again after a failure.
        assert!(set.log_and_apply(&mut VersionEdit::new()).is_err());
    }
}
