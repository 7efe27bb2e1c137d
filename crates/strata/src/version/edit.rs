//! [`VersionEdit`]: one MANIFEST record, a change to the set of live table files.
//!
//! ```text
//! version edit = fields, each a tag and its payload, nothing else
//! +---------------+---------+---------------+---------+-----+
//! | tag: varint32 | payload | tag: varint32 | payload | ... |
//! +---------------+---------+---------------+---------+-----+
//!
//! tag     field             payload                                       count
//!   1     comparator        varint32 len + UTF-8 name ("strata.bytewise") 0..1
//!   2     log_number        varint64                                      0..1
//!   3     next_file_number  varint64                                      0..1
//!   4     last_sequence     varint64                                      0..1
//!   6     deleted_file      level: varint32 | file number: varint64       0..n
//!   7     new_file          new-file payload, below                       0..n
//!   t | 0x2000 (ignorable)  varint32 len + payload, skipped if unknown    0..n
//!
//! new-file payload
//! +-----------------+------------------+---------------------+
//! | level: varint32 | number: varint64 | file_size: varint64 |
//! +-----------------+------------------+---------------------+
//! | smallest: varint32 len + internal key                    |
//! | largest:  varint32 len + internal key                    |
//! +--------------------------+-------------------------------+
//! | smallest_seqno: varint64 | largest_seqno: varint64       |
//! +--------------------------+-------------------------------+
//! | per-file fields, each: id: varint32 >= 1 | varint32 len  |
//! |   + payload; ignorable (skipped if unknown) if id & 0x40 |
//! | end of per-file fields: varint32 0                       |
//! +----------------------------------------------------------+
//!
//! reserved tags (unknown, hence Corruption, to this reader)
//!   5        LevelDB's compact pointer          8..=99   DB-wide scalars
//!   100..199 new-file variants                  200..299 column families
//!   300..399 atomic groups                      400..499 blob files
//! ```
//!
//! Why tags: a reader must be able to tell a field it does not know from garbage.
//! A tag without the ignorable bit (0x2000, RocksDB's `kTagSafeIgnoreMask`) means
//! "you must understand this": an old reader stops with `Corruption` rather than
//! misread the MANIFEST. A tag with the bit carries its own length, so an old reader
//! skips it; it is for hints whose loss is harmless (they are dropped if that reader
//! rewrites the MANIFEST). Per-file fields work the same way inside `new_file`,
//! with bit 0x40 as their ignorable bit; none is defined yet.
//!
//! The encoder writes fields in tag order, each singleton at most once and every
//! varint in its shortest form, so for bytes it wrote, decoding then encoding
//! returns the same bytes. The decoder accepts fields in any order.
//! A record cut exactly at a field boundary decodes as a shorter valid edit; the
//! WAL-format framing of the MANIFEST (checksum over the whole record) is what
//! rules out such a cut, as in LevelDB and RocksDB.

use std::cmp::Ordering;
use std::fmt::{self, Write as _};

use crate::encoding::{put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};
use crate::key::{
    compare_internal, ParsedInternalKey, SequenceNumber, ValueType, MAX_SEQUENCE_NUMBER, TAG_LEN,
};

/// Number of levels a MANIFEST may name; levels are `0..MAX_LEVELS`.
pub const MAX_LEVELS: u32 = 64;

/// Name of the bytewise internal-key order, recorded so a DB is never opened with
/// a different order than the one its tables were sorted by.
pub const BYTEWISE_COMPARATOR_NAME: &str = "strata.bytewise";

const TAG_COMPARATOR: u32 = 1;
const TAG_LOG_NUMBER: u32 = 2;
const TAG_NEXT_FILE_NUMBER: u32 = 3;
const TAG_LAST_SEQUENCE: u32 = 4;
const TAG_DELETED_FILE: u32 = 6;
const TAG_NEW_FILE: u32 = 7;
/// Tags with this bit set carry a varint32 length and may be skipped.
pub const TAG_IGNORABLE: u32 = 1 << 13;

