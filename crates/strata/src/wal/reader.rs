//! Reads records back from a log file, telling a torn tail from corruption.
//!
//! A crash mid-write leaves an incomplete record at the end of the log: a header
//! cut by end of file, a fragment whose payload runs past the end, a record whose
//! LAST fragment never arrived, a final fragment whose checksum fails, or a tail
//! that is all zeros from some point on (space the file system extended or
//! preallocated but the data never reached). These are a *torn tail*: the reader
//! stops cleanly and reports where the incomplete record starts. Anything wrong that
//! is followed by more data is *corruption*: an error, because silently skipping it
//! would leave a hole in the history.

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

/// Reads a log file record by record, one 32 KiB block `read_at` at a time.
#[derive(Debug)]
pub struct LogReader {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    file_len: u64,
    /// The current block; shorter than `BLOCK_SIZE` only for the file's last block.
    block: Bytes,
    /// File offset of `block`; a multiple of `BLOCK_SIZE`.
    block_start: u64,
    /// Read position inside `block`; `<= block.len()`.
    pos: usize,
    /// The record being assembled from FIRST/MIDDLE/LAST fragments.
    record: Vec<u8>,
    /// File offset just past the last whole record returned (0 before one).
    records_end: u64,
    torn_tail: Option<TornTail>,
    /// How reading ended: `Some(Ok(()))` at a clean end or torn tail, `Some(Err)`
    /// after corruption or an I/O error, which every later call returns again.
    finished: Option<Result<()>>,
    /// Where the file's all-zero suffix starts (`file_len` if its last byte is
    /// nonzero). Computed the first time a fragment is bad, since only then does
    /// it matter.
    zero_tail_start: Option<u64>,
    /// After [`skip_past_damage`](Self::skip_past_damage): fragments that
    /// continue a record whose start was lost are skipped, not errors, until
    /// a record starts.
    resyncing: bool,
    /// Where the fragment that just failed claims to end inside the block
    /// (its length field fit the block), or where the fragment that broke the
    /// record's order ended: reading past damage resumes there first.
    damaged_end: Option<usize>,
}

/// Where a whole record's payload is.
enum Payload {
    /// A FULL fragment: this range of the current block, returned without a copy.
    InBlock(usize, usize),
    /// Assembled from FIRST, MIDDLE*, LAST in `LogReader::record`.
    Assembled,
}

