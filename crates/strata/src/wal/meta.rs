//! WAL metadata records: records of a WAL that are not write batches.
//!
//! ```text
//! metadata record (the payload of one log record)
//! +--------------------+-----------+------------------------------------+
//! | 12 zero bytes      | kind: u8  | body                               |
//! +--------------------+-----------+------------------------------------+
//!   where a batch has sequence (fixed64) and count (fixed32): a batch is
//!   never numbered 0, so these bytes tell the two apart
//!
//! kind 1, predecessor (the first record of a WAL started by a memtable switch)
//! +----------------------+--------------------+-----------------------------+
//! | number: fixed64 LE   | size: fixed64 LE   | last_sequence: fixed64 LE   |
//! +----------------------+--------------------+-----------------------------+
//!   the WAL this one follows, its length in bytes when this one was started,
//!   and the last sequence number handed out by then
//! ```
//!
//! Why: a memtable switch does not sync the WAL it retires (that fsync, of up
//! to a memtable's worth of bytes, held up every writer behind the switch).
//! A crash may then keep the new WAL's bytes and lose the old one's tail; the
//! predecessor record lets recovery see that hole — the old WAL ends before
//! the size its successor recorded — instead of replaying later writes over
//! lost earlier ones (RocksDB's predecessor WAL info does the same). Sync
//! writes sync every retired WAL before their own, so an acknowledged sync
//! write never lies beyond a hole.
//!
//! Kinds other than 1 are ignored, so later kinds can be added without
//! breaking readers of this version. Layout in `docs/format/wal.md`.

use crate::encoding::{decode_fixed64, put_fixed64};
use crate::error::{Error, Result};

/// Bytes before the kind: a batch's sequence and count fields, all zero.
const MARKER_LEN: usize = 12;
/// The kind of a [`PredecessorWal`] record.
const KIND_PREDECESSOR: u8 = 1;

/// What a WAL records about the WAL before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PredecessorWal {
    /// The previous WAL's file number.
    pub number: u64,
    /// Its length in bytes when this WAL was started: it took no writes after.
    pub size: u64,
    /// The last sequence number handed out when this WAL was started.
    pub last_sequence: u64,
}

/// A decoded metadata record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalMeta {
    Predecessor(PredecessorWal),
    /// A kind this version does not know: ignored.
    Unknown(u8),
}

impl PredecessorWal {
    /// The record's payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![0u8; MARKER_LEN];
        out.push(KIND_PREDECESSOR);
        put_fixed64(&mut out, self.number);
        put_fixed64(&mut out, self.size);
        put_fixed64(&mut out, self.last_sequence);
        out
    }
}

/// Whether `payload` is a metadata record rather than a write batch.
pub fn is_meta(payload: &[u8]) -> bool {
    payload.len() > MARKER_LEN && payload[..MARKER_LEN].iter().all(|&b| b == 0)
}

/// Decodes a payload for which [`is_meta`] holds; a predecessor record of
/// the wrong length is corruption (`wal` names the file in the error).
pub fn decode(payload: &[u8], wal: &std::path::Path, offset: u64) -> Result<WalMeta> {
    let body = payload.get(MARKER_LEN + 1..).unwrap_or_default();
    match payload.get(MARKER_LEN).copied().unwrap_or_default() {
        KIND_PREDECESSOR => {
            let field = |i: usize| body.get(i * 8..i * 8 + 8).and_then(decode_fixed64);
            match (body.len(), field(0), field(1), field(2)) {
                (24, Some(number), Some(size), Some(last_sequence)) => {
                    Ok(WalMeta::Predecessor(PredecessorWal {
                        number,
                        size,
                        last_sequence,
                    }))
                }
                _ => Err(Error::corruption(
                    wal,
                    offset,
                    format!(
                        "predecessor WAL record of {} bytes, expected {}",
                        payload.len(),
                        MARKER_LEN + 1 + 24
                    ),
                )),
            }
        }
        kind => Ok(WalMeta::Unknown(kind)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn golden_bytes() {
        let record = PredecessorWal {
            number: 7,
            size: 0x0102_0304,
            last_sequence: 300,
        };
        let bytes = record.encode();
        let mut expected = vec![0u8; 12];
        expected.push(1);
        expected.extend_from_slice(&[7, 0, 0, 0, 0, 0, 0, 0]);
        expected.extend_from_slice(&[4, 3, 2, 1, 0, 0, 0, 0]);
        expected.extend_from_slice(&[44, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(bytes, expected);
        assert!(is_meta(&bytes));
        assert_eq!(
            decode(&bytes, Path::new("x"), 0).unwrap(),
            WalMeta::Predecessor(record)
        );
    }

    #[test]
    fn a_batch_is_never_taken_for_metadata() {
        let mut batch = crate::write::WriteBatch::new();
        batch.put(b"k", b"v").unwrap();
        batch.set_sequence(1);
        assert!(!is_meta(batch.data()));
        // An empty batch header alone (12 bytes) is not metadata either.
        assert!(!is_meta(&[0u8; 12]));
    }

    #[test]
    fn damaged_and_unknown_records() {
        let mut bytes = PredecessorWal {
            number: 1,
            size: 2,
            last_sequence: 3,
        }
        .encode();
        bytes.pop();
        let err = decode(&bytes, Path::new("000009.log"), 64).unwrap_err();
        assert!(err.to_string().contains("predecessor WAL record"), "{err}");
        let mut unknown = vec![0u8; 12];
        unknown.extend_from_slice(&[9, 1, 2]);
        assert_eq!(
            decode(&unknown, Path::new("x"), 0).unwrap(),
            WalMeta::Unknown(9)
        );
    }
}