/// Ends the per-file fields of a `new_file` payload.
const FILE_FIELD_END: u32 = 0;
/// Per-file field ids with this bit set may be skipped by readers that do not
/// know them.
pub const FILE_FIELD_IGNORABLE: u32 = 1 << 6;

/// What the MANIFEST knows about one table file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileMetaData {
    /// File number (the file is `{number:06}.sst`).
    pub number: u64,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Smallest internal key in the file.
    pub smallest: Vec<u8>,
    /// Largest internal key in the file.
    pub largest: Vec<u8>,
    /// Smallest sequence number of any entry in the file.
    pub smallest_seqno: SequenceNumber,
    /// Largest sequence number of any entry in the file.
    pub largest_seqno: SequenceNumber,
}

impl FileMetaData {
    /// Why this file's metadata cannot be right, if it cannot.
    fn check(&self) -> std::result::Result<(), String> {
        let n = self.number;
        if self.smallest.len() < TAG_LEN || self.largest.len() < TAG_LEN {
            return Err(format!(
                "file #{n}: boundary keys must be internal keys of at least {TAG_LEN} bytes"
            ));
        }
        if compare_internal(&self.smallest, &self.largest) == Ordering::Greater {
            return Err(format!("file #{n}: smallest key sorts after largest key"));
        }
        if self.smallest_seqno > self.largest_seqno {
            return Err(format!(
                "file #{n}: smallest_seqno {} > largest_seqno {}",
                self.smallest_seqno, self.largest_seqno
            ));
        }
        if self.largest_seqno > MAX_SEQUENCE_NUMBER {
            return Err(format!(
                "file #{n}: largest_seqno {} exceeds {MAX_SEQUENCE_NUMBER}",
                self.largest_seqno
            ));
        }
        Ok(())
    }
}

/// One change to the set of live files, plus the counters that must be durable
/// with it. Every field is optional; the first record of a MANIFEST sets them all.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VersionEdit {
    /// Name of the key order; see [`BYTEWISE_COMPARATOR_NAME`].
    pub comparator: Option<String>,
    /// WALs numbered below this are fully flushed and may be deleted.
    pub log_number: Option<u64>,
    /// The next file number to hand out; numbers are never reused.
    pub next_file_number: Option<u64>,
    /// The largest sequence number whose write is in some live file or WAL.
    pub last_sequence: Option<SequenceNumber>,
    /// Files leaving the version: `(level, file number)`.
    pub deleted_files: Vec<(u32, u64)>,
    /// Files joining the version: `(level, metadata)`.
    pub new_files: Vec<(u32, FileMetaData)>,
}

impl VersionEdit {
    /// An empty edit.
    pub fn new() -> VersionEdit {
        VersionEdit::default()
    }

    /// Records the key order's name.
    pub fn set_comparator_name(&mut self, name: impl Into<String>) -> &mut Self {
        self.comparator = Some(name.into());
        self
    }

    /// Records that WALs numbered below `number` are no longer needed.
    pub fn set_log_number(&mut self, number: u64) -> &mut Self {
        self.log_number = Some(number);
        self
    }

    /// Records the next file number to hand out.
    pub fn set_next_file_number(&mut self, number: u64) -> &mut Self {
        self.next_file_number = Some(number);
        self
    }

    /// Records the last sequence number in use.
    pub fn set_last_sequence(&mut self, seq: SequenceNumber) -> &mut Self {
        self.last_sequence = Some(seq);
        self
    }

    /// Adds file `meta` to `level`.
    pub fn add_file(&mut self, level: u32, meta: FileMetaData) -> &mut Self {
        self.new_files.push((level, meta));
        self
    }

    /// Removes file `number` from `level`.
    pub fn delete_file(&mut self, level: u32, number: u64) -> &mut Self {
        self.deleted_files.push((level, number));
        self
    }

