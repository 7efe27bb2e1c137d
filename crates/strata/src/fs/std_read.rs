//! The read side of [`super::StdFs`]: `pread` into a fresh buffer (the
//! default), a shared memory mapping (`use_mmap_reads`), or `O_DIRECT` reads
//! that bypass the page cache (`use_direct_reads`), as [`ReadFileOptions`]
//! chooses.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use super::{RandomAccessFile, ReadFileOptions};
use crate::error::{Error, Result};

/// Alignment of buffer address, file offset and length for `O_DIRECT` reads. 4096
/// covers every logical block size in common use (512 and 4096).
pub(super) const DIRECT_IO_ALIGN: usize = 4096;

/// Opens `path` for reading the way `options` asks.
pub(super) fn open(path: &Path, options: ReadFileOptions) -> Result<Arc<dyn RandomAccessFile>> {
    if options.use_direct_reads {
        return Ok(Arc::new(DirectFile::open(path)?));
    }
    let file = File::open(path).map_err(|e| Error::io("open", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if options.use_mmap_reads {
        return Ok(Arc::new(MmapFile::map(&file, path, len)?));
    }
    Ok(Arc::new(PreadFile {
        file,
        path: path.to_path_buf(),
        len_at_open: len,
    }))
}

/// The error for a read that would go past the end of a file.
fn past_eof(path: &Path, offset: u64, len: usize, file_len: u64) -> Error {
    let err = io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "read of {len} bytes at offset {offset} goes past the end of the {file_len}-byte file"
        ),
    );
    Error::io("read", path, err)
}

/// `offset + len`, or a past-EOF error if it overflows `u64`.
fn read_end(path: &Path, offset: u64, len: usize, file_len: u64) -> Result<u64> {
    offset
        .checked_add(len as u64)
        .ok_or_else(|| past_eof(path, offset, len, file_len))
}

/// Checks that `[offset, end)` lies within the file before a buffer of that size is
/// allocated. The size at open time answers almost always (tables never change once
/// written); a read beyond it asks the OS again, since a file may have grown.
fn check_within_file(
    file: &File,
    path: &Path,
    offset: u64,
    len: usize,
    len_at_open: u64,
) -> Result<()> {
    let end = read_end(path, offset, len, len_at_open)?;
    if end <= len_at_open {
        return Ok(());
    }
    let current_len = file
        .metadata()
        .map_err(|e| Error::io("stat", path, e))?
        .len();
    if end > current_len {
        return Err(past_eof(path, offset, len, current_len));
    }
    Ok(())
}

/// Reads with `pread` into a new buffer per call.
#[derive(Debug)]
struct PreadFile {
    file: File,
    path: PathBuf,
    len_at_open: u64,
}

impl RandomAccessFile for PreadFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        check_within_file(&self.file, &self.path, offset, len, self.len_at_open)?;
        // Read into uninitialized capacity: zeroing a buffer pread overwrites
        // anyway cost about 6% of a cache-missing point read.
        let mut buf: Vec<u8> = Vec::with_capacity(len);
        while buf.len() < len {
            let filled = buf.len();
            let at = offset + filled as u64;
            let Ok(at) = libc::off_t::try_from(at) else {
                return Err(past_eof(&self.path, offset, len, self.len_at_open));
            };
            // SAFETY: the pointer and length describe the vector's spare
            // capacity past `filled` (capacity is `len`), which pread only
            // writes; the fd is open for as long as `self.file` lives.
            let n = unsafe {
                libc::pread(
                    self.file.as_raw_fd(),
                    buf.as_mut_ptr().add(filled).cast(),
                    len - filled,
                    at,
                )
            };
            match usize::try_from(n) {
                Ok(0) => return Err(past_eof(&self.path, offset, len, self.len_at_open)),
                // SAFETY: pread reported `n` more bytes written after
                // `filled`, so bytes `..filled + n` are initialized.
                Ok(n) => unsafe { buf.set_len(filled + n) },
                Err(_) => {
                    let e = io::Error::last_os_error();
                    if e.kind() != io::ErrorKind::Interrupted {
                        return Err(Error::io("read", &self.path, e));
                    }
                }
            }
        }
        Ok(Bytes::from(buf))
    }

    fn len(&self) -> u64 {
        self.len_at_open
    }
}

/// Serves reads from a read-only mapping of the whole file, made when it was opened.
/// Every returned `Bytes` shares the mapping, which is unmapped when the last of
/// them and this handle are dropped. Bytes appended after open are not visible.
struct MmapFile {
    /// The whole mapping (or an empty `Bytes` for an empty file, which cannot be
    /// mapped: `mmap` rejects length 0).
    mapping: Bytes,
    path: PathBuf,
}

