//! The built-in merge operators, with RocksDB's semantics and class names
//! (RocksDB's `utilities/merge_operators`).

use super::{MergeError, MergeOperator};

/// Adds 8-byte little-endian unsigned integers, wrapping on overflow
/// (RocksDB's `UInt64AddOperator`, short name `uint64add`).
///
/// An operand or existing value that is not exactly 8 bytes counts as 0, as
/// in RocksDB (which logs it): the merge never fails, so one bad write cannot
/// make a key unreadable, but that write's amount is lost.
///
/// ```
/// use strata::merge::{MergeOperator, UInt64AddOperator};
///
/// let one = 1u64.to_le_bytes();
/// let two = 2u64.to_le_bytes();
/// let sum = UInt64AddOperator.full_merge(b"k", Some(&one), &[&two, &two]).unwrap();
/// assert_eq!(sum, 5u64.to_le_bytes());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UInt64AddOperator;

impl UInt64AddOperator {
    /// RocksDB's class name.
    pub const CLASS_NAME: &'static str = "UInt64AddOperator";

    /// The number an operand stands for: 0 unless it is exactly 8 bytes.
    fn decode(bytes: &[u8]) -> u64 {
        <[u8; 8]>::try_from(bytes).map_or(0, u64::from_le_bytes)
    }

    fn sum<'a>(values: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
        values
            .map(Self::decode)
            .fold(0u64, u64::wrapping_add)
            .to_le_bytes()
            .to_vec()
    }
}

impl MergeOperator for UInt64AddOperator {
    fn name(&self) -> &str {
        Self::CLASS_NAME
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(Self::sum(
            existing.into_iter().chain(operands.iter().copied()),
        ))
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(Self::sum(operands.iter().copied()))
    }
}

/// Joins the existing value and the operands, oldest first, with a delimiter
/// between each two (RocksDB's `StringAppendOperator`, short name
/// `stringappend`). Default delimiter `,`.
///
/// ```
/// use strata::merge::{MergeOperator, StringAppendOperator};
///
/// let op = StringAppendOperator::default();
/// assert_eq!(op.full_merge(b"k", Some(b"a"), &[b"b", b"c"]).unwrap(), b"a,b,c");
/// let op = StringAppendOperator::new(b"--".to_vec());
/// assert_eq!(op.full_merge(b"k", None, &[b"b", b"c"]).unwrap(), b"b--c");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringAppendOperator {
    delimiter: Vec<u8>,
}

impl Default for StringAppendOperator {
    fn default() -> Self {
        StringAppendOperator {
            delimiter: b",".to_vec(),
        }
    }
}

impl StringAppendOperator {
    /// RocksDB's class name.
    pub const CLASS_NAME: &'static str = "StringAppendOperator";

    /// An operator joining with `delimiter` (may be empty, or several bytes,
    /// as RocksDB's `StringAppendTESTOperator` allows).
    pub fn new(delimiter: Vec<u8>) -> Self {
        StringAppendOperator { delimiter }
    }

    /// The bytes put between two values.
    pub fn delimiter(&self) -> &[u8] {
        &self.delimiter
    }

    fn join<'a>(&self, values: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, value) in values.enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.delimiter);
            }
            out.extend_from_slice(value);
        }
        out
    }
}

impl MergeOperator for StringAppendOperator {
    fn name(&self) -> &str {
        Self::CLASS_NAME
    }

    /// RocksDB writes `merge_operator={id=StringAppendOperator;delimiter=,;}`.
    fn options(&self) -> Vec<(&'static str, String)> {
        vec![(
            "delimiter",
            String::from_utf8_lossy(&self.delimiter).into_owned(),
        )]
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        Ok(self.join(existing.into_iter().chain(operands.iter().copied())))
    }

    /// Joining is associative, so adjacent operands join into one.
    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(self.join(operands.iter().copied()))
    }
}

/// Keeps the bytewise greatest of the existing value and the operands
/// (RocksDB's `MaxOperator`, short name `max`).
///
/// ```
/// use strata::merge::{MaxOperator, MergeOperator};
///
/// assert_eq!(MaxOperator.full_merge(b"k", Some(b"b"), &[b"a", b"ab"]).unwrap(), b"b");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaxOperator;

impl MaxOperator {
    /// RocksDB's class name.
    pub const CLASS_NAME: &'static str = "MaxOperator";
}

