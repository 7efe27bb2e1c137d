//! Reads one blob file: opens it only when its header and footer check out,
//! fetches a value by reference in one read, and walks every record for
//! dumps and verification. Layout: `format.rs`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::blob::format::{
    BlobFooter, BlobHeader, BlobRef, RecordHeader, BLOB_FOOTER_LEN, BLOB_HEADER_LEN,
    BLOB_RECORD_HEADER_LEN,
};
use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;

/// An open, complete blob file.
#[derive(Debug)]
pub struct BlobFileReader {
    file: Arc<dyn RandomAccessFile>,
    pub(crate) path: PathBuf,
    header: BlobHeader,
    footer: BlobFooter,
    /// Where the footer starts: records lie in `BLOB_HEADER_LEN..records_end`.
    records_end: u64,
}

/// One record, as [`BlobFileReader::records`] yields it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobRecord {
    /// Where the record starts.
    pub offset: u64,
    /// The user key it was written under.
    pub key: Vec<u8>,
    /// The value, decompressed.
    pub value: Vec<u8>,
    /// How the value was stored.
    pub compression: CompressionType,
    /// The stored (possibly compressed) value length.
    pub stored_len: u64,
}

impl BlobFileReader {
    /// Opens `file` (blob file `path`), checking its header and footer. A
    /// file with no valid footer was never finished and is refused.
    pub fn open(file: Arc<dyn RandomAccessFile>, path: &Path) -> Result<BlobFileReader> {
        let len = file.len();
        let min = (BLOB_HEADER_LEN + BLOB_FOOTER_LEN) as u64;
        if len < min {
            return Err(Error::corruption(
                path,
                0,
                format!("blob file of {len} bytes is shorter than a header and a footer ({min})"),
            ));
        }
        let header = BlobHeader::decode(&file.read_at(0, BLOB_HEADER_LEN)?)
            .map_err(|reason| Error::corruption(path, 0, reason))?;
        let records_end = len - BLOB_FOOTER_LEN as u64;
        let footer = BlobFooter::decode(&file.read_at(records_end, BLOB_FOOTER_LEN)?)
            .map_err(|reason| Error::corruption(path, records_end, reason))?;
        let record_bytes = records_end - BLOB_HEADER_LEN as u64;
        // Every record is at least its header: a count the bytes cannot hold
        // is damage, caught before anything trusts it.
        if footer.value_bytes > record_bytes
            || footer.record_count > record_bytes / BLOB_RECORD_HEADER_LEN as u64
        {
            return Err(Error::corruption(
                path,
                records_end,
                format!(
                    "footer claims {} records of {} value bytes in {record_bytes} bytes of records",
                    footer.record_count, footer.value_bytes
                ),
            ));
        }
        Ok(BlobFileReader {
            file,
            path: path.to_path_buf(),
            header,
            footer,
            records_end,
        })
    }

    /// What the header says.
    pub fn header(&self) -> BlobHeader {
        self.header
    }

    /// What the footer says.
    pub fn footer(&self) -> BlobFooter {
        self.footer
    }

    /// The file's size.
    pub fn file_size(&self) -> u64 {
        self.records_end + BLOB_FOOTER_LEN as u64
    }

    /// The value `reference` points at, which was written under `key`. Reads
    /// the whole record at once; the record must agree with the reference
    /// (key, stored length, compression) and its header checksum must hold.
    /// With `verify_checksums` the data checksum is checked too.
    pub fn get(&self, key: &[u8], reference: &BlobRef, verify_checksums: bool) -> Result<Vec<u8>> {
        let offset = reference.offset;
        let corrupt = |reason: String| Error::corruption(&self.path, offset, reason);
        let record_len = (BLOB_RECORD_HEADER_LEN as u64)
            .checked_add(key.len() as u64)
            .and_then(|n| n.checked_add(reference.stored_len));
        let end = record_len.and_then(|n| n.checked_add(offset));
        let (Some(record_len), Some(end)) = (record_len, end) else {
            return Err(corrupt("blob reference overflows".into()));
        };
        if offset < BLOB_HEADER_LEN as u64 || end > self.records_end {
            return Err(corrupt(format!(
                "blob reference to {} bytes at offset {offset} lies outside the records \
                 ({BLOB_HEADER_LEN}..{})",
                record_len, self.records_end
            )));
        }
        let len = usize::try_from(record_len)
            .map_err(|_| corrupt(format!("blob record of {record_len} bytes is too large")))?;
        let bytes = self.file.read_at(offset, len)?;
        if bytes.len() != len {
            return Err(corrupt(format!(
                "read {} bytes of a {len}-byte blob record",
                bytes.len()
            )));
        }
        let header = RecordHeader::decode(&bytes).map_err(corrupt)?;
        if header.key_len as usize != key.len()
            || header.stored_len != reference.stored_len
            || header.compression.code() != reference.compression.code()
        {
            return Err(corrupt(format!(
                "blob record ({} key bytes, {} stored value bytes, {}) disagrees with its \
                 reference ({} key bytes, {} stored value bytes, {})",
                header.key_len,
                header.stored_len,
                header.compression.name(),
                key.len(),
                reference.stored_len,
                reference.compression.name()
            )));
        }
        let (stored_key, stored) = bytes[BLOB_RECORD_HEADER_LEN..].split_at(key.len());
        if stored_key != key {
            return Err(corrupt("blob record belongs to another key".into()));
        }
        if verify_checksums && !header.data_matches(stored_key, stored) {
            return Err(corrupt("blob record data checksum mismatch".into()));
        }
        self.decode_value(offset, header.compression, stored)
    }

