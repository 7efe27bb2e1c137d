//! The `merge_operator` option's text, the operator's description: its
//! name, and its settings when it has any, as RocksDB writes them in an
//! OPTIONS file (`UInt64AddOperator`, `{id=StringAppendOperator;delimiter=,;}`).
//! The OPTIONS file writes and reads it, and the MANIFEST records it: two
//! operators with one description combine operands alike, so it is what a
//! family is held to when it is reopened.

use std::sync::Arc;

use super::ini::{escape, unescape};
use super::values::{bad_value, format_struct, parse_struct};
use crate::error::Result;
use crate::merge::{merge_operator_from_name, MergeOperator, StringAppendOperator};

const NAME: &str = "merge_operator";

/// `nullptr`, `UInt64AddOperator`, or `{id=StringAppendOperator;delimiter=,;}`
/// as RocksDB writes operators with settings. Settings are escaped as
/// strings; one holding `;`, `{` or `}` cannot be read back (RocksDB's
/// layout has no escape for them).
pub(crate) fn format_merge_operator(op: Option<&dyn MergeOperator>) -> String {
    let Some(op) = op else {
        return "nullptr".to_owned();
    };
    let settings = op.options();
    if settings.is_empty() {
        return op.name().to_owned();
    }
    let mut pairs = vec![("id", op.name().to_owned())];
    pairs.extend(settings.into_iter().map(|(k, v)| (k, escape(&v))));
    format_struct(&pairs)
}

/// `(name, value)` pairs of an operator's settings.
type Settings = Vec<(String, String)>;

/// The operator's id and its settings (still escaped) of a description;
/// `None` for the settings of a bare name.
fn split(description: &str) -> Result<(String, Option<Settings>)> {
    if !description.starts_with('{') {
        return Ok((description.to_owned(), None));
    }
    let mut pairs = parse_struct(NAME, description)?;
    let at = pairs.iter().position(|(k, _)| k == "id");
    let id = at
        .map(|i| pairs.remove(i).1)
        .ok_or_else(|| bad_value(NAME, description, "an operator with an id"))?;
    Ok((id, Some(pairs)))
}

/// Reads [`format_merge_operator`]'s forms. `extra` are the caller's own
/// operators, found by name before the built-ins.
pub(crate) fn parse_merge_operator(
    value: &str,
    extra: &[Arc<dyn MergeOperator>],
    unknown: &mut Vec<String>,
) -> Result<Option<Arc<dyn MergeOperator>>> {
    if value == "nullptr" {
        return Ok(None);
    }
    let (id, settings) = split(value)?;
    let settings = settings.unwrap_or_default();
    if let Some(op) = extra.iter().find(|op| op.name() == id) {
        unknown.extend(settings.iter().map(|(k, _)| format!("{NAME}.{k}")));
        return Ok(Some(op.clone()));
    }
    let op = merge_operator_from_name(&id)?;
    if op.name() != StringAppendOperator::CLASS_NAME {
        unknown.extend(settings.iter().map(|(k, _)| format!("{NAME}.{k}")));
        return Ok(Some(op));
    }
    let mut delimiter = None;
    for (key, v) in settings {
        if key == "delimiter" {
            delimiter = Some(unescape(&v).into_bytes());
        } else {
            unknown.push(format!("{NAME}.{key}"));
        }
    }
    Ok(Some(match delimiter {
        Some(d) => Arc::new(StringAppendOperator::new(d)),
        None => op,
    }))
}

/// The operator name a description (or `nullptr`) names, if it is well
/// formed.
pub(crate) fn merge_operator_id(description: &str) -> Option<String> {
    match split(description) {
        Ok((id, _)) if id != "nullptr" => Some(id),
        _ => None,
    }
}

/// True when `op` is the operator `description` describes: the same name
/// and the same settings. A built-in's settings are compared as it reads
/// them (defaults filled in, settings it lacks ignored, as a load ignores
/// them); an application operator's must be exactly those `description`
/// lists. A bare name, as the MANIFEST recorded operators before their
/// settings, matches every operator of that name. A description that is
/// not well formed matches nothing.
pub(crate) fn merge_operator_matches(description: &str, op: &dyn MergeOperator) -> bool {
    let Ok((id, settings)) = split(description) else {
        return false;
    };
    if id != op.name() {
        return false;
    }
    let Some(settings) = settings else {
        return true;
    };
    let mut recorded: Settings = match merge_operator_from_name(&id) {
        Ok(built_in) if built_in.name() == id => {
            match parse_merge_operator(description, &[], &mut Vec::new()) {
                Ok(Some(read)) => owned(read.options()),
                _ => return false,
            }
        }
        _ => settings
            .into_iter()
            .map(|(k, v)| (k, unescape(&v)))
            .collect(),
    };
    let mut given = owned(op.options());
    recorded.sort();
    given.sort();
    recorded == given
}

