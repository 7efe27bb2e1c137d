//! The text layout of an OPTIONS file (RocksDB's `options_parser.cc`): an INI
//! dialect. This module knows the layout only; what the options mean is
//! `file.rs`'s job.
//!
//! ```text
//! # comment                               '#' to the end of a line, unless escaped "\#"
//! [Version]
//!   rocksdb_version=7.8.3                 digits and dots, at most 3 numbers
//!   options_file_version=1.1              at most 2 numbers, major at least 1
//! [DBOptions]                             exactly one
//!   name=value                            both trimmed; the value may be empty
//! [CFOptions "default"]                   one per family, "default" first
//!   name=value
//! [TableOptions/BlockBasedTable "default"]  after its family's CFOptions
//!   name=value
//! ```
//!
//! Escaping (RocksDB's `EscapeOptionString`): in a section's family name and
//! in string-valued options, `\`, `#`, `:`, CR and LF are written as `\\`,
//! `\#`, `\:`, `\r`, `\n`. Other values are kept as written: their own
//! syntax (`kNoCompression:kLZ4Compression`, `{a=1;b=2;}`) is theirs to parse,
//! so this module hands values over raw and only strips comments.
//!
//! Errors are [`Error::InvalidArgument`] naming the file, the line and the
//! text, never `Corruption`: the file is only ever renamed into place after
//! it was synced, so a torn file is not what we find; a bad line was written
//! or edited that way, and the fix is in the user's hands. The layout rules
//! are RocksDB's, with two stricter ones: a name repeated in one section and
//! an option before any section are refused (RocksDB keeps the first and
//! drops the other silently).

use std::path::Path;

use crate::error::{Error, Result};

/// What a section holds.
///
/// ```
/// use strata::options::ini::SectionKind;
///
/// let kind = SectionKind::CfOptions { family: "default".into() };
/// assert_ne!(kind, SectionKind::DbOptions);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionKind {
    /// `[Version]`: which RocksDB wrote the file, and the layout's version.
    Version,
    /// `[DBOptions]`: the database-wide options.
    DbOptions,
    /// `[CFOptions "name"]`: one column family's options.
    CfOptions {
        /// The family's name, unescaped.
        family: String,
    },
    /// `[TableOptions/BlockBasedTable "name"]`: a family's table options.
    TableOptions {
        /// The table factory (`BlockBasedTable`).
        factory: String,
        /// The family's name, unescaped.
        family: String,
    },
}

/// One `name=value` line.
///
/// ```
/// use std::path::Path;
/// use strata::options::ini::parse;
///
/// let doc = parse(b"[DBOptions]\n a = b=c \n[CFOptions \"default\"]", Path::new("x")).unwrap();
/// let entry = &doc.sections[0].entries[0];
/// assert_eq!((entry.name.as_str(), entry.value.as_str(), entry.line), ("a", "b=c", 2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The option's name, trimmed.
    pub name: String,
    /// The value, trimmed, comment removed, otherwise as written.
    pub value: String,
    /// 1-based line number (0 for entries not read from a file).
    pub line: usize,
}

/// A section and its entries, in file order.
///
/// ```
/// use strata::options::ini::{Section, SectionKind};
///
/// let mut db = Section::new(SectionKind::DbOptions);
/// db.push("max_open_files", "-1");
/// assert_eq!(db.entries[0].value, "-1");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The section's kind and argument.
    pub kind: SectionKind,
    /// 1-based line number of the header (0 when not read from a file).
    pub line: usize,
    /// The `name=value` lines.
    pub entries: Vec<Entry>,
}

impl Section {
    /// An empty section, for writing.
    pub fn new(kind: SectionKind) -> Self {
        Section {
            kind,
            line: 0,
            entries: Vec::new(),
        }
    }

    /// Appends `name=value`. `value` must already be in file form (string
    /// options escaped with [`escape`]).
    pub fn push(&mut self, name: &str, value: impl Into<String>) {
        self.entries.push(Entry {
            name: name.to_owned(),
            value: value.into(),
            line: 0,
        });
    }
}

/// A whole OPTIONS file: its sections in order. A parsed document keeps the
/// layout rules: at most one `[Version]`, one `[DBOptions]`, the default
/// family's `[CFOptions]` first, no family twice, each `[TableOptions/..]`
/// after its family's `[CFOptions]`.
///
/// ```
/// use std::path::Path;
/// use strata::options::ini::{parse, render, Document, Section, SectionKind};
///
/// let mut doc = Document::default();
/// doc.sections.push(Section::new(SectionKind::DbOptions));
/// let mut cf = Section::new(SectionKind::CfOptions { family: "default".into() });
/// cf.push("write_buffer_size", "8388608");
/// doc.sections.push(cf);
/// let text = render(&doc);
/// assert!(text.contains("[CFOptions \"default\"]\n  write_buffer_size=8388608\n"));
/// assert_eq!(parse(text.as_bytes(), Path::new("OPTIONS-000001")).unwrap().sections.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The sections, in file order.
    pub sections: Vec<Section>,
}

