//! Any bytes given as a log file: every record read is returned whole, and the
//! reader ends cleanly, with a torn tail, or with `Error::Corruption`: never a
//! panic, a hang or a huge allocation. Read again skipping past each damage
//! (as `kSkipAnyCorruptedRecords` recovery does), it still ends, and only
//! corruption is skipped. Records that look like WAL metadata decode or are
//! corruption.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use strata::wal::{meta, read_all_records, read_records_skipping_damage};

fuzz_target!(|data: &[u8]| {
    let (records, end) = read_all_records(Bytes::copy_from_slice(data));
    // Records only come from bytes that were in the file.
    let total: usize = records.iter().map(Vec::len).sum();
    assert!(total <= data.len());
    // A record that looks like WAL metadata decodes or is corruption.
    for record in records.iter().filter(|r| meta::is_meta(r)) {
        if let Err(e) = meta::decode(record, std::path::Path::new("fuzz.log"), 0) {
            assert!(e.is_corruption(), "unexpected error kind: {e}");
        }
    }
    if let Err(e) = end {
        assert!(e.is_corruption(), "unexpected error kind: {e}");
    }
    match read_records_skipping_damage(Bytes::copy_from_slice(data)) {
        Ok((salvaged, _)) => {
            let total: usize = salvaged.iter().map(Vec::len).sum();
            assert!(total <= data.len());
            // Up to the first damage both reads agree.
            assert!(salvaged.len() >= records.len());
            assert_eq!(salvaged[..records.len()], records[..]);
        }
        Err(e) => panic!("only corruption is expected, and it is skipped: {e}"),
    }
});
