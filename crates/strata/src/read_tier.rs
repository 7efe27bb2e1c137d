//! RocksDB's `read_tier = kBlockCacheTier`: a read that answers only from
//! what is already in memory (the memtables, the block and blob caches,
//! open tables and their pinned blocks) and fails with
//! [`Error::Incomplete`] where it would read storage.
//!
//! Storage is reached from deep below the calls that know a read's options:
//! the table cache opening a file, a table's block fetcher, a blob file.
//! So the refusal is a scope on the reading thread, set by the read's entry
//! points (`get`, `multi_get`, each iterator step), rather than a flag
//! passed through every layer. The scope is restored when it drops, so it
//! cannot outlive the call that set it, and flushes and compactions, which
//! run on their own threads, never see it.

use std::cell::Cell;
use std::path::Path;

use crate::error::{Error, Result};
use crate::options::ReadTier;

thread_local! {
    /// Whether the current read may use only what is in memory.
    static MEMORY_ONLY: Cell<bool> = const { Cell::new(false) };
}

/// While held, storage reads on this thread fail (for `BlockCache` tier);
/// restores what was before when dropped.
#[must_use = "the tier holds only while the scope is alive"]
pub(crate) struct TierScope {
    previous: bool,
}

/// Enters `tier` for the current thread until the returned scope drops. A
/// scope inside a memory-only one stays memory-only.
pub(crate) fn enter(tier: ReadTier) -> TierScope {
    let previous = MEMORY_ONLY.with(Cell::get);
    MEMORY_ONLY.with(|m| m.set(previous || tier == ReadTier::BlockCache));
    TierScope { previous }
}

impl Drop for TierScope {
    fn drop(&mut self) {
        MEMORY_ONLY.with(|m| m.set(self.previous));
    }
}

/// `Incomplete` when the current read may not read storage, naming the
/// file it would have read.
pub(crate) fn check_storage_read(path: &Path) -> Result<()> {
    if MEMORY_ONLY.with(Cell::get) {
        return Err(Error::Incomplete {
            reason: format!(
                "read_tier is kBlockCacheTier and the read needs {}, which is not in memory",
                path.display()
            ),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_refuses_storage_reads_until_it_drops() {
        let path = Path::new("000007.sst");
        assert!(check_storage_read(path).is_ok());
        {
            let _outer = enter(ReadTier::BlockCache);
            let err = check_storage_read(path).unwrap_err();
            assert!(matches!(err, Error::Incomplete { .. }), "{err}");
            assert!(err.to_string().contains("000007.sst"), "{err}");
            {
                // A nested read of all tiers stays memory-only.
                let _inner = enter(ReadTier::ReadAll);
                assert!(check_storage_read(path).is_err());
            }
            assert!(check_storage_read(path).is_err());
        }
        assert!(check_storage_read(path).is_ok());
        let _all = enter(ReadTier::ReadAll);
        assert!(check_storage_read(path).is_ok());
    }

    #[test]
    fn another_thread_is_not_in_the_scope() {
        let _scope = enter(ReadTier::BlockCache);
        let other = std::thread::spawn(|| check_storage_read(Path::new("x")).is_ok());
        assert!(other.join().unwrap());
    }
}