/// The header RocksDB writes; kept so the file reads the same to its users.
const HEADER: &str = "# This is a RocksDB option file.\n\
#\n\
# For detailed file format spec, please refer to the example file\n\
# in examples/rocksdb_option_file_example.ini\n\
#\n";

/// Longest excerpt of a bad line quoted in an error.
const MAX_QUOTED_CHARS: usize = 100;

/// Escapes a string-valued option or a family name for the file.
///
/// ```
/// use strata::options::ini::{escape, unescape};
///
/// assert_eq!(escape("a#b:c\n"), r"a\#b\:c\n");
/// assert_eq!(unescape(&escape("a#b:c\n\\")), "a#b:c\n\\");
/// ```
pub fn escape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '\\' | '#' | ':' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            _ => out.push(c),
        }
    }
    out
}

/// Reverses [`escape`]: `\n` and `\r` become LF and CR, `\x` becomes `x` for
/// any other `x`, and a lone `\` at the end is dropped, as RocksDB does.
pub fn unescape(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Renders `doc` as RocksDB lays the file out.
pub fn render(doc: &Document) -> String {
    let mut out = String::from(HEADER);
    for section in &doc.sections {
        out.push('\n');
        match &section.kind {
            SectionKind::Version => out.push_str("[Version]\n"),
            SectionKind::DbOptions => out.push_str("[DBOptions]\n"),
            SectionKind::CfOptions { family } => {
                out.push_str(&format!("[CFOptions \"{}\"]\n", escape(family)));
            }
            SectionKind::TableOptions { factory, family } => {
                out.push_str(&format!(
                    "[TableOptions/{factory} \"{}\"]\n",
                    escape(family)
                ));
            }
        }
        for entry in &section.entries {
            out.push_str(&format!("  {}={}\n", entry.name, entry.value));
        }
    }
    out
}

/// A parse error at `line` of `path`, quoting the line.
fn bad_line(path: &Path, line: usize, text: &str, why: &str) -> Error {
    let quoted: String = text.chars().take(MAX_QUOTED_CHARS).collect();
    let more = if quoted.len() < text.len() { "..." } else { "" };
    Error::invalid_argument(
        "options_file",
        format!("{} line {line}: {why}: {quoted:?}{more}", path.display()),
    )
}

/// RocksDB's `TrimAndRemoveComment`: drops everything from the first `#`
/// not preceded by `\`, then surrounding white space.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let end = bytes
        .iter()
        .enumerate()
        .position(|(i, &b)| b == b'#' && (i == 0 || bytes.get(i - 1) != Some(&b'\\')))
        .unwrap_or(line.len());
    line.get(..end).unwrap_or(line).trim_matches(is_space)
}

/// C's `isspace` in the "C" locale, as RocksDB trims.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// Parses the text of an OPTIONS file; `path` is for error messages.
///
/// ```
/// use std::path::Path;
/// use strata::options::ini::{parse, SectionKind};
///
/// let text = "[DBOptions]\n  max_open_files=-1 # all\n[CFOptions \"default\"]\n";
/// let doc = parse(text.as_bytes(), Path::new("OPTIONS-000005")).unwrap();
/// assert_eq!(doc.sections[0].entries[0].value, "-1");
/// assert!(matches!(&doc.sections[1].kind, SectionKind::CfOptions { family } if family == "default"));
/// ```
pub fn parse(text: &[u8], path: &Path) -> Result<Document> {
    let mut parser = Parser {
        path,
        doc: Document::default(),
    };
    for (index, raw) in text.split(|&b| b == b'\n').enumerate() {
        let number = index + 1;
        let line = std::str::from_utf8(raw).map_err(|_| {
            bad_line(
                path,
                number,
                &String::from_utf8_lossy(raw),
                "not UTF-8 text",
            )
        })?;
        let content = strip_comment(line);
        if content.is_empty() {
            continue;
        }
        if content.len() >= 2 && content.starts_with('[') && content.ends_with(']') {
            parser.section(content, number)?;
        } else {
            parser.statement(content, number)?;
        }
    }
    parser.finish()
}

struct Parser<'a> {
    path: &'a Path,
    doc: Document,
}

