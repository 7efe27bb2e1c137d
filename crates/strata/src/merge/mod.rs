//! Merge operators (RocksDB's `MergeOperator`): a merge writes an operand
//! instead of a value, and reads combine the operands of a key, oldest first,
//! with the value below them.
//!
//! A [`MergeOperator`] is named by the class name RocksDB writes in OPTIONS
//! files (`merge_operator=UInt64AddOperator`), so a database's operator can be
//! found again by name when it is reopened; [`merge_operator_from_name`] is
//! that lookup. Strata's built-ins are RocksDB's: [`UInt64AddOperator`],
//! [`StringAppendOperator`], [`MaxOperator`] and [`PutOperator`].
//!
//! Invariant every operator must keep, and the tests check for the built-ins:
//! when `partial_merge` combines adjacent operands into one, a full merge of
//! the result gives the same value as a full merge of the operands it
//! replaced. Compaction relies on it to shrink operand stacks it cannot
//! resolve (no base value in its input).

mod operators;

use std::fmt;
use std::sync::Arc;

pub use operators::{MaxOperator, PutOperator, StringAppendOperator, UInt64AddOperator};

use crate::error::{Error, Result};

/// What a read makes of a key's merge `operands` (oldest first) over `base`
/// with the family's `operator`. Operands without an operator are an
/// `InvalidArgument` naming the missing option; a failing operator is
/// `MergeFailed` naming the key.
pub(crate) fn merge_for_read(
    operator: Option<&dyn MergeOperator>,
    key: &[u8],
    base: Option<&[u8]>,
    operands: &[&[u8]],
) -> Result<Vec<u8>> {
    let Some(operator) = operator else {
        return Err(Error::invalid_argument(
            "merge_operator",
            "the key has merge operands, but the column family has no merge operator \
             (set CfOptions::merge_operator)",
        ));
    };
    operator
        .full_merge(key, base, operands)
        .map_err(|e| Error::merge_failed(operator, key, e))
}

/// Combines merge operands into a value.
///
/// Implementations must be deterministic: every read, flush and compaction of
/// the same operands must produce the same bytes.
///
/// ```
/// use strata::merge::{MergeError, MergeOperator};
///
/// /// Keeps the longest operand.
/// #[derive(Debug)]
/// struct Longest;
///
/// impl MergeOperator for Longest {
///     fn name(&self) -> &str {
///         "LongestOperator"
///     }
///     fn full_merge(
///         &self,
///         _key: &[u8],
///         existing: Option<&[u8]>,
///         operands: &[&[u8]],
///     ) -> Result<Vec<u8>, MergeError> {
///         let longest = existing
///             .into_iter()
///             .chain(operands.iter().copied())
///             .max_by_key(|v| v.len())
///             .unwrap_or_default();
///         Ok(longest.to_vec())
///     }
/// }
///
/// let merged = Longest.full_merge(b"k", Some(b"ab"), &[b"abc", b"a"]).unwrap();
/// assert_eq!(merged, b"abc");
/// ```
pub trait MergeOperator: Send + Sync + fmt::Debug {
    /// The class name RocksDB writes in OPTIONS files (`UInt64AddOperator`).
    /// A database records it, with [`MergeOperator::options`], and refuses
    /// to open a family with an operator of another name or settings, so
    /// neither may change once data was written with them.
    fn name(&self) -> &str;

    /// The operator's settings, as RocksDB writes them in an OPTIONS file:
    /// `merge_operator={id=<name>;<key>=<value>;}` when there are any,
    /// `merge_operator=<name>` when there are none (the default). Every
    /// setting that changes what a merge produces belongs here (the
    /// MANIFEST records them, and a reopen with others is refused), and
    /// nothing else.
    fn options(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// The value of `key` after applying `operands` (oldest first, never
    /// empty) to `existing` (`None` when the key has no value below them: it
    /// was never written, or deleted).
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Result<Vec<u8>, MergeError>;

    /// Combines adjacent operands (oldest first, at least two) into one, or
    /// returns `None` when they cannot be combined without the base value.
    /// The default combines nothing. See the module comment for the
    /// invariant a combination must keep.
    fn partial_merge(&self, key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        let _ = (key, operands);
        None
    }
}

/// A merge that could not produce a value (RocksDB's merge "corruption"):
/// the operands or the existing value are not what the operator accepts.
/// The db layer turns it into [`Error::MergeFailed`] naming the key and the
/// operator.
///
/// ```
/// use strata::merge::MergeError;
///
/// let e = MergeError::new("operand 2 is not a decimal number");
/// assert_eq!(e.to_string(), "operand 2 is not a decimal number");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    reason: String,
}