    /// Checks what [`VersionEdit::decode`] checks, so a writer can refuse an
    /// edit that would make the MANIFEST unreadable. Fails with
    /// `InvalidArgument` (field `"version_edit"`).
    pub fn validate(&self) -> Result<()> {
        let fail = |reason| Error::invalid_argument("version_edit", reason);
        check_last_sequence(self.last_sequence).map_err(fail)?;
        for &(level, _) in &self.deleted_files {
            check_level(level).map_err(fail)?;
        }
        for (level, meta) in &self.new_files {
            check_level(*level).map_err(fail)?;
            meta.check().map_err(fail)?;
        }
        Ok(())
    }

    /// The record's bytes (fields in tag order; see the module drawing).
    pub fn encode(&self) -> Vec<u8> {
        let mut dst = Vec::new();
        if let Some(name) = &self.comparator {
            put_varint32(&mut dst, TAG_COMPARATOR);
            put_length_prefixed(&mut dst, name.as_bytes());
        }
        let scalars = [
            (TAG_LOG_NUMBER, self.log_number),
            (TAG_NEXT_FILE_NUMBER, self.next_file_number),
            (TAG_LAST_SEQUENCE, self.last_sequence),
        ];
        for (tag, value) in scalars {
            if let Some(v) = value {
                put_varint32(&mut dst, tag);
                put_varint64(&mut dst, v);
            }
        }
        for &(level, number) in &self.deleted_files {
            put_varint32(&mut dst, TAG_DELETED_FILE);
            put_varint32(&mut dst, level);
            put_varint64(&mut dst, number);
        }
        for (level, meta) in &self.new_files {
            put_varint32(&mut dst, TAG_NEW_FILE);
            put_varint32(&mut dst, *level);
            put_varint64(&mut dst, meta.number);
            put_varint64(&mut dst, meta.file_size);
            put_length_prefixed(&mut dst, &meta.smallest);
            put_length_prefixed(&mut dst, &meta.largest);
            put_varint64(&mut dst, meta.smallest_seqno);
            put_varint64(&mut dst, meta.largest_seqno);
            put_varint32(&mut dst, FILE_FIELD_END);
        }
        dst
    }

    /// Parses and validates a record.
    ///
    /// Malformed bytes, an unknown tag without the ignorable bit, a repeated
    /// singleton field, a level `>= MAX_LEVELS`, or inconsistent file metadata
    /// give `Error::Corruption` with an empty file and offset 0; the reason names
    /// the byte within the record, and the MANIFEST reader rewraps it with the
    /// file it knows. Nothing is allocated beyond what the input's own bytes hold.
    pub fn decode(src: &[u8]) -> Result<VersionEdit> {
        let mut d = Decoder::new(src);
        let mut edit = VersionEdit::default();
        while !d.is_empty() {
            let at = d.position();
            let tag = need(d.varint32(), at, "field tag")?;
            match tag {
                TAG_COMPARATOR => {
                    let name = need(read_len_prefixed(&mut d), at, "comparator name")?;
                    let name = std::str::from_utf8(name)
                        .map_err(|_| corrupt(at, "comparator name is not UTF-8"))?;
                    set_once(&mut edit.comparator, name.to_owned(), at, "comparator")?;
                }
                TAG_LOG_NUMBER => {
                    let v = need(d.varint64(), at, "log_number")?;
                    set_once(&mut edit.log_number, v, at, "log_number")?;
                }
                TAG_NEXT_FILE_NUMBER => {
                    let v = need(d.varint64(), at, "next_file_number")?;
                    set_once(&mut edit.next_file_number, v, at, "next_file_number")?;
                }
                TAG_LAST_SEQUENCE => {
                    let v = need(d.varint64(), at, "last_sequence")?;
                    check_last_sequence(Some(v)).map_err(|r| corrupt(at, r))?;
                    set_once(&mut edit.last_sequence, v, at, "last_sequence")?;
                }
                TAG_DELETED_FILE => {
                    let level = decode_level(&mut d, at)?;
                    let number = need(d.varint64(), at, "deleted file number")?;
                    edit.deleted_files.push((level, number));
                }
                TAG_NEW_FILE => {
                    let level = decode_level(&mut d, at)?;
                    let meta = decode_new_file(&mut d, at)?;
                    edit.new_files.push((level, meta));
                }
                t if t & TAG_IGNORABLE != 0 => {
                    need(read_len_prefixed(&mut d), at, "ignorable field payload")?;
                }
                t => {
                    return Err(corrupt(
                        at,
                        format!(
                        "unknown tag {t} without the ignorable bit (written by a newer version?)"
                    ),
                    ))
                }
            }
        }
        Ok(edit)
    }
}