impl Parser<'_> {
    fn error(&self, line: usize, text: &str, why: &str) -> Error {
        bad_line(self.path, line, text, why)
    }

    fn has_family(&self, name: &str) -> bool {
        self.doc
            .sections
            .iter()
            .any(|s| matches!(&s.kind, SectionKind::CfOptions { family } if family == name))
    }

    /// `[Title]` or `[Title "argument"]`; `line` is trimmed, `[`..`]`.
    fn section(&mut self, line: &str, number: usize) -> Result<()> {
        let inner = line.get(1..line.len() - 1).unwrap_or_default();
        let (title, argument) = match (inner.find('"'), inner.rfind('"')) {
            (Some(start), Some(end)) if start < end => {
                let after = inner.get(end + 1..).unwrap_or_default();
                if !after.trim_matches(is_space).is_empty() {
                    return Err(self.error(number, line, "text after the section's quoted name"));
                }
                let title = inner.get(..start).unwrap_or_default();
                let argument = inner.get(start + 1..end).unwrap_or_default();
                (title.trim_matches(is_space), Some(unescape(argument)))
            }
            _ => (inner.trim_matches(is_space), None),
        };
        let kind = match (title, argument) {
            ("Version", None) => SectionKind::Version,
            ("DBOptions", None) => SectionKind::DbOptions,
            ("CFOptions", Some(family)) => SectionKind::CfOptions { family },
            (title, Some(family)) if title.len() > "TableOptions/".len() => {
                match title.strip_prefix("TableOptions/") {
                    Some(factory) => SectionKind::TableOptions {
                        factory: factory.to_owned(),
                        family,
                    },
                    None => return Err(self.error(number, line, "unknown section")),
                }
            }
            ("CFOptions", None) | ("TableOptions", _) => {
                return Err(self.error(number, line, "section needs a quoted column family name"))
            }
            _ => return Err(self.error(number, line, "unknown section")),
        };
        self.check_order(&kind, line, number)?;
        self.doc.sections.push(Section {
            kind,
            line: number,
            entries: Vec::new(),
        });
        Ok(())
    }

    /// RocksDB's `CheckSection`: where a section may appear.
    fn check_order(&self, kind: &SectionKind, line: &str, number: usize) -> Result<()> {
        let count =
            |want: &SectionKind| self.doc.sections.iter().filter(|s| &s.kind == want).count();
        let why = match kind {
            SectionKind::Version if count(kind) > 0 => "a second [Version] section",
            SectionKind::DbOptions if count(kind) > 0 => "a second [DBOptions] section",
            SectionKind::CfOptions { family } => {
                let first = !self
                    .doc
                    .sections
                    .iter()
                    .any(|s| matches!(s.kind, SectionKind::CfOptions { .. }));
                if first && family != "default" {
                    "the default column family's [CFOptions] must come first"
                } else if self.has_family(family) {
                    "a second [CFOptions] section for this column family"
                } else {
                    return Ok(());
                }
            }
            SectionKind::TableOptions { family, .. } => {
                if !self.has_family(family) {
                    "[TableOptions] before its column family's [CFOptions]"
                } else if count(kind) > 0 {
                    "a second [TableOptions] section for this column family"
                } else {
                    return Ok(());
                }
            }
            _ => return Ok(()),
        };
        Err(self.error(number, line, why))
    }

    /// `name=value`, both trimmed; the value keeps any `=` after the first.
    fn statement(&mut self, line: &str, number: usize) -> Result<()> {
        let Some((name, value)) = line.split_once('=') else {
            return Err(self.error(number, line, "expected name=value or [section]"));
        };
        let name = name.trim_matches(is_space);
        if name.is_empty() {
            return Err(self.error(number, line, "an option needs a name before '='"));
        }
        let path = self.path;
        let Some(section) = self.doc.sections.last_mut() else {
            return Err(bad_line(path, number, line, "option before any [section]"));
        };
        if let Some(first) = section.entries.iter().find(|e| e.name == name) {
            let why = format!("{name} is set again (first at line {})", first.line);
            return Err(bad_line(path, number, line, &why));
        }
        section.entries.push(Entry {
            name: name.to_owned(),
            value: value.trim_matches(is_space).to_owned(),
            line: number,
        });
        Ok(())
    }

    /// RocksDB's `ValidityCheck`, and the [Version] numbers' syntax.
    fn finish(self) -> Result<Document> {
        let missing = |what: &str| {
            Error::invalid_argument(
                "options_file",
                format!("{} has no {what} section", self.path.display()),
            )
        };
        let sections = &self.doc.sections;
        if !sections.iter().any(|s| s.kind == SectionKind::DbOptions) {
            return Err(missing("[DBOptions]"));
        }
        if !sections
            .iter()
            .any(|s| matches!(&s.kind, SectionKind::CfOptions { family } if family == "default"))
        {
            return Err(missing("[CFOptions \"default\"]"));
        }
        for section in sections.iter().filter(|s| s.kind == SectionKind::Version) {
            for entry in &section.entries {
                let most = match entry.name.as_str() {
                    "rocksdb_version" => 3,
                    "options_file_version" => 2,
                    _ => continue,
                };
                let numbers = parse_version(&entry.value, most)
                    .ok_or_else(|| self.error(entry.line, &entry.value, "not a version number"))?;
                if most == 2 && numbers.first().copied().unwrap_or(0) < 1 {
                    return Err(self.error(
                        entry.line,
                        &entry.value,
                        "options_file_version must be at least 1",
                    ));
                }
            }
        }
        Ok(self.doc)
    }
}

/// `7.8.3`: up to `most` dot-separated decimal numbers.
fn parse_version(text: &str, most: usize) -> Option<Vec<u32>> {
    let numbers: Vec<u32> = text
        .split('.')
        .map(|n| {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                n.parse().ok()
            }
        })
        .collect::<Option<_>>()?;
    (numbers.len() <= most).then_some(numbers)
}

#[cfg(test)]
#[path = "ini_tests.rs"]
mod tests;
