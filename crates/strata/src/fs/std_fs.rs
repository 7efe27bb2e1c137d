//! [`StdFs`]: the real file system.
//!
//! Writes go through a user-space buffer (one `write` per 64 KiB instead of one per
//! record). Reads are `std_read`'s, in the flavour [`ReadFileOptions`] chooses.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{FileLock, Fs, RandomAccessFile, ReadFileOptions, WritableFile};
use crate::error::{Error, Result};

/// Size of the user-space write buffer. Appends at least this large skip the buffer.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// The real file system. Stateless: every method goes straight to the OS.
///
/// ```
/// use strata::fs::ReadFileOptions;
/// use strata::{Fs, StdFs};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data");
/// let mut file = StdFs.create(&path)?;
/// file.append(b"hello world")?;
/// file.sync()?;
/// assert_eq!(StdFs.file_size(&path)?, 11);
/// let reader = StdFs.open(&path, ReadFileOptions::default())?;
/// assert_eq!(&reader.read_at(6, 5)?[..], b"world");
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;

impl Fs for StdFs {
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))
    }

    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .map_err(|e| Error::io("create", path, e))?;
        Ok(Box::new(StdWritableFile {
            file,
            path: path.to_path_buf(),
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
            bytes_handed_to_os: 0,
            preallocated: 0,
        }))
    }

    fn create_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(super::direct_write::DirectWritableFile::create(
            path,
        )?))
    }

    fn open(&self, path: &Path, options: ReadFileOptions) -> Result<Arc<dyn RandomAccessFile>> {
        super::std_read::open(path, options)
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        std::fs::rename(from, to).map_err(|e| Error::io("rename", from, e))
    }

    fn remove(&self, path: &Path) -> Result<()> {
        std::fs::remove_file(path).map_err(|e| Error::io("remove", path, e))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(|e| Error::io("list", dir, e))? {
            let entry = entry.map_err(|e| Error::io("list", dir, e))?;
            // Engine file names are ASCII numbers; a non-UTF-8 name is not ours.
            if let Ok(name) = entry.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io("open lock file", path, e))?;
        loop {
            // SAFETY: `file` is open for the whole call, so its descriptor is valid;
            // flock takes no pointers.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if rc == 0 {
                break;
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) => {
                    return Err(Error::LockHeld {
                        path: path.to_path_buf(),
                    })
                }
                _ => return Err(Error::io("lock", path, err)),
            }
        }
        Ok(Box::new(StdFileLock {
            file,
            path: path.to_path_buf(),
        }))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io("sync directory", dir, e))
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| Error::io("stat", path, e))
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        path.try_exists().map_err(|e| Error::io("stat", path, e))
    }

    fn hard_link(&self, from: &Path, to: &Path) -> Result<bool> {
        match std::fs::hard_link(from, to) {
            Ok(()) => Ok(true),
            // Another device, a file system without links, or too many of
            // them: the caller copies.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EXDEV | libc::EPERM | libc::EOPNOTSUPP | libc::EMLINK)
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(Error::io("link", to, e)),
        }
    }

    fn reopen_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        // O_APPEND: every write lands at the end, whatever the offset.
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| Error::io("reopen for appending", path, e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(Box::new(StdWritableFile {
            file,
            path: path.to_path_buf(),
            buffer: Vec::with_capacity(WRITE_BUFFER_BYTES),
            bytes_handed_to_os: len,
            // Reopened files take small tails: no reservation, so the drop
            // never trims the file either.
            preallocated: u64::MAX,
        }))
    }
}

/// A file being appended to through a user-space buffer.
///
/// Invariant: the file holds `bytes_handed_to_os` bytes and `buffer` holds the rest;
/// `len() = bytes_handed_to_os + buffer.len()`.
///
/// Dropping it flushes the buffer on a best-effort basis and ignores errors: callers
/// that care about their bytes must call [`WritableFile::flush`] or
/// [`WritableFile::sync`] and check the result.
struct StdWritableFile {
    file: File,
    path: PathBuf,
    buffer: Vec<u8>,
    bytes_handed_to_os: u64,
    /// Bytes of the file reserved on disk with `fallocate` (past `len()`
    /// while writes have not reached them); `u64::MAX` once the file system
    /// refused.
    preallocated: u64,
}

