//! `O_DIRECT` writes for the table files of flushes and compactions
//! (RocksDB's `use_direct_io_for_flush_and_compaction`): they bypass the page
//! cache, so background writes do not evict the pages foreground reads use.
//!
//! `O_DIRECT` needs the buffer address, the file offset and the length aligned
//! to the device's logical block. [`DirectWritableFile`] keeps an aligned
//! window of the file's tail in memory; full windows go out whole, and a
//! flush writes the partial last block zero-padded, then truncates the file to
//! its true length and keeps that block in the window, to be rewritten with
//! the bytes that follow it.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Fs, WritableFile};
use crate::error::{Error, Result};

/// Alignment of addresses, offsets and lengths: 4096 covers the logical block
/// sizes in common use (512 and 4096).
pub(super) const ALIGN: usize = 4096;

/// Bytes written per full window (RocksDB's `writable_file_max_buffer_size`).
const WINDOW: usize = 1 << 20;

/// The error for a file system that refuses `O_DIRECT` writes.
fn unsupported(path: &Path) -> Error {
    Error::invalid_argument(
        "use_direct_io_for_flush_and_compaction",
        format!(
            "the file system holding {} does not support O_DIRECT; turn \
             use_direct_io_for_flush_and_compaction off",
            path.display()
        ),
    )
}

/// A table file written with `O_DIRECT`.
///
/// Invariant: the file's bytes `0..window_offset` are final, the window holds
/// the bytes `window_offset..window_offset + filled`, `window_offset` is a
/// multiple of [`ALIGN`], and `len() = window_offset + filled`.
pub(super) struct DirectWritableFile {
    file: File,
    path: PathBuf,
    /// Over-allocated by one alignment unit; the window is the aligned part.
    storage: Vec<u8>,
    /// Where the aligned window starts in `storage`.
    start: usize,
    filled: usize,
    window_offset: u64,
}

impl DirectWritableFile {
    pub(super) fn create(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => unsupported(path),
                _ => Error::io("create", path, e),
            })?;
        // A Vec<u8> has no alignment guarantee: use the aligned part of one
        // alignment unit more.
        let storage = vec![0u8; WINDOW + ALIGN];
        let start = storage.as_ptr().align_offset(ALIGN);
        if start > ALIGN {
            let err = io::Error::other("could not align the O_DIRECT write buffer");
            return Err(Error::io("create", path, err));
        }
        Ok(DirectWritableFile {
            file,
            path: path.to_path_buf(),
            storage,
            start,
            filled: 0,
            window_offset: 0,
        })
    }

    /// Writes the first `len` bytes of the window (a multiple of [`ALIGN`])
    /// at `window_offset`.
    fn write_window(&self, len: usize) -> Result<()> {
        let window = &self.storage[self.start..self.start + len];
        self.file
            .write_all_at(window, self.window_offset)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => unsupported(&self.path),
                _ => Error::io("write", &self.path, e),
            })
    }
}

impl WritableFile for DirectWritableFile {
    fn append(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            let take = data.len().min(WINDOW - self.filled);
            let at = self.start + self.filled;
            self.storage[at..at + take].copy_from_slice(&data[..take]);
            self.filled += take;
            data = &data[take..];
            if self.filled == WINDOW {
                self.write_window(WINDOW)?;
                self.window_offset += WINDOW as u64;
                self.filled = 0;
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.filled == 0 {
            return Ok(());
        }
        let padded = self.filled.next_multiple_of(ALIGN);
        let (from, to) = (self.start + self.filled, self.start + padded);
        self.storage[from..to].fill(0);
        self.write_window(padded)?;
        self.file
            .set_len(self.len())
            .map_err(|e| Error::io("truncate", &self.path, e))?;
        // Whole blocks are final; the partial one stays to be rewritten.
        let whole = self.filled - self.filled % ALIGN;
        let at = self.start;
        self.storage.copy_within(at + whole..at + self.filled, at);
        self.window_offset += whole as u64;
        self.filled -= whole;
        Ok(())
    }

    fn sync(&mut self) -> Result<()> {
        self.flush()?;
        // fdatasync also persists the size the truncation set: it is needed
        // to read the data back.
        self.file
            .sync_data()
            .map_err(|e| Error::io("sync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.window_offset + self.filled as u64
    }
}

impl Drop for DirectWritableFile {
    fn drop(&mut self) {
        // Best effort, as for buffered files: callers that care flush or sync
        // and check the result.
        let _ = self.flush();
    }
}

impl fmt::Debug for DirectWritableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectWritableFile")
            .field("path", &self.path)
            .field("len", &self.len())
            .finish()
    }
}

/// An [`Fs`] whose `create` makes files written with `O_DIRECT` (through
/// [`Fs::create_direct`]); everything else goes to the inner file system.
/// The flush and compaction jobs get one when the option is on.
///
/// ```
/// use std::sync::Arc;
/// use strata::fs::{DirectWritesFs, ReadFileOptions};
/// use strata::{Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data");
/// let mut file = StdFs.create(&path)?;
/// file.append(b"hello")?;
/// file.sync()?;
/// // Everything but `create` goes to the inner file system unchanged.
/// let fs = DirectWritesFs::new(Arc::new(StdFs));
/// assert!(fs.exists(&path)?);
/// assert_eq!(&fs.open(&path, ReadFileOptions::default())?.read_at(0, 5)?[..], b"hello");
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct DirectWritesFs {
    inner: Arc<dyn Fs>,
}

impl DirectWritesFs {
    pub fn new(inner: Arc<dyn Fs>) -> Self {
        DirectWritesFs { inner }
    }
}

impl Fs for DirectWritesFs {
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.inner.create_direct(path)
    }
    super::forward_to_inner!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// Appends of every size, with flushes between some of them, read back
    /// exactly; the file's length is right after every flush. Skipped where
    /// the file system has no O_DIRECT (tmpfs).
    #[test]
    fn direct_writes_read_back_exactly_through_flushes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.sst");
        let mut file = match DirectWritableFile::create(&path) {
            Ok(file) => file,
            Err(Error::InvalidArgument { reason, .. }) => {
                eprintln!("skipping: {reason}");
                return;
            }
            Err(e) => panic!("{e}"),
        };
        let mut rng = SmallRng::seed_from_u64(7);
        let mut expected = Vec::new();
        for round in 0..300 {
            let len = match round % 4 {
                0 => rng.gen_range(0..10),
                1 => rng.gen_range(0..ALIGN * 2),
                2 => rng.gen_range(0..WINDOW + ALIGN),
                _ => ALIGN,
            };
            let data: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            file.append(&data).unwrap();
            expected.extend_from_slice(&data);
            assert_eq!(file.len(), expected.len() as u64);
            if rng.gen_bool(0.3) {
                file.flush().unwrap();
                assert_eq!(
                    std::fs::metadata(&path).unwrap().len(),
                    expected.len() as u64
                );
            }
        }
        file.sync().unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }
}
