//! Any bytes given as a block: parsing and every cursor movement must end in a
//! valid position or a corruption error, never a panic or a hang.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use strata::iter::InternalIterator;
use strata::key_order::KeyComparator;
use strata::table::block::{Block, BlockOrigin, BytewiseOrder};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a seek target length; the rest is the block.
    let Some((&target_len, block_bytes)) = data.split_first() else {
        return;
    };
    let target = &block_bytes[..block_bytes.len().min(usize::from(target_len % 24))];
    let origin = BlockOrigin {
        file: Arc::from(Path::new("fuzz")),
        offset: 0,
    };
    let Ok(block) = Block::new(Bytes::copy_from_slice(block_bytes), origin) else {
        return;
    };
    // The order is drawn from the target's length: seeks in an order the
    // block was not sorted in land anywhere, but never panic.
    let order = if target_len & 0x80 == 0 {
        KeyComparator::Bytewise
    } else {
        KeyComparator::ReverseBytewise
    };
    let mut it = block.iter(order);
    let mut forward = 0usize;
    it.seek_to_first();
    while it.valid() {
        forward += 1;
        it.next();
    }
    let mut backward = 0usize;
    it.seek_to_last();
    while it.valid() {
        backward += 1;
        it.prev();
    }
    // Without corruption both directions see the same entries.
    if it.status().is_ok() {
        assert_eq!(forward, backward);
    }
    it.seek(target);
    it.seek_for_prev(target);
    let mut bytewise = block.iter(BytewiseOrder);
    bytewise.seek(target);
    let _ = bytewise.status();
});
