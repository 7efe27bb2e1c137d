//! Compaction filters (RocksDB's `CompactionFilter`): a family's hook that
//! every compaction calls on values it writes, to keep them, remove them or
//! change them — the way TTL caches expire entries and queues drop consumed
//! ones without a delete per key.
//!
//! A filter only sees data no live snapshot can still see: a value older
//! than some snapshot is written unchanged, so every snapshot keeps its
//! view. A snapshot taken while a compaction runs would see that
//! compaction's changes, so a job whose filter changed anything is redone
//! (its outputs discarded) when a snapshot was taken meanwhile; after three
//! such attempts it runs without the filter, and the next compaction of
//! those keys filters them. RocksDB makes no such promise: its snapshots
//! may see a filter's changes. It sees values (puts), not deletions or
//! merge operands, and only the newest value of a key. Removing a value
//! writes a deletion in its place (with its sequence number), so older
//! versions of the key below the compaction stay hidden.
//!
//! ```
//! use std::sync::Arc;
//! use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
//!
//! /// Drops values whose first 8 bytes, a big-endian Unix time in seconds,
//! /// are in the past: entries written with an expiry stamp.
//! #[derive(Debug)]
//! struct Ttl {
//!     now: fn() -> u64,
//! }
//!
//! impl CompactionFilter for Ttl {
//!     fn name(&self) -> &str {
//!         "TtlFilter"
//!     }
//!
//!     fn filter(&self, _ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
//!         match value.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
//!             Some(stamp) if u64::from_be_bytes(stamp) < (self.now)() => Decision::Remove,
//!             _ => Decision::Keep,
//!         }
//!     }
//! }
//!
//! let options = strata::CfOptions {
//!     compaction_filter: Some(Arc::new(Ttl { now: || 1_700_000_000 })),
//!     ..strata::CfOptions::default()
//! };
//! # let _ = options;
//! ```

use std::fmt;

/// What a compaction is doing when it asks the filter.
///
/// ```
/// use strata::{CompactionFilter, Decision, FilterContext};
///
/// /// Removes empty values, but only where nothing older lies below.
/// #[derive(Debug)]
/// struct DropEmptyAtBottom;
///
/// impl CompactionFilter for DropEmptyAtBottom {
///     fn name(&self) -> &str { "DropEmptyAtBottom" }
///     fn filter(&self, ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
///         if ctx.is_bottommost && value.is_empty() { Decision::Remove } else { Decision::Keep }
///     }
/// }
///
/// let bottom = FilterContext { level: 6, is_bottommost: true };
/// let middle = FilterContext { level: 2, is_bottommost: false };
/// assert_eq!(DropEmptyAtBottom.filter(&bottom, b"k", b""), Decision::Remove);
/// assert_eq!(DropEmptyAtBottom.filter(&middle, b"k", b""), Decision::Keep);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilterContext {
    /// The level the compaction writes.
    pub level: usize,
    /// No level below the output holds data of the compaction's keys range:
    /// a removed value leaves nothing older to uncover.
    pub is_bottommost: bool,
}

/// A filter's answer for one value.
///
/// ```
/// use strata::{CompactionFilter, Decision, FilterContext};
///
/// #[derive(Debug)]
/// struct Redact;
///
/// impl CompactionFilter for Redact {
///     fn name(&self) -> &str { "Redact" }
///     fn filter(&self, _ctx: &FilterContext, key: &[u8], _value: &[u8]) -> Decision {
///         if key.starts_with(b"secret:") {
///             Decision::ChangeValue(b"***".to_vec())
///         } else {
///             Decision::Keep
///         }
///     }
/// }
///
/// let ctx = FilterContext { level: 1, is_bottommost: false };
/// assert_eq!(Redact.filter(&ctx, b"secret:pin", b"1234"), Decision::ChangeValue(b"***".to_vec()));
/// assert_eq!(Redact.filter(&ctx, b"user:1", b"ada"), Decision::Keep);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Write the value unchanged.
    Keep,
    /// Remove the key: a deletion is written in the value's place.
    Remove,
    /// Write this value instead.
    ChangeValue(Vec<u8>),
}

/// Decides, during compaction, what becomes of each value (RocksDB's
/// `CompactionFilter::FilterV2` for values). Called from compaction threads,
/// possibly several at once; it must be deterministic enough that removing a
/// value twice does no harm (a failed compaction is retried).
///
/// ```
/// use std::sync::Arc;
/// use strata::{CompactionFilter, Db, DbOptions, Decision, FilterContext};
///
/// #[derive(Debug)]
/// struct DropTombstoned;
///
/// impl CompactionFilter for DropTombstoned {
///     fn name(&self) -> &str { "DropTombstoned" }
///     fn filter(&self, _ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
///         if value == b"gone" { Decision::Remove } else { Decision::Keep }
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let compaction_filter = Some(Arc::new(DropTombstoned) as Arc<dyn CompactionFilter>);
/// let options = DbOptions { create_if_missing: true, compaction_filter, ..Default::default() };
/// let db = Db::open(dir.path(), options)?;
/// db.put("a", "gone")?;
/// db.put("b", "here")?;
/// db.flush()?;
/// db.compact_range(None, None)?;
/// assert!(db.get("a")?.is_none());
/// assert!(db.get("b")?.is_some());
/// # Ok(())
/// # }
/// ```
pub trait CompactionFilter: Send + Sync + fmt::Debug {
    /// The filter's name, for logs and the OPTIONS file.
    fn name(&self) -> &str;

    /// What to do with the newest value of `key`, which no live snapshot can
    /// see any more.
    fn filter(&self, ctx: &FilterContext, key: &[u8], value: &[u8]) -> Decision;
}
