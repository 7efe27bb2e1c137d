//! `key ==> value` lines, ldb's `DELIM` format: what `strata dump` prints and
//! what `strata load` and `strata sst build` read, so a dump loads back as is.

use crate::hex;

/// Separates key and value. Split at its first occurrence: a value may hold it,
/// a key may not.
pub const ARROW: &[u8] = b" ==> ";

/// Splits a line at the first ` ==> `.
pub fn split(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = line
        .windows(ARROW.len())
        .position(|window| window == ARROW)?;
    Some((line.get(..at)?, line.get(at + ARROW.len()..)?))
}

/// Parses line `number` (for messages) into key and value, each raw or hex.
pub fn parse_line(
    line: &[u8],
    number: usize,
    key_hex: bool,
    value_hex: bool,
) -> Result<(Vec<u8>, Vec<u8>), String> {
    let (k, v) = split(line).ok_or_else(|| {
        format!(
            "line {number}: expected `key ==> value`, got {:?}",
            String::from_utf8_lossy(line)
        )
    })?;
    let key = decode(k, key_hex, "key").map_err(|e| format!("line {number}: {e}"))?;
    let value = decode(v, value_hex, "value").map_err(|e| format!("line {number}: {e}"))?;
    Ok((key, value))
}

fn decode(field: &[u8], is_hex: bool, what: &str) -> Result<Vec<u8>, String> {
    if !is_hex {
        return Ok(field.to_vec());
    }
    let text = std::str::from_utf8(field).map_err(|_| {
        format!(
            "{what} {:?} is not valid hex",
            String::from_utf8_lossy(field)
        )
    })?;
    hex::parse(text, true, what)
}

/// Appends `key{separator}value` and a newline, each side raw or hex.
pub fn append_line(
    dst: &mut Vec<u8>,
    (key, value): (&[u8], &[u8]),
    separator: &[u8],
    key_hex: bool,
    value_hex: bool,
) {
    hex::append(dst, key, key_hex);
    dst.extend_from_slice(separator);
    hex::append(dst, value, value_hex);
    dst.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_line_splits_on_arrow() {
        assert_eq!(
            parse_line(b"a ==> b", 1, false, false).unwrap(),
            (b"a".to_vec(), b"b".to_vec())
        );
        assert_eq!(
            parse_line(b"a ==> b ==> c", 1, false, false).unwrap(),
            (b"a".to_vec(), b"b ==> c".to_vec())
        );
        assert_eq!(
            parse_line(b" ==> ", 1, false, false).unwrap(),
            (Vec::new(), Vec::new())
        );
        let err = parse_line(b"no arrow", 7, false, false).unwrap_err();
        assert!(err.starts_with("line 7:"), "{err}");
    }

    #[test]
    fn key_and_value_hex_are_separate() {
        assert_eq!(
            parse_line(b"0x61 ==> 0x62", 1, true, false).unwrap(),
            (b"a".to_vec(), b"0x62".to_vec())
        );
        assert!(parse_line(b"0x6 ==> b", 3, true, false)
            .unwrap_err()
            .starts_with("line 3:"));
        let mut out = Vec::new();
        append_line(&mut out, (b"a", b"\xff"), ARROW, false, true);
        assert_eq!(out, b"a ==> 0xFF\n");
    }
}