impl MergeError {
    /// A merge failure, `reason` saying what was wrong.
    pub fn new(reason: impl Into<String>) -> Self {
        MergeError {
            reason: reason.into(),
        }
    }

    /// Why the merge failed.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for MergeError {}

/// The built-in operators: (short name users type, RocksDB class name).
const BUILT_INS: [(&str, &str); 4] = [
    ("uint64add", UInt64AddOperator::CLASS_NAME),
    ("stringappend", StringAppendOperator::CLASS_NAME),
    ("max", MaxOperator::CLASS_NAME),
    ("put", PutOperator::CLASS_NAME),
];

/// The built-in operator called `name`: a short name (`uint64add`,
/// `stringappend`, `max`, `put`, as RocksDB's `db_bench --merge_operator`
/// takes) or a RocksDB class name (`UInt64AddOperator`, ...). The string
/// append operator made this way uses the default delimiter `,`.
///
/// # Errors
///
/// [`Error::InvalidArgument`] naming `name` and listing the known names.
///
/// ```
/// use strata::merge::merge_operator_from_name;
///
/// let op = merge_operator_from_name("uint64add").unwrap();
/// assert_eq!(op.name(), "UInt64AddOperator");
/// assert!(merge_operator_from_name("sum").is_err());
/// ```
pub fn merge_operator_from_name(name: &str) -> Result<Arc<dyn MergeOperator>> {
    let class = BUILT_INS
        .iter()
        .find(|(short, class)| *short == name || *class == name)
        .map(|(_, class)| *class);
    match class {
        Some(UInt64AddOperator::CLASS_NAME) => Ok(Arc::new(UInt64AddOperator)),
        Some(StringAppendOperator::CLASS_NAME) => Ok(Arc::new(StringAppendOperator::default())),
        Some(MaxOperator::CLASS_NAME) => Ok(Arc::new(MaxOperator)),
        Some(PutOperator::CLASS_NAME) => Ok(Arc::new(PutOperator)),
        _ => {
            let known: Vec<String> = BUILT_INS
                .iter()
                .map(|(short, class)| format!("{short} ({class})"))
                .collect();
            Err(Error::invalid_argument(
                "merge_operator",
                format!(
                    "unknown merge operator {name:?}; known: {}",
                    known.join(", ")
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_takes_short_and_class_names() {
        for (short, class) in BUILT_INS {
            assert_eq!(merge_operator_from_name(short).unwrap().name(), class);
            assert_eq!(merge_operator_from_name(class).unwrap().name(), class);
        }
    }

    #[test]
    fn registry_refuses_unknown_names_listing_the_known() {
        let err = merge_operator_from_name("UInt64Add").unwrap_err();
        let text = err.to_string();
        assert!(matches!(
            err,
            Error::InvalidArgument {
                field: "merge_operator",
                ..
            }
        ));
        for (short, class) in BUILT_INS {
            assert!(text.contains(short) && text.contains(class), "{text}");
        }
        assert!(text.contains("\"UInt64Add\""), "{text}");
    }

    #[test]
    fn default_partial_merge_combines_nothing() {
        #[derive(Debug)]
        struct First;
        impl MergeOperator for First {
            fn name(&self) -> &str {
                "First"
            }
            fn full_merge(
                &self,
                _key: &[u8],
                existing: Option<&[u8]>,
                operands: &[&[u8]],
            ) -> Result<Vec<u8>, MergeError> {
                Ok(existing
                    .or(operands.first().copied())
                    .unwrap_or_default()
                    .to_vec())
            }
        }
        assert_eq!(First.partial_merge(b"k", &[b"a", b"b"]), None);
    }
}
