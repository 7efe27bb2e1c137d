//! Blob files, any bytes or valid files damaged by the input: open, walk the
//! records, verify, and read by reference must return the written value or
//! `Error::Corruption`, never panic, hang, over-allocate or return another
//! value. Random bytes rarely pass a header checksum, so with the first
//! byte odd the input builds a valid file (values cut from the input, in a
//! codec it picks) and then flips the bytes it names.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use strata::blob::{BlobFileReader, BlobFileWriter, BlobRef};
use strata::fs::{Fs, ReadFileOptions, SimFs};
use strata::CompressionType;

/// Values cut from `data`: each takes a length byte, then that many bytes
/// repeated (so that codecs have something to compress).
fn entries(data: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    data.chunks(4)
        .enumerate()
        .map(|(i, chunk)| {
            let repeat = usize::from(chunk[0]) * 8;
            let value: Vec<u8> = chunk
                .iter()
                .cycle()
                .take(repeat + chunk.len())
                .copied()
                .collect();
            (format!("key{i}").into_bytes(), value)
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let fs = SimFs::new(0);
    let dir = Path::new("/fuzz");
    let path = dir.join("000001.blob");
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut written = Vec::new();
    let write = |written: &mut Vec<(Vec<u8>, Vec<u8>, BlobRef)>| -> strata::Result<()> {
        fs.create_dir_all(dir)?;
        let mut f = fs.create(&path)?;
        if mode & 1 == 0 {
            f.append(rest)?;
            return f.sync();
        }
        // Half the input gives the values, the rest the bytes to damage.
        let (values, damage) = rest.split_at(rest.len() / 2);
        let codec = [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Lz4,
            CompressionType::Zstd { level: 1 },
        ][usize::from(mode >> 1) % 4];
        let mut writer = BlobFileWriter::new(f, 1, 0, codec)?;
        for (key, value) in entries(values) {
            let reference = writer.add(&key, &value)?;
            written.push((key, value, reference));
        }
        let size = writer.finish()?.file_size;
        for pair in damage.chunks_exact(2) {
            let offset = u64::from(u16::from_le_bytes([pair[0], pair[1]])) % size.max(1);
            fs.corrupt_byte(&path, offset, 0x01)?;
        }
        Ok(())
    };
    if write(&mut written).is_err() {
        return;
    }
    let Ok(file) = fs.open(&path, ReadFileOptions::default()) else {
        return;
    };
    let Ok(reader) = BlobFileReader::open(file, &path) else {
        return;
    };
    // A value read by the reference it was written under is that value, or
    // the read fails.
    for (key, value, reference) in &written {
        match reader.get(key, reference, true) {
            Ok(read) => assert_eq!(&read, value, "a damaged file returned another value"),
            Err(e) => assert!(e.is_corruption(), "{e}"),
        }
    }
    let mut references = Vec::new();
    for record in reader.records().take(10_000) {
        match record {
            Ok(r) => references.push((r.key.clone(), r.offset, r.stored_len, r.compression)),
            Err(e) => assert!(e.is_corruption(), "{e}"),
        }
    }
    for (key, offset, stored_len, compression) in references {
        let reference = BlobRef {
            file_number: 1,
            offset,
            stored_len,
            compression,
        };
        for verify in [true, false] {
            if let Err(e) = reader.get(&key, &reference, verify) {
                assert!(e.is_corruption(), "{e}");
            }
        }
    }
    // References decoded from the input's first bytes point anywhere.
    for start in 0..data.len().min(16) {
        for end in start..data.len().min(start + 32) {
            if let Ok(reference) = BlobRef::decode(&data[start..end]) {
                for key in [&b""[..], b"k", b"key"] {
                    if let Err(e) = reader.get(key, &reference, true) {
                        assert!(e.is_corruption(), "{e}");
                    }
                }
            }
        }
    }
    let _ = reader.verify();
});
