//! One family of the database `repair` rebuilds: the options it is
//! repaired with, what it gets back, and the merge operator its new
//! MANIFEST records.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::key::SequenceNumber;
use crate::key_order::KeyComparator;
use crate::merge::MergeOperator;
use crate::options::{
    format_merge_operator, merge_operator_id, merge_operator_matches, parse_merge_operator,
    CfOptions,
};
use crate::version::{BlobFileAddition, FileMetaData};

/// One family of the repaired database.
pub(super) struct Family {
    pub(super) name: String,
    pub(super) options: CfOptions,
    pub(super) order: KeyComparator,
    pub(super) tables: Vec<FileMetaData>,
    /// Each blob file, with the count and bytes of the records tables
    /// point at.
    pub(super) blob_files: BTreeMap<u64, (BlobFileAddition, (u64, u64))>,
    /// The largest log number its tables record: its writes in older WALs
    /// are in them.
    pub(super) log_number: u64,
    /// The largest sequence number its tables hold of writes that came
    /// through a WAL: its WAL records up to it are in them.
    pub(super) logged_through: SequenceNumber,
    /// The merge operator the new MANIFEST records for it (see
    /// `Family::with_options`).
    pub(super) merge_operator: Option<MergeRecord>,
}

/// A family's merge operator as a MANIFEST records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct MergeRecord {
    pub(super) name: String,
    /// Its name and settings (`options::format_merge_operator`), or its
    /// name alone where an old record says no more.
    pub(super) description: String,
}

impl MergeRecord {
    fn of(op: &dyn MergeOperator) -> MergeRecord {
        MergeRecord {
            name: op.name().to_owned(),
            description: format_merge_operator(Some(op)),
        }
    }
}

impl Family {
    /// Family `id`, `name`, with its options: `named`'s (the OPTIONS file's
    /// and the caller's), or for the default family the caller's `db`
    /// options, or else `db`'s without a merge operator (the default
    /// family's would merge another family's operands wrongly). The new
    /// MANIFEST records the merge operator the old one did (`recorded`, a
    /// description or a name), completed by the one given, or else the one
    /// given: without a record, the first open with any operator would be
    /// accepted and read merged keys as garbage.
    pub(super) fn with_options(
        named: &BTreeMap<String, CfOptions>,
        db: &CfOptions,
        id: u32,
        name: &str,
        recorded: Option<&str>,
    ) -> Result<Family> {
        let given = named.get(name).or_else(|| (id == 0).then_some(db)).cloned();
        let given_operator = given.as_ref().and_then(|o| o.merge_operator.clone());
        let mut options = given.unwrap_or_else(|| CfOptions {
            merge_operator: None,
            ..db.clone()
        });
        let merge_operator = match (recorded, given_operator.as_deref()) {
            (Some(recorded), Some(op)) if !merge_operator_matches(recorded, op) => {
                return Err(Error::invalid_argument(
                    "merge_operator",
                    format!(
                        "column family {name:?} was opened with merge operator {recorded} (its \
                         MANIFEST records it), but repair is given {}; its merge operands, if \
                         any, need {recorded}: pass the family's options with it",
                        format_merge_operator(Some(op))
                    ),
                ));
            }
            (_, Some(op)) => Some(MergeRecord::of(op)),
            (Some(recorded), None) => {
                // A built-in operator known only from the record is taken,
                // with its settings, for the compaction of step 7; another
                // stays unknown, and its operands are kept as they are
                // until an open gives it.
                options.merge_operator = parse_merge_operator(recorded, &[], &mut Vec::new())
                    .ok()
                    .flatten();
                Some(MergeRecord {
                    name: merge_operator_id(recorded).unwrap_or_else(|| recorded.to_owned()),
                    description: recorded.to_owned(),
                })
            }
            (None, None) => None,
        };
        Ok(Family {
            name: name.to_owned(),
            order: KeyComparator::new(&options.comparator),
            options,
            tables: Vec::new(),
            blob_files: BTreeMap::new(),
            log_number: 0,
            logged_through: 0,
            merge_operator,
        })
    }

