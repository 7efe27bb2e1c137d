//! How option values are spelled in an OPTIONS file and in `set_options`:
//! RocksDB's spellings (`kLZ4Compression`, `kCompactionStyleLevel`, `kXXH3`,
//! `bloomfilter:10:false`, `{key=value;...}`), in both directions.
//!
//! Every parser returns [`Error::InvalidArgument`] naming the option and
//! quoting the value, whether the text is malformed or names something
//! Strata cannot honour (a codec or checksum it does not implement).

use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::options::CompactionStyle;

/// zstd's own default level, which RocksDB's "default level" (32767) means.
pub(crate) const ZSTD_DEFAULT_LEVEL: i32 = 3;

/// RocksDB's `CompressionOptions::kDefaultCompressionLevel`.
const ROCKSDB_DEFAULT_LEVEL: i32 = 32767;

/// The error for `option` = `value`, saying what was expected.
pub(crate) fn bad_value(option: &'static str, value: &str, expected: &str) -> Error {
    Error::invalid_argument(option, format!("{value:?} is not {expected}"))
}

/// `true`/`false` (RocksDB also takes `1`/`0`).
pub(crate) fn parse_bool(option: &'static str, value: &str) -> Result<bool> {
    match value {
        "true" | "1" => Ok(true),
        "false" | "0" => Ok(false),
        _ => Err(bad_value(option, value, "true or false")),
    }
}

/// A decimal integer of type `T`.
pub(crate) fn parse_int<T: std::str::FromStr>(option: &'static str, value: &str) -> Result<T> {
    value.parse().map_err(|_| {
        let kind = std::any::type_name::<T>();
        bad_value(option, value, &format!("an integer that fits {kind}"))
    })
}

/// A decimal number (RocksDB writes `10.000000`).
pub(crate) fn parse_f64(option: &'static str, value: &str) -> Result<f64> {
    value
        .parse()
        .map_err(|_| bad_value(option, value, "a number"))
}

/// A number written so it reads back exactly (`10.0`, `0.35`).
pub(crate) fn format_f64(value: f64) -> String {
    format!("{value:?}")
}

/// RocksDB's name of a codec. The zstd level is written separately, in
/// `compression_opts`.
pub(crate) fn compression_name(c: CompressionType) -> &'static str {
    match c {
        CompressionType::None => "kNoCompression",
        CompressionType::Snappy => "kSnappyCompression",
        CompressionType::Lz4 => "kLZ4Compression",
        CompressionType::Zstd { .. } => "kZSTD",
    }
}

/// A codec by RocksDB's name; zstd takes `zstd_level`. RocksDB codecs Strata
/// does not implement (zlib, bzip2, lz4hc, xpress) are refused by name.
pub(crate) fn parse_compression(
    option: &'static str,
    value: &str,
    zstd_level: i32,
) -> Result<CompressionType> {
    match value {
        "kNoCompression" => Ok(CompressionType::None),
        "kSnappyCompression" => Ok(CompressionType::Snappy),
        "kLZ4Compression" => Ok(CompressionType::Lz4),
        "kZSTD" | "kZSTDNotFinalCompression" => Ok(CompressionType::Zstd { level: zstd_level }),
        "kZlibCompression" | "kBZip2Compression" | "kLZ4HCCompression" | "kXpressCompression" => {
            Err(Error::invalid_argument(
                option,
                format!("{value} is a RocksDB codec Strata does not implement; use kNoCompression, kSnappyCompression, kLZ4Compression or kZSTD"),
            ))
        }
        _ => Err(bad_value(
            option,
            value,
            "kNoCompression, kSnappyCompression, kLZ4Compression or kZSTD",
        )),
    }
}

/// `compression_per_level`: codecs joined by `:`, empty for none.
pub(crate) fn format_compression_list(list: &[CompressionType]) -> String {
    let names: Vec<&str> = list.iter().map(|c| compression_name(*c)).collect();
    names.join(":")
}