fn owned(settings: Vec<(&'static str, String)>) -> Settings {
    settings
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::{MaxOperator, MergeError, UInt64AddOperator};

    #[test]
    fn merge_operators_roundtrip_with_their_settings() {
        let ops: [Arc<dyn MergeOperator>; 3] = [
            Arc::new(UInt64AddOperator),
            Arc::new(StringAppendOperator::new(b"#:\\x".to_vec())),
            Arc::new(StringAppendOperator::default()),
        ];
        for op in ops {
            let text = format_merge_operator(Some(op.as_ref()));
            let mut unknown = Vec::new();
            let back = parse_merge_operator(&text, &[], &mut unknown)
                .unwrap()
                .unwrap();
            assert_eq!(back.name(), op.name(), "{text}");
            assert_eq!(back.options(), op.options(), "{text}");
            assert!(unknown.is_empty());
            assert!(merge_operator_matches(&text, op.as_ref()), "{text}");
        }
        assert_eq!(format_merge_operator(None), "nullptr");
        let mut unknown = Vec::new();
        let op = parse_merge_operator("{id=MaxOperator;x=1;}", &[], &mut unknown).unwrap();
        assert_eq!(op.unwrap().name(), "MaxOperator");
        assert_eq!(unknown, ["merge_operator.x"]);
        assert!(parse_merge_operator("{x=1;}", &[], &mut unknown).is_err());
        assert!(parse_merge_operator("SumOperator", &[], &mut unknown).is_err());
    }

    #[test]
    fn an_operator_matches_its_name_and_settings() {
        let comma = StringAppendOperator::default();
        let pipe = StringAppendOperator::new(b"|".to_vec());
        let described = |op: &dyn MergeOperator| format_merge_operator(Some(op));
        assert_eq!(described(&comma), "{id=StringAppendOperator;delimiter=,;}");
        assert!(!merge_operator_matches(&described(&comma), &pipe));
        assert!(!merge_operator_matches(&described(&pipe), &comma));
        assert!(!merge_operator_matches("UInt64AddOperator", &comma));
        // A name alone, as the first records were written, matches any
        // settings; a built-in's missing setting is its default, and one
        // it does not have is ignored.
        assert!(merge_operator_matches("StringAppendOperator", &pipe));
        assert!(merge_operator_matches("{id=StringAppendOperator;}", &comma));
        assert!(!merge_operator_matches("{id=StringAppendOperator;}", &pipe));
        assert!(merge_operator_matches(
            "{id=MaxOperator;x=1;}",
            &MaxOperator
        ));
        // Nothing malformed matches.
        for bad in ["{id=StringAppendOperator", "{delimiter=,;}", ""] {
            assert!(!merge_operator_matches(bad, &comma), "{bad}");
        }
        assert_eq!(
            merge_operator_id(&described(&pipe)).as_deref(),
            Some("StringAppendOperator")
        );
        assert_eq!(merge_operator_id("nullptr"), None);
    }

    #[test]
    fn an_application_operator_matches_exactly_its_settings() {
        #[derive(Debug)]
        struct Scaled(u32);
        impl MergeOperator for Scaled {
            fn name(&self) -> &str {
                "app.Scaled"
            }
            fn options(&self) -> Vec<(&'static str, String)> {
                vec![("factor", self.0.to_string())]
            }
            fn full_merge(
                &self,
                _: &[u8],
                _: Option<&[u8]>,
                _: &[&[u8]],
            ) -> std::result::Result<Vec<u8>, MergeError> {
                Ok(Vec::new())
            }
        }
        let two = format_merge_operator(Some(&Scaled(2)));
        assert!(merge_operator_matches(&two, &Scaled(2)));
        assert!(!merge_operator_matches(&two, &Scaled(3)));
        assert!(!merge_operator_matches("{id=app.Scaled;}", &Scaled(2)));
        assert!(!merge_operator_matches(
            "{id=app.Scaled;factor=2;x=1;}",
            &Scaled(2)
        ));
        assert!(merge_operator_matches("app.Scaled", &Scaled(3)));
    }
}
