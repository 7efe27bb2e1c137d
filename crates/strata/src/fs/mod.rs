//! The file system layer: every byte the engine reads or writes goes through [`Fs`].
//!
//! Two implementations:
//! - [`StdFs`]: real files, `pread` reads, optional `mmap` reads (advised random
//!   access) and `O_DIRECT` reads;
//! - `SimFs` (feature `sim`, and always in tests): an in-memory file system that
//!   tracks which bytes and directory entries are durable, and can crash or inject
//!   faults from a printed seed.
//!
//! Durability model shared by both: `WritableFile::append` buffers or hands bytes
//! to the OS, `flush` guarantees they reached the OS (survive a process kill),
//! `sync` makes the file's bytes durable (survive power loss), and a new or renamed
//! directory entry is durable only after `sync_dir` on its directory.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::error::Result;

mod direct_write;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
mod std_fs;
mod std_read;

pub use direct_write::DirectWritesFs;
#[cfg(any(test, feature = "sim"))]
pub use sim::SimFs;
pub use std_fs::StdFs;

/// In an `impl Fs` for a wrapper with an `inner: Arc<dyn Fs>` field: every
/// method but `create_dir_all`, `create` and `create_direct`, passed to
/// `inner` unchanged.
macro_rules! forward_to_inner {
    () => {
        fn open(
            &self,
            path: &std::path::Path,
            options: $crate::fs::ReadFileOptions,
        ) -> $crate::error::Result<std::sync::Arc<dyn $crate::fs::RandomAccessFile>> {
            self.inner.open(path, options)
        }
        fn rename(
            &self,
            from: &std::path::Path,
            to: &std::path::Path,
        ) -> $crate::error::Result<()> {
            self.inner.rename(from, to)
        }
        fn remove(&self, path: &std::path::Path) -> $crate::error::Result<()> {
            self.inner.remove(path)
        }
        fn list(&self, dir: &std::path::Path) -> $crate::error::Result<Vec<String>> {
            self.inner.list(dir)
        }
        fn lock(
            &self,
            path: &std::path::Path,
        ) -> $crate::error::Result<Box<dyn $crate::fs::FileLock>> {
            self.inner.lock(path)
        }
        fn sync_dir(&self, dir: &std::path::Path) -> $crate::error::Result<()> {
            self.inner.sync_dir(dir)
        }
        fn file_size(&self, path: &std::path::Path) -> $crate::error::Result<u64> {
            self.inner.file_size(path)
        }
        fn exists(&self, path: &std::path::Path) -> $crate::error::Result<bool> {
            self.inner.exists(path)
        }
        fn hard_link(
            &self,
            from: &std::path::Path,
            to: &std::path::Path,
        ) -> $crate::error::Result<bool> {
            self.inner.hard_link(from, to)
        }
        fn reopen_writable(
            &self,
            path: &std::path::Path,
        ) -> $crate::error::Result<Box<dyn $crate::fs::WritableFile>> {
            self.inner.reopen_writable(path)
        }
    };
}
pub(crate) use forward_to_inner;

/// How a file is opened for random reads.
///
/// ```
/// use strata::fs::ReadFileOptions;
/// use strata::{Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("data");
/// # let mut file = StdFs.create(&path)?;
/// # file.append(b"hello world")?;
/// # file.sync()?;
/// let plain = ReadFileOptions::default();
/// assert!(!plain.use_mmap_reads && !plain.use_direct_reads);
/// // Reads served from a memory mapping, without copying.
/// let mapped = StdFs.open(&path, ReadFileOptions { use_mmap_reads: true, ..Default::default() })?;
/// assert_eq!(mapped.len(), 11);
/// assert_eq!(&mapped.read_at(0, 5)?[..], b"hello");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadFileOptions {
    /// Map the file and serve reads from the mapping (RocksDB's `use_mmap_reads`).
    /// The mapping is advised for random access so a point read faults in one page,
    /// not a readahead window.
    pub use_mmap_reads: bool,
    /// Bypass the page cache with `O_DIRECT` (RocksDB's `use_direct_reads`). Fails
    /// with a clear error on file systems that do not support it.
    pub use_direct_reads: bool,
}