/// Parses [`format_compression_list`]'s form.
pub(crate) fn parse_compression_list(
    option: &'static str,
    value: &str,
    zstd_level: i32,
) -> Result<Vec<CompressionType>> {
    if value.is_empty() {
        return Ok(Vec::new());
    }
    value
        .split(':')
        .map(|name| parse_compression(option, name, zstd_level))
        .collect()
}

/// `compression_opts.level` as Strata keeps it: RocksDB's default level
/// (32767) is zstd's default.
pub(crate) fn parse_zstd_level(option: &'static str, value: &str) -> Result<i32> {
    let level: i32 = parse_int(option, value)?;
    Ok(if level == ROCKSDB_DEFAULT_LEVEL {
        ZSTD_DEFAULT_LEVEL
    } else {
        level
    })
}

/// RocksDB's name of a compaction style.
pub(crate) fn compaction_style_name(style: CompactionStyle) -> &'static str {
    match style {
        CompactionStyle::Level => "kCompactionStyleLevel",
        CompactionStyle::Universal => "kCompactionStyleUniversal",
        CompactionStyle::Fifo => "kCompactionStyleFIFO",
    }
}

/// A compaction style by RocksDB's name.
pub(crate) fn parse_compaction_style(option: &'static str, value: &str) -> Result<CompactionStyle> {
    match value {
        "kCompactionStyleLevel" => Ok(CompactionStyle::Level),
        "kCompactionStyleUniversal" => Ok(CompactionStyle::Universal),
        "kCompactionStyleFIFO" => Ok(CompactionStyle::Fifo),
        _ => Err(bad_value(
            option,
            value,
            "kCompactionStyleLevel, kCompactionStyleUniversal or kCompactionStyleFIFO \
             (kCompactionStyleNone is not supported)",
        )),
    }
}

/// RocksDB's name of a checksum type.
pub(crate) fn checksum_name(c: ChecksumType) -> &'static str {
    match c {
        ChecksumType::Crc32c => "kCRC32c",
        ChecksumType::Xxh3 => "kXXH3",
    }
}

/// A checksum type by RocksDB's name.
pub(crate) fn parse_checksum(option: &'static str, value: &str) -> Result<ChecksumType> {
    match value {
        "kCRC32c" => Ok(ChecksumType::Crc32c),
        "kXXH3" => Ok(ChecksumType::Xxh3),
        _ => Err(bad_value(
            option,
            value,
            "kCRC32c or kXXH3 (Strata does not implement kNoChecksum, kxxHash or kxxHash64)",
        )),
    }
}

/// `filter_policy`: `bloomfilter:<bits>:false` (`10`, not `10.0`, as
/// RocksDB writes whole numbers), or `nullptr` for none.
pub(crate) fn format_filter_policy(bits_per_key: f64) -> String {
    if bits_per_key == 0.0 {
        "nullptr".to_owned()
    } else {
        // Display is the shortest text that reads back as the same f64.
        format!("bloomfilter:{bits_per_key}:false")
    }
}

/// Parses `nullptr` (0 bits: no filter), `bloomfilter:<bits>` or
/// `bloomfilter:<bits>:<use_block_based_builder>`; RocksDB has built full
/// filters for both builder settings since 7.0, as Strata does.
pub(crate) fn parse_filter_policy(option: &'static str, value: &str) -> Result<f64> {
    const EXPECTED: &str = "nullptr or bloomfilter:<bits per key>[:false] \
                            (Strata has no other filter)";
    if value == "nullptr" {
        return Ok(0.0);
    }
    let mut parts = value.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("bloomfilter"), Some(bits), None | Some("false" | "true"), None) => bits
            .parse::<f64>()
            .map_err(|_| bad_value(option, value, EXPECTED)),
        _ => Err(bad_value(option, value, EXPECTED)),
    }
}