impl MergeOperator for MaxOperator {
    fn name(&self) -> &str {
        Self::CLASS_NAME
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let max = existing
            .into_iter()
            .chain(operands.iter().copied())
            .max()
            .unwrap_or_default();
        Ok(max.to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.iter().copied().max().map(<[u8]>::to_vec)
    }
}

/// The newest operand wins, as if every merge were a put (RocksDB's
/// `PutOperator`, short name `put`; for testing the merge path).
///
/// ```
/// use strata::merge::{MergeOperator, PutOperator};
///
/// assert_eq!(PutOperator.full_merge(b"k", Some(b"a"), &[b"b", b"c"]).unwrap(), b"c");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PutOperator;

impl PutOperator {
    /// RocksDB's class name.
    pub const CLASS_NAME: &'static str = "PutOperator";
}

impl MergeOperator for PutOperator {
    fn name(&self) -> &str {
        Self::CLASS_NAME
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError> {
        let newest = operands.last().copied().or(existing).unwrap_or_default();
        Ok(newest.to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        operands.last().map(|v| v.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn u64s(values: &[u64]) -> Vec<Vec<u8>> {
        values.iter().map(|v| v.to_le_bytes().to_vec()).collect()
    }

    fn refs(values: &[Vec<u8>]) -> Vec<&[u8]> {
        values.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn uint64add_wraps_and_counts_bad_sizes_as_zero() {
        let ops = u64s(&[u64::MAX, 2]);
        let sum = UInt64AddOperator.full_merge(b"k", None, &refs(&ops));
        assert_eq!(sum.unwrap(), 1u64.to_le_bytes());
        let bad: [&[u8]; 3] = [b"abc", &5u64.to_le_bytes(), b"123456789"];
        let sum = UInt64AddOperator.full_merge(b"k", Some(b""), &bad);
        assert_eq!(sum.unwrap(), 5u64.to_le_bytes());
    }

    #[test]
    fn stringappend_joins_with_the_delimiter_only_between_values() {
        let op = StringAppendOperator::default();
        assert_eq!(op.full_merge(b"k", None, &[b"x"]).unwrap(), b"x");
        assert_eq!(op.full_merge(b"k", Some(b""), &[b"x"]).unwrap(), b",x");
        let empty = StringAppendOperator::new(Vec::new());
        assert_eq!(empty.full_merge(b"k", Some(b"a"), &[b"b"]).unwrap(), b"ab");
    }

    #[test]
    fn names_are_rocksdbs_class_names() {
        let ops: [&dyn MergeOperator; 4] = [
            &UInt64AddOperator,
            &StringAppendOperator::default(),
            &MaxOperator,
            &PutOperator,
        ];
        let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
        assert_eq!(
            names,
            [
                "UInt64AddOperator",
                "StringAppendOperator",
                "MaxOperator",
                "PutOperator"
            ]
        );
    }

    /// Replaces `operands[start..end]` by their partial merge, when the
    /// operator combines them, and checks the full merge is unchanged.
    fn check_partial_merge_keeps_the_full_merge(
        op: &dyn MergeOperator,
        existing: Option<&[u8]>,
        operands: &[Vec<u8>],
        start: usize,
        len: usize,
    ) -> Result<(), TestCaseError> {
        let all = refs(operands);
        let end = (start + len).min(all.len());
        let Some(run) = all.get(start..end).filter(|r| r.len() >= 2) else {
            return Ok(());
        };
        let Some(combined) = op.partial_merge(b"k", run) else {
            return Ok(());
        };
        let mut shrunk: Vec<&[u8]> = all.get(..start).unwrap_or_default().to_vec();
        shrunk.push(&combined);
        shrunk.extend_from_slice(all.get(end..).unwrap_or_default());
        let whole = op.full_merge(b"k", existing, &all);
        prop_assert_eq!(
            whole,
            op.full_merge(b"k", existing, &shrunk),
            "{}",
            op.name()
        );
        Ok(())
    }

    fn operand() -> impl Strategy<Value = Vec<u8>> {
        // Mostly 8-byte values so uint64add sees real numbers, some not.
        prop_oneof![
            3 => any::<u64>().prop_map(|v| v.to_le_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 0..12),
        ]
    }

    proptest! {
        #[test]
        fn partial_merges_do_not_change_full_merges(
            existing in proptest::option::of(operand()),
            operands in proptest::collection::vec(operand(), 1..10),
            start in 0usize..10,
            len in 2usize..10,
            delimiter in proptest::collection::vec(any::<u8>(), 0..3),
        ) {
            let ops: [&dyn MergeOperator; 4] = [
                &UInt64AddOperator,
                &StringAppendOperator::new(delimiter),
                &MaxOperator,
                &PutOperator,
            ];
            for op in ops {
                check_partial_merge_keeps_the_full_merge(
                    op, existing.as_deref(), &operands, start, len)?;
            }
        }

        #[test]
        fn merging_in_steps_equals_merging_at_once(
            existing in proptest::option::of(operand()),
            operands in proptest::collection::vec(operand(), 2..10),
            split in 1usize..9,
        ) {
            // Folding the first operands into a value, then merging the rest
            // onto it, is what a read of a compacted key does; for these
            // operators it must equal one merge of everything.
            let all = refs(&operands);
            let split = split.min(all.len() - 1);
            let (first, rest) = all.split_at(split);
            let append = StringAppendOperator::default();
            let ops: [&dyn MergeOperator; 4] = [&UInt64AddOperator, &append, &MaxOperator, &PutOperator];
            for op in ops {
                let step = op.full_merge(b"k", existing.as_deref(), first).unwrap();
                prop_assert_eq!(
                    op.full_merge(b"k", Some(&step), rest),
                    op.full_merge(b"k", existing.as_deref(), &all)
                );
            }
        }
    }
}
