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
    dst.reserve(2 + bytes.len() * 2);
    dst.extend_from_slice(b"0x");
    for &b in bytes {
        dst.push(DIGITS[usize::from(b >> 4)]);
        dst.push(DIGITS[usize::from(b & 0x0f)]);
    }
}

/// Parses a command-line argument: its raw bytes, or with `hex` its hex digits.
pub fn parse_arg(arg: &OsStr, hex: bool) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(arg.as_bytes().to_vec());
    }
    let text = arg
        .to_str()
        .ok_or_else(|| format!("{arg:?} is not valid hex"))?;
    parse(text, true)
}

/// Parses a key or value given on the command line or in input: with `hex`, an
/// optional `0x` prefix and an even number of hex digits.
pub fn parse(text: &str, hex: bool) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(text.as_bytes().to_vec());
    }
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if digits.len() % 2 != 0 {
        return Err(format!("hex {text:?} has an odd number of digits"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            digits
                .get(i..i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .ok_or_else(|| format!("{text:?} is not valid hex"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        assert_eq!(show(b"\x00\xabz", true), "0x00AB7A");
        assert_eq!(parse("0x00AB7A", true).unwrap(), b"\x00\xabz");
        assert_eq!(parse("00ab7a", true).unwrap(), b"\x00\xabz");
        assert_eq!(parse("plain", false).unwrap(), b"plain");
        assert!(parse("0xABC", true).is_err());
        assert!(parse("0xZZ", true).is_err());
    }

    #[test]
    fn append_matches_show_and_keeps_raw_bytes() {
        let mut out = Vec::new();
        append(&mut out, b"\x00\xabz", true);
        assert_eq!(out, show(b"\x00\xabz", true).as_bytes());
        out.clear();
        append(&mut out, b"\xff\x00", false);
        assert_eq!(out, b"\xff\x00");
        assert_eq!(parse_arg(OsStr::new("0x6162"), true).unwrap(), b"ab");
        assert_eq!(parse_arg(OsStr::new("0x6162"), false).unwrap(), b"0x6162");
    }
}
