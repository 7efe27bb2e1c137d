//! [`VersionEdit`]: one MANIFEST record, a change to the set of live table files.
//!
//! ```text
//! version edit = fields, each a tag and its payload, nothing else
//! +---------------+---------+---------------+---------+-----+
//! | tag: varint32 | payload | tag: varint32 | payload | ... |
//! +---------------+---------+---------------+---------+-----+
//!
//! tag     field             payload                                       count
//!   1     comparator        varint32 len + UTF-8 name of the family's order   0..1
//!   2     log_number        varint64                                      0..1
//!   3     next_file_number  varint64                                      0..1
//!   4     last_sequence     varint64                                      0..1
//!   6     deleted_file      level: varint32 | file number: varint64       0..n
//!   7     new_file          new-file payload, below                       0..n
//!  10     min_log_number_to_keep  varint64 (DB-wide)                      0..1
//!  11     wal_features      varint64 bit set (DB-wide), known bits only     0..1
//! 200     column_family     varint32 family id (absent: 0, "default")     0..1
//! 201     column_family_add varint32 len + UTF-8 name                     0..1
//! 202     column_family_drop (no payload)                                 0..1
//! 203     max_column_family varint32                                      0..1
//! 204|0x2000 merge_operator varint32 len + UTF-8 name of the family's     0..1
//!                           merge operator (ignorable)
//! 205|0x2000 merge_operator_description  varint32 len + UTF-8 name and    0..1
//!                           settings, OPTIONS-file form (ignorable)
//! 400     blob_file_addition  see `blob_files.rs`                         0..n
//! 401     blob_file_garbage   see `blob_files.rs`                         0..n
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
//!   5        LevelDB's compact pointer          8, 9, 12..=99 DB-wide scalars
//!   100..199 new-file variants                  206..299 column families
//!   300..399 atomic groups                      402..499 blob files
//! ```
//!
//! Why tags: a reader must be able to tell a field it does not know from garbage.
//! A tag without the ignorable bit (0x2000, RocksDB's `kTagSafeIgnoreMask`) means
//! "you must understand this": an old reader stops with `Corruption` rather than
//! misread the MANIFEST. A tag with the bit carries its own length, so an old reader
//! skips it; it is for hints whose loss is harmless (they are dropped if that reader
//! rewrites the MANIFEST). Per-file fields work the same way inside `new_file`,
//! with bit 0x40 as their ignorable bit. Field 1 lists the blob files a table
//! references (`blob_files.rs`); it is not ignorable, since a reader that
//! dropped it could delete blob files the table still needs. Field 2 is an
//! ingested table's global sequence number (varint64), with which its
//! entries, stored at sequence number 0, are read; not ignorable either.
//!
//! Column families: an edit applies to one family, named by tag 200 (absent
//! means the default family, id 0, so a MANIFEST written before families
//! existed reads as the default family's). `log_number`, the deleted and new
//! files, and the add or drop are that family's; `next_file_number`,
//! `last_sequence`, `max_column_family` and `min_log_number_to_keep` are the
//! database's.
//!
//! The encoder writes the column family fields first (so no prefix of a
//! record could attribute its files to the default family), then the others
//! in tag order, each singleton at most once and every
//! varint in its shortest form, so for bytes it wrote, decoding then encoding
//! returns the same bytes. The decoder accepts fields in any order.
//! A record cut exactly at a field boundary decodes as a shorter valid edit; the
//! WAL-format framing of the MANIFEST (checksum over the whole record) is what
//! rules out such a cut, as in LevelDB and RocksDB.

use std::cmp::Ordering;
use std::fmt;

use crate::encoding::{put_length_prefixed, put_varint32, put_varint64, Decoder};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, MAX_SEQUENCE_NUMBER, TAG_LEN};
use crate::key_order::KeyComparator;
use crate::version::blob_files::{
    decode_addition, decode_blob_numbers, decode_garbage, encode_addition, encode_blob_numbers,
    encode_garbage, BlobFileAddition, BlobFileGarbage, FILE_FIELD_BLOB_FILES,
    TAG_BLOB_FILE_ADDITION, TAG_BLOB_FILE_GARBAGE,
};

