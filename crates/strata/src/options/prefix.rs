//! Prefix extractors (RocksDB's `SliceTransform`s `NewFixedPrefixTransform`
//! and `NewCappedPrefixTransform`): they map a user key to the prefix that
//! prefix bloom filters hold and that `prefix_same_as_start` iterators stay
//! inside.
//!
//! Invariant every use relies on: the keys sharing a prefix `p` are exactly
//! the keys in `[p, prefix_end(p))`, a contiguous run in bytewise order. That
//! is what lets a seek confined to one prefix skip every source whose filter
//! proves the prefix absent.

use crate::error::{Error, Result};

/// Maps user keys to prefixes. Recorded by name in the OPTIONS file and in
/// every table built with it, so a table built with another extractor (or
/// none) never has its prefix filter trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixExtractor {
    /// The first `n` bytes; keys shorter than `n` have no prefix (they are
    /// outside the domain, and prefix filters say nothing about them).
    Fixed(usize),
    /// The first `n` bytes, or the whole key when it is shorter: every key
    /// is in the domain.
    Capped(usize),
}

const FIXED_NAME: &str = "rocksdb.FixedPrefix.";
const CAPPED_NAME: &str = "rocksdb.CappedPrefix.";

impl PrefixExtractor {
    /// Reads `fixed:N`, `capped:N` (RocksDB's option-string forms) or the
    /// names [`name`](Self::name) gives (`rocksdb.FixedPrefix.N`,
    /// `rocksdb.CappedPrefix.N`). `N` must be at least 1. Anything else is
    /// `InvalidArgument` naming `prefix_extractor`.
    pub fn parse(text: &str) -> Result<PrefixExtractor> {
        let text = text.trim();
        if text.contains("id=") {
            return Self::parse_struct(text);
        }
        let (kind, n): (fn(usize) -> PrefixExtractor, &str) = if let Some(n) = text
            .strip_prefix("fixed:")
            .or_else(|| text.strip_prefix(FIXED_NAME))
        {
            (PrefixExtractor::Fixed, n)
        } else if let Some(n) = text
            .strip_prefix("capped:")
            .or_else(|| text.strip_prefix(CAPPED_NAME))
        {
            (PrefixExtractor::Capped, n)
        } else {
            return Err(Error::invalid_argument(
                "prefix_extractor",
                format!(
                    "unknown prefix extractor {text:?}: Strata knows fixed:N, capped:N, \
                     {FIXED_NAME}N and {CAPPED_NAME}N"
                ),
            ));
        };
        match n.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(kind(n)),
            _ => Err(Error::invalid_argument(
                "prefix_extractor",
                format!("{text:?}: the prefix length must be a whole number of at least 1"),
            )),
        }
    }

    /// The struct form RocksDB also reads: `{id=rocksdb.FixedPrefix;length=8}`
    /// (braces optional; an id that carries the length, as
    /// `id=rocksdb.FixedPrefix.8`, needs no `length`).
    fn parse_struct(text: &str) -> Result<PrefixExtractor> {
        let body = text.trim_start_matches('{').trim_end_matches('}');
        let (mut id, mut length) = (None, None);
        for field in body.split(';').map(str::trim).filter(|f| !f.is_empty()) {
            match field.split_once('=') {
                Some(("id", v)) => id = Some(v.trim()),
                Some(("length", v)) => length = Some(v.trim()),
                _ => {
                    return Err(Error::invalid_argument(
                        "prefix_extractor",
                        format!("{text:?}: unknown field {field:?}"),
                    ))
                }
            }
        }
        let id = id.unwrap_or_default();
        match length {
            Some(n) => Self::parse(&format!("{id}.{n}")),
            None => Self::parse(id),
        }
    }

    /// RocksDB's name for it: `rocksdb.FixedPrefix.N` or `rocksdb.CappedPrefix.N`.
    pub fn name(&self) -> String {
        match self {
            PrefixExtractor::Fixed(n) => format!("{FIXED_NAME}{n}"),
            PrefixExtractor::Capped(n) => format!("{CAPPED_NAME}{n}"),
        }
    }

    /// The prefix of `key`, or `None` when the key is outside the domain.
    #[inline]
    pub fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        match *self {
            PrefixExtractor::Fixed(n) => key.get(..n),
            PrefixExtractor::Capped(n) => Some(&key[..n.min(key.len())]),
        }
    }

    /// The exclusive end of the keys whose prefix is `prefix` (a value
    /// [`prefix`](Self::prefix) returned): every key `k` with
    /// `prefix <= k < end` has that prefix, and no other key does. `None`
    /// when no key after the run exists (the prefix is all `0xff` bytes).
    pub fn prefix_end(&self, prefix: &[u8]) -> Option<Vec<u8>> {
        let mut end = Vec::new();
        self.prefix_end_into(prefix, &mut end).then_some(end)
    }

    /// [`prefix_end`](Self::prefix_end) into `end` (replacing what it
    /// held); false when there is no end.
    pub(crate) fn prefix_end_into(&self, prefix: &[u8], end: &mut Vec<u8>) -> bool {
        end.clear();
        if let PrefixExtractor::Capped(n) = *self {
            if prefix.len() < n {
                // A short key is its own prefix, and no longer key shares it:
                // the run is that one key.
                end.extend_from_slice(prefix);
                end.push(0);
                return true;
            }
        }
        // Every key starting with `prefix`: up to the next prefix in order.
        let Some(last) = prefix.iter().rposition(|&b| b != 0xff) else {
            return false;
        };
        end.extend_from_slice(&prefix[..=last]);
        end[last] += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_parse_back_and_bad_ones_are_refused() {
        for e in [PrefixExtractor::Fixed(8), PrefixExtractor::Capped(3)] {
            assert_eq!(PrefixExtractor::parse(&e.name()).ok(), Some(e));
        }
        assert_eq!(
            PrefixExtractor::parse("fixed:4").ok(),
            Some(PrefixExtractor::Fixed(4))
        );
        assert_eq!(
            PrefixExtractor::parse("capped:12").ok(),
            Some(PrefixExtractor::Capped(12))
        );
        assert_eq!(
            PrefixExtractor::Fixed(8).name(),
            "rocksdb.FixedPrefix.8",
            "RocksDB's spelling"
        );
        for text in [
            "{id=rocksdb.FixedPrefix;length=8}",
            "id=rocksdb.FixedPrefix.8",
        ] {
            assert_eq!(
                PrefixExtractor::parse(text).ok(),
                Some(PrefixExtractor::Fixed(8)),
                "{text}"
            );
        }
        for bad in [
            "fixed:0",
            "fixed:",
            "fixed:x",
            "rocksdb.Noop",
            "",
            "hash:4",
            "{id=rocksdb.FixedPrefix}",
            "{id=rocksdb.FixedPrefix;length=8;x=1}",
        ] {
            let err = PrefixExtractor::parse(bad).unwrap_err().to_string();
            assert!(err.contains("prefix_extractor"), "{bad}: {err}");
        }
    }

    #[test]
    fn domains() {
        let fixed = PrefixExtractor::Fixed(3);
        assert_eq!(fixed.prefix(b"abcd"), Some(&b"abc"[..]));
        assert_eq!(fixed.prefix(b"abc"), Some(&b"abc"[..]));
        assert_eq!(fixed.prefix(b"ab"), None);
        let capped = PrefixExtractor::Capped(3);
        assert_eq!(capped.prefix(b"abcd"), Some(&b"abc"[..]));
        assert_eq!(capped.prefix(b"ab"), Some(&b"ab"[..]));
        assert_eq!(capped.prefix(b""), Some(&b""[..]));
        assert_eq!(fixed.prefix_end(b"ab\xff"), Some(b"ac".to_vec()));
        assert_eq!(fixed.prefix_end(b"\xff\xff\xff"), None);
        assert_eq!(capped.prefix_end(b"ab"), Some(b"ab\0".to_vec()));
    }

    fn extractor() -> impl Strategy<Value = PrefixExtractor> {
        prop_oneof![
            (1usize..4).prop_map(PrefixExtractor::Fixed),
            (1usize..4).prop_map(PrefixExtractor::Capped),
        ]
    }

    fn key() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(0xfe), Just(0xff)],
            0..6,
        )
    }

    proptest! {
        /// The invariant the filters rely on: the keys with prefix p are
        /// exactly `[p, prefix_end(p))`.
        #[test]
        fn a_prefix_is_a_contiguous_run(e in extractor(), a in key(), b in key()) {
            if let Some(p) = e.prefix(&a) {
                let in_run = b.as_slice() >= p
                    && e.prefix_end(p).is_none_or(|end| b.as_slice() < end.as_slice());
                prop_assert_eq!(in_run, e.prefix(&b) == Some(p), "p {:?} b {:?}", p, b);
            }
        }
    }
}
