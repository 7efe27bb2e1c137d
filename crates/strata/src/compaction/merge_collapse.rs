//! Merging operands during compaction, so operand chains stop growing: within
//! one snapshot stripe (entries the same snapshots see), a chain of operands
//! over a value or a deletion becomes one value, a chain with nothing older
//! anywhere becomes one value too, and a chain whose base lies outside the
//! compaction is combined by the operator's partial merge when it has one.
//!
//! Every result keeps the sequence number of the chain's newest operand, so
//! what each snapshot sees is unchanged. Without an operator, or when the
//! operator fails, entries are written as they came (a read reports the
//! failure, naming the key): compaction never loses an operand it cannot
//! combine.

use crate::key::{internal_key, ParsedInternalKey, SequenceNumber, ValueType};
use crate::merge::MergeOperator;

/// One entry of a user key: internal key and value.
pub(crate) type Entry = (Vec<u8>, Vec<u8>);

/// The stripe of `seq`: the number of snapshots below it (`snapshots`
/// ascending), as the drop rules count them.
fn stripe(snapshots: &[SequenceNumber], seq: SequenceNumber) -> usize {
    snapshots.partition_point(|&s| s < seq)
}

/// The kept entries of one user key (newest first), with operand chains
/// combined. `nothing_below`: no older version of the key exists outside
/// what `entries` hold (deeper levels and left-out files included).
pub(crate) fn collapse(
    entries: Vec<Entry>,
    snapshots: &[SequenceNumber],
    operator: Option<&dyn MergeOperator>,
    nothing_below: bool,
) -> Vec<Entry> {
    let Some(operator) = operator else {
        return entries;
    };
    let parsed: Vec<Option<(SequenceNumber, ValueType)>> = entries
        .iter()
        .map(|(k, _)| ParsedInternalKey::parse(k).and_then(|p| Some((p.seq, p.value_type()?))))
        .collect();
    if parsed.iter().any(Option::is_none) {
        // The drop rules refused malformed keys already; be safe anyway.
        return entries;
    }
    let meta: Vec<(SequenceNumber, ValueType)> = parsed.into_iter().flatten().collect();
    let mut out = Vec::with_capacity(entries.len());
    let mut i = 0;
    while i < entries.len() {
        let (seq, value_type) = meta[i];
        if value_type != ValueType::Merge {
            out.push(entries[i].clone());
            i += 1;
            continue;
        }
        let group = stripe(snapshots, seq);
        let start = i;
        while i < entries.len()
            && meta[i].1 == ValueType::Merge
            && stripe(snapshots, meta[i].0) == group
        {
            i += 1;
        }
        let chain = &entries[start..i];
        let base = (i < entries.len() && stripe(snapshots, meta[i].0) == group).then_some(i);
        let key = ParsedInternalKey::parse(&entries[start].0).map(|p| p.user_key.to_vec());
        let Some(key) = key else {
            out.extend_from_slice(chain);
            continue;
        };
        let operands: Vec<&[u8]> = chain.iter().rev().map(|(_, v)| v.as_slice()).collect();
        let full = match base {
            Some(b) => {
                i += 1;
                let existing = (meta[b].1 == ValueType::Put).then(|| entries[b].1.as_slice());
                Some((operator.full_merge(&key, existing, &operands), Some(b)))
            }
            None if i == entries.len() && group == 0 && nothing_below => {
                Some((operator.full_merge(&key, None, &operands), None))
            }
            None => None,
        };
        match full {
            Some((Ok(value), _)) => out.push((internal_key(&key, seq, ValueType::Put), value)),
            Some((Err(_), base)) => {
                out.extend_from_slice(chain);
                out.extend(base.map(|b| entries[b].clone()));
            }
            None => match operator.partial_merge(&key, &operands) {
                Some(value) if chain.len() > 1 => {
                    out.push((internal_key(&key, seq, ValueType::Merge), value))
                }
                _ => out.extend_from_slice(chain),
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::{StringAppendOperator, UInt64AddOperator};

    fn e(key: &str, seq: u64, t: ValueType, v: &str) -> Entry {
        (internal_key(key.as_bytes(), seq, t), v.as_bytes().to_vec())
    }

    fn show(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|(k, v)| {
                let p = ParsedInternalKey::parse(k).unwrap();
                format!(
                    "{:?}@{}={}",
                    p.value_type().unwrap(),
                    p.seq,
                    String::from_utf8_lossy(v)
                )
            })
            .collect()
    }

    #[test]
    fn chains_over_a_base_become_one_value_per_stripe() {
        use ValueType::*;
        let op = StringAppendOperator::new(b",".to_vec());
        // A snapshot at 5: stripes (..=5] and (5..).
        let entries = vec![
            e("k", 9, Merge, "c"),
            e("k", 8, Merge, "b"),
            e("k", 7, Put, "a"),
            e("k", 4, Merge, "y"),
            e("k", 3, Delete, ""),
        ];
        let out = collapse(entries, &[5], Some(&op), false);
        assert_eq!(show(&out), ["Put@9=a,b,c", "Put@4=y"]);
    }

    #[test]
    fn a_chain_without_its_base_is_partially_merged_or_left() {
        use ValueType::*;
        let entries = || vec![e("k", 9, Merge, "c"), e("k", 8, Merge, "b")];
        // Nothing below: a full merge over nothing.
        let add = UInt64AddOperator;
        let ones = |seq| (internal_key(b"k", seq, Merge), 1u64.to_le_bytes().to_vec());
        let out = collapse(vec![ones(9), ones(8)], &[], Some(&add), true);
        assert_eq!(
            out,
            vec![(internal_key(b"k", 9, Put), 2u64.to_le_bytes().to_vec())]
        );
        // Data may lie below: operands combine into one operand.
        let out = collapse(vec![ones(9), ones(8)], &[], Some(&add), false);
        assert_eq!(
            out,
            vec![(internal_key(b"k", 9, Merge), 2u64.to_le_bytes().to_vec())]
        );
        let append = StringAppendOperator::new(b",".to_vec());
        assert_eq!(
            show(&collapse(entries(), &[], Some(&append), false)),
            ["Merge@9=b,c"]
        );
        // No operator: as they came.
        assert_eq!(collapse(entries(), &[], None, true), entries());
    }
}
