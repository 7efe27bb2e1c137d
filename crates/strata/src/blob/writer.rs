//! Writes one blob file: the header, one record per value, and, last, the
//! footer, then syncs it. Layout: `format.rs`.

use crate::blob::format::{
    BlobFooter, BlobHeader, BlobRef, RecordHeader, BLOB_HEADER_LEN, BLOB_RECORD_HEADER_LEN,
};
use crate::compression::CompressionType;
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::write::batch::MAX_KEY_SIZE;

/// What [`BlobFileWriter::finish`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltBlobFile {
    /// The file's number.
    pub file_number: u64,
    /// Records written.
    pub record_count: u64,
    /// Sum of the records' stored value lengths.
    pub value_bytes: u64,
    /// Size of the file in bytes, footer included.
    pub file_size: u64,
}

impl BuiltBlobFile {
    /// Bytes of the records (headers, keys and stored values): the file
    /// less its header and footer.
    pub fn record_bytes(&self) -> u64 {
        self.file_size
            .saturating_sub((BLOB_HEADER_LEN + crate::blob::format::BLOB_FOOTER_LEN) as u64)
    }
}

/// Builds one blob file. [`add`](Self::add) each value, keeping the
/// reference it returns, then [`finish`](Self::finish). A writer dropped
/// without `finish` leaves a file with no footer, which readers refuse.
#[derive(Debug)]
pub struct BlobFileWriter {
    file: Box<dyn WritableFile>,
    file_number: u64,
    compression: CompressionType,
    /// Bytes written so far: the next record's offset.
    offset: u64,
    footer: BlobFooter,
    /// Reused for each compressed value.
    scratch: Vec<u8>,
}

impl BlobFileWriter {
    /// Starts blob file `file_number`, already created as `file`, for a
    /// family's values, writing its header.
    pub fn new(
        mut file: Box<dyn WritableFile>,
        file_number: u64,
        column_family_id: u32,
        compression: CompressionType,
    ) -> Result<BlobFileWriter> {
        let header = BlobHeader {
            column_family_id,
            compression,
        };
        file.append(&header.encode())?;
        Ok(BlobFileWriter {
            file,
            file_number,
            compression,
            offset: BLOB_HEADER_LEN as u64,
            footer: BlobFooter::default(),
            scratch: Vec::new(),
        })
    }

    /// The file's number.
    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    /// Bytes written so far (the file's size without its footer).
    pub fn len(&self) -> u64 {
        self.offset
    }

    /// True before the first record.
    pub fn is_empty(&self) -> bool {
        self.footer.record_count == 0
    }

    /// Appends `value` under `key` (the user key, kept so a reference can be
    /// checked against its record), compressed with the file's compression
    /// where that makes it smaller. Returns where it went.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<BlobRef> {
        if key.len() > MAX_KEY_SIZE {
            return Err(Error::invalid_argument(
                "key",
                format!("a blob record's key may not exceed {MAX_KEY_SIZE} bytes"),
            ));
        }
        // `scratch` holds the compressed value, if compressing helps.
        self.scratch.clear();
        let compressed = self.compression != CompressionType::None
            // A value too large for a compressed block is stored as it is.
            && self.compression.compress_into(value, &mut self.scratch).is_ok()
            && self.scratch.len() < value.len();
        let (stored, compression) = if compressed {
            (&self.scratch[..], self.compression)
        } else {
            (value, CompressionType::None)
        };
        let mut header = Vec::with_capacity(BLOB_RECORD_HEADER_LEN);
        RecordHeader::encode_for(key, stored, compression, &mut header);
        self.file.append(&header)?;
        self.file.append(key)?;
        self.file.append(stored)?;
        let stored_len = stored.len();
        let reference = BlobRef {
            file_number: self.file_number,
            offset: self.offset,
            stored_len: stored_len as u64,
            compression,
        };
        self.offset += (BLOB_RECORD_HEADER_LEN + key.len() + stored_len) as u64;
        self.footer.record_count += 1;
        self.footer.value_bytes += stored_len as u64;
        Ok(reference)
    }

    /// Writes the footer and syncs the file. Only then may a version name it.
    pub fn finish(mut self) -> Result<BuiltBlobFile> {
        crash_point!("blob.before_footer");
        self.file.append(&self.footer.encode())?;
        crash_point!("blob.before_sync");
        self.file.sync()?;
        crash_point!("blob.after_sync");
        Ok(BuiltBlobFile {
            file_number: self.file_number,
            record_count: self.footer.record_count,
            value_bytes: self.footer.value_bytes,
            file_size: self.file.len(),
        })
    }
}