impl MmapFile {
    fn map(file: &File, path: &Path, len: u64) -> Result<Self> {
        if len == 0 {
            return Ok(MmapFile {
                mapping: Bytes::new(),
                path: path.to_path_buf(),
            });
        }
        // SAFETY: a mapping is only sound while nobody truncates or rewrites the
        // file underneath it. The engine opens for reads only files that are
        // complete and never modified again (tables, blob files); they are written
        // once, synced, read, and finally unlinked, which keeps the pages of an
        // existing mapping valid. Another process truncating the file would make
        // accesses fault (SIGBUS), the accepted risk of `use_mmap_reads`, as in
        // RocksDB.
        let mmap = unsafe { memmap2::Mmap::map(file) }.map_err(|e| Error::io("mmap", path, e))?;
        // Point lookups touch one block: readahead around it would only waste
        // memory and I/O.
        mmap.advise(memmap2::Advice::Random)
            .map_err(|e| Error::io("madvise", path, e))?;
        Ok(MmapFile {
            mapping: Bytes::from_owner(mmap),
            path: path.to_path_buf(),
        })
    }
}

impl RandomAccessFile for MmapFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let file_len = self.mapping.len() as u64;
        let end = read_end(&self.path, offset, len, file_len)?;
        if end > file_len {
            return Err(past_eof(&self.path, offset, len, file_len));
        }
        // Both bounds are <= the mapping length, a usize, so the casts are exact.
        Ok(self.mapping.slice(offset as usize..end as usize))
    }

    fn len(&self) -> u64 {
        self.mapping.len() as u64
    }
}

impl fmt::Debug for MmapFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MmapFile")
            .field("path", &self.path)
            .field("len", &self.mapping.len())
            .finish()
    }
}

/// Reads with `O_DIRECT`: each read fetches the enclosing aligned range into an
/// aligned buffer and copies the requested bytes out.
#[derive(Debug)]
struct DirectFile {
    file: File,
    path: PathBuf,
    len_at_open: u64,
}

/// The error for a file system that refuses `O_DIRECT`.
fn direct_io_unsupported(path: &Path) -> Error {
    Error::invalid_argument(
        "use_direct_reads",
        format!(
            "the file system holding {} does not support O_DIRECT; turn use_direct_reads off",
            path.display()
        ),
    )
}

impl DirectFile {
    fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::EINVAL) => direct_io_unsupported(path),
                _ => Error::io("open", path, e),
            })?;
        let len_at_open = file
            .metadata()
            .map_err(|e| Error::io("stat", path, e))?
            .len();
        Ok(DirectFile {
            file,
            path: path.to_path_buf(),
            len_at_open,
        })
    }
}

