//! Which merge operator each family is held to. The MANIFEST records the
//! operator a family is first opened or created with: its name, and its
//! description (name and settings) when it has settings. Where the MANIFEST
//! has no record (a database written before the record existed, or since
//! rewritten by such a build) or a name alone (as the first builds with the
//! record wrote it), the newest OPTIONS file stands in: every build wrote
//! there the operator, settings included, it opened each family with. An
//! open that gives a family another operator, or none, is refused: read
//! through another operator, merged keys read silently wrong, and
//! compactions would write the wrong values for good.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use super::open_checks::family_name;
use crate::error::{Error, Result};
use crate::fs::Fs;
use crate::merge::MergeOperator;
use crate::options::{
    format_merge_operator, merge_operator_id, merge_operator_matches, newest_merge_operators,
    parse_merge_operator, CfOptions, StoredMergeOperators,
};
use crate::version::{VersionEdit, VersionSet};

/// What a family is held to, and where that was found.
struct Held<'a> {
    /// The operator's description, or its name alone.
    description: &'a str,
    /// The OPTIONS file that says so; `None` when the MANIFEST does.
    options_file: Option<&'a Path>,
}

/// Refuses an open that gives a family of `versions` (an existing
/// database's, when `exists`) another merge operator than the one it is
/// held to, or none. The newest OPTIONS file in `dir` is read only when
/// some family's record lacks a description.
pub(super) fn check(
    fs: &dyn Fs,
    dir: &Path,
    versions: &VersionSet,
    families: &BTreeMap<u32, Arc<CfOptions>>,
    exists: bool,
) -> Result<()> {
    let needs_file = families
        .keys()
        .any(|&id| versions.merge_operator_description(id).is_none());
    // A new database's directory may hold an OPTIONS file of a creation a
    // crash interrupted: settings for no data, which bind nothing.
    // An OPTIONS file that cannot be read binds nothing either: it is
    // advisory (the MANIFEST is the database), and an open does not fail
    // over it; the check then rests on the MANIFEST's records alone.
    let stored = if exists && needs_file {
        newest_merge_operators(fs, dir).ok().flatten()
    } else {
        None
    };
    for (&id, options) in families {
        let name = family_name(versions, id);
        let Some(held) = held_to(versions, id, name, stored.as_ref()) else {
            continue;
        };
        let given = options.merge_operator.as_deref();
        if !given.is_some_and(|op| merge_operator_matches(held.description, op)) {
            return Err(refusal(name, &held, given));
        }
    }
    Ok(())
}

fn held_to<'a>(
    versions: &'a VersionSet,
    id: u32,
    name: &str,
    stored: Option<&'a StoredMergeOperators>,
) -> Option<Held<'a>> {
    if let Some(description) = versions.merge_operator_description(id) {
        return Some(Held {
            description,
            options_file: None,
        });
    }
    let from_file = stored.and_then(|s| Some((s.of(name)?, s.file.as_path())));
    match (versions.merge_operator(id), from_file) {
        // The file tells the settings the name leaves open.
        (Some(recorded), Some((description, file)))
            if description != recorded
                && merge_operator_id(description).as_deref() == Some(recorded) =>
        {
            Some(Held {
                description,
                options_file: Some(file),
            })
        }
        (Some(recorded), _) => Some(Held {
            description: recorded,
            options_file: None,
        }),
        // With no MANIFEST record, the file binds only to an operator a
        // build can name: a damaged byte in it ("nulltr") must not refuse
        // the open of a healthy database. An application's operator is then
        // recorded by its first open.
        (None, Some((description, file)))
            if merge_operator_id(description)
                .is_some_and(|id| crate::merge::merge_operator_from_name(&id).is_ok()) =>
        {
            Some(Held {
                description,
                options_file: Some(file),
            })
        }
        (None, _) => None,
    }
}

/// What the family was opened with is known; whether merge operands were
/// ever written is not (a family with an operator may take one at any
/// time), so the message does not claim them.
fn refusal(family: &str, held: &Held<'_>, given: Option<&dyn MergeOperator>) -> Error {
    let recorded = held.description;
    let source = match held.options_file {
        Some(file) => format!(", as {} records", file.display()),
        None => String::new(),
    };
    let given = match given {
        Some(op) => format!("merge operator {}", format_merge_operator(Some(op))),
        None => "no merge operator".to_owned(),
    };
    Error::invalid_argument(
        "merge_operator",
        format!(
            "column family {family:?} was opened with merge operator {recorded}{source}; its \
             merge operands, if any, need it, but its options give {given}; open it with \
             {recorded}"
        ),
    )
}

/// Adds to `edits` a record of each family's operator where the MANIFEST
/// says less than the operator it is opened with: a family opened with one
/// for the first time, or recorded by name when the operator has settings.
/// Runs after [`check`], so that operator is the one the family is held to.
pub(super) fn record_at_open(
    versions: &VersionSet,
    families: &BTreeMap<u32, Arc<CfOptions>>,
    edits: &mut BTreeMap<u32, VersionEdit>,
) {
    for (&id, options) in families {
        let Some(op) = options.merge_operator.as_deref() else {
            continue;
        };
        let description = format_merge_operator(Some(op));
        let wanted = (
            Some(op.name()),
            (description != op.name()).then_some(description.as_str()),
        );
        let recorded = (
            versions.merge_operator(id),
            versions.merge_operator_description(id),
        );
        if recorded != wanted {
            edits
                .entry(id)
                .or_default()
                .set_merge_operator(op.name(), &description);
        }
    }
}

/// Records `op` in `edit`, which creates a family.
pub(super) fn record(edit: &mut VersionEdit, op: Option<&dyn MergeOperator>) {
    if let Some(op) = op {
        edit.set_merge_operator(op.name(), &format_merge_operator(Some(op)));
    }
}

/// The built-in operator family `id` is recorded with, for a read-only
/// open that guesses the options of a family the caller did not name;
/// `None` when `guess` already is that operator (the OPTIONS file's, with
/// its settings), or the record names none or an application's.
pub(super) fn recorded_built_in(
    versions: &VersionSet,
    id: u32,
    guess: Option<&dyn MergeOperator>,
) -> Option<Arc<dyn MergeOperator>> {
    let record = versions
        .merge_operator_description(id)
        .or_else(|| versions.merge_operator(id))?;
    if guess.is_some_and(|op| merge_operator_matches(record, op)) {
        return None;
    }
    parse_merge_operator(record, &[], &mut Vec::new())
        .ok()
        .flatten()
}