/// What the next header in the block turned out to be.
enum Step {
    /// A fragment that passed its checksum: type, payload range within the block,
    /// file offset of its header.
    Fragment(FragmentType, usize, usize, u64),
    /// The block is used up; move to the next one.
    NextBlock,
    /// Clean end of data, or a torn tail (recorded in `torn_tail`).
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
            records_end: 0,
            torn_tail: None,
            finished: None,
            zero_tail_start: None,
            resyncing: false,
            damaged_end: None,
        }
    }

    /// After `read_record` returned a corruption, goes on reading past it:
    /// right after the damaged fragment when its length field placed its end
    /// inside the block (a fragment found there counts only if its own
    /// checksum holds, so a damaged length costs at worst more skips), else at
    /// the next 32 KiB block. Fragments that continue a record whose start was
    /// lost are skipped, and reading resumes at the first record that starts.
    /// Used by recovery to count the records after damage (point-in-time) or
    /// to replay them (skip-any-corrupted-records).
    pub fn skip_past_damage(&mut self) -> Result<()> {
        self.finished = None;
        self.record.clear();
        self.resyncing = true;
        match self.damaged_end.take() {
            Some(end) if end > self.pos && end < self.block.len() => {
                self.pos = end;
                Ok(())
            }
            _ => self.load_next_block(),
        }
    }

    /// Reads a log held in memory (tools, tests, fuzzing); `path` names it in errors.
    pub fn from_bytes(bytes: Bytes, path: &Path) -> Self {
        LogReader::new(Arc::new(MemLog(bytes)), path)
    }

    /// Set after `read_record` returned `Ok(None)` because the log ends with an
    /// incomplete record.
    pub fn torn_tail(&self) -> Option<&TornTail> {
        self.torn_tail.as_ref()
    }

    /// The file offset just past the last whole record read so far: where
    /// the valid data of a log that ended cleanly ends.
    pub fn records_end(&self) -> u64 {
        self.records_end
    }

    /// The next record and the file offset where it starts, or `None` at the end
    /// of the data (check [`torn_tail`](Self::torn_tail)). The payload is valid
    /// until the next call. After an error, every later call returns it again.
    pub fn read_record(&mut self) -> Result<Option<(u64, &[u8])>> {
        if let Some(end) = &self.finished {
            return end.clone().map(|()| None);
        }
        let assembled = self.assemble();
        if let Ok(Some(_)) = &assembled {
            // The read position is just past the record's last fragment.
            self.records_end = self.block_start + self.pos as u64;
        }
        match assembled {
            Ok(Some((offset, Payload::InBlock(start, end)))) => {
                let payload = self.block.get(start..end).unwrap_or_default();
                Ok(Some((offset, payload)))
            }
            Ok(Some((offset, Payload::Assembled))) => Ok(Some((offset, &self.record[..]))),
            Ok(None) => {
                self.finished = Some(Ok(()));
                Ok(None)
            }
            Err(e) => {
                self.finished = Some(Err(e.clone()));
                Err(e)
            }
        }
    }

    /// Reads fragments until a record is whole; returns its offset and payload, or
    /// `None` at the end of the data.
    fn assemble(&mut self) -> Result<Option<(u64, Payload)>> {
        self.record.clear();
        // File offset of the first fragment of the record being assembled.
        let mut record_start: Option<u64> = None;
        loop {
            let (fragment_type, start, end, offset) = match self.next_fragment(record_start)? {
                Step::Fragment(t, s, e, o) => (t, s, e, o),
                Step::NextBlock => {
                    self.load_next_block()?;
                    continue;
                }
                Step::End => return Ok(None),
            };
            // A whole fragment out of order: reading past it resumes after it.
            self.damaged_end = Some(self.pos);
            let corrupt = |reason: &str| Error::corruption(&self.path, offset, reason);
            match (fragment_type, record_start) {
                (FragmentType::Full, None) => {
                    self.resyncing = false;
                    return Ok(Some((offset, Payload::InBlock(start, end))));
                }
                (FragmentType::First, None) => {
                    self.resyncing = false;
                    record_start = Some(offset);
                    self.append_payload(start, end);
                }
                (FragmentType::Middle | FragmentType::Last, Some(first)) => {
                    if self.record.len() + (end - start) > MAX_RECORD_SIZE {
                        return Err(corrupt("record larger than 1 GiB"));
                    }
                    self.append_payload(start, end);
                    if fragment_type == FragmentType::Last {
                        return Ok(Some((first, Payload::Assembled)));
                    }
                }
                (FragmentType::Full | FragmentType::First, Some(_)) => {
                    return Err(corrupt("a new record starts before the previous one ended"));
                }
                (FragmentType::Middle | FragmentType::Last, None) if self.resyncing => {}
                (FragmentType::Middle | FragmentType::Last, None) => {
                    return Err(corrupt("a record continues without its first fragment"));
                }
            }
        }
    }

    fn append_payload(&mut self, start: usize, end: usize) {
        self.record
            .extend_from_slice(self.block.get(start..end).unwrap_or_default());
    }

    /// Decodes the fragment at the read position, classifying every way the data
    /// can end or go wrong. Advances past the fragment only when it is good.
    fn next_fragment(&mut self, record_start: Option<u64>) -> Result<Step> {
        self.damaged_end = None;
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
        let stored_crc = u32::from_le_bytes([c0, c1, c2, c3]);
        let len = usize::from(u16::from_le_bytes([l0, l1]));
        let start = self.pos + HEADER_SIZE;
        let end = start + len;
        let defect = if type_code == 0 && len == 0 && stored_crc == 0 {
            "zero-filled fragment header".to_string()
        } else {
            match self.block.get(start..end) {
                None if end > BLOCK_SIZE => format!("fragment length {len} runs past its block"),
                None => format!("fragment length {len} runs past the end of the file"),
                Some(payload) if fragment_checksum(type_code, payload) != stored_crc => {
                    self.damaged_end = Some(end);
                    "fragment checksum mismatch".to_string()
                }
                Some(_) => {
                    let Some(fragment_type) = FragmentType::from_code(type_code) else {
                        self.damaged_end = Some(end);
                        // A valid checksum over an unknown type was written so on
                        // purpose, by a newer or foreign writer: never a torn write.
                        return Err(Error::corruption(
                            &self.path,
                            here,
                            format!("unknown fragment type {type_code}"),
                        ));
                    };
                    self.pos = end;
                    return Ok(Step::Fragment(fragment_type, start, end, here));
                }
            }
        };
        if self.explained_by_crash(type_code, stored_crc, len)? {
            return Ok(self.tear(tail_offset, &format!("{defect} at offset {here}")));
        }
        Err(Error::corruption(&self.path, here, defect))
    }

    /// Whether the bad fragment at the read position is what a crash leaves: the
    /// last thing in the file, its bytes cut by the end of the file or running
    /// into an all-zero tail. Anything with other data after it is damage.
    fn explained_by_crash(&mut self, type_code: u8, stored_crc: u32, len: usize) -> Result<bool> {
        // The writer keeps every fragment inside its block, so a length crossing
        // the block boundary was never written: no crash explains it.
        if self.pos + HEADER_SIZE + len > BLOCK_SIZE {
            return Ok(false);
        }
        let here = self.block_start + self.pos as u64;
        let claimed_end = here + (HEADER_SIZE + len) as u64;
        let at_end = claimed_end >= self.file_len || self.zero_tail_start()? < claimed_end;
        // A damaged length field can also make a fragment look cut; then its
        // checksum fits a nearby length and whole data follows, so it is damage.
        Ok(at_end && !self.length_looks_damaged(type_code, stored_crc, len))
    }

    fn tear(&mut self, offset: u64, reason: &str) -> Step {
        self.torn_tail = Some(TornTail {
            offset,
            reason: reason.to_string(),
        });
        Step::End
    }

    /// True if the fragment's checksum matches a payload whose length differs from
    /// the stored one in a single byte: the length field was damaged and the data
    /// is intact (corruption), rather than the write cut short by a crash (torn
    /// tail). Called only for a bad fragment at the end of the data; costs at most
    /// two checksum passes over the fragment's bytes in this block.
    fn length_looks_damaged(&self, type_code: u8, stored_crc: u32, claimed: usize) -> bool {
        let available = self.block.get(self.pos + HEADER_SIZE..).unwrap_or_default();
        let (high, low) = (claimed & 0xff00, claimed & 0xff);
        let matches = |lengths: &mut dyn Iterator<Item = usize>| {
            prefix_checksum_matches(available, type_code, stored_crc, claimed, lengths)
        };
        matches(&mut (0..256).map(|x| high | x)) || matches(&mut (0..256).map(|x| x << 8 | low))
    }

    fn load_next_block(&mut self) -> Result<()> {
        self.block_start += self.block.len() as u64;
        let len = (self.file_len.saturating_sub(self.block_start)).min(BLOCK_SIZE as u64) as usize;
        self.block = self.read_exact(self.block_start, len)?;
        self.pos = 0;
        Ok(())
    }

    /// `read_at`, checked: a file returning fewer bytes than asked must not make the
    /// reader spin on an empty block.
    fn read_exact(&self, offset: u64, len: usize) -> Result<Bytes> {
        if len == 0 {
            return Ok(Bytes::new());
        }
        let bytes = self.file.read_at(offset, len)?;
        if bytes.len() != len {
            return Err(Error::io(
                "read",
                &self.path,
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "asked for {len} bytes at offset {offset}, got {}",
                        bytes.len()
                    ),
                ),
            ));
        }
        Ok(bytes)
    }

    /// The offset from which every byte to the end of the file is zero, scanning
    /// backwards one block at a time (once per reader).
    fn zero_tail_start(&mut self) -> Result<u64> {
        if let Some(start) = self.zero_tail_start {
            return Ok(start);
        }
        let mut end = self.file_len;
        let start = loop {
            if end == 0 {
                break 0;
            }
            let chunk_start = (end - 1) / BLOCK_SIZE as u64 * BLOCK_SIZE as u64;
            let chunk = self.read_exact(chunk_start, (end - chunk_start) as usize)?;
            let nonzero_end = end_of_nonzero(&chunk);
            if nonzero_end > 0 {
                break chunk_start + nonzero_end as u64;
            }
            end = chunk_start;
        };
        self.zero_tail_start = Some(start);
        Ok(start)
    }
}

