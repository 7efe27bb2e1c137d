use super::*;
use crate::key::{internal_key, ValueType};
use crate::table::block_builder::BlockBuilder;
use proptest::prelude::*;

fn origin() -> BlockOrigin {
    BlockOrigin {
        file: Arc::from(Path::new("test.sst")),
        offset: 0,
    }
}

fn build(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Block {
    let mut b = BlockBuilder::new(restart_interval);
    for (k, v) in entries {
        b.add(k, v);
    }
    Block::new(Bytes::copy_from_slice(b.finish()), origin()).unwrap()
}

fn collect_forward(it: &mut BlockIter<BytewiseOrder>) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

#[test]
fn golden_bytes() {
    let mut b = BlockBuilder::new(2);
    b.add(b"apple", b"1");
    b.add(b"apply", b"22");
    b.add(b"b", b"");
    let bytes = b.finish().to_vec();
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0, 5, 1, b'a', b'p', b'p', b'l', b'e', b'1',      // restart 0 at offset 0
        4, 1, 2, b'y', b'2', b'2',                         // shares "appl"
        0, 1, 0, b'b',                                     // restart 1 at offset 15
        0, 0, 0, 0, 15, 0, 0, 0, 2, 0, 0, 0,               // restarts [0, 15], count 2
    ];
    assert_eq!(bytes, expected);
}

#[test]
fn empty_block() {
    let block = build(&[], 16);
    let mut it = block.iter(BytewiseOrder);
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"x");
    assert!(!it.valid());
    it.seek_for_prev(b"x");
    assert!(!it.valid());
    assert!(it.status().is_ok());
}

#[test]
fn internal_keys_seek_to_visible_version() {
    let entries: Vec<_> = [(b"a", 9), (b"a", 5), (b"a", 2), (b"b", 7)]
        .iter()
        .map(|(k, s)| {
            (
                internal_key(*k, *s, ValueType::Put),
                s.to_string().into_bytes(),
            )
        })
        .collect();
    let mut b = BlockBuilder::new(2);
    for (k, v) in &entries {
        b.add(k, v);
    }
    let block = Block::new(Bytes::copy_from_slice(b.finish()), origin()).unwrap();
    let mut it = block.iter(KeyComparator::Bytewise);
    it.seek(&crate::key::seek_key(b"a", 6));
    assert_eq!(it.value(), b"5");
    it.seek(&crate::key::seek_key(b"a", 1));
    assert_eq!(it.value(), b"7");
}

#[test]
fn rejects_bad_restart_arrays() {
    for bytes in [
        vec![],
        vec![1, 0, 0],
        vec![0, 0, 0, 0],                         // zero restarts
        vec![0xff, 0xff, 0xff, 0xff],             // huge count
        vec![0, 0, 0, 0, 5, 0, 0, 0, 2, 0, 0, 0], // restart past entries
        vec![1, 0, 0, 0, 1, 0, 0, 0],             // first restart not 0
    ] {
        assert!(Block::new(Bytes::from(bytes), origin()).is_err());
    }
}

fn sorted_entries() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    proptest::collection::btree_map(
        proptest::collection::vec(0u8..4, 0..6),
        proptest::collection::vec(any::<u8>(), 0..20),
        0..80,
    )
    .prop_map(|m| m.into_iter().collect())
}

proptest! {
    #[test]
    fn roundtrip_and_seek_match_model(
        entries in sorted_entries(),
        restart in 1usize..8,
        targets in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..6), 1..20),
    ) {
        let block = build(&entries, restart);
        let mut it = block.iter(BytewiseOrder);
        prop_assert_eq!(collect_forward(&mut it), entries.clone());

        // Backward iteration yields the reverse.
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() {
            back.push((it.key().to_vec(), it.value().to_vec()));
            it.prev();
        }
        back.reverse();
        prop_assert_eq!(back, entries.clone());

        for t in &targets {
            let want = entries.iter().position(|(k, _)| k >= t);
            it.seek(t);
            match want {
                Some(i) => { prop_assert!(it.valid()); prop_assert_eq!(it.key(), &entries[i].0[..]); }
                None => prop_assert!(!it.valid()),
            }
            let want_prev = entries.iter().rposition(|(k, _)| k <= t);
            it.seek_for_prev(t);
            match want_prev {
                Some(i) => { prop_assert!(it.valid()); prop_assert_eq!(it.key(), &entries[i].0[..]); }
                None => prop_assert!(!it.valid()),
            }
            // prev then next returns to the same entry.
            if let Some(i) = want_prev {
                if i > 0 {
                    it.prev();
                    prop_assert_eq!(it.key(), &entries[i - 1].0[..]);
                    it.next();
                    prop_assert_eq!(it.key(), &entries[i].0[..]);
                }
            }
        }
        prop_assert!(it.status().is_ok());
    }

    #[test]
    fn garbage_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                            target in proptest::collection::vec(any::<u8>(), 0..8)) {
        if let Ok(block) = Block::new(Bytes::from(bytes), origin()) {
            let mut it = block.iter(KeyComparator::Bytewise);
            let mut steps = 0;
            it.seek_to_first();
            while it.valid() && steps < 1000 { it.next(); steps += 1; }
            it.seek_to_last();
            while it.valid() && steps < 2000 { it.prev(); steps += 1; }
            it.seek(&target);
            it.seek_for_prev(&target);
            let _ = it.status();
        }
    }
}

/// Found by the block_decode fuzz target: a restart point inside an entry made
/// forward iteration see 8 entries and backward iteration 9. Now both directions
/// agree or report corruption.
#[test]
fn misaligned_restart_point_is_corruption() {
    // The fuzz input minus its first byte (which picked the seek target).
    let bytes: Vec<u8> = vec![
        0x00, 0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    ];
    let block = Block::new(Bytes::from(bytes), origin()).unwrap();
    let mut it = block.iter(KeyComparator::Bytewise);
    let (mut forward, mut backward) = (0, 0);
    it.seek_to_first();
    while it.valid() {
        forward += 1;
        it.next();
    }
    let forward_ok = it.status().is_ok();
    it.seek_to_last();
    while it.valid() {
        backward += 1;
        it.prev();
    }
    let backward_ok = it.status().is_ok();
    assert!(!(forward_ok && backward_ok) || forward == backward);
    assert!(
        !forward_ok || !backward_ok,
        "the misaligned restart must be reported"
    );
}