/// Number of levels a MANIFEST may name; levels are `0..MAX_LEVELS`.
pub const MAX_LEVELS: u32 = 64;

/// The MANIFEST's name of bytewise order (other orders go by their RocksDB
/// or application names), recorded so a family is never opened in another
/// order than the one its tables were sorted by.
pub const BYTEWISE_COMPARATOR_NAME: &str = "strata.bytewise";

/// Name of the column family every database has, id 0 (RocksDB's).
pub const DEFAULT_COLUMN_FAMILY_NAME: &str = "default";

const TAG_COMPARATOR: u32 = 1;
const TAG_LOG_NUMBER: u32 = 2;
const TAG_NEXT_FILE_NUMBER: u32 = 3;
const TAG_LAST_SEQUENCE: u32 = 4;
const TAG_DELETED_FILE: u32 = 6;
const TAG_NEW_FILE: u32 = 7;
const TAG_MIN_LOG_NUMBER_TO_KEEP: u32 = 10;
const TAG_WAL_FEATURES: u32 = 11;
const TAG_COLUMN_FAMILY: u32 = 200;
const TAG_COLUMN_FAMILY_ADD: u32 = 201;
const TAG_COLUMN_FAMILY_DROP: u32 = 202;
const TAG_MAX_COLUMN_FAMILY: u32 = 203;
/// Ignorable: a reader that predates it only loses the check that a family
/// reopens with the merge operator it was opened with.
const TAG_MERGE_OPERATOR: u32 = 204 | TAG_IGNORABLE;
/// Ignorable, and only beside `TAG_MERGE_OPERATOR`: the operator's settings
/// as well as its name. A tag of its own, so that a reader that knows only
/// the name keeps comparing names (a description in tag 204 would refuse
/// every open of such a family there).
const TAG_MERGE_OPERATOR_DESCRIPTION: u32 = 205 | TAG_IGNORABLE;
/// Tags with this bit set carry a varint32 length and may be skipped.
pub const TAG_IGNORABLE: u32 = 1 << 13;

/// Ends the per-file fields of a `new_file` payload.
const FILE_FIELD_END: u32 = 0;
/// Per-file field of `new_file`: the global sequence number of an ingested
/// table (varint64). Not ignorable: a reader that dropped it would read the
/// table's entries at sequence number 0, under older versions of their keys.
const FILE_FIELD_GLOBAL_SEQNO: u32 = 2;
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
    /// The blob files the table's references point into, strictly
    /// increasing; empty for a table without references.
    pub blob_files: Vec<u64>,
    /// For a table ingested from outside (`SstFileWriter`), whose entries
    /// are stored with sequence number 0: the sequence number every entry
    /// and range tombstone of it is read with (RocksDB's global seqno).
    /// `None` for every other table, and for an ingested one read as stored.
    /// When set, `smallest_seqno` and `largest_seqno` equal it.
    pub global_seqno: Option<SequenceNumber>,
}

impl FileMetaData {
    /// True when the file's largest key is a range tombstone's end sentinel,
    /// so the file holds nothing of that key's user key (the range is
    /// exclusive there).
    pub fn largest_is_exclusive(&self) -> bool {
        crate::range_del::is_range_end_sentinel(&self.largest)
    }

    /// True when every key of the file sorts before `user_key` in `order`:
    /// its largest user key is smaller, or equal and exclusive. Compare file
    /// ranges by user key through this, never `user_key(&largest) < key`
    /// alone.
    #[inline]
    pub fn ends_before(&self, user_key: &[u8], order: &KeyComparator) -> bool {
        let largest = crate::key::user_key(&self.largest);
        match order.compare_user(largest, user_key) {
            Ordering::Less => true,
            Ordering::Equal => self.largest_is_exclusive(),
            Ordering::Greater => false,
        }
    }

    /// True when the file's smallest user key is at or below `user_key`.
    #[inline]
    pub fn starts_at_or_before(&self, user_key: &[u8], order: &KeyComparator) -> bool {
        order.le(crate::key::user_key(&self.smallest), user_key)
    }