/// Whether a prefix of `bytes` of one of `lengths` (ascending), other than
/// `claimed`, has the fragment checksum `stored_crc`. Each prefix's crc extends the
/// previous one, so the cost is one pass over `bytes`.
fn prefix_checksum_matches(
    bytes: &[u8],
    type_code: u8,
    stored_crc: u32,
    claimed: usize,
    lengths: &mut dyn Iterator<Item = usize>,
) -> bool {
    let mut crc = crc32c::crc32c(&[type_code]);
    let mut done = 0;
    for len in lengths.take_while(|&len| len <= bytes.len()) {
        crc = crc32c::crc32c_append(crc, bytes.get(done..len).unwrap_or_default());
        done = len;
        if len != claimed && crate::checksum::mask_crc(crc) == stored_crc {
            return true;
        }
    }
    false
}

/// The index just past the last nonzero byte of `bytes` (0 if all are zero).
/// Compares 64-byte runs against zeros first: a zero tail can be megabytes of
/// preallocated space, and `memcmp` stays fast even in unoptimised builds.
fn end_of_nonzero(bytes: &[u8]) -> usize {
    const ZEROS: [u8; 64] = [0; 64];
    let mut end = bytes.len();
    while end > 0 {
        let start = end.saturating_sub(ZEROS.len());
        let run = bytes.get(start..end).unwrap_or_default();
        if Some(run) != ZEROS.get(..run.len()) {
            return start + run.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        }
        end = start;
    }
    0
}

