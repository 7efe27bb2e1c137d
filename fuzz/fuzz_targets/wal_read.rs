//! Any bytes given as a log file: every record read is returned whole, and the
//! reader ends cleanly, with a torn tail, or with `Error::Corruption`: never a
//! panic, a hang or a huge allocation.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use strata::wal::read_all_records;

fuzz_target!(|data: &[u8]| {
    let (records, end) = read_all_records(Bytes::copy_from_slice(data));
    // Records only come from bytes that were in the file.
    let total: usize = records.iter().map(Vec::len).sum();
    assert!(total <= data.len());
    if let Err(e) = end {
        assert!(e.is_corruption(), "unexpected error kind: {e}");
    }
});