impl StdWritableFile {
    /// Reserves disk space ahead of a write that reaches `end`, in steps that
    /// grow with the file (the file's size so far, from 1 to 64 MiB), as
    /// RocksDB's `PrepareWrite` does. Writing into reserved space skips the
    /// file system's per-page block reservation (ext4's delayed allocation):
    /// without it, 1 MiB writes cost about 2.3 times the kernel time per call.
    /// `FALLOC_FL_KEEP_SIZE` leaves the file's size alone, so readers and
    /// recovery never see the reserved tail. Best effort: a file system that
    /// refuses is written without it.
    fn preallocate(&mut self, end: u64) {
        const MIN_STEP: u64 = 1 << 20;
        const MAX_STEP: u64 = 64 << 20;
        if end <= self.preallocated || self.preallocated == u64::MAX {
            return;
        }
        let step = self.bytes_handed_to_os.clamp(MIN_STEP, MAX_STEP);
        // Lengths come from callers: no arithmetic here may overflow.
        let Some(target) = end
            .checked_next_multiple_of(MIN_STEP)
            .map(|end| end.max(self.preallocated.saturating_add(step)))
        else {
            self.preallocated = u64::MAX;
            return;
        };
        let (Ok(offset), Ok(len)) = (
            libc::off_t::try_from(self.preallocated),
            libc::off_t::try_from(target - self.preallocated),
        ) else {
            self.preallocated = u64::MAX;
            return;
        };
        // SAFETY: fallocate reads no memory of ours; the descriptor belongs to
        // `self.file`, which is open for writing.
        let rc = unsafe {
            libc::fallocate(
                self.file.as_raw_fd(),
                libc::FALLOC_FL_KEEP_SIZE,
                offset,
                len,
            )
        };
        // Never try again after a refusal (EOPNOTSUPP, ENOSPC, ...): the
        // write itself reports a full disk.
        self.preallocated = if rc == 0 { target } else { u64::MAX };
    }

    /// Writes `data` to the file, counting every byte the OS accepted even when a
    /// later `write` fails, so `len()` stays true to the file.
    fn write_to_os(
        file: &mut File,
        path: &Path,
        data: &[u8],
        bytes_handed_to_os: &mut u64,
    ) -> std::result::Result<(), (usize, Error)> {
        let mut written = 0;
        while written < data.len() {
            match file.write(&data[written..]) {
                Ok(0) => {
                    let err = io::Error::new(io::ErrorKind::WriteZero, "write accepted no bytes");
                    return Err((written, Error::io("write", path, err)));
                }
                Ok(n) => {
                    written += n;
                    *bytes_handed_to_os += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err((written, Error::io("write", path, e))),
            }
        }
        Ok(())
    }

    /// Empties the buffer into the file. On failure the bytes already written are
    /// removed from the buffer, so a retry does not write them twice.
    fn drain_buffer(&mut self) -> Result<()> {
        self.preallocate(self.bytes_handed_to_os + self.buffer.len() as u64);
        let result = Self::write_to_os(
            &mut self.file,
            &self.path,
            &self.buffer,
            &mut self.bytes_handed_to_os,
        );
        match result {
            Ok(()) => {
                self.buffer.clear();
                Ok(())
            }
            Err((written, err)) => {
                self.buffer.drain(..written);
                Err(err)
            }
        }
    }
}

impl WritableFile for StdWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.buffer.len() + data.len() > WRITE_BUFFER_BYTES {
            self.drain_buffer()?;
        }
        if data.len() >= WRITE_BUFFER_BYTES {
            // Copying a large append into the buffer would only add a memcpy.
            self.preallocate(self.bytes_handed_to_os + data.len() as u64);
            return Self::write_to_os(
                &mut self.file,
                &self.path,
                data,
                &mut self.bytes_handed_to_os,
            )
            .map_err(|(_, err)| err);
        }
        self.buffer.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.drain_buffer()
    }

    fn sync(&mut self) -> Result<()> {
        self.drain_buffer()?;
        self.file
            .sync_data()
            .map_err(|e| Error::io("fsync", &self.path, e))
    }

    fn len(&self) -> u64 {
        self.bytes_handed_to_os + self.buffer.len() as u64
    }
}

impl Drop for StdWritableFile {
    fn drop(&mut self) {
        // Best effort only: there is no way to report an error from drop.
        let _ = self.drain_buffer();
        if self.preallocated != u64::MAX && self.preallocated > self.bytes_handed_to_os {
            // Truncating to the current size gives back the reserved tail.
            let _ = self.file.set_len(self.bytes_handed_to_os);
        }
    }
}

impl fmt::Debug for StdWritableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdWritableFile")
            .field("path", &self.path)
            .field("len", &self.len())
            .field("buffered_bytes", &self.buffer.len())
            .finish()
    }
}

/// An exclusive `flock` held through an open descriptor.
struct StdFileLock {
    file: File,
    path: PathBuf,
}

impl FileLock for StdFileLock {}

