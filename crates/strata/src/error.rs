//! The one error type of the engine.
//!
//! Every fallible operation returns [`Result`]. Variants are typed so callers can
//! react (retry on `LockHeld`, free space on `NoSpace`, stop on `Corruption`), and their
//! `Display` is a full sentence a user can act on.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Result alias used throughout the engine.
///
/// ```
/// use strata::{Db, DbOptions};
///
/// fn count_keys(db: &Db) -> strata::Result<usize> {
///     db.range(..).try_fold(0, |n, entry| entry.map(|_| n + 1))
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("a", "1")?;
/// db.put("b", "2")?;
/// assert_eq!(count_keys(&db)?, 2);
/// # Ok(())
/// # }
/// ```
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Strata.
///
/// ```
/// use strata::{Db, DbOptions, Error};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let options = DbOptions { create_if_missing: true, ..Default::default() };
/// let db = Db::open(dir.path(), options.clone())?;
/// // A second handle on the same directory is refused while the first is open.
/// let second = Db::open(dir.path(), options);
/// assert!(matches!(second, Err(Error::LockHeld { .. })));
/// # drop(db);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An operating-system I/O call failed.
    Io {
        /// What the engine was doing, e.g. "open", "read", "fsync".
        op: &'static str,
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The file system is full (ENOSPC or a simulated quota).
    NoSpace {
        /// The file being written.
        path: PathBuf,
    },
    /// Bytes read from disk are not what the format allows.
    Corruption {
        /// The file holding the bad bytes.
        file: PathBuf,
        /// Byte offset in that file where the problem was found.
        offset: u64,
        /// What was wrong.
        reason: String,
    },
    /// A caller passed an invalid option or argument.
    InvalidArgument {
        /// The option or argument at fault, e.g. "block_size".
        field: &'static str,
        /// Why it was rejected.
        reason: String,
    },
    /// Another process, or another handle in this process, holds the lock
    /// file: the database is open elsewhere.
    LockHeld {
        /// The lock file.
        path: PathBuf,
    },
    /// A block cache with `strict_capacity_limit` could not admit an entry:
    /// pinned entries fill it.
    CacheFull {
        /// The cache, its usage and the entry that did not fit.
        reason: String,
    },
    /// A background flush or compaction thread panicked; the database is
    /// closed, but what that thread was doing did not finish.
    BackgroundThreadPanicked {
        /// The thread's name.
        thread: String,
    },
    /// A requested file or key does not exist.
    NotFound {
        /// What was looked for.
        what: String,
    },
    /// The operation would have had to wait and was asked not to (a write
    /// with `no_slowdown` during a write stall); nothing was done. Retry later.
    Incomplete {
        /// Why it would have waited.
        reason: String,
    },
    /// The database was closed ([`crate::Db::close`]) through another clone
    /// of the handle; only reads still work on the remaining clones.
    Closed,
    /// A write panicked in application code (a comparator) while its batch
    /// was going into the memtable, after it was written to the WAL. The
    /// memtable holds part of the batch, so writes are refused (and `resume`
    /// refuses too) until the database is reopened, which replays the whole
    /// batch from the WAL. The panic itself reaches the writer that caused it.
    WriterPanicked {
        /// What was running when it panicked.
        what: String,
    },
    /// A merge operator could not combine a key's operands (RocksDB reports
    /// it as corruption): the stored operands or value are not what the
    /// operator accepts.
    MergeFailed {
        /// The operator's name, e.g. "UInt64AddOperator".
        operator: String,
        /// The user key whose operands failed to merge.
        key: Vec<u8>,
        /// What the operator said was wrong.
        reason: String,
    },
}

impl Error {
    /// Builds a [`Error::Corruption`].
    pub fn corruption(file: impl AsRef<Path>, offset: u64, reason: impl Into<String>) -> Self {
        Error::Corruption {
            file: file.as_ref().to_path_buf(),
            offset,
            reason: reason.into(),
        }
    }