/// Decodes a `new_file` payload after its level.
fn decode_new_file(d: &mut Decoder<'_>, at: usize) -> Result<FileMetaData> {
    let number = need(d.varint64(), at, "new file number")?;
    let file_size = need(d.varint64(), at, "new file size")?;
    let smallest = need(read_len_prefixed(d), at, "new file smallest key")?.to_vec();
    let largest = need(read_len_prefixed(d), at, "new file largest key")?.to_vec();
    let smallest_seqno = need(d.varint64(), at, "new file smallest_seqno")?;
    let largest_seqno = need(d.varint64(), at, "new file largest_seqno")?;
    loop {
        let field_at = d.position();
        let id = need(d.varint32(), field_at, "per-file field id")?;
        if id == FILE_FIELD_END {
            break;
        }
        need(read_len_prefixed(d), field_at, "per-file field payload")?;
        if id & FILE_FIELD_IGNORABLE == 0 {
            return Err(corrupt(
                field_at,
                format!("file #{number}: unknown per-file field {id} without the ignorable bit"),
            ));
        }
    }
    let meta = FileMetaData {
        number,
        file_size,
        smallest,
        largest,
        smallest_seqno,
        largest_seqno,
    };
    meta.check().map_err(|r| corrupt(at, r))?;
    Ok(meta)
}

fn decode_level(d: &mut Decoder<'_>, at: usize) -> Result<u32> {
    let level = need(d.varint32(), at, "level")?;
    check_level(level).map_err(|r| corrupt(at, r))?;
    Ok(level)
}

/// Reads a varint32 length and that many bytes (checked against the input
/// before slicing, so a huge length is an error, not an allocation).
fn read_len_prefixed<'a>(d: &mut Decoder<'a>) -> Option<&'a [u8]> {
    let len = usize::try_from(d.varint32()?).ok()?;
    d.bytes(len)
}

fn check_level(level: u32) -> std::result::Result<(), String> {
    if level >= MAX_LEVELS {
        return Err(format!("level {level} is not below {MAX_LEVELS}"));
    }
    Ok(())
}

fn check_last_sequence(seq: Option<SequenceNumber>) -> std::result::Result<(), String> {
    match seq {
        Some(s) if s > MAX_SEQUENCE_NUMBER => {
            Err(format!("last_sequence {s} exceeds {MAX_SEQUENCE_NUMBER}"))
        }
        _ => Ok(()),
    }
}

fn set_once<T>(slot: &mut Option<T>, value: T, at: usize, name: &str) -> Result<()> {
    if slot.is_some() {
        return Err(corrupt(at, format!("{name} appears twice")));
    }
    *slot = Some(value);
    Ok(())
}

fn need<T>(value: Option<T>, at: usize, what: &str) -> Result<T> {
    value.ok_or_else(|| corrupt(at, format!("truncated or malformed {what}")))
}

fn corrupt(at: usize, reason: impl fmt::Display) -> Error {
    Error::corruption("", 0, format!("version edit field at byte {at}: {reason}"))
}