    /// Whether its options hold the merge operator the MANIFEST records.
    pub(super) fn has_recorded_merge_operator(&self) -> bool {
        let given = self.options.merge_operator.as_deref();
        self.merge_operator.as_ref().is_none_or(|record| {
            given.is_some_and(|op| merge_operator_matches(&record.description, op))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::merge_operator_from_name;

    fn with(operator: Option<&str>) -> CfOptions {
        CfOptions {
            merge_operator: operator.map(|n| merge_operator_from_name(n).unwrap()),
            ..CfOptions::default()
        }
    }

    fn operator(family: &Family) -> Option<&str> {
        family.options.merge_operator.as_ref().map(|op| op.name())
    }

    fn record(family: &Family) -> Option<&str> {
        family
            .merge_operator
            .as_ref()
            .map(|r| r.description.as_str())
    }

    /// What each family is repaired with and what its record says, for
    /// every way the old MANIFEST's record and the given options combine.
    #[test]
    fn the_record_comes_from_the_old_manifest_or_else_the_options_given() {
        let named = BTreeMap::from([("fam".to_owned(), with(Some("uint64add")))]);
        let db = with(Some("max"));
        let family = |id, name, recorded| Family::with_options(&named, &db, id, name, recorded);

        // Given, no record: the given one is recorded.
        let fam = family(1, "fam", None).unwrap();
        assert_eq!(record(&fam), Some("UInt64AddOperator"));
        let default = family(0, "default", None).unwrap();
        assert_eq!(record(&default), Some("MaxOperator"));
        // Named nowhere: the caller's options without the default family's
        // operator, and nothing recorded.
        let other = family(2, "other", None).unwrap();
        assert_eq!((operator(&other), record(&other)), (None, None));
        // Recorded, not given: kept, and a built-in one is taken.
        let other = family(2, "other", Some("StringAppendOperator")).unwrap();
        assert_eq!(operator(&other), Some("StringAppendOperator"));
        assert!(other.has_recorded_merge_operator());
        let own = family(2, "other", Some("MyOperator")).unwrap();
        assert_eq!(record(&own), Some("MyOperator"));
        assert_eq!(operator(&own), None);
        assert!(!own.has_recorded_merge_operator());
        // Recorded and given the same: fine; another: refused, naming both.
        family(1, "fam", Some("UInt64AddOperator")).unwrap();
        let Err(err) = family(1, "fam", Some("MaxOperator")) else {
            panic!("another operator than the recorded one was taken");
        };
        let text = err.to_string();
        assert!(text.contains("MaxOperator") && text.contains("UInt64AddOperator"));
        assert!(matches!(err, Error::InvalidArgument { .. }), "{text}");
    }

    /// Settings are part of the record: a recorded delimiter is taken with
    /// the operator when repair is given none, and another is refused; a
    /// record by name alone is completed by the operator given.
    #[test]
    fn the_record_holds_the_operators_settings() {
        let db = CfOptions::default();
        let bar = "{id=StringAppendOperator;delimiter=|;}";
        let family = |named: &BTreeMap<String, CfOptions>, recorded| {
            Family::with_options(named, &db, 1, "lists", recorded)
        };
        let lists = family(&BTreeMap::new(), Some(bar)).unwrap();
        assert_eq!(record(&lists), Some(bar));
        let name = lists.merge_operator.as_ref().map(|r| r.name.as_str());
        assert_eq!(name, Some("StringAppendOperator"));
        let taken = lists.options.merge_operator.as_ref().map(|op| op.options());
        assert_eq!(taken, Some(vec![("delimiter", "|".to_owned())]));
        assert!(lists.has_recorded_merge_operator());

        let comma = BTreeMap::from([("lists".to_owned(), with(Some("stringappend")))]);
        let Err(err) = family(&comma, Some(bar)) else {
            panic!("another delimiter than the recorded one was taken");
        };
        assert!(err.to_string().contains("delimiter=|"), "{err}");
        let completed = family(&comma, Some("StringAppendOperator")).unwrap();
        let comma_record = "{id=StringAppendOperator;delimiter=,;}";
        assert_eq!(record(&completed), Some(comma_record));
    }
}