    /// Why this file's metadata cannot be right, if it cannot. (Whether its
    /// smallest key sorts after its largest depends on the family's order,
    /// so applying the edit to a version checks that.)
    fn check(&self) -> std::result::Result<(), String> {
        let n = self.number;
        if self.smallest.len() < TAG_LEN || self.largest.len() < TAG_LEN {
            return Err(format!(
                "file #{n}: boundary keys must be internal keys of at least {TAG_LEN} bytes"
            ));
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
        if self.blob_files.windows(2).any(|w| w[0] >= w[1]) {
            return Err(format!(
                "file #{n}: blob file numbers are not strictly increasing"
            ));
        }
        if let Some(seq) = self.global_seqno {
            if seq == 0 || self.smallest_seqno != seq || self.largest_seqno != seq {
                return Err(format!(
                    "file #{n}: global seqno {seq} must be above 0 and equal smallest_seqno {} \
                     and largest_seqno {}",
                    self.smallest_seqno, self.largest_seqno
                ));
            }
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
    /// The column family every other field of the edit applies to (but the
    /// DB-wide counters: next file number, last sequence, max family id).
    /// 0, the default family, is not written.
    pub column_family: u32,
    /// The edit creates family `column_family` with this name.
    pub column_family_add: Option<String>,
    /// The edit drops family `column_family`.
    pub column_family_drop: bool,
    /// The largest column family id ever handed out (ids are never reused).
    pub max_column_family: Option<u32>,
    /// WALs numbered below this hold nothing any family needs, whatever the
    /// families' own log numbers say (a family with no writes keeps an old
    /// log number while the WALs after it are deleted). RocksDB's tag 10.
    pub min_log_number_to_keep: Option<u64>,
    /// What the database's WALs may hold beyond write batches (bits of
    /// [`crate::wal::WAL_FEATURES`]). A reader that meets a bit it does not
    /// know, or a version that predates the tag, refuses the MANIFEST
    /// instead of misreading those WALs.
    pub wal_features: Option<u64>,
    /// The name of the merge operator the family was opened with
    /// ([`crate::MergeOperator::name`]), recorded once the family is opened
    /// with one; an open with another, or none, is refused.
    pub merge_operator: Option<String>,
    /// That operator's description, its name and settings in the OPTIONS
    /// file's form (`{id=StringAppendOperator;delimiter=,;}`), when it has
    /// settings; read only beside `merge_operator`.
    pub merge_operator_description: Option<String>,
    /// Blob files joining the family's version.
    pub blob_file_additions: Vec<BlobFileAddition>,
    /// Garbage in the family's blob files, left by the edit's compaction.
    pub blob_file_garbage: Vec<BlobFileGarbage>,
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

    /// Records the family's merge operator: its name, and its description
    /// (see [`VersionEdit::merge_operator_description`]) when that says more.
    pub fn set_merge_operator(&mut self, name: &str, description: &str) -> &mut Self {
        self.merge_operator = Some(name.to_owned());
        self.merge_operator_description = (description != name).then(|| description.to_owned());
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

    /// Makes the edit apply to column family `id`.
    pub fn set_column_family(&mut self, id: u32) -> &mut Self {
        self.column_family = id;
        self
    }

    /// Records the creation of family `id` named `name`.
    pub fn add_column_family(&mut self, id: u32, name: impl Into<String>) -> &mut Self {
        self.column_family = id;
        self.column_family_add = Some(name.into());
        self
    }

    /// Records the drop of family `id`.
    pub fn drop_column_family(&mut self, id: u32) -> &mut Self {
        self.column_family = id;
        self.column_family_drop = true;
        self
    }

    /// Records that no family needs a WAL numbered below `number`.
    pub fn set_min_log_number_to_keep(&mut self, number: u64) -> &mut Self {
        self.min_log_number_to_keep = Some(number);
        self
    }

    /// Records what the database's WALs may hold (bits of
    /// [`crate::wal::WAL_FEATURES`]).
    pub fn set_wal_features(&mut self, features: u64) -> &mut Self {
        self.wal_features = Some(features);
        self
    }

    /// Records the largest family id handed out so far.
    pub fn set_max_column_family(&mut self, id: u32) -> &mut Self {
        self.max_column_family = Some(id);
        self
    }

    /// Checks what [`VersionEdit::decode`] checks, so a writer can refuse an
    /// edit that would make the MANIFEST unreadable. Fails with
    /// `InvalidArgument` (field `"version_edit"`).
    pub fn validate(&self) -> Result<()> {
        let fail = |reason| Error::invalid_argument("version_edit", reason);
        check_last_sequence(self.last_sequence).map_err(fail)?;
        check_wal_features(self.wal_features).map_err(fail)?;
        self.check_column_family().map_err(fail)?;
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
        if self.column_family != 0 {
            put_varint32(&mut dst, TAG_COLUMN_FAMILY);
            put_varint32(&mut dst, self.column_family);
        }
        if let Some(name) = &self.column_family_add {
            put_varint32(&mut dst, TAG_COLUMN_FAMILY_ADD);
            put_length_prefixed(&mut dst, name.as_bytes());
        }
        if self.column_family_drop {
            put_varint32(&mut dst, TAG_COLUMN_FAMILY_DROP);
        }
        if let Some(max) = self.max_column_family {
            put_varint32(&mut dst, TAG_MAX_COLUMN_FAMILY);
            put_varint32(&mut dst, max);
        }
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
            if !meta.blob_files.is_empty() {
                put_varint32(&mut dst, FILE_FIELD_BLOB_FILES);
                put_length_prefixed(&mut dst, &encode_blob_numbers(&meta.blob_files));
            }
            if let Some(seq) = meta.global_seqno {
                put_varint32(&mut dst, FILE_FIELD_GLOBAL_SEQNO);
                let mut payload = Vec::new();
                put_varint64(&mut payload, seq);
                put_length_prefixed(&mut dst, &payload);
            }
            put_varint32(&mut dst, FILE_FIELD_END);
        }
        for addition in &self.blob_file_additions {
            encode_addition(&mut dst, addition);
        }
        for garbage in &self.blob_file_garbage {
            encode_garbage(&mut dst, garbage);
        }
        if let Some(n) = self.min_log_number_to_keep {
            put_varint32(&mut dst, TAG_MIN_LOG_NUMBER_TO_KEEP);
            put_varint64(&mut dst, n);
        }
        if let Some(bits) = self.wal_features {
            put_varint32(&mut dst, TAG_WAL_FEATURES);
            put_varint64(&mut dst, bits);
        }
        if let Some(name) = &self.merge_operator {
            put_varint32(&mut dst, TAG_MERGE_OPERATOR);
            put_length_prefixed(&mut dst, name.as_bytes());
        }
        if let Some(description) = &self.merge_operator_description {
            put_varint32(&mut dst, TAG_MERGE_OPERATOR_DESCRIPTION);
            put_length_prefixed(&mut dst, description.as_bytes());
        }
        dst
    }

    /// Why the column family fields cannot be right, if they cannot: the
    /// default family (0) is never created or dropped, a family is not
    /// created and dropped by one edit, and a created family's name is
    /// neither empty nor "default".
    fn check_column_family(&self) -> std::result::Result<(), String> {
        let id = self.column_family;
        if id == 0 && (self.column_family_add.is_some() || self.column_family_drop) {
            return Err("the default column family (id 0) is never created or dropped".into());
        }
        if self.column_family_add.is_some() && self.column_family_drop {
            return Err(format!("column family {id} is both created and dropped"));
        }
        if let Some(name) = &self.column_family_add {
            if name.is_empty() || name == DEFAULT_COLUMN_FAMILY_NAME {
                return Err(format!("column family {id} cannot be named {name:?}"));
            }
        }
        Ok(())
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
        let mut column_family = None;
        while !d.is_empty() {
            let at = d.position();
            let tag = need(d.varint32(), at, "field tag")?;
            match tag {
                TAG_COMPARATOR => {
                    let name = read_text(&mut d, at, "comparator name")?;
                    set_once(&mut edit.comparator, name, at, "comparator")?;
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
                TAG_MIN_LOG_NUMBER_TO_KEEP => {
                    let v = need(d.varint64(), at, "min_log_number_to_keep")?;
                    set_once(
                        &mut edit.min_log_number_to_keep,
                        v,
                        at,
                        "min_log_number_to_keep",
                    )?;
                }
                TAG_WAL_FEATURES => {
                    let v = need(d.varint64(), at, "wal_features")?;
                    check_wal_features(Some(v)).map_err(|r| corrupt(at, r))?;
                    set_once(&mut edit.wal_features, v, at, "wal_features")?;
                }
                TAG_COLUMN_FAMILY => {
                    let id = need(d.varint32(), at, "column family id")?;
                    set_once(&mut column_family, id, at, "column family")?;
                }
                TAG_COLUMN_FAMILY_ADD => {
                    let name = read_text(&mut d, at, "column family name")?;
                    set_once(&mut edit.column_family_add, name, at, "column family add")?;
                }
                TAG_COLUMN_FAMILY_DROP => {
                    if edit.column_family_drop {
                        return Err(corrupt(at, "column family drop appears twice"));
                    }
                    edit.column_family_drop = true;
                }
                TAG_MAX_COLUMN_FAMILY => {
                    let v = need(d.varint32(), at, "max column family")?;
                    set_once(&mut edit.max_column_family, v, at, "max column family")?;
                }
                TAG_MERGE_OPERATOR => {
                    let name = read_text(&mut d, at, "merge operator name")?;
                    set_once(&mut edit.merge_operator, name, at, "merge operator")?;
                }
                TAG_MERGE_OPERATOR_DESCRIPTION => {
                    let text = read_text(&mut d, at, "merge operator description")?;
                    let slot = &mut edit.merge_operator_description;
                    set_once(slot, text, at, "merge operator description")?;
                }
                TAG_BLOB_FILE_ADDITION => {
                    let addition = decode_addition(&mut d).map_err(|what| corrupt(at, what))?;
                    edit.blob_file_additions.push(addition);
                }
                TAG_BLOB_FILE_GARBAGE => {
                    let garbage = decode_garbage(&mut d).map_err(|what| corrupt(at, what))?;
                    edit.blob_file_garbage.push(garbage);
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
        edit.column_family = column_family.unwrap_or(0);
        edit.check_column_family()
            .map_err(|r| corrupt(src.len(), r))?;
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
    let mut blob_files = None;
    let mut global_seqno = None;
    loop {
        let field_at = d.position();
        let id = need(d.varint32(), field_at, "per-file field id")?;
        if id == FILE_FIELD_END {
            break;
        }
        let payload = need(read_len_prefixed(d), field_at, "per-file field payload")?;
        if id == FILE_FIELD_BLOB_FILES {
            let numbers = decode_blob_numbers(payload)
                .map_err(|r| corrupt(field_at, format!("file #{number}: {r}")))?;
            set_once(&mut blob_files, numbers, field_at, "blob_files")?;
            continue;
        }
        if id == FILE_FIELD_GLOBAL_SEQNO {
            let mut p = Decoder::new(payload);
            let seq = p
                .varint64()
                .filter(|_| p.is_empty())
                .ok_or_else(|| corrupt(field_at, format!("file #{number}: bad global_seqno")))?;
            set_once(&mut global_seqno, seq, field_at, "global_seqno")?;
            continue;
        }
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
        blob_files: blob_files.unwrap_or_default(),
        global_seqno,
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

/// A varint32 length and that many bytes of UTF-8; `what` names it in
/// errors.
fn read_text(d: &mut Decoder<'_>, at: usize, what: &str) -> Result<String> {
    let bytes = need(read_len_prefixed(d), at, what)?;
    std::str::from_utf8(bytes)
        .map(str::to_owned)
        .map_err(|_| corrupt(at, format!("{what} is not UTF-8")))
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

/// A WAL feature this version does not know means WALs it would misread.
fn check_wal_features(bits: Option<u64>) -> std::result::Result<(), String> {
    match bits {
        Some(b) if b & !crate::wal::WAL_FEATURES != 0 => Err(format!(
            "wal_features {b:#x} include bits {:#x} this version does not know (written by a newer version?)",
            b & !crate::wal::WAL_FEATURES
        )),
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

#[path = "edit_text.rs"]
mod text;

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
