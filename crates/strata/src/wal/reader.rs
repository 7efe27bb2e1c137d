//! Reads records back from a log file, telling a torn tail from corruption.
//!
//! A crash mid-write leaves an incomplete record at the end of the log: a header
//! cut by end of file, a fragment whose payload runs past the end, a record whose
//! LAST fragment never arrived, a final fragment whose checksum fails, or a
//! zero-filled tail. These are a *torn tail*: the reader stops cleanly and reports
//! where. Anything wrong that is followed by more data is *corruption*: an error,
//! because silently skipping it would leave a hole in the history.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::wal::format::{
    fragment_checksum, FragmentType, BLOCK_SIZE, HEADER_SIZE, MAX_RECORD_SIZE,
};

/// Where and why a log ended with an incomplete record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// File offset where the incomplete record starts; everything before it was
    /// read as whole records.
    pub offset: u64,
    /// What was incomplete.
    pub reason: String,
}

/// Reads a log file record by record.
#[derive(Debug)]
pub struct LogReader {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    file_len: u64,
    /// The current block; shorter than `BLOCK_SIZE` only for the file's last block.
    block: Bytes,
    /// File offset of `block`.
    block_start: u64,
    /// Read position inside `block`.
    pos: usize,
    record: Vec<u8>,
    torn_tail: Option<TornTail>,
    done: bool,
}

enum Step {
    /// A fragment's payload range within the block, its type and file offset.
    Fragment(FragmentType, usize, usize, u64),
    /// The block is used up; move to the next one.
    NextBlock,
    /// Clean end of data, or a torn tail (recorded).
    End,
}

impl LogReader {
    /// Reads `file`; `path` names it in errors.
    pub fn new(file: Arc<dyn RandomAccessFile>, path: &Path) -> Self {
        let file_len = file.len();
        LogReader {
            file,
            path: path.to_path_buf(),
            file_len,
            block: Bytes::new(),
            block_start: 0,
            pos: 0,
            record: Vec::new(),
            torn_tail: None,
            done: false,
        }
    }

