//! What the model knows of merges and of the compaction filter.
//!
//! Every family a run writes has one of the engine's built-in merge
//! operators ([`MergeKind`]). The model recomputes each merge itself, one
//! operand at a time (each built-in is a fold: merging `a` and then `b`
//! gives what merging both at once gives), so a merge the engine gets wrong
//! shows as a wrong value, exactly as a lost put does.
//!
//! Every family also has [`ExpiredFilter`], which removes values starting
//! with [`MARK`]. Whether a compaction met such a value while it was the
//! newest of its key (and no snapshot saw it) is up to timing, so a key
//! whose value is marked may also be absent, and a merge written after it
//! may have found either. The model keeps, per key, the few values it may
//! hold ([`Possible`]), as the kill-mode check keeps every prefix the
//! durability promise allows: a put of an unmarked value, a delete or a
//! range deletion leaves exactly one possibility, and only a marked
//! possibility lets "absent" in. An unmarked value can never be lost.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
use strata::merge::{MaxOperator, PutOperator, StringAppendOperator, UInt64AddOperator};
use strata::MergeOperator;

/// The prefix of values the compaction filter removes.
pub const MARK: &[u8] = b"EXPIRED";

/// Whether the compaction filter removes `value`.
pub fn marked(value: &[u8]) -> bool {
    value.starts_with(MARK)
}

/// One of the engine's built-in merge operators, as the model computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// 8-byte little-endian sums, wrapping; any other size counts as 0.
    UInt64Add,
    /// Values joined with `,`, oldest first.
    StringAppend,
    /// The bytewise greatest.
    Max,
    /// The newest operand.
    Put,
}

impl MergeKind {
    const ALL: [MergeKind; 4] = [
        MergeKind::UInt64Add,
        MergeKind::StringAppend,
        MergeKind::Max,
        MergeKind::Put,
    ];

    /// The operators of the three key families of a run with `seed`: three
    /// different ones, rotating with the seed so that consecutive seeds
    /// cover all four (runs without the WAL use only the first).
    pub fn for_families(seed: u64) -> [MergeKind; 3] {
        let at = |i: u64| Self::ALL[((seed + i) % Self::ALL.len() as u64) as usize];
        [at(0), at(1), at(2)]
    }

    /// The short name `strata::merge_operator_from_name` takes.
    pub fn name(self) -> &'static str {
        match self {
            MergeKind::UInt64Add => "uint64add",
            MergeKind::StringAppend => "stringappend",
            MergeKind::Max => "max",
            MergeKind::Put => "put",
        }
    }

    /// The engine's operator of this kind.
    pub fn operator(self) -> Arc<dyn MergeOperator> {
        match self {
            MergeKind::UInt64Add => Arc::new(UInt64AddOperator),
            MergeKind::StringAppend => Arc::new(StringAppendOperator::default()),
            MergeKind::Max => Arc::new(MaxOperator),
            MergeKind::Put => Arc::new(PutOperator),
        }
    }

    /// `operand` merged onto `existing` (`None`: onto nothing, as after a
    /// delete or before any write), computed independently of the engine.
    pub fn merge(self, existing: Option<&[u8]>, operand: &[u8]) -> Vec<u8> {
        match (self, existing) {
            (MergeKind::UInt64Add, _) => {
                let number = |b: &[u8]| <[u8; 8]>::try_from(b).map_or(0, u64::from_le_bytes);
                let base = existing.map_or(0, number);
                base.wrapping_add(number(operand)).to_le_bytes().to_vec()
            }
            (MergeKind::StringAppend, Some(base)) => [base, b",", operand].concat(),
            (MergeKind::Max, Some(base)) if base > operand => base.to_vec(),
            (MergeKind::StringAppend | MergeKind::Max | MergeKind::Put, _) => operand.to_vec(),
        }
    }
}

/// Removes every value that starts with [`MARK`], and counts how many it
/// removed (a run reports it, to show the filter had work).
#[derive(Debug, Default)]
pub struct ExpiredFilter {
    removed: AtomicU64,
}

impl ExpiredFilter {
    /// Values removed so far.
    pub fn removed(&self) -> u64 {
        self.removed.load(Ordering::Relaxed)
    }
}

impl CompactionFilter for ExpiredFilter {
    fn name(&self) -> &str {
        "StressExpiredFilter"
    }

    fn filter(&self, _ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
        if marked(value) {
            self.removed.fetch_add(1, Ordering::Relaxed);
            Decision::Remove
        } else {
            Decision::Keep
        }
    }
}

/// The values one key may hold (`None`: absent); never empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Possible(Vec<Option<Vec<u8>>>);

impl Possible {
    /// Exactly absent.
    pub fn absent() -> Possible {
        Possible(vec![None])
    }

    /// A value just written or read back: if marked, a compaction may
    /// remove it from now on.
    pub fn of(value: Vec<u8>) -> Possible {
        Possible::closed(vec![Some(value)])
    }