    /// Builds an [`Error::InvalidArgument`].
    pub fn invalid_argument(field: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            field,
            reason: reason.into(),
        }
    }

    /// Builds an [`Error::MergeFailed`] from what `operator` said when it
    /// failed to merge the operands of `key`.
    pub fn merge_failed(
        operator: &dyn crate::merge::MergeOperator,
        key: &[u8],
        error: crate::merge::MergeError,
    ) -> Self {
        Error::MergeFailed {
            operator: operator.name().to_owned(),
            key: key.to_vec(),
            reason: error.reason().to_owned(),
        }
    }

    /// Wraps an OS error, turning ENOSPC into [`Error::NoSpace`].
    pub fn io(op: &'static str, path: impl AsRef<Path>, source: io::Error) -> Self {
        let path = path.as_ref().to_path_buf();
        if source.raw_os_error() == Some(libc::ENOSPC) {
            return Error::NoSpace { path };
        }
        Error::Io { op, path, source }
    }

    /// True for an I/O error saying the file or directory does not exist.
    pub fn is_not_found(&self) -> bool {
        match self {
            Error::Io { source, .. } => source.kind() == io::ErrorKind::NotFound,
            Error::NotFound { .. } => true,
            _ => false,
        }
    }

    /// True for [`Error::Corruption`].
    pub fn is_corruption(&self) -> bool {
        matches!(self, Error::Corruption { .. })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { op, path, source } => {
                write!(f, "IO error: {op} {} failed: {source}", path.display())
            }
            Error::NoSpace { path } => {
                write!(
                    f,
                    "No space left on device while writing {}",
                    path.display()
                )
            }
            Error::Corruption {
                file,
                offset,
                reason,
            } => write!(
                f,
                "Corruption: {} at offset {offset}: {reason}",
                file.display()
            ),
            Error::InvalidArgument { field, reason } => {
                write!(f, "Invalid argument: {field}: {reason}")
            }
            Error::LockHeld { path } => write!(
                f,
                "Lock held: {} is held by another process or another handle in this \
                 process; the database is open elsewhere",
                path.display()
            ),
            Error::CacheFull { reason } => write!(f, "Cache full: {reason}"),
            Error::BackgroundThreadPanicked { thread } => write!(
                f,
                "Background thread panicked: {thread} did not finish its work"
            ),
            Error::NotFound { what } => write!(f, "NotFound: {what}"),
            Error::Incomplete { reason } => write!(f, "Incomplete: {reason}"),
            Error::Closed => write!(
                f,
                "Closed: the database was closed through another handle; only reads still work"
            ),
            Error::WriterPanicked { what } => write!(
                f,
                "Writer panicked: {what} panicked after the batch reached the WAL; \
                 writes are refused until the database is reopened"
            ),
            Error::MergeFailed {
                operator,
                key,
                reason,
            } => write!(
                f,
                "Merge failed: {operator} could not merge the operands of key \"{}\": {reason}",
                key.escape_ascii()
            ),
        }
    }
}

/// Iterators report a stored error each time their status is asked for, so errors
/// must be cloneable; an `io::Error` is rebuilt from its OS code or its kind and text.
impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Io { op, path, source } => Error::Io {
                op,
                path: path.clone(),
                source: match source.raw_os_error() {
                    Some(code) => io::Error::from_raw_os_error(code),
                    None => io::Error::new(source.kind(), source.to_string()),
                },
            },
            Error::NoSpace { path } => Error::NoSpace { path: path.clone() },
            Error::Corruption {
                file,
                offset,
                reason,
            } => Error::Corruption {
                file: file.clone(),
                offset: *offset,
                reason: reason.clone(),
            },
            Error::InvalidArgument { field, reason } => Error::InvalidArgument {
                field,
                reason: reason.clone(),
            },
            Error::LockHeld { path } => Error::LockHeld { path: path.clone() },
            Error::CacheFull { reason } => Error::CacheFull {
                reason: reason.clone(),
            },
            Error::BackgroundThreadPanicked { thread } => Error::BackgroundThreadPanicked {
                thread: thread.clone(),
            },
            Error::NotFound { what } => Error::NotFound { what: what.clone() },
            Error::Incomplete { reason } => Error::Incomplete {
                reason: reason.clone(),
            },
            Error::Closed => Error::Closed,
            Error::WriterPanicked { what } => Error::WriterPanicked { what: what.clone() },
            Error::MergeFailed {
                operator,
                key,
                reason,
            } => Error::MergeFailed {
                operator: operator.clone(),
                key: key.clone(),
                reason: reason.clone(),
            },
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_becomes_no_space() {
        let e = Error::io("write", "/x", io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(matches!(e, Error::NoSpace { .. }));
        let e = Error::io("write", "/x", io::Error::from_raw_os_error(libc::EIO));
        assert!(matches!(e, Error::Io { op: "write", .. }));
    }

    #[test]
    fn clone_keeps_os_error() {
        let e = Error::io("read", "/x", io::Error::from_raw_os_error(libc::EIO));
        let Error::Io { source, .. } = e.clone() else {
            panic!("clone changed the variant");
        };
        assert_eq!(source.raw_os_error(), Some(libc::EIO));
        assert_eq!(e.clone().to_string(), e.to_string());
    }

    #[test]
    fn messages_are_sentences() {
        let e = Error::corruption("/db/000012.sst", 4096, "block checksum mismatch");
        assert_eq!(
            e.to_string(),
            "Corruption: /db/000012.sst at offset 4096: block checksum mismatch"
        );
        let e = Error::merge_failed(
            &crate::merge::UInt64AddOperator,
            b"k\x01",
            crate::merge::MergeError::new("bad operand"),
        );
        assert_eq!(
            e.to_string(),
            "Merge failed: UInt64AddOperator could not merge the operands of key \"k\\x01\": bad operand"
        );
        let e = Error::invalid_argument("block_size", "must be at least 1");
        assert_eq!(
            e.to_string(),
            "Invalid argument: block_size: must be at least 1"
        );
    }
}