    /// Set after `read_record` returned `Ok(None)` because the log ends with an
    /// incomplete record.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn_tail.as_ref()
    }

    /// The next record and the file offset where it starts, or `None` at the end
    /// of the data (check [`torn_tail`](Self::torn_tail)). The payload is valid
    /// until the next call.
    pub fn read_record(&mut self) -> Result<Option<(u64, &[u8])>> {
        if self.done {
            return Ok(None);
        }
        self.record.clear();
        // File offset of the first fragment of the record being assembled.
        let mut record_start: Option<u64> = None;
        loop {
            let step = match self.next_fragment(record_start) {
                Ok(step) => step,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            let (fragment_type, start, end, offset) = match step {
                Step::Fragment(t, s, e, o) => (t, s, e, o),
                Step::NextBlock => {
                    self.load_next_block()?;
                    continue;
                }
                Step::End => {
                    self.done = true;
                    return Ok(None);
                }
            };
            let corrupt = |reason: &str| Error::corruption(&self.path, offset, reason.to_string());
            match (fragment_type, record_start) {
                (FragmentType::Full, None) => {
                    return Ok(Some((offset, &self.block[start..end])));
                }
                (FragmentType::First, None) => {
                    record_start = Some(offset);
                    self.record.extend_from_slice(&self.block[start..end]);
                }
                (FragmentType::Middle | FragmentType::Last, Some(_)) => {
                    if self.record.len() + (end - start) > MAX_RECORD_SIZE {
                        self.done = true;
                        return Err(corrupt("record larger than 1 GiB"));
                    }
                    self.record.extend_from_slice(&self.block[start..end]);
                    if fragment_type == FragmentType::Last {
                        return Ok(record_start.map(|s| (s, &self.record[..])));
                    }
                }
                (FragmentType::Full | FragmentType::First, Some(_)) => {
                    self.done = true;
                    return Err(corrupt("a new record starts before the previous one ended"));
                }
                (FragmentType::Middle | FragmentType::Last, None) => {
                    self.done = true;
                    return Err(corrupt("a record continues without its first fragment"));
                }
            }
        }
    }

    fn tear(&mut self, offset: u64, reason: &str) -> Step {
        self.torn_tail = Some(TornTail {
            offset,
            reason: reason.to_string(),
        });
        Step::End
    }

    /// Decodes the fragment at the read position, classifying every way the data
    /// can end or go wrong.
    fn next_fragment(&mut self, record_start: Option<u64>) -> Result<Step> {
        let here = self.block_start + self.pos as u64;
        let tail_offset = record_start.unwrap_or(here);
        let rest = self.block.get(self.pos..).unwrap_or_default();
        let &[c0, c1, c2, c3, l0, l1, type_code, ..] = rest else {
            // Fewer bytes than a header: block padding, or the end of the file.
            let more_blocks = self.block_start + (self.block.len() as u64) < self.file_len;
            let zeros = rest.iter().all(|&b| b == 0);
            if more_blocks {
                if !zeros {
                    return Err(Error::corruption(&self.path, here, "nonzero block padding"));
                }
                return Ok(Step::NextBlock);
            }
            if !zeros {
                return Ok(self.tear(tail_offset, "fragment header cut by end of file"));
            }
            if record_start.is_some() {
                return Ok(self.tear(tail_offset, "record ends before its last fragment"));
            }
            return Ok(Step::End);
        };
        let last_block = self.block_start + self.block.len() as u64 >= self.file_len;
        let stored_crc = u32::from_le_bytes([c0, c1, c2, c3]);
        let len = usize::from(u16::from_le_bytes([l0, l1]));
        if type_code == 0 && len == 0 && stored_crc == 0 {
            return if self.zeros_to_end_of_file(here)? {
                Ok(self.tear(tail_offset, "zero-filled tail"))
            } else {
                Err(Error::corruption(
                    &self.path,
                    here,
                    "zeroed fragment followed by data",
                ))
            };
        }
        let start = self.pos + HEADER_SIZE;
        let end = start + len;
        if end > self.block.len() {
            // A write cut by a crash looks like this; so does a damaged length
            // field, except that the checksum then fits a nearby length.
            if last_block && !self.length_looks_damaged(type_code, stored_crc, len) {
                return Ok(self.tear(tail_offset, "fragment runs past end of file"));
            }
            return Err(Error::corruption(
                &self.path,
                here,
                format!("fragment length {len} runs past its block"),
            ));
        }
        let payload = &self.block[start..end];
        if fragment_checksum(type_code, payload) != stored_crc {
            if self.block_start + end as u64 == self.file_len {
                return Ok(self.tear(tail_offset, "checksum mismatch in the final fragment"));
            }
            return Err(Error::corruption(
                &self.path,
                here,
                "fragment checksum mismatch",
            ));
        }
        let Some(fragment_type) = FragmentType::from_code(type_code) else {
            return Err(Error::corruption(
                &self.path,
                here,
                format!("unknown fragment type {type_code}"),
            ));
        };
        self.pos = end;
        Ok(Step::Fragment(fragment_type, start, end, here))
    }

    /// True if the fragment's checksum matches a shorter payload whose length
    /// differs from the stored one in a single byte: the length field was damaged
    /// and the data is intact (corruption), rather than the write cut short by a
    /// crash (torn tail). Called only when a fragment claims to run past the end
    /// of the file; costs one checksum pass over the available payload.
    fn length_looks_damaged(&self, type_code: u8, stored_crc: u32, claimed: usize) -> bool {
        let available = self.block.get(self.pos + HEADER_SIZE..).unwrap_or_default();
        let mut candidates: Vec<usize> = (0..256usize)
            .flat_map(|x| [(claimed & 0xff00) | x, (x << 8) | (claimed & 0xff)])
            .filter(|&len| len != claimed && len <= available.len())
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let mut crc = crc32c::crc32c(&[type_code]);
        let mut done = 0;
        candidates.into_iter().any(|len| {
            crc = crc32c::crc32c_append(crc, &available[done..len]);
            done = len;
            crate::checksum::mask_crc(crc) == stored_crc
        })
    }

    fn load_next_block(&mut self) -> Result<()> {
        self.block_start += self.block.len() as u64;
        let len = (self.file_len.saturating_sub(self.block_start)).min(BLOCK_SIZE as u64) as usize;
        self.block = if len == 0 {
            Bytes::new()
        } else {
            self.file.read_at(self.block_start, len)?
        };
        self.pos = 0;
        Ok(())
    }

    /// True if every byte from `offset` to the end of the file is zero.
    fn zeros_to_end_of_file(&self, offset: u64) -> Result<bool> {
        let mut at = offset;
        while at < self.file_len {
            let n = (self.file_len - at).min(BLOCK_SIZE as u64) as usize;
            let chunk = self.file.read_at(at, n)?;
            if chunk.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at += n as u64;
        }
        Ok(true)
    }
}

/// Reads a whole record stream from an in-memory buffer (tools and fuzzing).
pub fn read_all_records(bytes: Bytes) -> (Vec<Vec<u8>>, Result<Option<TornTail>>) {
    let mut reader = LogReader::new(Arc::new(MemLog(bytes)), Path::new("memory"));
    let mut records = Vec::new();
    loop {
        match reader.read_record() {
            Ok(Some((_, payload))) => records.push(payload.to_vec()),
            Ok(None) => return (records, Ok(reader.torn_tail().cloned())),
            Err(e) => return (records, Err(e)),
        }
    }
}

/// A log held in memory.
#[derive(Debug)]
struct MemLog(Bytes);

impl RandomAccessFile for MemLog {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(len) {
            Some(end) if end <= self.0.len() => Ok(self.0.slice(start..end)),
            _ => Err(Error::io(
                "read",
                "memory",
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}