/// Splits a struct value `{a=1;b={c=2;};}` into its `(name, value)` pairs,
/// values still in file form. Braces nest; empty pieces are skipped.
pub(crate) fn parse_struct(option: &'static str, value: &str) -> Result<Vec<(String, String)>> {
    let inner = value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .ok_or_else(|| bad_value(option, value, "a {name=value;...} list"))?;
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| bad_value(option, value, "a list with balanced braces"))?;
            }
            ';' if depth == 0 => {
                pieces.push(inner.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(bad_value(option, value, "a list with balanced braces"));
    }
    pieces.push(inner.get(start..).unwrap_or_default());
    let mut pairs = Vec::new();
    for piece in pieces.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        let (name, value_of) = piece
            .split_once('=')
            .ok_or_else(|| bad_value(option, value, "a {name=value;...} list"))?;
        pairs.push((name.trim().to_owned(), value_of.trim().to_owned()));
    }
    Ok(pairs)
}

/// Writes a struct value in [`parse_struct`]'s form.
pub(crate) fn format_struct(pairs: &[(&str, String)]) -> String {
    let mut out = String::from("{");
    for (name, value) in pairs {
        out.push_str(&format!("{name}={value};"));
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rocksdb_spellings_roundtrip() {
        for c in [
            CompressionType::None,
            CompressionType::Snappy,
            CompressionType::Lz4,
            CompressionType::Zstd { level: 7 },
        ] {
            assert_eq!(parse_compression("c", compression_name(c), 7).unwrap(), c);
        }
        for s in [
            CompactionStyle::Level,
            CompactionStyle::Universal,
            CompactionStyle::Fifo,
        ] {
            assert_eq!(
                parse_compaction_style("s", compaction_style_name(s)).unwrap(),
                s
            );
        }
        for c in [ChecksumType::Crc32c, ChecksumType::Xxh3] {
            assert_eq!(parse_checksum("c", checksum_name(c)).unwrap(), c);
        }
        for bits in [0.0, 10.0, 9.5] {
            let text = format_filter_policy(bits);
            assert_eq!(parse_filter_policy("f", &text).unwrap(), bits);
        }
        assert_eq!(parse_filter_policy("f", "bloomfilter:10").unwrap(), 10.0);
        let list = [CompressionType::None, CompressionType::Lz4];
        let text = format_compression_list(&list);
        assert_eq!(text, "kNoCompression:kLZ4Compression");
        assert_eq!(parse_compression_list("l", &text, 3).unwrap(), list);
        assert_eq!(parse_compression_list("l", "", 3).unwrap(), []);
        assert_eq!(parse_zstd_level("l", "32767").unwrap(), 3);
    }

    #[test]
    fn unsupported_values_name_the_option_and_value() {
        let cases = [
            parse_compression("compression", "kZlibCompression", 3).map(|_| ()),
            parse_compression("compression", "lz4", 3).map(|_| ()),
            parse_checksum("checksum", "kxxHash").map(|_| ()),
            parse_filter_policy("filter_policy", "ribbonfilter:10").map(|_| ()),
            parse_compaction_style("compaction_style", "kCompactionStyleNone").map(|_| ()),
            parse_int::<u32>("num", "-1").map(|_| ()),
            parse_bool("flag", "yes").map(|_| ()),
        ];
        for case in cases {
            let message = case.unwrap_err().to_string();
            assert!(message.starts_with("Invalid argument: "), "{message}");
        }
        let message = parse_compression("compression", "kZlibCompression", 3)
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("compression") && message.contains("kZlibCompression"),
            "{message}"
        );
    }

    #[test]
    fn structs_split_at_top_level_semicolons() {
        let pairs = parse_struct("s", "{a=1; b={c=2;d=3;};e=;}").unwrap();
        let want = [("a", "1"), ("b", "{c=2;d=3;}"), ("e", "")];
        let got: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(parse_struct("s", "{}").unwrap(), []);
        for bad in ["a=1", "{a=1", "{a}", "{a=}}", "{a={b=1;}"] {
            assert!(parse_struct("s", bad).is_err(), "{bad}");
        }
        let text = format_struct(&[("level", "3".to_owned()), ("x", "y".to_owned())]);
        assert_eq!(text, "{level=3;x=y;}");
    }
}
