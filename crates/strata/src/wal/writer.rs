//! Appends records to a log file.

use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::wal::format::{
    fragment_checksum, FragmentType, BLOCK_SIZE, HEADER_SIZE, MAX_RECORD_SIZE,
};

/// Writes records in the log format. Each record goes to the file in a single
/// `append`, so a group commit costs one write call, and a crash tears at most the
/// record being written.
#[derive(Debug)]
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Bytes used in the current block. Invariant: `< BLOCK_SIZE`, and equal to
    /// `file.len() % BLOCK_SIZE` after every successful `add_record`.
    block_offset: usize,
    /// Reused between records: the fragments of one record, built before the write.
    buffer: Vec<u8>,
}

impl LogWriter {
    /// Appends after the file's current contents: 0 bytes for a new file, or the
    /// length of an existing log being resumed. The block offset follows from that
    /// length, so fragments stay inside blocks either way.
    pub fn new(file: Box<dyn WritableFile>) -> Self {
        let block_offset = (file.len() % BLOCK_SIZE as u64) as usize;
        LogWriter {
            file,
            block_offset,
            buffer: Vec::new(),
        }
    }

    /// Appends one record (of any length up to 1 GiB, including empty) with one
    /// `append` call. The bytes reach the OS only after [`flush`](Self::flush) or
    /// [`sync`](Self::sync).
    ///
    /// If the append fails, the file may hold part of the record: the log must not
    /// be written further (the engine stops accepting writes).
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        if payload.len() > MAX_RECORD_SIZE {
            return Err(Error::invalid_argument(
                "record",
                format!(
                    "a log record holds at most {MAX_RECORD_SIZE} bytes, got {}",
                    payload.len()
                ),
            ));
        }
        let block_offset = self.encode_fragments(payload);
        self.file.append(&self.buffer)?;
        // Committed only once the bytes went out, so a failed append that wrote
        // nothing leaves the writer consistent with the file.
        self.block_offset = block_offset;
        Ok(())
    }

    /// Fills `buffer` with the fragments of `payload` (and any block padding before
    /// them), starting at the current block offset; returns the block offset after.
    fn encode_fragments(&mut self, payload: &[u8]) -> usize {
        let mut block_offset = self.block_offset;
        self.buffer.clear();
        // Payload, one header per block touched, and at most one padding.
        self.buffer.reserve(
            payload.len() + (payload.len() / (BLOCK_SIZE - HEADER_SIZE) + 2) * HEADER_SIZE,
        );
        let mut rest = payload;
        let mut first = true;
        loop {
            let left_in_block = BLOCK_SIZE - block_offset;
            if left_in_block < HEADER_SIZE {
                // No header fits: pad the block with zeros and start the next.
                self.buffer.resize(self.buffer.len() + left_in_block, 0);
                block_offset = 0;
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
            // `len <= BLOCK_SIZE - HEADER_SIZE`, which fits in 16 bits.
            self.buffer.extend_from_slice(&(len as u16).to_le_bytes());
            self.buffer.push(fragment_type);
            self.buffer.extend_from_slice(chunk);
            block_offset += HEADER_SIZE + len;
            rest = tail;
            first = false;
            if last {
                // A block filled exactly leaves offset BLOCK_SIZE: the next record
                // starts the next block with no padding.
                return block_offset % BLOCK_SIZE;
            }
        }
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

    /// Gives the file back, e.g. to close it after a final sync.
    pub fn into_file(self) -> Box<dyn WritableFile> {
        self.file
    }
}