/// A file open for appending.
///
/// ```
/// use strata::fs::WritableFile;
/// use strata::{Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("log");
/// let mut file: Box<dyn WritableFile> = StdFs.create(&path)?;
/// assert!(file.is_empty());
/// file.append(b"abc")?;
/// file.append(b"de")?;
/// assert_eq!(file.len(), 5, "buffered bytes count too");
/// file.flush()?; // now a process kill loses nothing
/// assert_eq!(StdFs.file_size(&path)?, 5);
/// # Ok(())
/// # }
/// ```
pub trait WritableFile: Send + fmt::Debug {
    /// Appends bytes. They may stay in a user-space buffer until [`flush`](Self::flush).
    fn append(&mut self, data: &[u8]) -> Result<()>;
    /// Hands every appended byte to the OS: after this a process kill loses nothing.
    fn flush(&mut self) -> Result<()>;
    /// Flushes, then makes the file's contents durable (`fdatasync`).
    fn sync(&mut self) -> Result<()>;
    /// Bytes appended so far, buffered or not.
    fn len(&self) -> u64;
    /// True when nothing has been appended.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A file open for positional reads. Shared between threads.
///
/// ```
/// use std::sync::Arc;
/// use strata::fs::{RandomAccessFile, ReadFileOptions};
/// use strata::{Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("data");
/// # let mut file = StdFs.create(&path)?;
/// # file.append(b"0123456789")?;
/// # file.sync()?;
/// let reader: Arc<dyn RandomAccessFile> = StdFs.open(&path, ReadFileOptions::default())?;
/// assert_eq!(reader.len(), 10);
/// assert_eq!(&reader.read_at(3, 4)?[..], b"3456");
/// assert!(reader.read_at(8, 4).is_err(), "reading past the end fails");
/// # Ok(())
/// # }
/// ```
pub trait RandomAccessFile: Send + Sync + fmt::Debug {
    /// Reads exactly `len` bytes at `offset`. Reading past the end is an error.
    /// With mmap the result borrows the mapping without copying.
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes>;
    /// File size when it was opened.
    fn len(&self) -> u64;
    /// True for an empty file.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A held advisory lock on a file; released on drop.
///
/// ```
/// use strata::{Error, Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("LOCK");
/// let lock = StdFs.lock(&path)?;
/// assert!(matches!(StdFs.lock(&path), Err(Error::LockHeld { .. })));
/// drop(lock); // released on drop
/// let _again = StdFs.lock(&path)?;
/// # Ok(())
/// # }
/// ```
pub trait FileLock: Send + Sync + fmt::Debug {}

/// The operations the engine needs from a file system.
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, DbOptions, Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let fs: Arc<dyn Fs> = Arc::new(StdFs);
/// let options = DbOptions { create_if_missing: true, fs: fs.clone(), ..Default::default() };
/// Db::open(dir.path(), options)?.close()?;
/// // Every file the database made went through `fs`.
/// let names = fs.list(dir.path())?;
/// assert!(names.iter().any(|name| name == "CURRENT"));
/// assert!(fs.exists(&dir.path().join("CURRENT"))?);
/// # Ok(())
/// # }
/// ```
pub trait Fs: Send + Sync + fmt::Debug {
    /// Creates a directory and its parents; succeeds if it exists.
    fn create_dir_all(&self, dir: &Path) -> Result<()>;
    /// Creates a file for appending, truncating any existing one.
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>>;
    /// Like [`create`](Self::create), the bytes bypassing the page cache
    /// (`O_DIRECT`) where the file system has one; by default a plain
    /// `create` (a simulated file system has no page cache to bypass).
    fn create_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.create(path)
    }
    /// Opens an existing file for positional reads.
    fn open(&self, path: &Path, options: ReadFileOptions) -> Result<Arc<dyn RandomAccessFile>>;
    /// Atomically replaces `to` with `from`.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> Result<()>;
    /// Names (not paths) of the entries of a directory, in no particular order.
    fn list(&self, dir: &Path) -> Result<Vec<String>>;
    /// Takes an exclusive lock on `path` (creating it), or fails with `Error::LockHeld`
    /// if another holder, in this process or another, has it.
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>>;
    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> Result<()>;
    /// Current size of a file.
    fn file_size(&self, path: &Path) -> Result<u64>;
    /// Whether a file or directory exists.
    fn exists(&self, path: &Path) -> Result<bool>;
    /// Makes `to` a second name of the file `from` (a hard link). `Ok(false)`
    /// when this file system cannot link these two (another device, no
    /// support): the caller copies instead. By default it never links.
    fn hard_link(&self, from: &Path, to: &Path) -> Result<bool> {
        let _ = (from, to);
        Ok(false)
    }
    /// Opens the existing file `path` for appending at its end (RocksDB's
    /// `ReopenWritableFile`); the handle's [`len`](WritableFile::len) starts
    /// at the file's size. Appended bytes are as durable as any append:
    /// lost to a crash until [`sync`](WritableFile::sync), and a hard link's
    /// other names see them too. By default it fails: a file system written
    /// before the method existed cannot append to an existing file, and
    /// ingestion (which appends to the tables it takes in) then fails with
    /// this error rather than do something else.
    fn reopen_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let err = std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "this file system cannot reopen a file for appending",
        );
        Err(crate::error::Error::io("reopen for appending", path, err))
    }
}
