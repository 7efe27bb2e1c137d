//! The cursor interface shared by every internal iterator (block, table, and later
//! memtable, level and merging iterators).

pub mod db_iter;
pub mod db_range;
pub mod level;
pub mod merging;
mod prefix_seek;

#[cfg(test)]
mod tests;

use crate::error::Result;
use crate::options::PrefixExtractor;

/// A positioned cursor over internal keys in [`crate::key::compare_internal`] order.
///
/// Positioning calls never fail directly: an I/O or corruption error makes the
/// iterator invalid and is reported by [`status`](Self::status), so hot loops stay
/// free of `Result` plumbing (RocksDB's convention).
pub trait InternalIterator {
    /// True when positioned on an entry.
    fn valid(&self) -> bool;
    /// Positions on the first entry.
    fn seek_to_first(&mut self);
    /// Positions on the last entry.
    fn seek_to_last(&mut self);
    /// Positions on the first entry with key >= `target`.
    fn seek(&mut self, target: &[u8]);
    /// [`seek`](Self::seek) for a caller that reads no entry outside the run
    /// of user keys whose prefix under `extractor` is `prefix` (the target's
    /// own prefix): a source whose prefix filter proves it holds no such key
    /// may leave itself invalid instead of positioning on a later key. The
    /// default is a plain seek, which is always correct.
    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        let _ = (extractor, prefix);
        self.seek(target);
    }
    /// Positions on the last entry with key <= `target`.
    fn seek_for_prev(&mut self, target: &[u8]);
    /// Moves to the next entry. Requires `valid()`.
    fn next(&mut self);
    /// Moves to the previous entry. Requires `valid()`.
    fn prev(&mut self);
    /// Current internal key. Requires `valid()`.
    fn key(&self) -> &[u8];
    /// Current value. Requires `valid()`.
    fn value(&self) -> &[u8];
    /// The first error met, if any.
    fn status(&self) -> Result<()>;
}