    /// `values`, plus absence when any is marked, sorted and deduplicated.
    fn closed(mut values: Vec<Option<Vec<u8>>>) -> Possible {
        if values.iter().flatten().any(|v| marked(v)) {
            values.push(None);
        }
        values.sort_unstable();
        values.dedup();
        Possible(values)
    }

    /// Each possibility with `operand` merged onto it.
    pub fn merged(&self, kind: MergeKind, operand: &[u8]) -> Possible {
        Possible::closed(
            self.0
                .iter()
                .map(|v| Some(kind.merge(v.as_deref(), operand)))
                .collect(),
        )
    }

    pub fn allows(&self, value: Option<&[u8]>) -> bool {
        self.0.iter().any(|v| v.as_deref() == value)
    }

    pub fn is_absent(&self) -> bool {
        self.0 == [None]
    }

    /// The possibilities, shortened, for a report.
    pub fn describe(&self) -> String {
        let shown: Vec<String> = self.0.iter().map(|v| show(v.as_deref())).collect();
        shown.join(" or ")
    }
}

/// A value, shortened, for a report.
pub fn show(value: Option<&[u8]>) -> String {
    value.map_or("<absent>".into(), |v| {
        String::from_utf8_lossy(v).chars().take(40).collect()
    })
}

/// What one thread's keys (by number) may hold; a key not listed is
/// exactly absent.
pub type KeyState = BTreeMap<u32, Possible>;

/// One thread's keys as read from the database.
pub type Found = BTreeMap<u32, Vec<u8>>;

/// Whether `state` allows key `n` to read `value`.
pub fn allows(state: &KeyState, n: u32, value: Option<&[u8]>) -> bool {
    state.get(&n).map_or(value.is_none(), |p| p.allows(value))
}

/// Makes `p` what key `n` may hold.
pub fn set(state: &mut KeyState, n: u32, p: Possible) {
    if p.is_absent() {
        state.remove(&n);
    } else {
        state.insert(n, p);
    }
}

/// What `state` expects of key `n`, for a report.
pub fn expected_of(state: &KeyState, n: u32) -> String {
    state.get(&n).map_or_else(|| show(None), Possible::describe)
}

/// The first key whose value `found` has and `state` does not allow, if
/// any, described.
pub fn mismatch(state: &KeyState, found: &Found) -> Option<String> {
    let keys: std::collections::BTreeSet<u32> = state.keys().chain(found.keys()).copied().collect();
    keys.into_iter().find_map(|n| {
        let got = found.get(&n).map(Vec::as_slice);
        (!allows(state, n, got)).then(|| {
            format!(
                "key {n}: expected {}, found {}",
                expected_of(state, n),
                show(got)
            )
        })
    })
}

/// How many of `state`'s keys that may hold a marked value `found` lacks:
/// a count of the filter's removals that verification saw.
pub fn expired_gone(state: &KeyState, found: &Found) -> u64 {
    state
        .iter()
        .filter(|(n, p)| !found.contains_key(n) && p.0.iter().flatten().any(|v| marked(v)))
        .count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's merges against the engine's operators.
    #[test]
    fn merges_agree_with_the_engines_operators() {
        let values: [Option<&[u8]>; 5] = [
            None,
            Some(b"abc"),
            Some(&7u64.to_le_bytes()),
            Some(&u64::MAX.to_le_bytes()),
            Some(b"EXPIRED-x"),
        ];
        for kind in MergeKind::ALL {
            let operator = kind.operator();
            for existing in values {
                for operand in values.iter().flatten() {
                    let engine = operator.full_merge(b"k", existing, &[operand]);
                    assert_eq!(
                        engine.ok(),
                        Some(kind.merge(existing, operand)),
                        "{kind:?} of {existing:?} and {operand:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn only_marked_values_may_vanish() {
        let plain = Possible::of(b"v".to_vec());
        assert!(!plain.allows(None));
        let expiring = Possible::of(b"EXPIRED-v".to_vec());
        assert!(expiring.allows(None) && expiring.allows(Some(b"EXPIRED-v")));
        // A merge onto a marked value may find it removed.
        let appended = expiring.merged(MergeKind::StringAppend, b"a");
        assert!(appended.allows(Some(b"EXPIRED-v,a")));
        assert!(appended.allows(Some(b"a")));
        assert!(appended.allows(None));
        // A sum is unmarked whatever it was added to (a value of another
        // size than 8 bytes counts as 0), so it cannot vanish.
        let summed = expiring.merged(MergeKind::UInt64Add, &3u64.to_le_bytes());
        assert_eq!(summed, Possible::of(3u64.to_le_bytes().to_vec()));
        assert!(!summed.allows(None));
    }

    #[test]
    fn families_get_three_different_operators() {
        for seed in 0..8 {
            let [a, b, c] = MergeKind::for_families(seed);
            assert!(a != b && b != c && a != c);
        }
    }
}
