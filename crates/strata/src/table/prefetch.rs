//! Readahead for scans: one larger read serves the next several blocks.
//!
//! A forward scan of a table reads its data blocks in file order, one
//! `pread` of about a block each. A [`Prefetcher`] watches the offsets a
//! cursor reads and, once they run in sequence, reads a window past the
//! block asked for and serves the next blocks from it. Automatic readahead
//! (RocksDB's, for iterators without `readahead_size`) starts after two
//! sequential reads at 8 KiB and doubles up to 256 KiB per window; a fixed
//! `ReadOptions::readahead_size` reads that much on every forward read the
//! window does not cover. A read that goes backward or jumps resets the
//! automatic window. Blocks found in the block cache never get here.
//!
//! A block served from the window is copied out of it: an uncompressed block
//! shares its bytes with what it was read into, and a cached block that
//! pointed into a 256 KiB window would hold the whole window while the cache
//! charged it for one block.

use bytes::Bytes;

use crate::error::Result;
use crate::fs::RandomAccessFile;

/// The first automatic window.
const AUTO_INITIAL: usize = 8 << 10;
/// The largest automatic window (RocksDB's `max_auto_readahead_size`).
const AUTO_MAX: usize = 256 << 10;
/// Sequential reads before automatic readahead starts.
const AUTO_AFTER: u32 = 2;

/// One cursor's readahead state over one file.
#[derive(Debug, Default)]
pub struct Prefetcher {
    /// `ReadOptions::readahead_size`; 0 for automatic.
    fixed: usize,
    /// The next automatic window.
    window: usize,
    /// Reads so far that each began where the previous one ended.
    sequential: u32,
    /// Where the previous read ended.
    next_offset: u64,
    /// Bytes read ahead, and their offset in the file.
    buffer_offset: u64,
    buffer: Bytes,
}

impl Prefetcher {
    /// A prefetcher reading `readahead_size` bytes ahead, or automatically
    /// sized windows when 0.
    pub fn new(readahead_size: usize) -> Prefetcher {
        Prefetcher {
            fixed: readahead_size,
            window: AUTO_INITIAL,
            ..Prefetcher::default()
        }
    }

    /// `len` bytes of `file` at `offset`, from the window when it holds them,
    /// else read, with readahead up to `limit` (the end of the readable
    /// region) when the reads run forward.
    pub fn read(
        &mut self,
        file: &dyn RandomAccessFile,
        offset: u64,
        len: usize,
        limit: u64,
    ) -> Result<Bytes> {
        let forward = offset >= self.next_offset;
        if offset == self.next_offset {
            self.sequential = self.sequential.saturating_add(1);
        } else {
            self.sequential = 0;
            self.window = AUTO_INITIAL;
        }
        self.next_offset = offset.saturating_add(len as u64);
        if let Some(start) = offset.checked_sub(self.buffer_offset) {
            let start = usize::try_from(start).unwrap_or(usize::MAX);
            if start
                .checked_add(len)
                .is_some_and(|end| end <= self.buffer.len())
            {
                return Ok(Bytes::copy_from_slice(&self.buffer[start..start + len]));
            }
        }
        let ahead = if self.fixed > 0 {
            if forward {
                self.fixed
            } else {
                0
            }
        } else if self.sequential >= AUTO_AFTER {
            let window = self.window;
            self.window = (self.window * 2).min(AUTO_MAX);
            window
        } else {
            0
        };
        let available = usize::try_from(limit.saturating_sub(offset)).unwrap_or(usize::MAX);
        let want = ahead.min(available);
        if want <= len {
            return file.read_at(offset, len);
        }
        self.buffer = file.read_at(offset, want)?;
        self.buffer_offset = offset;
        Ok(Bytes::copy_from_slice(&self.buffer[..len]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A file of `0, 1, 2, ...` bytes that counts its reads.
    #[derive(Debug, Default)]
    struct CountingFile {
        reads: AtomicUsize,
        read_bytes: AtomicUsize,
    }

    impl RandomAccessFile for CountingFile {
        fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            self.read_bytes.fetch_add(len, Ordering::Relaxed);
            assert!(offset + len as u64 <= self.len(), "read past the end");
            Ok((offset..offset + len as u64).map(|i| i as u8).collect())
        }
        fn len(&self) -> u64 {
            1 << 20
        }
    }

    fn expect(offset: u64, len: usize) -> Bytes {
        (offset..offset + len as u64).map(|i| i as u8).collect()
    }

    #[test]
    fn sequential_reads_grow_the_window_and_serve_from_it() {
        let file = CountingFile::default();
        let mut p = Prefetcher::new(0);
        let block = 4096;
        let blocks = 200u64;
        for i in 0..blocks {
            let got = p.read(&file, i * block as u64, block, file.len()).unwrap();
            assert_eq!(got, expect(i * block as u64, block));
        }
        let reads = file.reads.load(Ordering::Relaxed);
        // Without readahead: 200 reads. Windows grow to 256 KiB (64 blocks).
        assert!(reads < 20, "{reads} reads for {blocks} sequential blocks");
        // Nothing was read twice beyond the windows' overlap with the end.
        assert!(file.read_bytes.load(Ordering::Relaxed) <= blocks as usize * block + (256 << 10));
    }

    #[test]
    fn random_and_backward_reads_read_only_what_they_ask() {
        let file = CountingFile::default();
        let mut p = Prefetcher::new(0);
        for &offset in &[40_000u64, 8_000, 90_000, 4_000, 0, 500_000] {
            assert_eq!(
                p.read(&file, offset, 100, file.len()).unwrap(),
                expect(offset, 100)
            );
        }
        assert_eq!(file.read_bytes.load(Ordering::Relaxed), 600);
        // A fixed size reads ahead forward only, and never past the limit.
        let mut fixed = Prefetcher::new(64 << 10);
        let file = CountingFile::default();
        assert_eq!(fixed.read(&file, 1000, 10, 5000).unwrap(), expect(1000, 10));
        assert_eq!(fixed.read(&file, 3000, 10, 5000).unwrap(), expect(3000, 10));
        assert_eq!(
            file.reads.load(Ordering::Relaxed),
            1,
            "served from the window"
        );
        assert_eq!(file.read_bytes.load(Ordering::Relaxed), 4000);
        assert_eq!(fixed.read(&file, 500, 10, 5000).unwrap(), expect(500, 10));
        assert_eq!(
            file.read_bytes.load(Ordering::Relaxed),
            4010,
            "backward: no readahead"
        );
    }
}
