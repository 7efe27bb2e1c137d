//! Appends records to a log file.

use crate::error::Result;
use crate::fs::WritableFile;
use crate::wal::format::{fragment_checksum, FragmentType, BLOCK_SIZE, HEADER_SIZE};

/// Writes records in the log format. Each record goes to the file in a single
/// `append`, so a group commit costs one write call.
#[derive(Debug)]
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Bytes used in the current block.
    block_offset: usize,
    buffer: Vec<u8>,
}

impl LogWriter {
    /// Writes to a new, empty file.
    pub fn new(file: Box<dyn WritableFile>) -> Self {
        let block_offset = (file.len() % BLOCK_SIZE as u64) as usize;
        LogWriter {
            file,
            block_offset,
            buffer: Vec::new(),
        }
    }

    /// Appends one record (of any length, including empty). The bytes reach the
    /// OS only after [`flush`](Self::flush) or [`sync`](Self::sync).
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        self.buffer.clear();
        let mut rest = payload;
        let mut first = true;
        loop {
            let left_in_block = BLOCK_SIZE - self.block_offset;
            if left_in_block < HEADER_SIZE {
                // No header fits: pad the block with zeros and start the next.
                self.buffer
                    .extend_from_slice(&[0u8; HEADER_SIZE][..left_in_block]);
                self.block_offset = 0;
                continue;
            }
            let room = left_in_block - HEADER_SIZE;
            let len = rest.len().min(room);
            let last = len == rest.len();
            let fragment_type = match (first, last) {
                (true, true) => FragmentType::Full,
                (true, false) => FragmentType::First,
                (false, false) => FragmentType::Middle,
                (false, true) => FragmentType::Last,
            } as u8;
            let (chunk, tail) = rest.split_at(len);
            let crc = fragment_checksum(fragment_type, chunk);
            self.buffer.extend_from_slice(&crc.to_le_bytes());
            self.buffer.extend_from_slice(&(len as u16).to_le_bytes());
            self.buffer.push(fragment_type);
            self.buffer.extend_from_slice(chunk);
            self.block_offset += HEADER_SIZE + len;
            rest = tail;
            first = false;
            if last {
                break;
            }
        }
        self.file.append(&self.buffer)
    }

    /// Hands every appended byte to the OS (survives a process kill).
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Makes every appended byte durable.
    pub fn sync(&mut self) -> Result<()> {
        self.file.sync()
    }

    /// Size of the log so far.
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.file.is_empty()
    }
}
