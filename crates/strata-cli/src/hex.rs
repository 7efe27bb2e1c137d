//! Key and value formatting shared by the commands: plain text or ldb's hex
//! (`0x` followed by upper-case hex digits).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

const DIGITS: &[u8; 16] = b"0123456789ABCDEF";

/// Formats bytes as ldb does: `0x` + upper-case hex when `hex`, else lossy UTF-8.
pub fn show(bytes: &[u8], hex: bool) -> String {
    if hex {
        let mut s = String::with_capacity(2 + bytes.len() * 2);
        s.push_str("0x");
        for b in bytes {
            s.push_str(&format!("{b:02X}"));
        }
        s
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// Appends `bytes` to `dst` as ldb prints them: `0x` + upper-case hex when
/// `hex`, else the raw bytes (not lossy UTF-8, so binary keys survive a
/// `dump | load` round trip as they do with ldb).
pub fn append(dst: &mut Vec<u8>, bytes: &[u8], hex: bool) {
    if !hex {
        dst.extend_from_slice(bytes);
        return;
    }
    dst.extend_from_slice(b"0x");
    append_digits(dst, bytes);
}

/// Appends `bytes` as upper-case hex digits with no `0x` (RocksDB's
/// `Slice::ToString(true)`, which ldb's idump prints).
pub fn append_digits(dst: &mut Vec<u8>, bytes: &[u8]) {
    dst.reserve(bytes.len() * 2);
    for &b in bytes {
        dst.push(DIGITS[usize::from(b >> 4)]);
        dst.push(DIGITS[usize::from(b & 0x0f)]);
    }
}

/// Parses a command-line argument: its raw bytes, or with `hex` ldb's hex form
/// (see [`parse`]). `what` names the argument in the error (`key`, `--from`).
pub fn parse_arg(arg: &OsStr, hex: bool, what: &str) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(arg.as_bytes().to_vec());
    }
    let text = arg
        .to_str()
        .ok_or_else(|| format!("{what} {arg:?} is not valid hex"))?;
    parse(text, true, what)
}

/// Parses a key or value given on the command line or in input. With `hex` it
/// takes exactly what ldb's `HexToString` takes: a lower-case `0x`, then an
/// even number of hex digits of either case. Anything else is refused rather
/// than guessed at: `61` could be the two bytes "61" or the byte 'a', and a
/// tool that guesses writes keys nobody can find again. `what` names the
/// argument in the error (`key`, `value`, `--from`, `line 3: key`).
pub fn parse(text: &str, hex: bool, what: &str) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(text.as_bytes().to_vec());
    }
    let digits = text.strip_prefix("0x").ok_or_else(|| {
        format!("{what} {text:?} is not hex input: it must start with 0x (lower-case x)")
    })?;
    if digits.len() % 2 != 0 {
        return Err(format!("{what} {text:?} has an odd number of hex digits"));
    }
    // Digit by digit: `u8::from_str_radix` would also take a sign (`0x+1`).
    let nibble = |d: u8| {
        char::from(d)
            .to_digit(16)
            .and_then(|v| u8::try_from(v).ok())
    };
    digits
        .as_bytes()
        .chunks_exact(2)
        .map(|pair| match pair {
            [high, low] => Some((nibble(*high)?, nibble(*low)?)),
            _ => None,
        })
        .map(|digit| {
            digit
                .map(|(high, low)| high << 4 | low)
                .ok_or_else(|| format!("{what} {text:?} is not valid hex"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        assert_eq!(show(b"\x00\xabz", true), "0x00AB7A");
        assert_eq!(parse("0x00AB7A", true, "key").unwrap(), b"\x00\xabz");
        assert_eq!(parse("0x00ab7a", true, "key").unwrap(), b"\x00\xabz");
        assert_eq!(parse("0x", true, "key").unwrap(), b"");
        assert_eq!(parse("plain", false, "key").unwrap(), b"plain");
        assert!(parse("0xABC", true, "key").is_err());
        assert!(parse("0xZZ", true, "key").is_err());
        // u8::from_str_radix takes a sign; ldb's digits do not.
        assert!(parse("0x+1", true, "key").is_err());
    }

    #[test]
    fn hex_needs_a_lower_case_0x_prefix() {
        for text in ["00ab", "0X00ab", "x00ab", "", "0"] {
            let err = parse(text, true, "--from").unwrap_err();
            assert!(err.starts_with(&format!("--from {text:?} ")), "{err}");
            assert!(err.contains("must start with 0x"), "{err}");
        }
    }

    #[test]
    fn append_matches_show_and_keeps_raw_bytes() {
        let mut out = Vec::new();
        append(&mut out, b"\x00\xabz", true);
        assert_eq!(out, show(b"\x00\xabz", true).as_bytes());
        out.clear();
        append(&mut out, b"\xff\x00", false);
        assert_eq!(out, b"\xff\x00");
        assert_eq!(parse_arg(OsStr::new("0x6162"), true, "key").unwrap(), b"ab");
        assert_eq!(
            parse_arg(OsStr::new("0x6162"), false, "key").unwrap(),
            b"0x6162"
        );
    }
}