impl RandomAccessFile for DirectFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        check_within_file(&self.file, &self.path, offset, len, self.len_at_open)?;
        if len == 0 {
            return Ok(Bytes::new());
        }
        let align = DIRECT_IO_ALIGN as u64;
        let end = read_end(&self.path, offset, len, self.len_at_open)?;
        let aligned_start = offset - offset % align;
        let aligned_end = end
            .checked_next_multiple_of(align)
            .ok_or_else(|| past_eof(&self.path, offset, len, self.len_at_open))?;
        let span = usize::try_from(aligned_end - aligned_start)
            .map_err(|_| past_eof(&self.path, offset, len, self.len_at_open))?;

        // A Vec<u8> has no alignment guarantee, so over-allocate by one alignment
        // unit and use the aligned window inside it: no unsafe allocation needed.
        let mut storage = vec![0u8; span + DIRECT_IO_ALIGN];
        let skip = storage.as_ptr().align_offset(DIRECT_IO_ALIGN);
        let Some(buf) = storage.get_mut(skip..skip + span) else {
            let err = io::Error::other("could not align the O_DIRECT read buffer");
            return Err(Error::io("read", &self.path, err));
        };

        // Read until the requested bytes are in. Every read starts at an aligned
        // offset; only the read that hits end-of-file may stop short of a block.
        let wanted = end - aligned_start;
        let mut filled = 0usize;
        while (filled as u64) < wanted {
            if filled % DIRECT_IO_ALIGN != 0 {
                return Err(past_eof(
                    &self.path,
                    offset,
                    len,
                    aligned_start + filled as u64,
                ));
            }
            match self
                .file
                .read_at(&mut buf[filled..], aligned_start + filled as u64)
            {
                Ok(0) => {
                    return Err(past_eof(
                        &self.path,
                        offset,
                        len,
                        aligned_start + filled as u64,
                    ))
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    return Err(direct_io_unsupported(&self.path))
                }
                Err(e) => return Err(Error::io("read", &self.path, e)),
            }
        }
        // `offset - aligned_start < align` and `len` fit the buffer by construction.
        let start = (offset - aligned_start) as usize;
        Ok(Bytes::copy_from_slice(&buf[start..start + len]))
    }

    fn len(&self) -> u64 {
        self.len_at_open
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::std_fs::tests::{pattern, write_file};
    use crate::fs::{Fs, StdFs};

    const MMAP: ReadFileOptions = ReadFileOptions {
        use_mmap_reads: true,
        use_direct_reads: false,
    };
    const DIRECT: ReadFileOptions = ReadFileOptions {
        use_mmap_reads: false,
        use_direct_reads: true,
    };

    fn assert_eof(err: Error) {
        match err {
            Error::Io { source, .. } => assert_eq!(source.kind(), io::ErrorKind::UnexpectedEof),
            other => panic!("expected an UnexpectedEof I/O error, got {other:?}"),
        }
    }

    /// Reads and past-EOF reads that every read mode must answer the same way.
    fn check_reads(file: &dyn RandomAccessFile, data: &[u8]) {
        let len = data.len() as u64;
        assert_eq!(file.len(), len);
        assert_eq!(&file.read_at(0, data.len()).unwrap()[..], data);
        for (offset, n) in [
            (0usize, 1usize),
            (1, 4095),
            (4095, 2),
            (4096, 4096),
            (5000, 9000),
        ] {
            if offset + n <= data.len() {
                let got = file.read_at(offset as u64, n).unwrap();
                assert_eq!(
                    &got[..],
                    &data[offset..offset + n],
                    "offset {offset} len {n}"
                );
            }
        }
        let tail = file.read_at(len - 3, 3).unwrap();
        assert_eq!(&tail[..], &data[data.len() - 3..]);
        assert_eof(file.read_at(len - 3, 4).unwrap_err());
        assert_eof(file.read_at(len + 10, 1).unwrap_err());
        assert_eof(file.read_at(u64::MAX - 1, 10).unwrap_err());
    }

    #[test]
    fn pread_reads_back_and_rejects_past_eof() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.sst");
        let data = pattern(20_000);
        write_file(&StdFs, &path, &data);
        let file = StdFs.open(&path, ReadFileOptions::default()).unwrap();
        check_reads(file.as_ref(), &data);
    }

    #[test]
    fn pread_of_a_file_cut_short_after_open_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000008.sst");
        let data = pattern(10_000);
        write_file(&StdFs, &path, &data);
        let file = StdFs.open(&path, ReadFileOptions::default()).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(5_000)
            .unwrap();
        // The first half is still there; a read across the cut stops at it.
        assert_eq!(&file.read_at(100, 200).unwrap()[..], &data[100..300]);
        assert!(file.read_at(4_000, 2_000).is_err());
    }

    #[test]
    fn mmap_reads_back_without_copying() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.sst");
        let data = pattern(20_000);
        write_file(&StdFs, &path, &data);
        let file = StdFs.open(&path, MMAP).unwrap();
        check_reads(file.as_ref(), &data);
        // Two reads of the same range point into the same mapping.
        let a = file.read_at(100, 10).unwrap();
        let b = file.read_at(100, 10).unwrap();
        assert_eq!(a.as_ptr(), b.as_ptr());
        // A slice outlives the handle: it keeps the mapping alive.
        drop(file);
        assert_eq!(&a[..], &data[100..110]);
    }

    #[test]
    fn empty_file_in_every_read_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty");
        write_file(&StdFs, &path, b"");
        for options in [ReadFileOptions::default(), MMAP] {
            let file = StdFs.open(&path, options).unwrap();
            assert!(file.is_empty());
            assert!(file.read_at(0, 0).unwrap().is_empty());
            assert_eof(file.read_at(0, 1).unwrap_err());
        }
    }

    #[test]
    fn direct_reads_back_or_skip() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("000007.sst");
        let data = pattern(3 * DIRECT_IO_ALIGN + 123);
        write_file(&StdFs, &path, &data);
        let file = match StdFs.open(&path, DIRECT) {
            Ok(file) => file,
            Err(Error::InvalidArgument { field, reason }) => {
                assert_eq!(field, "use_direct_reads");
                eprintln!("skipping direct_reads_back_or_skip: {reason}");
                return;
            }
            Err(e) => panic!("unexpected error opening with O_DIRECT: {e}"),
        };
        match file.read_at(0, 1) {
            Ok(_) => check_reads(file.as_ref(), &data),
            Err(Error::InvalidArgument { reason, .. }) => {
                eprintln!("skipping direct_reads_back_or_skip: {reason}");
            }
            Err(e) => panic!("unexpected error reading with O_DIRECT: {e}"),
        }
    }

    #[test]
    fn open_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing");
        for options in [ReadFileOptions::default(), MMAP, DIRECT] {
            match StdFs.open(&path, options).unwrap_err() {
                Error::Io { source, .. } => assert_eq!(source.kind(), io::ErrorKind::NotFound),
                other => panic!("expected NotFound, got {other:?}"),
            }
        }
    }
}