/// Reads a whole record stream from an in-memory buffer (tools and fuzzing): the
/// whole records, then how the data ended.
pub fn read_all_records(bytes: Bytes) -> (Vec<Vec<u8>>, Result<Option<TornTail>>) {
    let mut reader = LogReader::from_bytes(bytes, Path::new("memory"));
    let mut records = Vec::new();
    loop {
        match reader.read_record() {
            Ok(Some((_, payload))) => records.push(payload.to_vec()),
            Ok(None) => return (records, Ok(reader.torn_tail().cloned())),
            Err(e) => return (records, Err(e)),
        }
    }
}

/// Reads a record stream from an in-memory buffer as
/// `kSkipAnyCorruptedRecords` recovery does (tools and fuzzing): every whole
/// record, going on past each corruption at the next block; returns the
/// records and how many corruptions were skipped, or the first error that is
/// not a corruption.
pub fn read_records_skipping_damage(bytes: Bytes) -> Result<(Vec<Vec<u8>>, usize)> {
    let mut reader = LogReader::from_bytes(bytes, Path::new("memory"));
    let (mut records, mut skipped) = (Vec::new(), 0);
    loop {
        match reader.read_record() {
            Ok(Some((_, payload))) => records.push(payload.to_vec()),
            Ok(None) => return Ok((records, skipped)),
            Err(e) if e.is_corruption() => {
                skipped += 1;
                reader.skip_past_damage()?;
            }
            Err(e) => return Err(e),
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