impl Drop for StdFileLock {
    fn drop(&mut self) {
        // Closing the descriptor alone would release the lock, unless a forked
        // child still shares it; unlock explicitly so the release is certain.
        // SAFETY: `self.file` is still open here, so its descriptor is valid; flock
        // takes no pointers. A failure leaves the lock to be released by the close.
        let _ = unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

impl fmt::Debug for StdFileLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StdFileLock")
            .field("path", &self.path)
            .finish()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// Bytes that differ at every offset, so a misplaced read shows.
    pub(in crate::fs) fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    pub(in crate::fs) fn write_file(fs: &StdFs, path: &Path, data: &[u8]) {
        let mut file = fs.create(path).unwrap();
        file.append(data).unwrap();
        file.sync().unwrap();
        assert_eq!(file.len(), data.len() as u64);
    }

    #[test]
    fn buffered_writes_reach_the_file_on_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000001.log");
        let fs = StdFs;
        let mut file = fs.create(&path).unwrap();
        file.append(b"hello ").unwrap();
        file.append(b"world").unwrap();
        assert_eq!(file.len(), 11);
        // Still in the user-space buffer.
        assert_eq!(fs.file_size(&path).unwrap(), 0);
        file.flush().unwrap();
        assert_eq!(fs.file_size(&path).unwrap(), 11);
        // A large append bypasses the buffer but keeps the order of bytes.
        let big = pattern(3 * WRITE_BUFFER_BYTES + 5);
        file.append(b"!").unwrap();
        file.append(&big).unwrap();
        file.sync().unwrap();
        assert_eq!(file.len(), 12 + big.len() as u64);
        let mut expected = b"hello world!".to_vec();
        expected.extend_from_slice(&big);
        assert_eq!(std::fs::read(&path).unwrap(), expected);
    }

    /// Space reserved ahead of the writes never shows in the file's size,
    /// and closing the file gives the unwritten part back.
    #[test]
    fn preallocation_is_invisible_and_released_at_close() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000009.log");
        let mut file = StdFs.create(&path).unwrap();
        let data = pattern(3 * WRITE_BUFFER_BYTES + 17);
        file.append(&data).unwrap();
        file.flush().unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), data.len() as u64);
        // 512-byte blocks: a file system that took the reservation holds a
        // whole MiB for these 192 KiB; one that refused holds only the data.
        let reserved = meta.blocks() * 512 >= 1 << 20;
        drop(file);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), data.len() as u64);
        assert_eq!(std::fs::read(&path).unwrap(), data);
        if reserved {
            assert!(meta.blocks() * 512 < 1 << 20, "{} blocks", meta.blocks());
        }
    }

    #[test]
    fn drop_flushes_best_effort() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        let mut file = StdFs.create(&path).unwrap();
        file.append(b"abc").unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
    }

    #[test]
    fn create_truncates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        write_file(&StdFs, &path, b"long contents");
        write_file(&StdFs, &path, b"short");
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
    }

    /// A reopened file appends after its bytes, counts them in `len`, and
    /// a hard link's other name sees the append.
    #[test]
    fn reopen_appends_at_the_end_through_every_link() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000005.sst");
        let link = dir.path().join("000006.sst");
        write_file(&StdFs, &path, b"table");
        assert!(StdFs.hard_link(&path, &link).unwrap());
        let mut file = StdFs.reopen_writable(&link).unwrap();
        assert_eq!(file.len(), 5);
        file.append(b"+tail").unwrap();
        assert_eq!(file.len(), 10);
        file.sync().unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"table+tail");
        assert!(StdFs.reopen_writable(&dir.path().join("nope")).is_err());
    }

    #[test]
    fn second_lock_is_busy_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let first = StdFs.lock(&path).unwrap();
        match StdFs.lock(&path).unwrap_err() {
            e @ Error::LockHeld { .. } => {
                let message = e.to_string();
                assert!(message.contains("LOCK"), "{message}");
                assert!(message.contains("another process"), "{message}");
            }
            other => panic!("expected LockHeld, got {other:?}"),
        }
        drop(first);
        let _again = StdFs.lock(&path).unwrap();
    }

    #[test]
    fn namespace_operations() {
        let dir = tempfile::tempdir().unwrap();
        let fs = StdFs;
        let db = dir.path().join("db/sub");
        fs.create_dir_all(&db).unwrap();
        fs.create_dir_all(&db).unwrap();
        write_file(&fs, &db.join("a"), b"12345");
        write_file(&fs, &db.join("b"), b"");
        let mut names = fs.list(&db).unwrap();
        names.sort();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(fs.file_size(&db.join("a")).unwrap(), 5);

        fs.rename(&db.join("a"), &db.join("b")).unwrap();
        fs.sync_dir(&db).unwrap();
        assert!(!fs.exists(&db.join("a")).unwrap());
        assert_eq!(fs.file_size(&db.join("b")).unwrap(), 5);

        fs.remove(&db.join("b")).unwrap();
        assert!(!fs.exists(&db.join("b")).unwrap());
        assert!(fs.exists(&db).unwrap());
        assert!(fs.list(&db).unwrap().is_empty());
        assert!(fs.remove(&db.join("b")).is_err());
        assert!(fs.file_size(&db.join("b")).is_err());
        assert!(fs.list(&db.join("nope")).is_err());
    }
}
