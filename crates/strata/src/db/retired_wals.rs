//! WALs that a memtable switch retired without syncing them.
//!
//! Syncing the old WAL at every switch put an fsync of up to a memtable's
//! worth of bytes in front of every writer queued behind the switch. Instead
//! the switch writes a predecessor record into the new WAL (`wal/meta.rs`),
//! which lets recovery see a retired WAL that lost its tail, and keeps the
//! retired WAL's writer here until one of these syncs it:
//!
//! - a sync write, before its own WAL sync: an acknowledged sync write must
//!   survive a crash together with every write before it;
//! - `flush_wal(true)` and closing the database, for the same promise;
//! - a flush with more than one family, before it installs: a family's table
//!   must never hold writes that recovery could find missing from a WAL
//!   another family still needs (it could then not recover to a point in
//!   time).
//!
//! A retired WAL whose memtables are all in tables is forgotten unsynced and
//! deleted. Lock order: the active WAL's lock, then this list, then one
//! retired writer's lock; the list lock is never held across I/O.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::Result;
use crate::wal::LogWriter;

/// One retired WAL: its number and its writer.
type Retired = (u64, Arc<Mutex<LogWriter>>);

/// The retired, not yet synced WALs, oldest first.
#[derive(Debug, Default)]
pub(crate) struct RetiredWals {
    list: Mutex<Vec<Retired>>,
}

impl RetiredWals {
    /// Keeps WAL `number`'s writer until it is synced or obsolete.
    pub(crate) fn retire(&self, number: u64, writer: LogWriter) {
        self.list
            .lock()
            .push((number, Arc::new(Mutex::new(writer))));
    }

    /// Syncs every retired WAL numbered below `below`, oldest first, and then
    /// forgets them. Threads that call this at once each sync (the second
    /// sync of a file finds nothing to write), so each returns only once the
    /// WALs it found are durable. On error the WALs stay listed.
    pub(crate) fn sync_below(&self, below: u64) -> Result<()> {
        let due: Vec<Retired> = self
            .list
            .lock()
            .iter()
            .filter(|(number, _)| *number < below)
            .cloned()
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        for (_, writer) in &due {
            writer.lock().sync()?;
        }
        self.list
            .lock()
            .retain(|(number, _)| !due.iter().any(|(n, _)| n == number));
        Ok(())
    }

    /// Forgets, unsynced, the retired WALs numbered below `below`: every write
    /// in them is in a table now.
    pub(crate) fn forget_below(&self, below: u64) {
        self.list.lock().retain(|(number, _)| *number >= below);
    }

    /// How many retired WALs wait for a sync.
    #[cfg(all(test, not(feature = "shuttle")))]
    pub(crate) fn len(&self) -> usize {
        self.list.lock().len()
    }
}

#[cfg(all(test, not(feature = "shuttle")))]
mod tests {
    use super::*;
    use crate::fs::sim::{Fault, OpKind};
    use crate::fs::{Fs, SimFs};
    use std::path::Path;

    fn retired(fs: &SimFs, name: &str) -> Result<LogWriter> {
        let mut writer = LogWriter::new(fs.create(Path::new(name))?);
        writer.add_record(b"record")?;
        writer.flush()?;
        Ok(writer)
    }

    #[test]
    fn syncs_only_below_the_bound_and_forgets_what_it_synced() {
        let fs = SimFs::new(1);
        let wals = RetiredWals::default();
        wals.retire(3, retired(&fs, "000003.log").unwrap());
        wals.retire(5, retired(&fs, "000005.log").unwrap());
        let before = fs.op_count(OpKind::Sync);
        wals.sync_below(4).unwrap();
        assert_eq!(fs.op_count(OpKind::Sync), before + 1);
        assert_eq!(wals.len(), 1);
        wals.sync_below(u64::MAX).unwrap();
        assert_eq!(fs.op_count(OpKind::Sync), before + 2);
        assert_eq!(wals.len(), 0);
        // Nothing left: no sync at all.
        wals.sync_below(u64::MAX).unwrap();
        assert_eq!(fs.op_count(OpKind::Sync), before + 2);
    }

    #[test]
    fn forgetting_drops_without_a_sync() {
        let fs = SimFs::new(2);
        let wals = RetiredWals::default();
        wals.retire(3, retired(&fs, "000003.log").unwrap());
        wals.retire(5, retired(&fs, "000005.log").unwrap());
        let before = fs.op_count(OpKind::Sync);
        wals.forget_below(5);
        assert_eq!(wals.len(), 1);
        assert_eq!(fs.op_count(OpKind::Sync), before);
    }

    #[test]
    fn a_failed_sync_keeps_the_wal_listed() {
        let fs = SimFs::new(3);
        let wals = RetiredWals::default();
        wals.retire(3, retired(&fs, "000003.log").unwrap());
        fs.inject(Fault::ErrorOnNth {
            op: OpKind::Sync,
            n: 1,
        });
        assert!(wals.sync_below(u64::MAX).is_err());
        assert_eq!(wals.len(), 1);
    }
}