/// One line per field, for `strata manifest_dump`:
///
/// ```text
/// comparator: strata.bytewise
/// log_number: 12
/// next_file_number: 15
/// last_sequence: 1000
/// delete file L1 #7
/// add file L0 #13 size=4096 seq=[1,500] keys=['a'@500 .. 'z'@1]
/// ```
impl fmt::Display for VersionEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines = Vec::new();
        if let Some(name) = &self.comparator {
            lines.push(format!("comparator: {name}"));
        }
        let scalars = [
            ("log_number", self.log_number),
            ("next_file_number", self.next_file_number),
            ("last_sequence", self.last_sequence),
        ];
        for (name, value) in scalars {
            if let Some(v) = value {
                lines.push(format!("{name}: {v}"));
            }
        }
        for (level, number) in &self.deleted_files {
            lines.push(format!("delete file L{level} #{number}"));
        }
        for (level, m) in &self.new_files {
            lines.push(format!(
                "add file L{level} #{} size={} seq=[{},{}] keys=[{} .. {}]",
                m.number,
                m.file_size,
                m.smallest_seqno,
                m.largest_seqno,
                display_internal_key(&m.smallest),
                display_internal_key(&m.largest),
            ));
        }
        if lines.is_empty() {
            return f.write_str("(empty edit)");
        }
        f.write_str(&lines.join("\n"))
    }
}