    /// Every record in file order, each fully checked, then a check that the
    /// records fill the file exactly and match the footer's counts. Stops at
    /// the first error.
    pub fn records(&self) -> BlobRecords<'_> {
        BlobRecords {
            reader: self,
            offset: BLOB_HEADER_LEN as u64,
            seen: BlobFooter::default(),
            done: false,
        }
    }

    /// Checks every record and the footer's counts.
    pub fn verify(&self) -> Result<()> {
        for record in self.records() {
            record?;
        }
        Ok(())
    }

    fn decode_value(
        &self,
        offset: u64,
        compression: CompressionType,
        stored: &[u8],
    ) -> Result<Vec<u8>> {
        if compression == CompressionType::None {
            return Ok(stored.to_vec());
        }
        compression.decompress(stored).map_err(|reason| {
            Error::corruption(&self.path, offset, format!("blob value: {reason}"))
        })
    }

    /// The record at `offset`, and where the next one starts.
    fn record_at(&self, offset: u64) -> Result<(BlobRecord, u64)> {
        let corrupt = |reason: String| Error::corruption(&self.path, offset, reason);
        let left = self.records_end - offset;
        if left < BLOB_RECORD_HEADER_LEN as u64 {
            return Err(corrupt(format!(
                "{left} bytes before the footer are too few for a blob record"
            )));
        }
        let header = RecordHeader::decode(&self.file.read_at(offset, BLOB_RECORD_HEADER_LEN)?)
            .map_err(corrupt)?;
        let record_len = header.record_len();
        if record_len > left {
            return Err(corrupt(format!(
                "blob record of {record_len} bytes runs past the footer ({left} bytes left)"
            )));
        }
        // `record_len <= left`, which fits the file, so the body's length
        // fits in memory only if the file does; mapped or read, it is bounded.
        let body_len = usize::try_from(record_len - BLOB_RECORD_HEADER_LEN as u64)
            .map_err(|_| corrupt("blob record too large for this machine".into()))?;
        let body = self
            .file
            .read_at(offset + BLOB_RECORD_HEADER_LEN as u64, body_len)?;
        let Some((key, stored)) = body.split_at_checked(header.key_len as usize) else {
            return Err(corrupt(format!(
                "read {} bytes of a blob record body of {body_len}",
                body.len()
            )));
        };
        if !header.data_matches(key, stored) {
            return Err(corrupt("blob record data checksum mismatch".into()));
        }
        let value = self.decode_value(offset, header.compression, stored)?;
        let record = BlobRecord {
            offset,
            key: key.to_vec(),
            value,
            compression: header.compression,
            stored_len: header.stored_len,
        };
        Ok((record, offset + record_len))
    }
}

/// Iterator over a blob file's records; see [`BlobFileReader::records`].
#[derive(Debug)]
pub struct BlobRecords<'a> {
    reader: &'a BlobFileReader,
    offset: u64,
    /// Counts of the records read so far, to hold against the footer.
    seen: BlobFooter,
    done: bool,
}

impl Iterator for BlobRecords<'_> {
    type Item = Result<BlobRecord>;

    fn next(&mut self) -> Option<Result<BlobRecord>> {
        if self.done {
            return None;
        }
        if self.offset == self.reader.records_end {
            self.done = true;
            if self.seen != self.reader.footer {
                return Some(Err(Error::corruption(
                    &self.reader.path,
                    self.reader.records_end,
                    format!(
                        "footer counts {} records of {} value bytes, the file holds {} of {}",
                        self.reader.footer.record_count,
                        self.reader.footer.value_bytes,
                        self.seen.record_count,
                        self.seen.value_bytes
                    ),
                )));
            }
            return None;
        }
        match self.reader.record_at(self.offset) {
            Ok((record, next)) => {
                self.offset = next;
                self.seen.record_count += 1;
                self.seen.value_bytes += record.stored_len;
                Some(Ok(record))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