/// Renders an internal key as `'user'@seq` (printable ASCII) or `0x75736572@seq`,
/// with `:del` for deletions and `:type=N` for other type bytes. A key too short
/// to be an internal key is shown whole in hex with `(bad)`.
fn display_internal_key(ikey: &[u8]) -> String {
    let Some(parsed) = ParsedInternalKey::parse(ikey) else {
        return format!("{}(bad)", hex(ikey));
    };
    let user = parsed.user_key;
    let printable = user
        .iter()
        .all(|&b| (0x20..=0x7e).contains(&b) && b != b'\'' && b != b'\\');
    let mut out = if printable {
        format!("'{}'", String::from_utf8_lossy(user))
    } else {
        hex(user)
    };
    let _ = write!(out, "@{}", parsed.seq);
    match parsed.value_type() {
        Some(ValueType::Put) => {}
        Some(ValueType::Delete) => out.push_str(":del"),
        Some(ValueType::RangeDeletion) => out.push_str(":rangedel"),
        None => {
            let _ = write!(out, ":type={}", parsed.type_code);
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("0x");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::internal_key;
    use proptest::prelude::*;

    fn meta(number: u64, small: (&[u8], u64), large: (&[u8], u64)) -> FileMetaData {
        FileMetaData {
            number,
            file_size: 4096,
            smallest: internal_key(small.0, small.1, ValueType::Put),
            largest: internal_key(large.0, large.1, ValueType::Put),
            smallest_seqno: 1,
            largest_seqno: 500,
        }
    }

    fn sample() -> VersionEdit {
        let mut e = VersionEdit::new();
        e.set_comparator_name(BYTEWISE_COMPARATOR_NAME)
            .set_log_number(12)
            .set_next_file_number(15)
            .set_last_sequence(1000)
            .delete_file(1, 7)
            .add_file(0, meta(13, (b"a", 500), (b"z", 1)));
        e
    }

    fn assert_corrupt(bytes: &[u8], reason_part: &str) {
        match VersionEdit::decode(bytes) {
            Err(Error::Corruption { reason, .. }) => {
                assert!(
                    reason.contains(reason_part),
                    "{reason:?} lacks {reason_part:?}"
                )
            }
            other => panic!("{bytes:?} gave {other:?}"),
        }
    }

    /// Encodes `edit` then `extra` raw bytes.
    fn with_extra(edit: &VersionEdit, extra: &[u8]) -> Vec<u8> {
        let mut bytes = edit.encode();
        bytes.extend_from_slice(extra);
        bytes
    }

    #[test]
    fn golden_bytes() {
        #[rustfmt::skip]
        let expected: &[u8] = &[
            1, 15, b's', b't', b'r', b'a', b't', b'a', b'.',        // comparator
                b'b', b'y', b't', b'e', b'w', b'i', b's', b'e',
            2, 12,                                                  // log_number 12
            3, 15,                                                  // next_file_number 15
            4, 0xe8, 0x07,                                          // last_sequence 1000
            6, 1, 7,                                                // delete L1 #7
            7, 0, 13, 0x80, 0x20,                                   // add L0 #13 size 4096
            9, b'a', 0x01, 0xf4, 0x01, 0, 0, 0, 0, 0,               // smallest 'a'@500 put
            9, b'z', 0x01, 0x01, 0, 0, 0, 0, 0, 0,                  // largest 'z'@1 put
            1, 0xf4, 0x03,                                          // seqnos 1, 500
            0,                                                      // end of per-file fields
        ];
        assert_eq!(sample().encode(), expected);
        assert_eq!(VersionEdit::decode(expected).unwrap(), sample());
        assert_eq!(VersionEdit::decode(&[]).unwrap(), VersionEdit::new());
    }

    #[test]
    fn display_is_one_line_per_field() {
        let mut e = sample();
        let mut odd = meta(14, (b"\x00\xff", 3), (b"it's", 2));
        odd.largest = internal_key(b"it's", 2, ValueType::Delete);
        e.add_file(6, odd);
        assert_eq!(
            e.to_string(),
            "comparator: strata.bytewise\n\
             log_number: 12\n\
             next_file_number: 15\n\
             last_sequence: 1000\n\
             delete file L1 #7\n\
             add file L0 #13 size=4096 seq=[1,500] keys=['a'@500 .. 'z'@1]\n\
             add file L6 #14 size=4096 seq=[1,500] keys=[0x00ff@3 .. 0x69742773@2:del]"
        );
        assert_eq!(VersionEdit::new().to_string(), "(empty edit)");
        assert_eq!(display_internal_key(b"abc"), "0x616263(bad)");
        let mut weird = internal_key(b"k", 9, ValueType::Put);
        weird[1] = 7;
        assert_eq!(display_internal_key(&weird), "'k'@9:type=7");
    }

    /// A cut inside a field is Corruption; a cut at a field boundary is the edit
    /// made of the fields before it (re-encoding gives back exactly the prefix).
    #[test]
    fn truncation_is_corruption_or_a_field_prefix() {
        let bytes = sample().encode();
        let mut valid_prefixes = 0;
        for n in 0..bytes.len() {
            match VersionEdit::decode(&bytes[..n]) {
                Ok(e) => {
                    assert_eq!(e.encode(), &bytes[..n], "cut at {n}");
                    valid_prefixes += 1;
                }
                Err(e) => assert!(e.is_corruption(), "cut at {n}: {e}"),
            }
        }
        // Empty, then after each of the five fields before the last.
        assert_eq!(valid_prefixes, 6);
    }

    #[test]
    fn ignorable_tags_are_skipped() {
        let e = sample();
        // Tag 0x2001 (varint 0x81 0x40), 3-byte payload; then an empty one.
        let bytes = with_extra(&e, &[0x81, 0x40, 3, 9, 9, 9, 0x80, 0x40, 0]);
        assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
        // An ignorable field in the middle of the record is skipped too.
        let mut middle = vec![0x81, 0x40, 1, 0xff];
        middle.extend_from_slice(&e.encode());
        assert_eq!(VersionEdit::decode(&middle).unwrap(), e);
        // Its length must still fit the record.
        assert_corrupt(
            &with_extra(&e, &[0x81, 0x40, 5, 1]),
            "ignorable field payload",
        );
    }

    #[test]
    fn unknown_tags_are_corruption() {
        for tag in [0u32, 5, 8, 100, 200, 400, 0x1fff] {
            let mut extra = Vec::new();
            put_varint32(&mut extra, tag);
            extra.push(0);
            assert_corrupt(
                &with_extra(&sample(), &extra),
                &format!("unknown tag {tag}"),
            );
        }
    }

    /// Builds a `new_file` payload for file #13 whose per-file fields are `fields`
    /// (raw bytes, then the end marker).
    fn new_file_with_fields(fields: &[u8]) -> Vec<u8> {
        let mut e = VersionEdit::new();
        e.add_file(2, meta(13, (b"a", 5), (b"b", 5)));
        let mut bytes = e.encode();
        bytes.pop(); // the end marker
        bytes.extend_from_slice(fields);
        bytes.push(0);
        bytes
    }

    #[test]
    fn per_file_fields() {
        let plain = {
            let mut e = VersionEdit::new();
            e.add_file(2, meta(13, (b"a", 5), (b"b", 5)));
            e
        };
        // Ignorable ids (bit 0x40) are skipped.
        let bytes = new_file_with_fields(&[0x41, 2, 7, 7, 0x7f, 0]);
        assert_eq!(VersionEdit::decode(&bytes).unwrap(), plain);
        // Others must be understood.
        assert_corrupt(
            &new_file_with_fields(&[0x01, 1, 7]),
            "unknown per-file field 1",
        );
        // A payload longer than the record.
        assert_corrupt(
            &new_file_with_fields(&[0x41, 9, 7]),
            "per-file field payload",
        );
        // A missing end marker.
        let mut no_end = plain.encode();
        no_end.pop();
        assert_corrupt(&no_end, "per-file field id");
    }

    #[test]
    fn validation_failures_are_corruption_and_invalid_argument() {
        let bad = |change: fn(&mut FileMetaData)| {
            let mut m = meta(9, (b"a", 5), (b"b", 5));
            change(&mut m);
            let mut e = VersionEdit::new();
            e.add_file(0, m);
            e
        };
        let mut cases = vec![
            (bad(|m| m.smallest = b"short".to_vec()), "at least 8 bytes"),
            (bad(|m| m.largest = Vec::new()), "at least 8 bytes"),
            (
                bad(|m| std::mem::swap(&mut m.smallest, &mut m.largest)),
                "sorts after",
            ),
            // Same user key: newer sorts first, so @3 .. @9 is out of order.
            (bad(|m| *m = meta(9, (b"k", 3), (b"k", 9))), "sorts after"),
            (bad(|m| m.smallest_seqno = 501), "smallest_seqno"),
            (
                bad(|m| m.largest_seqno = MAX_SEQUENCE_NUMBER + 1),
                "exceeds",
            ),
        ];
        let mut level = VersionEdit::new();
        level.add_file(MAX_LEVELS, meta(9, (b"a", 5), (b"b", 5)));
        cases.push((level, "level 64"));
        let mut deleted = VersionEdit::new();
        deleted.delete_file(MAX_LEVELS, 3);
        cases.push((deleted, "level 64"));
        let mut seq = VersionEdit::new();
        seq.set_last_sequence(MAX_SEQUENCE_NUMBER + 1);
        cases.push((seq, "last_sequence"));

        for (edit, why) in cases {
            assert_corrupt(&edit.encode(), why);
            let err = edit.validate().unwrap_err();
            let field = match err {
                Error::InvalidArgument { field, .. } => field,
                other => panic!("{other}"),
            };
            assert_eq!(field, "version_edit");
        }
        let mut ok = VersionEdit::new();
        ok.add_file(MAX_LEVELS - 1, meta(9, (b"k", 9), (b"k", 3)));
        ok.validate().unwrap();
        assert_eq!(VersionEdit::decode(&ok.encode()).unwrap(), ok);
    }

    #[test]
    fn malformed_fields_are_corruption() {
        assert_corrupt(&[2, 0x80], "log_number");
        assert_corrupt(&[1, 2, 0xff, 0xfe], "not UTF-8");
        assert_corrupt(&[1, 5, b'a'], "comparator name");
        assert_corrupt(&[0x80], "field tag");
        // A tag that does not fit in 32 bits.
        assert_corrupt(&[0xff, 0xff, 0xff, 0xff, 0x7f], "field tag");
        assert_corrupt(&[2, 1, 3, 4, 2, 2], "log_number appears twice");
        assert_corrupt(&[1, 0, 1, 0], "comparator appears twice");
        assert_corrupt(&[6, 0x80, 0x80, 0x80, 0x80, 0x10, 1], "level");
        // A key length far beyond the record is refused without allocating it.
        assert_corrupt(&[7, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f], "smallest key");
    }

    fn ikey() -> impl Strategy<Value = Vec<u8>> {
        (
            proptest::collection::vec(any::<u8>(), 0..10),
            0..=MAX_SEQUENCE_NUMBER,
            prop_oneof![Just(ValueType::Put), Just(ValueType::Delete)],
        )
            .prop_map(|(user, seq, t)| internal_key(&user, seq, t))
    }

    prop_compose! {
        fn file_meta()(number in any::<u64>(), file_size in any::<u64>(), a in ikey(), b in ikey(),
                       s1 in 0..=MAX_SEQUENCE_NUMBER, s2 in 0..=MAX_SEQUENCE_NUMBER) -> FileMetaData {
            let (smallest, largest) = match compare_internal(&a, &b) {
                Ordering::Greater => (b, a),
                _ => (a, b),
            };
            FileMetaData {
                number, file_size, smallest, largest,
                smallest_seqno: s1.min(s2), largest_seqno: s1.max(s2),
            }
        }
    }

    prop_compose! {
        fn edit()(comparator in proptest::option::of(".{0,20}"),
                  log_number in proptest::option::of(any::<u64>()),
                  next_file_number in proptest::option::of(any::<u64>()),
                  last_sequence in proptest::option::of(0..=MAX_SEQUENCE_NUMBER),
                  deleted_files in proptest::collection::vec((0..MAX_LEVELS, any::<u64>()), 0..5),
                  new_files in proptest::collection::vec((0..MAX_LEVELS, file_meta()), 0..5))
                  -> VersionEdit {
            VersionEdit { comparator, log_number, next_file_number, last_sequence, deleted_files, new_files }
        }
    }

    proptest! {
        #[test]
        fn round_trip(e in edit()) {
            e.validate().unwrap();
            let bytes = e.encode();
            let decoded = VersionEdit::decode(&bytes).unwrap();
            prop_assert_eq!(&decoded, &e);
            prop_assert_eq!(decoded.encode(), bytes);
        }

        #[test]
        fn truncation_never_panics(e in edit(), cut in any::<prop::sample::Index>()) {
            let bytes = e.encode();
            let n = cut.index(bytes.len() + 1);
            match VersionEdit::decode(&bytes[..n]) {
                Ok(d) => prop_assert_eq!(d.encode(), &bytes[..n]),
                Err(err) => prop_assert!(err.is_corruption()),
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
            match VersionEdit::decode(&bytes) {
                Ok(e) => { let _ = e.to_string(); }
                Err(err) => prop_assert!(err.is_corruption()),
            }
        }

        /// Mutating one byte of a valid edit reaches the field decoders more often
        /// than random bytes do.
        #[test]
        fn mutated_edits_never_panic(e in edit(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut bytes = e.encode();
            if !bytes.is_empty() {
                let i = at.index(bytes.len());
                bytes[i] = byte;
            }
            if let Err(err) = VersionEdit::decode(&bytes) {
                prop_assert!(err.is_corruption());
            }
        }
    }
}
